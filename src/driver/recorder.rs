//! The history recorder: stamps each op with its index and time and appends it to disk.

use checkers::history::{HistoryError, JsonlWriter};
use checkers::{Op, OpType};
use std::fs::File;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Mutex;
use tokio::time::Instant;

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
    path: PathBuf,
    /// The writer, the next index, and whether an append has failed (then every later one
    /// is refused, so the file ends with the last whole line).
    writer: Mutex<(JsonlWriter<File>, u64, Option<String>)>,
    /// Completed client ops so far.
    pub tally: Tally,
}

impl Recorder {
    /// Creates the history file; times count from now.
    pub fn create(path: &Path) -> Result<Self, HistoryError> {
        Ok(Recorder {
            start: Instant::now(),
            path: path.to_path_buf(),
            writer: Mutex::new((JsonlWriter::create(path)?, 0, None)),
            tally: Tally::default(),
        })
    }

    /// Stamps and appends `op`; returns its index.
    pub fn record(&self, mut op: Op) -> Result<u64, HistoryError> {
        let mut guard = self.writer.lock().unwrap_or_else(|e| e.into_inner());
        let (writer, next, failed) = &mut *guard;
        if let Some(cause) = failed {
            return Err(HistoryError::Unusable {
                path: self.path.clone(),
                message: format!("an earlier append failed ({cause}); the history ends there"),
            });
        }
        op.index = *next;
        op.time = self.start.elapsed().as_nanos() as u64;
        if let Err(e) = writer.write(&op) {
            let cause = match &e {
                HistoryError::Io { source, .. } => source.to_string(),
                other => other.to_string(),
            };
            *failed = Some(cause);
            if let Err(cut) = cut_torn_line(&self.path) {
                tracing::warn!(error = %cut, "could not cut the torn last line of the history");
            }
            return Err(e);
        }
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

/// Cuts a partly written last line off the file at `path`, so it ends with a whole line.
fn cut_torn_line(path: &Path) -> std::io::Result<()> {
    use std::io::{Read, Seek, SeekFrom};
    let mut file = std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .open(path)?;
    let length = file.metadata()?.len();
    // A line is at most a few KiB; a line longer than this tail is cut whole.
    let tail = length.min(1 << 20);
    file.seek(SeekFrom::Start(length - tail))?;
    let mut bytes = Vec::with_capacity(tail as usize);
    (&mut file).take(tail).read_to_end(&mut bytes)?;
    let keep = match bytes.iter().rposition(|&b| b == b'\n') {
        Some(end) => length - tail + end as u64 + 1,
        None => length - tail,
    };
    if keep < length {
        file.set_len(keep)?;
    }
    Ok(())
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
        let again = Op::new(
            Process::Client(1),
            OpType::Invoke,
            F::Read,
            None,
            Default::default(),
        );
        let refused = recorder
            .record(again)
            .expect_err("no append after a failed one");
        assert!(refused.to_string().contains("No space left"), "{refused}");
    }

    #[test]
    fn a_torn_last_line_is_cut_back_to_the_last_whole_one() {
        let dir = tempfile::tempdir().expect("temp dir");
        let path = dir.path().join("history.jsonl");
        for (text, kept) in [("a\nbc", "a\n"), ("a\nb\n", "a\nb\n"), ("torn", "")] {
            std::fs::write(&path, text).expect("write");
            cut_torn_line(&path).expect("cut");
            assert_eq!(std::fs::read_to_string(&path).expect("read"), kept);
        }
    }
}
