//! The commit log and the flushed segments on disk, in the node's data folder.
//!
//! Every write is appended to the log before it is acknowledged, as Cassandra writes each
//! mutation into a memory-mapped commit-log segment. What a replay trusts is marked
//! separately, in `commitlog.marker`, as Cassandra's chained sync markers are: in
//! `periodic:<ms>` mode the marker moves every [`MARK_INTERVAL`] without a sync, and a sync
//! to the disk happens every period; in `batch` mode every write is synced and marked before
//! it is acknowledged. In periodic mode the writes since the last mark wait in memory and
//! reach the file (the page cache) when the marker moves over them, since a replay would
//! not read them before that anyway; the file's room is reserved on the disk ahead of them,
//! as Cassandra allocates a segment before writing into it, so a full disk refuses the
//! write that meets it. So a killed process loses only the writes of the last mark
//! interval, and a power loss ([`lose_unsynced`]) the writes since the last sync. A flush
//! writes the memtable as a segment file and empties the log. A restart loads the segments
//! and replays the marked part of the log.

use super::cells::Table;
use crate::api::CommitlogSync;
use std::fs::{File, OpenOptions};
use std::io::{BufRead, BufReader, Read, Write};
use std::os::fd::AsRawFd;
use std::os::unix::fs::FileExt;
use std::path::{Path, PathBuf};
use std::time::Duration;

/// How often periodic mode moves the replay marker without syncing: Cassandra's
/// `AbstractCommitLogService.DEFAULT_MARKER_INTERVAL_MILLIS`.
pub const MARK_INTERVAL: Duration = Duration::from_millis(100);

/// How far ahead of its writes periodic mode reserves the log file on the disk.
const RESERVE: u64 = 64 << 10;

/// The commit log of one node.
pub struct CommitLog {
    file: Option<File>,
    marker: Option<File>,
    sync: CommitlogSync,
    /// Bytes in the log: in the file, and in `pending`.
    written: u64,
    /// Periodic mode's writes not yet in the file: they go there at the next mark, as
    /// Cassandra's go to a memory-mapped segment. A replay reads only the marked part of
    /// the file, so a killed process loses exactly what it would with each write in the
    /// file at once (the writes since the last mark), without a syscall for every write.
    pending: Vec<u8>,
    /// Bytes of the file reserved on the disk (`fallocate`), as Cassandra allocates a whole
    /// segment before writing into it: a write that finds no room is refused there and then,
    /// so that the mark never meets a full disk with writes already acknowledged.
    reserved: u64,
    /// Whether the file system reserves room; one that cannot gets each line at once.
    reserving: bool,
    /// Bytes a replay after a process crash reads.
    marked: u64,
    /// Bytes on the disk: what a power loss leaves.
    synced: u64,
    /// The number the next segment file gets (above every number on disk).
    next_segment: usize,
    dir: PathBuf,
    /// Why the log stopped taking writes: after a failed write or sync it refuses every
    /// write until the node restarts (Cassandra's `commit_failure_policy: stop`), so that no
    /// write is acknowledged on a log whose state on disk is unknown.
    failed: Option<String>,
    /// Closed by a shutdown: synced, and refusing every write after, so that none is
    /// acknowledged that a restart would not replay.
    closed: bool,
}

/// What a restart finds on disk.
pub struct Recovered {
    /// Flushed segments, oldest first.
    pub segments: Vec<Table>,
    /// Writes logged (and marked) since the last flush.
    pub log: Vec<Table>,
}

fn log_path(dir: &Path) -> PathBuf {
    dir.join("commitlog.jsonl")
}

fn marker_path(dir: &Path) -> PathBuf {
    dir.join("commitlog.marker")
}

fn segment_dir(dir: &Path) -> PathBuf {
    dir.join("segments")
}

/// The marker's two lengths, `marked` and `synced`, as written by [`write_marker`].
fn read_marker(dir: &Path) -> Option<(u64, u64)> {
    let text = std::fs::read_to_string(marker_path(dir)).ok()?;
    let mut numbers = text.split_whitespace().map(|n| n.parse::<u64>().ok());
    let marked = numbers.next()??;
    let synced = numbers.next()??;
    Some((marked, synced.min(marked)))
}

