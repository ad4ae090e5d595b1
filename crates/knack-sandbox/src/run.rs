//! The one way knack runs a command for the model: spawn it sandboxed, feed its input, pass
//! its combined output on as it comes, stop it at a deadline or on request, and make sure
//! nothing of it is left running when the call returns.
//!
//! Blocking by design (callers on an async runtime use a blocking thread): the thread that
//! spawns is the one the command's supervisor dies with, so it must outlive the command.

use std::io::Read;
use std::os::fd::{AsFd, OwnedFd};
use std::process::{Command, Stdio};
use std::sync::Arc;
use std::time::{Duration, Instant};

use rustix::event::{PollFd, PollFlags};

use crate::{Confinement, Error, Result, SandboxPolicy};

/// Time limits of one run.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RunLimits {
    /// The command is killed when it runs longer.
    pub timeout: Duration,
    /// After the command ended, how long to wait for the last output when something it
    /// left behind still holds the output open (only without namespaces: with them,
    /// nothing is left behind).
    pub drain_grace: Duration,
}

impl RunLimits {
    pub fn new(timeout: Duration) -> Self {
        Self {
            timeout,
            drain_grace: Duration::from_secs(2),
        }
    }
}

/// Stops a running [`run`] from another thread (an interrupted turn, a dropped future).
#[derive(Debug, Clone)]
pub struct StopHandle(Arc<OwnedFd>);

impl StopHandle {
    pub fn new() -> Result<Self> {
        rustix::event::eventfd(
            0,
            rustix::event::EventfdFlags::CLOEXEC | rustix::event::EventfdFlags::NONBLOCK,
        )
        .map(|fd| Self(Arc::new(fd)))
        .map_err(|e| Error::Spawn(e.into()))
    }

    /// Kills the command (and everything it started) and makes [`run`] return
    /// [`Ending::Stopped`]. Stopping a finished run does nothing.
    pub fn stop(&self) {
        let _ = rustix::io::write(&*self.0, &1u64.to_ne_bytes());
    }
}

/// How a run ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Ending {
    /// The command exited: its code, or 128 + the signal that killed it.
    Exited(i32),
    /// It ran past the timeout and was killed.
    TimedOut,
    /// [`StopHandle::stop`] was called and it was killed.
    Stopped,
}

/// What [`run`] reports.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Finished {
    pub ending: Ending,
    /// Every byte of output was read (false when something the command left behind held
    /// the output open past the grace period; only possible without namespaces).
    pub output_complete: bool,
    pub elapsed: Duration,
    /// What the sandbox put in place; `None` when the command ran without one.
    pub confinement: Option<Confinement>,
}

/// A simple collector for [`run`]'s output: keeps the first `cap` bytes and counts the rest.
#[derive(Debug, Clone, Default)]
pub struct CappedOutput {
    cap: usize,
    kept: Vec<u8>,
    total: usize,
}

impl CappedOutput {
    pub fn new(cap: usize) -> Self {
        Self {
            cap,
            kept: Vec::new(),
            total: 0,
        }
    }

    pub fn push(&mut self, bytes: &[u8]) {
        self.total += bytes.len();
        let room = self.cap.saturating_sub(self.kept.len());
        self.kept.extend_from_slice(&bytes[..room.min(bytes.len())]);
    }

    pub fn bytes(&self) -> &[u8] {
        &self.kept
    }

    pub fn text(&self) -> String {
        String::from_utf8_lossy(&self.kept).into_owned()
    }

    /// More came than was kept.
    pub fn truncated(&self) -> bool {
        self.total > self.kept.len()
    }

    pub fn total(&self) -> usize {
        self.total
    }
}

/// Runs `command` (program, arguments, environment and working directory as the caller set
/// them) under `policy` (`None`: unconfined, in a session of its own), with `stdin` as its
/// input (`None`: empty), passing its stdout and stderr, interleaved as written, to
/// `output`. Returns when the command ended and nothing of it is left: on a timeout or a
/// stop, or when the caller's thread unwinds, the command and all it started are killed.
pub fn run(
    mut command: Command,
    policy: Option<&SandboxPolicy>,
    stdin: Option<&[u8]>,
    limits: RunLimits,
    stop: Option<&StopHandle>,
    output: &mut dyn FnMut(&[u8]),
) -> Result<Finished> {
    let (reader, writer) = std::io::pipe().map_err(Error::Spawn)?;
    let writer_err = writer.try_clone().map_err(Error::Spawn)?;
    command.stdout(writer).stderr(writer_err);
    run_with(
        command,
        policy,
        stdin,
        limits,
        stop,
        &[reader],
        &mut |_, bytes| {
            output(bytes);
        },
    )
}

