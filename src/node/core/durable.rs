//! A node's data, in memory and on disk, changed only together: every write is logged and
//! applied in one step, and a flush moves the memtable into a segment and empties the log in
//! one step, so no flush can fall between a write's log entry and its memtable entry (which
//! would leave the write in memory only, lost at the next crash).

use super::cells::Table;
use super::commitlog::{CommitLog, Recovered};
use super::store::{Store, StoreSettings};
use crate::api::CommitlogSync;
use std::path::Path;

/// What a restart found in the data folder.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Recovery {
    /// Flushed segments loaded.
    pub segments: usize,
    /// Commit-log entries replayed.
    pub replayed: usize,
}

/// The store and its commit log.
pub struct Durable {
    store: Store,
    log: CommitLog,
}

impl Durable {
    /// Opens the data folder `dir` of node `node`: loads the segments and replays the log.
    pub fn open(
        node: &str,
        settings: StoreSettings,
        sync: CommitlogSync,
        dir: &Path,
    ) -> std::io::Result<(Durable, Recovery)> {
        let (
            log,
            Recovered {
                segments,
                log: entries,
            },
        ) = CommitLog::open(dir, sync)?;
        let recovery = Recovery {
            segments: segments.len(),
            replayed: entries.len(),
        };
        let store = Store::recover(node, settings, segments, &entries);
        let durable = Durable { store, log };
        Ok((durable, recovery))
    }

    /// The store, to read.
    pub fn store(&self) -> &Store {
        &self.store
    }

    /// Changes the store's settings at run time.
    pub fn set_settings(&mut self, settings: StoreSettings) {
        self.store.set_settings(settings);
    }

    /// A replicated write, a delete or a repair: logged, then applied.
    pub fn apply(&mut self, fragment: &Table) -> std::io::Result<()> {
        self.log.append(fragment)?;
        self.store.apply(fragment);
        self.flush_if_log_full();
        Ok(())
    }

    /// Flushes when the log has grown past `commitlog_total_space`, as Cassandra flushes the
    /// oldest memtables to recycle commit-log segments. The write that set it off is logged
    /// already, so a failed flush only leaves the log long.
    fn flush_if_log_full(&mut self) {
        if self.log.len() > self.store.settings().commitlog_total_space {
            if let Err(e) = self.flush() {
                tracing::error!(error = %e, "flushing a full commit log failed");
            }
        }
    }

    /// The leader's increment ([`Store::lead_fragment`]), logged, then applied (nothing is
    /// applied when the log cannot take it); returns the fragment to replicate.
    pub fn lead_add(
        &mut self,
        partition: &str,
        cell: &str,
        delta: i64,
        now: u64,
        timestamp: u64,
    ) -> std::io::Result<Table> {
        let fragment = self
            .store
            .lead_fragment(partition, cell, delta, now, timestamp);
        self.log.append(&fragment)?;
        self.store.lead_apply(&fragment);
        self.flush_if_log_full();
        Ok(fragment)
    }

    /// Flushes the memtable into a segment on disk; returns whether there was anything.
    pub fn flush(&mut self) -> std::io::Result<bool> {
        let Some(segment) = self.store.flush() else {
            return Ok(false);
        };
        self.log.flushed(&segment)?;
        Ok(true)
    }

    /// Flushes, then compacts every segment into one at `now`; returns the tombstones purged.
    pub fn compact(&mut self, now: u64) -> std::io::Result<usize> {
        self.flush()?;
        let (segment, purged) = self.store.compact(now);
        self.log.compacted(&segment)?;
        Ok(purged)
    }

    /// Moves the commit log's replay marker (periodic mode, every 100 ms).
    pub fn mark(&mut self) -> std::io::Result<()> {
        self.log.mark()
    }

    /// Syncs the commit log to the disk (periodic mode, every period).
    pub fn sync(&mut self) -> std::io::Result<()> {
        self.log.sync()
    }