/// Writes the marker in place (fixed width, so one write replaces it whole).
fn write_marker(marker: &File, marked: u64, synced: u64) -> std::io::Result<()> {
    marker.write_all_at(format!("{marked:020} {synced:020}\n").as_bytes(), 0)
}

/// A power loss: the log keeps only what was synced to the disk. Returns the bytes lost.
/// The node must not be running.
pub fn lose_unsynced(dir: &Path) -> std::io::Result<u64> {
    let Some((_, synced)) = read_marker(dir) else {
        return Ok(0);
    };
    let Ok(file) = OpenOptions::new().write(true).open(log_path(dir)) else {
        return Ok(0);
    };
    let length = file.metadata()?.len();
    file.set_len(synced.min(length))?;
    let marker = OpenOptions::new().write(true).open(marker_path(dir))?;
    write_marker(&marker, synced, synced)?;
    Ok(length.saturating_sub(synced))
}

impl CommitLog {
    /// Opens the log in `dir` (created if missing) and reads back what a previous run left:
    /// the log up to its marker (the unmarked tail is dropped, as Cassandra's replay stops at
    /// the last valid sync marker).
    pub fn open(dir: &Path, sync: CommitlogSync) -> std::io::Result<(CommitLog, Recovered)> {
        std::fs::create_dir_all(segment_dir(dir))?;
        let on_disk = std::fs::metadata(log_path(dir)).map_or(0, |m| m.len());
        let (marked, synced) = read_marker(dir).unwrap_or((on_disk, on_disk));
        let (log, marked) = read_log(&log_path(dir), marked.min(on_disk))?;
        let (segments, next_segment) = read_segments(dir)?;
        let recovered = Recovered { segments, log };
        let mut log = CommitLog {
            file: None,
            marker: None,
            sync,
            written: marked,
            pending: Vec::new(),
            reserved: marked,
            reserving: true,
            marked,
            synced: synced.min(marked),
            next_segment,
            dir: dir.to_path_buf(),
            failed: None,
            closed: false,
        };
        if sync != CommitlogSync::Off {
            let file = OpenOptions::new()
                .create(true)
                .append(true)
                .open(log_path(dir))?;
            file.set_len(marked)?;
            let marker = OpenOptions::new()
                .create(true)
                .truncate(false)
                .write(true)
                .open(marker_path(dir))?;
            write_marker(&marker, log.marked, log.synced)?;
            log.file = Some(file);
            log.marker = Some(marker);
        }
        Ok((log, recovered))
    }

    /// Appends a write; with batch sync it is on disk and marked when this returns. An
    /// error means the write must not be acknowledged; the log then refuses every later write.
    pub fn append(&mut self, fragment: &Table) -> std::io::Result<()> {
        self.refuse_if_failed()?;
        if self.file.is_none() {
            return Ok(());
        }
        let mut line = serde_json::to_vec(fragment)?;
        line.push(b'\n');
        let end = self.written + line.len() as u64;
        if self.sync != CommitlogSync::Batch && self.reserved_to(end)? {
            self.pending.extend_from_slice(&line);
            self.written = end;
            return Ok(());
        }
        // Batch mode, or a file system that cannot reserve: the line goes to the file now.
        self.write_pending()?;
        self.write_lines(&line, self.written)?;
        self.written = end;
        match self.sync {
            CommitlogSync::Batch => self.sync(),
            _ => Ok(()),
        }
    }

