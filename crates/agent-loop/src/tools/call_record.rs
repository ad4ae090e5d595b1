//! What one tool call leaves for the turn loop besides its result: the permission rule
//! that let it run unasked, and the diffs of the files it changed. Kept per call (a
//! task-local around the dispatch), so concurrent calls never see each other's records.

use std::future::Future;
use std::path::PathBuf;
use std::sync::Mutex;

use super::lock;

/// One file a call changed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FileDiff {
    pub path: PathBuf,
    /// Unified diff (`crate::edit_diff::unified`).
    pub diff: String,
}

/// Everything a call recorded.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct CallRecord {
    /// The permission rule that approved the call without asking.
    pub approved_by: Option<String>,
    pub diffs: Vec<FileDiff>,
}

tokio::task_local! {
    static RECORD: Mutex<CallRecord>;
}

/// Notes that `rule` approved the running call (a no-op outside [`recording`]).
pub(crate) fn record_rule(rule: &str) {
    let _ = RECORD.try_with(|slot| lock(slot).approved_by = Some(rule.to_owned()));
}

/// Notes a file change of the running call (a no-op outside [`recording`]). Call it from
/// the call's own task, not from a blocking thread.
pub(crate) fn record_diff(path: PathBuf, diff: String) {
    let _ = RECORD.try_with(|slot| lock(slot).diffs.push(FileDiff { path, diff }));
}

/// Runs one tool call and returns, with its output, what it recorded.
pub async fn recording<F: Future>(call: F) -> (F::Output, CallRecord) {
    RECORD
        .scope(Mutex::new(CallRecord::default()), async {
            let output = call.await;
            let record = RECORD.with(|slot| std::mem::take(&mut *lock(slot)));
            (output, record)
        })
        .await
}
