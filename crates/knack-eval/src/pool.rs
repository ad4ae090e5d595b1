//! Runs jobs on N worker threads (each job starts child processes, so threads
//! mostly wait), with a progress bar on stderr when it is a terminal, and a
//! stop flag that keeps a dead provider from failing a hundred runs one by one.

use std::io::IsTerminal as _;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, PoisonError};

use indicatif::{ProgressBar, ProgressStyle};

/// Shared by the workers: progress and the reason to stop, if any.
pub struct Progress {
    bar: ProgressBar,
    stop: Mutex<Option<String>>,
    stopped: AtomicBool,
    interrupted: Arc<AtomicBool>,
}

impl Progress {
    /// A bar counting `total` agent runs; drawn only when `visible` and stderr is a terminal.
    /// `interrupted` is the Ctrl-C flag: once set, no further runs start.
    pub fn new(total: usize, visible: bool, interrupted: Arc<AtomicBool>) -> Self {
        let bar = if visible && std::io::stderr().is_terminal() {
            let bar = ProgressBar::new(total as u64);
            if let Ok(style) = ProgressStyle::with_template(
                "{spinner} {pos}/{len} runs [{bar:30}] {elapsed} {msg}",
            ) {
                bar.set_style(style.progress_chars("=> "));
            }
            bar
        } else {
            ProgressBar::hidden()
        };
        Self {
            bar,
            stop: Mutex::new(None),
            stopped: AtomicBool::new(false),
            interrupted,
        }
    }

    pub fn run_done(&self, label: &str) {
        self.bar.set_message(label.to_owned());
        self.bar.inc(1);
    }

    /// Asks every worker to start no further runs.
    pub fn stop(&self, why: String) {
        let mut slot = self.stop.lock().unwrap_or_else(PoisonError::into_inner);
        slot.get_or_insert(why);
        self.stopped.store(true, Ordering::SeqCst);
    }

    pub fn stopped(&self) -> bool {
        self.stopped.load(Ordering::SeqCst) || self.interrupted.load(Ordering::SeqCst)
    }

    /// Why the runs stopped early, if they did.
    pub fn stop_reason(&self) -> Option<String> {
        let reason = self
            .stop
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone();
        reason.or_else(|| {
            self.interrupted
                .load(Ordering::SeqCst)
                .then(|| "interrupted (Ctrl-C)".to_owned())
        })
    }

    pub fn finish(&self) {
        self.bar.finish_and_clear();
    }
}

/// Runs `jobs` on `workers` threads; results come back in the jobs' order.
pub fn run_all<J, T, F>(jobs: Vec<J>, workers: usize, work: F) -> Vec<T>
where
    J: Send,
    T: Send,
    F: Fn(J) -> T + Sync,
{
    let count = jobs.len();
    let queue: Mutex<Vec<Option<J>>> = Mutex::new(jobs.into_iter().map(Some).collect());
    let results: Mutex<Vec<Option<T>>> = Mutex::new((0..count).map(|_| None).collect());
    let next = AtomicUsize::new(0);
    std::thread::scope(|scope| {
        for _ in 0..workers.clamp(1, count.max(1)) {
            scope.spawn(|| {
                loop {
                    let index = next.fetch_add(1, Ordering::SeqCst);
                    if index >= count {
                        break;
                    }
                    let job = queue.lock().unwrap_or_else(PoisonError::into_inner)[index].take();
                    if let Some(job) = job {
                        let result = work(job);
                        results.lock().unwrap_or_else(PoisonError::into_inner)[index] =
                            Some(result);
                    }
                }
            });
        }
    });
    results
        .into_inner()
        .unwrap_or_else(PoisonError::into_inner)
        .into_iter()
        .flatten()
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn results_keep_the_job_order_with_many_workers() {
        let out = run_all((0..50).collect(), 4, |n: u32| n * 2);
        assert_eq!(out, (0..50).map(|n| n * 2).collect::<Vec<_>>());
    }

    #[test]
    fn workers_really_run_side_by_side() {
        // Two jobs that each wait for the other: they finish only when run at once.
        let barrier = std::sync::Barrier::new(2);
        let out = run_all(vec![1, 2], 2, |n: u32| {
            barrier.wait();
            n
        });
        assert_eq!(out, vec![1, 2]);
    }
}