    /// Whether the file's first `end` bytes are reserved on the disk, reserving
    /// [`RESERVE`] more when they are not; `false` on a file system that cannot reserve. A
    /// disk with no room left stops the log: the write that met it is refused.
    fn reserved_to(&mut self, end: u64) -> std::io::Result<bool> {
        let Some(file) = self.file.as_ref().filter(|_| self.reserving) else {
            return Ok(false);
        };
        if end <= self.reserved {
            return Ok(true);
        }
        let (from, length) = (self.reserved as i64, (end + RESERVE - self.reserved) as i64);
        let flags = nix::fcntl::FallocateFlags::FALLOC_FL_KEEP_SIZE;
        loop {
            match nix::fcntl::fallocate(file.as_raw_fd(), flags, from, length) {
                Ok(()) => {
                    self.reserved = end + RESERVE;
                    return Ok(true);
                }
                // A signal came first (tmpfs gives up on one, a pause's SIGSTOP, say).
                Err(nix::errno::Errno::EINTR) => continue,
                Err(nix::errno::Errno::EOPNOTSUPP | nix::errno::Errno::ENOSYS) => {
                    self.reserving = false;
                    return Ok(false);
                }
                Err(e) => return Err(self.fail(e.into())),
            }
        }
    }

    /// Writes periodic mode's pending writes to the file; a failure stops the log, and the
    /// file is cut back to its whole lines.
    fn write_pending(&mut self) -> std::io::Result<()> {
        if self.pending.is_empty() {
            return Ok(());
        }
        let mut pending = std::mem::take(&mut self.pending);
        let kept = self.written - pending.len() as u64;
        let written = self.write_lines(&pending, kept);
        pending.clear();
        self.pending = pending;
        written
    }

    /// Appends `lines` to the file, which holds `kept` bytes; a failure cuts the file back
    /// to them, so that the log stays whole lines, and stops the log.
    fn write_lines(&mut self, lines: &[u8], kept: u64) -> std::io::Result<()> {
        let Some(file) = &mut self.file else {
            return Ok(());
        };
        if let Err(e) = file.write_all(lines) {
            // Cutting the file back frees the room reserved past the cut as well.
            let _ = file.set_len(kept);
            self.written = kept;
            self.reserved = self.reserved.min(kept);
            return Err(self.fail(e));
        }
        Ok(())
    }

    /// Bytes in the log.
    pub fn len(&self) -> u64 {
        self.written
    }

    /// Points the log at `/dev/full`, whose every write fails with ENOSPC: a full disk, for
    /// tests of what is refused.
    #[cfg(test)]
    pub fn break_with_a_full_disk(&mut self) {
        let full = OpenOptions::new().write(true).open("/dev/full");
        self.file = Some(full.expect("/dev/full"));
    }

    /// Syncs the log and closes it: every later write is refused (a node shutting down, as
    /// Cassandra drains).
    pub fn close(&mut self) -> std::io::Result<()> {
        let synced = self.sync();
        self.closed = true;
        synced
    }

    /// Refuses a write once the log has failed or been closed.
    fn refuse_if_failed(&self) -> std::io::Result<()> {
        if self.closed {
            let closed = "the node is shutting down: its commit log takes no more writes";
            return Err(std::io::Error::other(closed));
        }
        match &self.failed {
            Some(reason) => Err(std::io::Error::other(format!(
                "the commit log failed and takes no writes until the node restarts \
                 (commit_failure_policy: stop): {reason}"
            ))),
            None => Ok(()),
        }
    }

    /// Stops the log after `e`, and returns it.
    fn fail(&mut self, e: std::io::Error) -> std::io::Error {
        tracing::error!(error = %e, "commit log failed; refusing writes until restart");
        self.failed.get_or_insert_with(|| e.to_string());
        e
    }

    /// Moves the replay marker over everything written, without syncing (periodic mode's
    /// chained markers).
    pub fn mark(&mut self) -> std::io::Result<()> {
        self.write_pending()?;
        let Some(marker) = &self.marker else {
            return Ok(());
        };
        if self.marked < self.written {
            if let Err(e) = write_marker(marker, self.written, self.synced) {
                return Err(self.fail(e));
            }
            self.marked = self.written;
        }
        Ok(())
    }

