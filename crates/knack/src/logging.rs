//! Logs go to `$KNACK_HOME/logs/knack.log` through tracing-appender's non-blocking
//! writer, never to the terminal, filtered by `KNACK_LOG`; the file is 0600 in a 0700 folder.
//!
//! The file is never rotated. tracing-appender can rotate daily (with a `knack.log`
//! link to the current day's file), but it creates each new day's file itself with
//! the process umask, usually 0644, and the log names paths, commands and errors
//! of the user's sessions; one private file that is appended to keeps that promise.

use std::io;
use std::path::{Path, PathBuf};
use std::sync::{Mutex, OnceLock, PoisonError};

use tracing_appender::non_blocking::{NonBlocking, NonBlockingBuilder, WorkerGuard};
use tracing_appender::rolling::{RollingFileAppender, Rotation};
use tracing_subscriber::EnvFilter;
use tracing_subscriber::fmt::MakeWriter;

/// The log's file name inside `logs/`; docs and tests name it.
pub const LOG_FILE: &str = "knack.log";

/// Lines the background writer may hold before a caller waits.
const LOG_QUEUE_LINES: usize = 1_024;

/// The background writer's guard: while it lives, queued lines are written;
/// dropping it flushes them. [`FlushOnExit`], held by `main`, drops it.
static GUARD: Mutex<Option<WorkerGuard>> = Mutex::new(None);

/// Held by `main` for the whole run so the log's last lines reach the file
/// before the process exits.
pub struct FlushOnExit;

impl Drop for FlushOnExit {
    fn drop(&mut self) {
        drop(GUARD.lock().unwrap_or_else(PoisonError::into_inner).take());
    }
}

/// Sends tracing events to `logs_dir/knack.log`. Only the first call in a
/// process installs anything. The file and its writer thread are made when
/// the first line passes the filter: most commands log nothing, and they
/// should not pay for a thread and two file opens (measured: about 100 page
/// faults and five context switches on every short command).
pub fn init(logs_dir: &Path) {
    static INSTALLED: OnceLock<()> = OnceLock::new();
    INSTALLED.get_or_init(|| {
        let filter =
            EnvFilter::try_from_env("KNACK_LOG").unwrap_or_else(|_| EnvFilter::new("warn"));
        let writer = LazyFileWriter {
            dir: logs_dir.to_path_buf(),
            opened: OnceLock::new(),
        };
        let _ = tracing_subscriber::fmt()
            .with_env_filter(filter)
            .with_ansi(false)
            .with_writer(writer)
            .try_init();
    });
}

/// Opens the log and starts tracing-appender's non-blocking writer on first
/// use. A log that cannot be created leaves logging off rather than failing
/// the command.
struct LazyFileWriter {
    dir: PathBuf,
    opened: OnceLock<Option<NonBlocking>>,
}

impl LazyFileWriter {
    fn open(dir: &Path) -> Option<NonBlocking> {
        // Created (or narrowed) 0600 under a 0700 folder before the appender
        // opens it, which keeps the file's mode and only appends.
        knack_config::private::touch_private(&dir.join(LOG_FILE)).ok()?;
        let appender = RollingFileAppender::builder()
            .rotation(Rotation::NEVER)
            .filename_prefix(LOG_FILE)
            .build(dir)
            .ok()?;
        // Not lossy: when the queue is full a caller waits rather than a line
        // being dropped. The queue is allocated whole at start; the library's
        // default (128,000 lines, megabytes) cost every command milliseconds.
        let (writer, worker) = NonBlockingBuilder::default()
            .lossy(false)
            .buffered_lines_limit(LOG_QUEUE_LINES)
            .finish(appender);
        *GUARD.lock().unwrap_or_else(PoisonError::into_inner) = Some(worker);
        Some(writer)
    }
}

impl<'a> MakeWriter<'a> for LazyFileWriter {
    type Writer = Box<dyn io::Write + 'a>;

    fn make_writer(&'a self) -> Self::Writer {
        match self.opened.get_or_init(|| Self::open(&self.dir)) {
            Some(writer) => Box::new(writer.make_writer()),
            None => Box::new(io::sink()),
        }
    }
}

#[cfg(test)]
mod tests {
    use std::os::unix::fs::PermissionsExt;

    use super::*;

    fn mode(path: &Path) -> u32 {
        std::fs::metadata(path).unwrap().permissions().mode() & 0o777
    }

    // The only test that installs the global subscriber: a second one in this
    // binary would find it taken.
    #[test]
    fn lines_reach_a_private_file_opened_on_first_use() {
        let dir = tempfile::tempdir().unwrap();
        let logs = dir.path().join("logs");
        // An old log others could read is narrowed, and appended to.
        std::fs::create_dir(&logs).unwrap();
        std::fs::write(logs.join(LOG_FILE), "old line\n").unwrap();
        std::fs::set_permissions(logs.join(LOG_FILE), std::fs::Permissions::from_mode(0o644))
            .unwrap();
        std::fs::set_permissions(&logs, std::fs::Permissions::from_mode(0o700)).unwrap();

        let flush = FlushOnExit;
        init(&logs);
        init(&logs); // a second Context::load in one process changes nothing
        tracing::info!("below the default filter: opens nothing");
        assert_eq!(
            mode(&logs.join(LOG_FILE)),
            0o644,
            "untouched until a line is written"
        );
        tracing::error!("a line for the log");
        drop(flush);

        let text = std::fs::read_to_string(logs.join(LOG_FILE)).unwrap();
        assert!(text.starts_with("old line\n"), "{text}");
        assert!(text.contains("a line for the log"), "{text}");
        assert_eq!(mode(&logs.join(LOG_FILE)), 0o600);
        assert_eq!(mode(&logs), 0o700);
        let names: Vec<_> = std::fs::read_dir(&logs)
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .collect();
        assert_eq!(names, [LOG_FILE], "one file, never rotated");
    }
}
