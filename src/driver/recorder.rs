//! The history recorder: stamps each op with its index and time and appends it to disk.

use checkers::history::{HistoryError, JsonlWriter};
use checkers::{Op, OpType};
use std::fs::File;
use std::path::Path;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Mutex;
use std::time::Instant;

/// Completed client ops so far, by outcome, for the progress display.
#[derive(Debug, Default)]
pub struct Tally {
    /// Ops that completed ok.
    pub ok: AtomicU64,
    /// Ops that failed.
    pub fail: AtomicU64,
    /// Ops whose outcome is unknown.
    pub info: AtomicU64,
}

/// Appends ops to `history.jsonl` in the order they happen, one flushed line each.
///
/// Index and time are assigned under the same lock as the write, so file order, index
/// order and time order agree, and an op recorded before a request is sent (its invoke)
/// or after its answer arrived (its completion) brackets what really happened.
pub struct Recorder {
    start: Instant,
    writer: Mutex<(JsonlWriter<File>, u64)>,
    /// Completed client ops so far.
    pub tally: Tally,
}

impl Recorder {
    /// Creates the history file; times count from now.
    pub fn create(path: &Path) -> Result<Self, HistoryError> {
        Ok(Recorder {
            start: Instant::now(),
            writer: Mutex::new((JsonlWriter::create(path)?, 0)),
            tally: Tally::default(),
        })
    }

    /// Stamps and appends `op`; returns its index.
    pub fn record(&self, mut op: Op) -> Result<u64, HistoryError> {
        let mut guard = self.writer.lock().unwrap_or_else(|e| e.into_inner());
        let (writer, next) = &mut *guard;
        op.index = *next;
        op.time = self.start.elapsed().as_nanos() as u64;
        writer.write(&op)?;
        *next += 1;
        drop(guard);
        if op.process.is_client() {
            let counter = match op.kind {
                OpType::Invoke => return Ok(op.index),
                OpType::Ok => &self.tally.ok,
                OpType::Fail => &self.tally.fail,
                OpType::Info => &self.tally.info,
            };
            counter.fetch_add(1, Ordering::Relaxed);
        }
        Ok(op.index)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use checkers::{Process, F};

    #[test]
    fn an_op_that_cannot_be_appended_is_an_error_naming_the_file_and_the_cause() {
        // Every write to /dev/full fails with ENOSPC, as on a full disk.
        let recorder = Recorder::create(Path::new("/dev/full")).expect("open /dev/full");
        let op = Op::new(
            Process::Client(0),
            OpType::Invoke,
            F::Read,
            None,
            serde_json::Value::Null,
        );
        let error = recorder.record(op).expect_err("the disk is full");
        let chain = format!("{:#}", anyhow::Error::from(error));
        assert!(chain.contains("/dev/full"), "{chain}");
        assert!(chain.contains("No space left on device"), "{chain}");
    }
}