    /// Syncs everything written to the disk and marks it; a stopped log, whose syncs can no
    /// longer be trusted, is only marked (its whole lines replay after a process crash).
    pub fn sync(&mut self) -> std::io::Result<()> {
        if self.failed.is_some() {
            return self.mark();
        }
        self.write_pending()?;
        let (Some(file), Some(marker)) = (&self.file, &self.marker) else {
            return Ok(());
        };
        if self.synced < self.written {
            let synced = file
                .sync_data()
                .and_then(|()| write_marker(marker, self.written, self.written));
            if let Err(e) = synced {
                return Err(self.fail(e));
            }
            self.synced = self.written;
            self.marked = self.written;
        }
        Ok(())
    }

    /// Writes `segment` as the next segment file (whole, synced, then renamed into place);
    /// returns its path.
    fn write_segment(&mut self, segment: &Table, suffix: &str) -> std::io::Result<PathBuf> {
        let number = self.next_segment;
        self.next_segment += 1;
        let path = segment_dir(&self.dir).join(format!("{number:06}{suffix}.json"));
        let temp = path.with_extension("tmp");
        let written = serde_json::to_vec(segment)
            .map_err(std::io::Error::from)
            .and_then(|bytes| std::fs::write(&temp, bytes))
            .and_then(|()| File::open(&temp)?.sync_all())
            .and_then(|()| std::fs::rename(&temp, &path));
        if let Err(e) = written {
            let _ = std::fs::remove_file(&temp);
            return Err(e);
        }
        Ok(path)
    }

    /// Writes a flushed memtable as the next segment and empties the log. When the segment
    /// cannot be written the log keeps everything and stops, so that no later flush empties
    /// it of writes that reached no segment.
    pub fn flushed(&mut self, segment: &Table) -> std::io::Result<()> {
        self.refuse_if_failed()?;
        if let Err(e) = self.write_segment(segment, "") {
            return Err(self.fail(e));
        }
        if let (Some(file), Some(marker)) = (&self.file, &self.marker) {
            file.set_len(0)?;
            // The segment holds the pending writes too.
            self.pending.clear();
            (self.written, self.marked, self.synced, self.reserved) = (0, 0, 0, 0);
            write_marker(marker, 0, 0)?;
        }
        Ok(())
    }

    /// Replaces every segment file with one compacted segment.
    pub fn compacted(&mut self, segment: &Table) -> std::io::Result<()> {
        let old: Vec<PathBuf> = std::fs::read_dir(segment_dir(&self.dir))?
            .flatten()
            .map(|e| e.path())
            .collect();
        let path = self.write_segment(segment, "-compacted")?;
        for p in old.into_iter().filter(|p| *p != path) {
            std::fs::remove_file(p)?;
        }
        Ok(())
    }
}

/// The flushed segments, oldest first, and the number above every segment file's.
fn read_segments(dir: &Path) -> std::io::Result<(Vec<Table>, usize)> {
    let mut paths: Vec<PathBuf> = std::fs::read_dir(segment_dir(dir))?
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|e| e == "json"))
        .collect();
    paths.sort();
    let next = paths
        .iter()
        .filter_map(|p| {
            let name = p.file_name()?.to_str()?;
            name.get(..6)?.parse::<usize>().ok()
        })
        .max()
        .map_or(1, |n| n + 1);
    let segments = paths
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
        .collect::<std::io::Result<Vec<Table>>>()?;
    Ok((segments, next))
}