/// [`run`] with stdout and stderr kept apart: each goes to its own sink (for callers that
/// use only what a command prints, not its complaints).
pub fn run_split(
    mut command: Command,
    policy: Option<&SandboxPolicy>,
    stdin: Option<&[u8]>,
    limits: RunLimits,
    stop: Option<&StopHandle>,
    stdout: &mut dyn FnMut(&[u8]),
    stderr: &mut dyn FnMut(&[u8]),
) -> Result<Finished> {
    let (out_reader, out_writer) = std::io::pipe().map_err(Error::Spawn)?;
    let (err_reader, err_writer) = std::io::pipe().map_err(Error::Spawn)?;
    command.stdout(out_writer).stderr(err_writer);
    run_with(
        command,
        policy,
        stdin,
        limits,
        stop,
        &[out_reader, err_reader],
        &mut |stream, bytes| {
            if stream == 0 {
                stdout(bytes);
            } else {
                stderr(bytes);
            }
        },
    )
}

/// The run itself, once the output pipes are set: `output` gets the index of the reader
/// the bytes came from.
fn run_with(
    mut command: Command,
    policy: Option<&SandboxPolicy>,
    stdin: Option<&[u8]>,
    limits: RunLimits,
    stop: Option<&StopHandle>,
    readers: &[std::io::PipeReader],
    output: &mut dyn FnMut(usize, &[u8]),
) -> Result<Finished> {
    let mut input = None;
    match stdin {
        Some(bytes) if !bytes.is_empty() => {
            let (child_end, our_end) = std::io::pipe().map_err(Error::Spawn)?;
            rustix::fs::fcntl_setfl(&our_end, rustix::fs::OFlags::NONBLOCK)
                .map_err(|e| Error::Spawn(e.into()))?;
            command.stdin(child_end);
            input = Some((OwnedFd::from(our_end), bytes));
        }
        _ => {
            command.stdin(Stdio::null());
        }
    }
    let (confinement, _masks) = match policy {
        Some(policy) => {
            let (confinement, masks) = crate::confine_guarded(&mut command, policy)?;
            (Some(confinement), Some(masks))
        }
        None => {
            crate::new_session(&mut command);
            (None, None)
        }
    };
    let started = Instant::now();
    let spawned = command.spawn();
    // Our copies of the pipes' child ends go with the command: the readers see their end
    // once the command's processes are gone.
    drop(command);
    let child = Running(Some(spawned.map_err(Error::Spawn)?));
    let mut open = vec![true; readers.len()];
    let ending = child.wait_for_end(readers, &mut open, input, limits, stop, output)?;
    let output_complete = drain(readers, &mut open, limits.drain_grace, output);
    Ok(Finished {
        ending,
        output_complete,
        elapsed: started.elapsed(),
        confinement,
    })
}

/// Reads once from each reader that is `ready` into `output`; marks the closed ones.
fn read_ready(
    readers: &[std::io::PipeReader],
    open: &mut [bool],
    ready: &[bool],
    buf: &mut [u8],
    output: &mut dyn FnMut(usize, &[u8]),
) {
    for (i, reader) in readers.iter().enumerate() {
        if !ready[i] {
            continue;
        }
        match (&*reader).read(buf) {
            Ok(0) => open[i] = false,
            Ok(n) => output(i, &buf[..n]),
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(_) => open[i] = false,
        }
    }
}

/// A spawned command that is killed (with its whole process group) and reaped when dropped
/// unfinished.
struct Running(Option<std::process::Child>);

impl Running {
    fn pid(&self) -> Option<rustix::process::Pid> {
        self.0
            .as_ref()
            .and_then(|c| i32::try_from(c.id()).ok())
            .and_then(rustix::process::Pid::from_raw)
    }

    fn kill(&mut self) {
        if let Some(pid) = self.pid() {
            // The group: everything it started that did not leave the group. With
            // namespaces the init goes with it, and the kernel kills the rest.
            let _ = rustix::process::kill_process_group(pid, rustix::process::Signal::KILL);
            let _ = rustix::process::kill_process(pid, rustix::process::Signal::KILL);
        }
    }

    fn reap(&mut self) -> Option<std::process::ExitStatus> {
        self.0.take().and_then(|mut child| child.wait().ok())
    }