    /// Syncs the commit log and closes it to writes: a node shutting down.
    pub fn close(&mut self) -> std::io::Result<()> {
        self.log.close()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::{Arc, Mutex};

    fn open(dir: &Path) -> Durable {
        let sync = CommitlogSync::Periodic(10_000);
        Durable::open("n1", StoreSettings::default(), sync, dir)
            .expect("open")
            .0
    }

    fn value(durable: &Durable, cell: &str) -> Option<i64> {
        let read = durable.store().read("p", Some(cell), 100);
        let row = read.partition.rows.get(cell)?;
        row.counter.as_ref().map(|c| c.counter.value())
    }

    #[test]
    fn an_increment_the_log_refuses_is_not_applied() {
        let dir = tempfile::tempdir().expect("temp dir");
        let mut durable = open(dir.path());
        durable.lead_add("p", "a", 1, 10, 10).expect("write");
        durable.log = CommitLog::open(&dir.path().join("broken"), CommitlogSync::Batch)
            .expect("open")
            .0;
        durable.log.break_with_a_full_disk();
        assert!(durable.lead_add("p", "a", 5, 20, 20).is_err());
        assert_eq!(
            value(&durable, "a"),
            Some(1),
            "neither memtable nor cache took it"
        );
    }

    #[test]
    fn a_flush_that_cannot_write_its_segment_leaves_every_write_in_the_log() {
        let dir = tempfile::tempdir().expect("temp dir");
        let mut durable = open(dir.path());
        durable.lead_add("p", "a", 1, 10, 10).expect("write");
        // The segment folder is gone and a file stands in its place: the flush fails.
        let segments = dir.path().join("segments");
        std::fs::remove_dir(&segments).expect("no segments yet");
        std::fs::write(&segments, "").expect("a file in the way");
        assert!(durable.flush().is_err());
        std::fs::remove_file(&segments).expect("the file goes");
        std::fs::create_dir(&segments).expect("the folder is back");
        assert!(
            durable.lead_add("p", "b", 2, 20, 20).is_err(),
            "the log stopped"
        );
        let logged = durable.log.len();
        let _ = durable.flush();
        assert!(
            logged > 0 && durable.log.len() == logged,
            "no later flush empties it"
        );
        assert_eq!(value(&durable, "a"), Some(1), "still readable");
        durable.mark().expect("the marker still moves");
        drop(durable);
        assert_eq!(
            value(&open(dir.path()), "a"),
            Some(1),
            "replayed after a restart"
        );
    }

    #[test]
    fn a_log_past_its_total_space_is_flushed_into_a_segment() {
        let dir = tempfile::tempdir().expect("temp dir");
        let settings = StoreSettings {
            commitlog_total_space: 1_000,
            ..StoreSettings::default()
        };
        let sync = CommitlogSync::Periodic(10_000);
        let mut durable = Durable::open("n1", settings, sync, dir.path())
            .expect("open")
            .0;
        for t in 1..=100 {
            durable.lead_add("p", "a", 1, t, t).expect("write");
            assert!(
                durable.log.len() <= 1_000 + 200,
                "log at {} bytes",
                durable.log.len()
            );
        }
        let segments = std::fs::read_dir(dir.path().join("segments")).expect("segments");
        assert!(segments.count() >= 5, "flushed several times");
        durable.mark().expect("mark");
        drop(durable);
        assert_eq!(value(&open(dir.path()), "a"), Some(100), "nothing lost");
    }

    #[test]
    fn a_write_between_two_flushes_lands_in_a_segment_or_the_log() {
        let dir = tempfile::tempdir().expect("temp dir");
        let mut durable = open(dir.path());
        durable.lead_add("p", "a", 1, 10, 10).expect("write");
        assert!(durable.flush().expect("flush"));
        durable.lead_add("p", "b", 2, 20, 20).expect("write");
        durable.mark().expect("mark");
        drop(durable); // a kill: the first write is in a segment, the second in the log
        let durable = open(dir.path());
        assert_eq!(
            (value(&durable, "a"), value(&durable, "b")),
            (Some(1), Some(2))
        );
    }

    #[test]
    fn segments_flushed_after_a_restart_never_overwrite_older_ones() {
        let dir = tempfile::tempdir().expect("temp dir");
        let mut durable = open(dir.path());
        durable.lead_add("p", "a", 1, 10, 10).expect("write");
        durable.flush().expect("flush");
        durable.compact(20).expect("compact");
        durable.lead_add("p", "b", 2, 30, 30).expect("write");
        durable.flush().expect("flush");
        drop(durable);
        let mut durable = open(dir.path());
        durable.lead_add("p", "c", 3, 40, 40).expect("write");
        durable.flush().expect("flush");
        durable.compact(50).expect("compact");
        drop(durable);
        let durable = open(dir.path());
        let values = ["a", "b", "c"].map(|c| value(&durable, c));
        assert_eq!(values, [Some(1), Some(2), Some(3)]);
    }

    #[test]
    fn flushes_interleaved_with_writes_from_other_threads_lose_no_write() {
        let dir = tempfile::tempdir().expect("temp dir");
        let durable = Arc::new(Mutex::new(open(dir.path())));
        let writers: Vec<_> = (0..4)
            .map(|w| {
                let durable = durable.clone();
                std::thread::spawn(move || {
                    for i in 0..200u64 {
                        let cell = format!("w{w}-{i}");
                        let mut d = durable.lock().expect("lock");
                        d.apply(&Store::new("x", StoreSettings::default()).lead_add(
                            "p",
                            &cell,
                            1,
                            i + 1,
                            i + 1,
                        ))
                        .expect("write");
                    }
                })
            })
            .collect();
        let flusher = {
            let durable = durable.clone();
            std::thread::spawn(move || {
                for _ in 0..200 {
                    durable.lock().expect("lock").flush().expect("flush");
                    std::thread::yield_now();
                }
            })
        };
        for writer in writers {
            writer.join().expect("writer");
        }
        flusher.join().expect("flusher");
        durable.lock().expect("lock").mark().expect("mark");
        drop(durable); // a kill after the last mark
        let durable = open(dir.path());
        for w in 0..4 {
            for i in 0..200 {
                let cell = format!("w{w}-{i}");
                assert_eq!(value(&durable, &cell), Some(1), "{cell} was lost");
            }
        }
    }
}