/// Reads the first `marked` bytes of the log, up to a torn line if there is one; returns
/// the entries and the bytes they take (where the next entry goes).
fn read_log(path: &Path, marked: u64) -> std::io::Result<(Vec<Table>, u64)> {
    let Ok(file) = File::open(path) else {
        return Ok((Vec::new(), 0));
    };
    let (mut out, mut length) = (Vec::new(), 0);
    let mut reader = BufReader::new(file.take(marked));
    let mut line = String::new();
    while reader.read_line(&mut line)? > 0 {
        match serde_json::from_str::<Table>(&line) {
            Ok(table) if line.ends_with('\n') => out.push(table),
            _ => break,
        }
        length += line.len() as u64;
        line.clear();
    }
    Ok((out, length))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::api::DeleteScope;
    use crate::node::core::store::tombstone;

    /// What a restart finds of one write after `steps`, then a process kill or a power loss.
    fn survives(sync: CommitlogSync, steps: &[&str], power_loss: bool) -> usize {
        let dir = tempfile::tempdir().expect("temp dir");
        let write = tombstone(DeleteScope::Row, "p", Some("c"), 10);
        let (mut log, _) = CommitLog::open(dir.path(), sync).expect("open");
        log.append(&write).expect("append");
        for step in steps {
            match *step {
                "mark" => log.mark().expect("mark"),
                "sync" => log.sync().expect("sync"),
                _ => unreachable!("a step of this test"),
            }
        }
        drop(log); // the process dies: nothing else is written
        if power_loss {
            lose_unsynced(dir.path()).expect("power loss");
        }
        let (_, recovered) = CommitLog::open(dir.path(), sync).expect("reopen");
        recovered.log.len()
    }

    #[test]
    fn a_kill_loses_only_unmarked_writes_and_a_power_loss_only_unsynced_ones() {
        let periodic = CommitlogSync::Periodic(10_000);
        // Periodic: the marker moves every 100 ms, the sync every period.
        assert_eq!(survives(periodic, &[], false), 0, "not yet marked");
        assert_eq!(
            survives(periodic, &["mark"], false),
            1,
            "marked: a kill keeps it"
        );
        assert_eq!(survives(periodic, &["mark"], true), 0, "marked, not synced");
        assert_eq!(survives(periodic, &["sync"], true), 1, "synced");
        // Batch: synced before it is acknowledged.
        assert_eq!(survives(CommitlogSync::Batch, &[], false), 1);
        assert_eq!(survives(CommitlogSync::Batch, &[], true), 1);
    }

    #[test]
    fn a_replay_drops_the_unmarked_tail_so_later_writes_follow_the_marked_ones() {
        let dir = tempfile::tempdir().expect("temp dir");
        let periodic = CommitlogSync::Periodic(10_000);
        let write = tombstone(DeleteScope::Row, "p", Some("c"), 10);
        let (mut log, _) = CommitLog::open(dir.path(), periodic).expect("open");
        log.append(&write).expect("append");
        log.mark().expect("mark");
        log.append(&write).expect("append"); // unmarked when the process dies
        drop(log);
        let (mut log, recovered) = CommitLog::open(dir.path(), periodic).expect("reopen");
        assert_eq!(recovered.log, std::slice::from_ref(&write));
        let later = tombstone(DeleteScope::Column, "q", Some("d"), 99);
        log.append(&later).expect("append");
        log.mark().expect("mark");
        drop(log);
        let (_, recovered) = CommitLog::open(dir.path(), periodic).expect("reopen");
        assert_eq!(
            recovered.log,
            [write, later],
            "the dropped tail left nothing behind"
        );
    }

    #[test]
    fn a_torn_line_in_a_log_without_a_marker_is_cut_off_before_new_writes() {
        let dir = tempfile::tempdir().expect("temp dir");
        let write = tombstone(DeleteScope::Row, "p", Some("c"), 10);
        let mut text = serde_json::to_vec(&write).expect("JSON");
        text.extend_from_slice(b"\n{\"partit");
        std::fs::create_dir_all(dir.path()).expect("dir");
        std::fs::write(log_path(dir.path()), text).expect("a log from before markers");
        let (mut log, recovered) = CommitLog::open(dir.path(), CommitlogSync::Batch).expect("open");
        assert_eq!(recovered.log, std::slice::from_ref(&write));
        let later = tombstone(DeleteScope::Column, "q", Some("d"), 99);
        log.append(&later).expect("append");
        drop(log);
        let (_, recovered) = CommitLog::open(dir.path(), CommitlogSync::Batch).expect("reopen");
        assert_eq!(recovered.log, [write, later]);
    }

    #[test]
    fn a_flush_moves_the_log_into_a_segment() {
        let dir = tempfile::tempdir().expect("temp dir");
        let write = tombstone(DeleteScope::Row, "p", Some("c"), 10);
        let (mut log, _) = CommitLog::open(dir.path(), CommitlogSync::Batch).expect("open");
        log.append(&write).expect("append");
        log.flushed(&write).expect("flush");
        let (_, recovered) = CommitLog::open(dir.path(), CommitlogSync::Batch).expect("reopen");
        assert_eq!((recovered.segments.len(), recovered.log.len()), (1, 0));
    }

    #[test]
    fn a_closed_log_has_every_write_it_took_on_disk_and_takes_no_more() {
        let dir = tempfile::tempdir().expect("temp dir");
        let write = tombstone(DeleteScope::Row, "p", Some("c"), 10);
        let periodic = CommitlogSync::Periodic(10_000);
        let (mut log, _) = CommitLog::open(dir.path(), periodic).expect("open");
        log.append(&write).expect("append");
        log.append(&write).expect("append");
        log.close().expect("close");
        assert_eq!(log.synced, log.len(), "synced to the disk");
        let refused = log.append(&write).expect_err("closed");
        assert!(refused.to_string().contains("shutting down"), "{refused}");
        drop(log);
        let (_, recovered) = CommitLog::open(dir.path(), periodic).expect("reopen");
        assert_eq!(recovered.log.len(), 2);
    }

    #[test]
    fn periodic_writes_reach_the_file_when_marked_and_a_failed_mark_stops_the_log() {
        let dir = tempfile::tempdir().expect("temp dir");
        let write = tombstone(DeleteScope::Row, "p", Some("c"), 10);
        let periodic = CommitlogSync::Periodic(10_000);
        let (mut log, _) = CommitLog::open(dir.path(), periodic).expect("open");
        log.append(&write).expect("append");
        if !log.reserving {
            eprintln!("skipped: the temporary folder's file system reserves no room");
            return;
        }
        log.append(&write).expect("append");
        let on_disk = || std::fs::metadata(log_path(dir.path())).expect("log").len();
        assert_eq!(on_disk(), 0, "nothing is written before the mark");
        assert!(log.len() > 0, "yet the log counts them");
        log.mark().expect("mark");
        assert_eq!(on_disk(), log.len(), "the mark writes them");
        let good = log.file.take();
        log.break_with_a_full_disk();
        // Room was reserved at the first write: the failure meets the mark (an I/O error).
        log.append(&write).expect("taken into reserved room");
        let failed = log.mark().expect_err("the mark cannot write it");
        assert_eq!(failed.raw_os_error(), Some(28), "ENOSPC: {failed}");
        log.file = good;
        let later = log.append(&write).expect_err("the log stopped");
        assert!(later.to_string().contains("commit_failure_policy: stop"));
        assert!(log.mark().is_ok(), "the marker stays on the whole lines");
        drop(log);
        let (_, recovered) = CommitLog::open(dir.path(), periodic).expect("reopen");
        assert_eq!(
            recovered.log.len(),
            2,
            "the write after the mark is lost, as in a kill"
        );
    }

    #[test]
    fn a_failed_write_is_refused_cut_off_and_every_later_write_refused_too() {
        let dir = tempfile::tempdir().expect("temp dir");
        let write = tombstone(DeleteScope::Row, "p", Some("c"), 10);
        let (mut log, _) = CommitLog::open(dir.path(), CommitlogSync::Batch).expect("open");
        log.append(&write).expect("append");
        let good = log.file.take();
        log.break_with_a_full_disk();
        let refused = log
            .append(&write)
            .expect_err("a write to a full disk fails");
        assert_eq!(refused.raw_os_error(), Some(28), "ENOSPC: {refused}");
        log.file = good;
        let later = log.append(&write).expect_err("the log stopped");
        assert!(
            later.to_string().contains("commit_failure_policy: stop"),
            "{later}"
        );
        // The background mark and sync go on quietly: whole lines still replay after a kill.
        assert!(log.sync().is_ok() && log.mark().is_ok());
        assert!(
            log.flushed(&write).is_err(),
            "no flush empties a stopped log"
        );
        drop(log);
        let (_, recovered) = CommitLog::open(dir.path(), CommitlogSync::Batch).expect("reopen");
        assert_eq!(
            recovered.log.len(),
            1,
            "only the acknowledged write is replayed"
        );
    }
}