    fn wait_for_end(
        mut self,
        readers: &[std::io::PipeReader],
        open: &mut [bool],
        mut input: Option<(OwnedFd, &[u8])>,
        limits: RunLimits,
        stop: Option<&StopHandle>,
        output: &mut dyn FnMut(usize, &[u8]),
    ) -> Result<Ending> {
        let deadline = Instant::now() + limits.timeout;
        let pidfd = self.pid().and_then(|pid| {
            rustix::process::pidfd_open(pid, rustix::process::PidfdFlags::empty()).ok()
        });
        let mut buf = vec![0u8; 64 * 1024];
        loop {
            let now = Instant::now();
            if now >= deadline {
                self.kill();
                self.reap();
                return Ok(Ending::TimedOut);
            }
            // Without a pidfd (kernels before 5.3) the exit is noticed on a short tick.
            let mut wait = deadline - now;
            if pidfd.is_none() {
                wait = wait.min(Duration::from_millis(20));
            }
            let mut fds = Vec::with_capacity(readers.len() + 3);
            let reader_at: Vec<Option<usize>> = readers
                .iter()
                .zip(open.iter())
                .map(|(reader, open)| {
                    open.then(|| {
                        fds.push(PollFd::new(reader, PollFlags::IN));
                        fds.len() - 1
                    })
                })
                .collect();
            let input_at = input.as_ref().map(|(fd, _)| {
                fds.push(PollFd::new(fd, PollFlags::OUT));
                fds.len() - 1
            });
            let exit_at = pidfd.as_ref().map(|fd| {
                fds.push(PollFd::new(fd, PollFlags::IN));
                fds.len() - 1
            });
            let stop_at = stop.map(|s| {
                fds.push(PollFd::new(&*s.0, PollFlags::IN));
                fds.len() - 1
            });
            let timeout = rustix::time::Timespec::try_from(wait).ok();
            match rustix::event::poll(&mut fds, timeout.as_ref()) {
                Ok(_) | Err(rustix::io::Errno::INTR) => {}
                Err(e) => return Err(Error::Spawn(e.into())),
            }
            let ready = |at: Option<usize>| at.is_some_and(|i| !fds[i].revents().is_empty());
            let readable: Vec<bool> = reader_at.iter().map(|at| ready(*at)).collect();
            let (input_ready, exited, stopped) = (ready(input_at), ready(exit_at), ready(stop_at));
            drop(fds);
            if stopped {
                self.kill();
                self.reap();
                return Ok(Ending::Stopped);
            }
            read_ready(readers, open, &readable, &mut buf, output);
            if input_ready && let Some((fd, rest)) = &mut input {
                match rustix::io::write(&*fd, rest) {
                    Ok(n) => *rest = &rest[n..],
                    Err(rustix::io::Errno::AGAIN | rustix::io::Errno::INTR) => {}
                    // The command closed its input: it takes no more.
                    Err(_) => *rest = &[],
                }
                if rest.is_empty() {
                    input = None;
                }
            }
            let finished = exited
                || (pidfd.is_none()
                    && self
                        .0
                        .as_mut()
                        .is_some_and(|c| c.try_wait().ok().flatten().is_some()));
            if finished {
                // What it left running in its group goes with it (without namespaces the
                // group is all there is to find it by). Told by the pidfd, the exited
                // leader is not reaped yet, so its id still names this group and no other
                // (after `try_wait` it might name a stranger's by now).
                if exited && let Some(pid) = self.pid() {
                    let _ = rustix::process::kill_process_group(pid, rustix::process::Signal::KILL);
                }
                let status = self.reap();
                return Ok(Ending::Exited(status.map_or(-1, exit_code)));
            }
        }
    }
}

impl Drop for Running {
    fn drop(&mut self) {
        if self.0.is_some() {
            self.kill();
            self.reap();
        }
    }
}

fn exit_code(status: std::process::ExitStatus) -> i32 {
    use std::os::unix::process::ExitStatusExt;
    status
        .code()
        .or_else(|| status.signal().map(|sig| 128 + sig))
        .unwrap_or(-1)
}

/// Reads what is left once the command ended; true when the end of every output was
/// reached.
fn drain(
    readers: &[std::io::PipeReader],
    open: &mut [bool],
    grace: Duration,
    output: &mut dyn FnMut(usize, &[u8]),
) -> bool {
    let deadline = Instant::now() + grace;
    let mut buf = vec![0u8; 64 * 1024];
    while open.iter().any(|o| *o) {
        let now = Instant::now();
        if now >= deadline {
            return false;
        }
        let mut at = Vec::with_capacity(readers.len());
        let mut fds = Vec::with_capacity(readers.len());
        for (reader, open) in readers.iter().zip(open.iter()) {
            at.push(open.then(|| {
                fds.push(PollFd::new(reader, PollFlags::IN));
                fds.len() - 1
            }));
        }
        let timeout = rustix::time::Timespec::try_from(deadline - now).ok();
        match rustix::event::poll(&mut fds, timeout.as_ref()) {
            Ok(0) => return false,
            Ok(_) | Err(rustix::io::Errno::INTR) => {}
            Err(_) => return false,
        }
        let readable: Vec<bool> = at
            .iter()
            .map(|at| at.is_some_and(|i| !fds[i].revents().is_empty()))
            .collect();
        drop(fds);
        read_ready(readers, open, &readable, &mut buf, output);
    }
    true
}

impl AsFd for StopHandle {
    fn as_fd(&self) -> std::os::fd::BorrowedFd<'_> {
        self.0.as_fd()
    }
}
