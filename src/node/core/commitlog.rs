//! The commit log and the flushed segments on disk, in the node's data folder.
//!
//! Every write is appended to the log before it is acknowledged. With `batch` sync the line
//! reaches the disk first; with `periodic:<ms>` lines wait in this process's memory until the
//! next sync, so a kill -9 loses the acknowledged writes of the last period, as a crash loses
//! Cassandra's unsynced log. A flush writes the memtable as a segment file and empties the
//! log. A restart loads the segments and replays the log.

use super::cells::Table;
use crate::api::CommitlogSync;
use std::fs::{File, OpenOptions};
use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};

/// The commit log of one node.
pub struct CommitLog {
    file: Option<File>,
    sync: CommitlogSync,
    pending: Vec<u8>,
    dir: PathBuf,
}

/// What a restart finds on disk.
pub struct Recovered {
    /// Flushed segments, oldest first.
    pub segments: Vec<Table>,
    /// Writes logged since the last flush.
    pub log: Vec<Table>,
}

fn log_path(dir: &Path) -> PathBuf {
    dir.join("commitlog.jsonl")
}

fn segment_dir(dir: &Path) -> PathBuf {
    dir.join("segments")
}

impl CommitLog {
    /// Opens the log in `dir` (created if missing) and reads back what a previous run left.
    pub fn open(dir: &Path, sync: CommitlogSync) -> std::io::Result<(CommitLog, Recovered)> {
        std::fs::create_dir_all(segment_dir(dir))?;
        let recovered = Recovered {
            segments: read_segments(dir)?,
            log: read_log(&log_path(dir))?,
        };
        let file = match sync {
            CommitlogSync::Off => None,
            _ => Some(
                OpenOptions::new()
                    .create(true)
                    .append(true)
                    .open(log_path(dir))?,
            ),
        };
        let log = CommitLog {
            file,
            sync,
            pending: Vec::new(),
            dir: dir.to_path_buf(),
        };
        Ok((log, recovered))
    }

    /// Appends a write; with batch sync it is on disk when this returns.
    pub fn append(&mut self, fragment: &Table) -> std::io::Result<()> {
        let Some(file) = &mut self.file else {
            return Ok(());
        };
        let mut line = serde_json::to_vec(fragment)?;
        line.push(b'\n');
        match self.sync {
            CommitlogSync::Batch => {
                file.write_all(&line)?;
                file.sync_data()
            }
            _ => {
                self.pending.extend_from_slice(&line);
                Ok(())
            }
        }
    }

    /// Writes and syncs what periodic mode has been holding.
    pub fn sync(&mut self) -> std::io::Result<()> {
        let Some(file) = &mut self.file else {
            return Ok(());
        };
        if self.pending.is_empty() {
            return Ok(());
        }
        file.write_all(&self.pending)?;
        self.pending.clear();
        file.sync_data()
    }

    /// Writes a flushed memtable as the next segment and empties the log.
    pub fn flushed(&mut self, segment: &Table, number: usize) -> std::io::Result<()> {
        let path = segment_dir(&self.dir).join(format!("{number:06}.json"));
        let temp = path.with_extension("tmp");
        std::fs::write(&temp, serde_json::to_vec(segment)?)?;
        File::open(&temp)?.sync_all()?;
        std::fs::rename(&temp, &path)?;
        self.pending.clear();
        if let Some(file) = &self.file {
            file.set_len(0)?;
        }
        Ok(())
    }

    /// Replaces every segment file with one compacted segment.
    pub fn compacted(&mut self, segment: &Table) -> std::io::Result<()> {
        let dir = segment_dir(&self.dir);
        let old: Vec<PathBuf> = std::fs::read_dir(&dir)?
            .flatten()
            .map(|e| e.path())
            .collect();
        let number = old.len();
        let path = dir.join(format!("{number:06}-compacted.json"));
        std::fs::write(&path, serde_json::to_vec(segment)?)?;
        for p in old.into_iter().filter(|p| *p != path) {
            std::fs::remove_file(p)?;
        }
        Ok(())
    }
}

fn read_segments(dir: &Path) -> std::io::Result<Vec<Table>> {
    let mut paths: Vec<PathBuf> = std::fs::read_dir(segment_dir(dir))?
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|e| e == "json"))
        .collect();
    paths.sort();
    paths
        .iter()
        .map(|p| {
            let text = std::fs::read(p)?;
            serde_json::from_slice(&text).map_err(|e| {
                std::io::Error::new(
                    std::io::ErrorKind::InvalidData,
                    format!("{}: {e}", p.display()),
                )
            })
        })
        .collect()
}

/// Reads the log; a torn last line (the process died mid-write) is dropped.
fn read_log(path: &Path) -> std::io::Result<Vec<Table>> {
    let Ok(file) = File::open(path) else {
        return Ok(Vec::new());
    };
    let mut out = Vec::new();
    for line in BufReader::new(file).lines() {
        match serde_json::from_str::<Table>(&line?) {
            Ok(table) => out.push(table),
            Err(_) => break,
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::api::DeleteScope;
    use crate::node::core::store::tombstone;

    #[test]
    fn batch_writes_survive_a_crash_and_periodic_ones_only_once_synced() {
        let dir = tempfile::tempdir().expect("temp dir");
        let write = tombstone(DeleteScope::Row, "p", Some("c"), 10);
        for (sync, synced, expected) in [
            (CommitlogSync::Batch, false, 1),
            (CommitlogSync::Periodic(1000), false, 0),
            (CommitlogSync::Periodic(1000), true, 1),
        ] {
            let node = dir.path().join(format!("{sync:?}-{synced}"));
            let (mut log, _) = CommitLog::open(&node, sync).expect("open");
            log.append(&write).expect("append");
            if synced {
                log.sync().expect("sync");
            }
            drop(log); // a kill -9: nothing else is written
            let (_, recovered) = CommitLog::open(&node, sync).expect("reopen");
            assert_eq!(recovered.log.len(), expected, "{sync:?} synced={synced}");
        }
    }

    #[test]
    fn a_flush_moves_the_log_into_a_segment() {
        let dir = tempfile::tempdir().expect("temp dir");
        let write = tombstone(DeleteScope::Row, "p", Some("c"), 10);
        let (mut log, _) = CommitLog::open(dir.path(), CommitlogSync::Batch).expect("open");
        log.append(&write).expect("append");
        log.flushed(&write, 0).expect("flush");
        let (_, recovered) = CommitLog::open(dir.path(), CommitlogSync::Batch).expect("reopen");
        assert_eq!((recovered.segments.len(), recovered.log.len()), (1, 0));
    }
}
