//! Linearizability of a long counter history without holding it. Each client op is written,
//! when it completes, as one fixed-size record to one of a few spill files chosen by its
//! counter; once the history ends, the files are read back in groups (a file alone, or the
//! files holding the counters of a partition deleted whole together), each grouped into
//! partitions as `prepare` groups a whole history, searched and dropped, a group per thread.
//! Memory holds the ops in flight and the groups being searched, never the history.

mod frontier;
mod group;
mod long;
mod record;
mod stream;

use super::explain::said;
use super::model::{Model, ModelError};
use super::models::{CounterInput, CounterModel};
use super::partition::Partition;
use super::workers::in_parallel;
use super::{check_partitions, LinOptions, LinResult, ModelKind, Shared, Val};
use crate::ideal::{self, Count, Reading};
use crate::op::{Op, OpType, Process, F};
use crate::validity::Validity;
use frontier::Frontier;
use record::{f_code, End, Record, NONE, NO_KEY, RECORD};
use rustc_hash::FxHashMap;
use serde_json::Value;
use std::cell::OnceCell;
use std::cmp::Reverse;
use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::fs::File;
use std::hash::{Hash, Hasher};
use std::io::{BufReader, BufWriter, Read, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Mutex, PoisonError};
use std::time::Instant;
use stream::SpillFile;

/// Spill files: partitions are spread over this many, so memory holds about this share of
/// the history's ops at a time (more where one partition is hot).
const FILES: usize = 64;
/// Collects a counter history's client ops, as they stream by, into spill files; `finish`
/// searches them.
pub struct Spill {
    dir: PathBuf,
    files: Vec<Option<BufWriter<File>>>,
    records: Vec<u64>,
    keys: FxHashMap<String, u32>,
    names: Vec<String>,
    /// The spill file of each counter, by number.
    file_of_key: Vec<usize>,
    /// Invokes not completed yet, by client, with their key's number.
    open: FxHashMap<u64, (Op, u32)>,
    /// The first delete of each partition deleted whole (its index).
    whole: BTreeMap<String, u64>,
    /// Checks each op as the model will see it (cells do not matter for that).
    model: CounterModel,
    /// The first process that invoked again before its op completed.
    paired: Option<ModelError>,
    /// The op with the earliest invoke that the model rejects.
    rejected: Option<ModelError>,
    /// What the records cannot say of an op, to describe it as the history does: its
    /// invoke's value and, when ok, its completion's (only for ops unlike the usual ones).
    described: HashMap<u64, (Value, Option<Value>)>,
    /// The first spill file that could not be written or read.
    io: Option<String>,
    /// The low mark written with each record.
    frontier: Frontier,
    /// The files holding a retry the low mark could not join to the op it retries: their
    /// groups are read back whole.
    unjoined: Vec<bool>,
    /// The index of the last client op seen.
    last: Option<u64>,
    /// Some client op came with an index not above the one before: the low mark assumes
    /// they increase, so every group is read back whole.
    disordered: bool,
    /// Held while a group is read back (`build`).
    building: Mutex<()>,
}

impl Spill {
    /// A spill in a new folder under `scratch` (or the system's temporary folder, when
    /// `scratch` is `None` or cannot be written), removed when the spill is dropped.
    pub fn new(scratch: Option<&Path>) -> Self {
        let nanos = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.subsec_nanos());
        static MADE: AtomicUsize = AtomicUsize::new(0);
        let made = MADE.fetch_add(1, Ordering::Relaxed);
        let name = format!(".lin-spill-{}-{made}-{nanos}", std::process::id());
        let beside = scratch.map(|s| s.join(&name));
        let (dir, made) = match beside.filter(|dir| std::fs::create_dir_all(dir).is_ok()) {
            Some(dir) => (dir, Ok(())),
            None => {
                let temp = std::env::temp_dir().join(&name);
                let made = std::fs::create_dir_all(&temp);
                (temp, made)
            }
        };
        let io = made.err().map(|e| format!("{}: {e}", dir.display()));
        Spill {
            dir,
            files: (0..FILES).map(|_| None).collect(),
            records: vec![0; FILES],
            keys: FxHashMap::default(),
            names: Vec::new(),
            file_of_key: Vec::new(),
            open: FxHashMap::default(),
            whole: BTreeMap::new(),
            model: CounterModel::default(),
            paired: None,
            rejected: None,
            described: HashMap::new(),
            io,
            frontier: Frontier::default(),
            unjoined: vec![false; FILES],
            last: None,
            disordered: false,
            building: Mutex::new(()),
        }
    }

    /// Takes the next op of the history.
    pub fn observe(&mut self, op: &Op) {
        let Process::Client(process) = op.process else {
            return;
        };
        self.disordered |= self.last.is_some_and(|last| op.index <= last);
        self.last = Some(op.index);
        if op.kind == OpType::Invoke {
            let key = self.key(op.key.as_deref());
            if !self.frontier.invoked(op.index, op.retry_of) {
                let file = self.file(key);
                self.unjoined[file] = true;
            }
            if op.f == F::Delete && op.key.as_deref().is_some_and(ideal::deletes_partition) {
                let partition = op.key.clone().unwrap_or_default();
                self.whole.entry(partition).or_insert(op.index);
            }
            if let Some((previous, _)) = self.open.insert(process, (op.clone(), key)) {
                self.paired.get_or_insert(ModelError {
                    index: op.index,
                    message: format!(
                        "process {} invoked again before its op at index {} completed",
                        op.process, previous.index
                    ),
                });
            }
            return;
        }
        let Some((invoke, key)) = self.open.remove(&process) else {
            return;
        };
        self.frontier.ended(invoke.index, op.index);
        let end = match op.kind {
            OpType::Ok => End::Ok,
            OpType::Info => End::Info,
            _ => End::Fail,
        };
        self.record(&invoke, key, Some(op), end);
    }

    /// The number of a key, given at its first op (`NO_KEY` for none).
    fn key(&mut self, key: Option<&str>) -> u32 {
        let Some(key) = key else {
            return NO_KEY;
        };
        if let Some(&n) = self.keys.get(key) {
            return n;
        }
        let n = self.names.len() as u32;
        self.keys.insert(key.to_string(), n);
        self.names.push(key.to_string());
        self.file_of_key.push(file_of(key));
        n
    }

    /// The spill file of counter number `key`.
    fn file(&self, key: u32) -> usize {
        match self.file_of_key.get(key as usize) {
            Some(&file) => file,
            None => file_of(""), // no key
        }
    }

    /// Writes one attempt, once the model accepts it.
    fn record(&mut self, invoke: &Op, key: u32, done: Option<&Op>, end: End) {
        let ok = done.filter(|_| end == End::Ok);
        if end != End::Fail {
            if let Err(e) = self.model.input(invoke, ok) {
                if self.rejected.as_ref().is_none_or(|r| e.index < r.index) {
                    self.rejected = Some(e);
                }
                return;
            }
        }
        let Some(f) = f_code(&invoke.f) else {
            return; // failed: never seen by the model
        };
        let returned = ok.and_then(Op::read_value).flatten();
        let record = Record {
            call: invoke.index,
            ret: done.map_or(NONE, |d| d.index),
            retry_of: invoke.retry_of.unwrap_or(NONE),
            value: match invoke.f {
                F::Add => invoke.delta().unwrap_or(0),
                _ => returned.unwrap_or(0),
            },
            process: match invoke.process {
                Process::Client(p) => p,
                Process::Named(_) => 0,
            },
            key,
            f,
            end,
            null: ok.is_some_and(|o| o.value.is_null()),
            low: self.frontier.low(self.last.unwrap_or(0)),
        };
        let (value, returned) = record.described();
        if value != invoke.value || returned.as_ref() != ok.map(|o| &o.value) {
            let said = (invoke.value.clone(), ok.map(|o| o.value.clone()));
            self.described.insert(invoke.index, said);
        }
        let file = self.file(key);
        self.records[file] += 1;
        if self.io.is_some() {
            return;
        }
        let written = match &mut self.files[file] {
            Some(w) => w.write_all(&record.encode()),
            slot => File::create(self.dir.join(file_name(file))).and_then(|f| {
                let w = slot.insert(BufWriter::with_capacity(64 << 10, f));
                w.write_all(&record.encode())
            }),
        };
        if let Err(e) = written {
            self.io = Some(format!("{}: {e}", self.path(file).display()));
        }
    }

    fn path(&self, file: usize) -> PathBuf {
        self.dir.join(file_name(file))
    }

    /// Writes the ops never completed, in call order, and closes the files.
    fn finish_writing(&mut self) {
        let mut open: Vec<(Op, u32)> = std::mem::take(&mut self.open).into_values().collect();
        open.sort_by_key(|(op, _)| op.index);
        for (invoke, key) in open {
            self.record(&invoke, key, None, End::Open);
        }
        for (file, writer) in self.files.iter_mut().enumerate() {
            if let Some(Err(e)) = writer.take().map(|mut w| w.flush()) {
                let path = self.dir.join(file_name(file));
                self.io.get_or_insert(format!("{}: {e}", path.display()));
            }
        }
    }

    /// Searches every partition, group of spill files by group, within `options`' limits;
    /// the model's first error is the error, as for a history held whole.
    pub fn finish(mut self, options: &LinOptions) -> Result<LinResult, ModelError> {
        let start = Instant::now();
        let deadline = options.time_limit.map(|t| start + t);
        self.finish_writing();
        let init = match &options.init {
            Val::Int(n) => Some(*n),
            _ => None,
        };
        // The model's errors come in the order a history held whole finds them: the
        // settings first, then the pairing of ops, then the earliest op it rejects.
        let first_whole = self.whole.iter().min_by_key(|(_, &index)| index);
        if let (Some(_), Some((partition, &index))) = (init, first_whole) {
            return Err(ModelError {
                index,
                message: format!(
                    "the delete of the whole partition `{partition}` needs counters that start absent; drop --init"
                ),
            });
        }
        if let Some(error) = self.paired.take().or(self.rejected.take()) {
            return Err(error);
        }
        let mut result = LinResult {
            model: ModelKind::Counter.as_str().to_string(),
            ..LinResult::default()
        };
        if let Some(e) = &self.io {
            result.valid = Validity::Unknown;
            result.reason = Some(format!("spilling the history: {e}"));
            return Ok(result);
        }
        let mut groups = self.groups();
        // The biggest first, so that the last to end is a small one.
        groups.sort_by_key(|files| Reverse(files.iter().map(|&f| self.records[f]).sum::<u64>()));
        if !options.all_partitions {
            // A read out of bounds is found in one pass: the groups that have one go first,
            // the one with the biggest such key first (as a history held whole is searched),
            // so that it decides at once.
            let refuted = |i: usize| self.refuted(&groups[i], init, options);
            let sizes = in_parallel(groups.len(), options.threads, refuted);
            let mut sized: Vec<_> = sizes.into_iter().zip(groups).collect();
            sized.sort_by_key(|(size, _)| Reverse(*size));
            groups = sized.into_iter().map(|(_, files)| files).collect();
        }
        let searched = self.search_all(&groups, init, options, deadline);
        for found in searched {
            match found {
                Ok(part) => result.absorb(part),
                Err(e) => {
                    result.valid = Validity::Unknown;
                    result.reason = Some(format!("reading back the spilled history: {e}"));
                    return Ok(result);
                }
            }
        }
        result.valid = result.verdict();
        result.elapsed_ms = start.elapsed().as_millis() as u64;
        Ok(result)
    }

    /// Searches the groups of spill files on `options.threads` threads, a group at a time
    /// each (the threads left over search a group's partitions side by side), deleting each
    /// group's files once searched; the results in the groups' order. Once one is not
    /// linearizable, the groups not begun are only counted, unless `all_partitions`.
    fn search_all(
        &self,
        groups: &[Vec<usize>],
        init: Count,
        options: &LinOptions,
        deadline: Option<Instant>,
    ) -> Vec<std::io::Result<LinResult>> {
        let workers = options.threads.clamp(1, groups.len().max(1));
        let inner = LinOptions {
            threads: (options.threads / workers).max(1),
            ..options.clone()
        };
        // When to stop, and the failures explained, across the groups.
        let shared = Shared::default();
        let work = |i: usize| {
            let files = &groups[i];
            let part = self.search_group(files, init, &inner, deadline, &shared);
            // Searched: the files' disk space is no longer needed.
            for &file in files {
                let _ = std::fs::remove_file(self.path(file));
            }
            part
        };
        in_parallel(groups.len(), workers, work)
    }

    /// The ops of the biggest partition of a group that holds a read the model refutes in
    /// one pass; 0 when none does.
    fn refuted(&self, files: &[usize], init: Count, options: &LinOptions) -> usize {
        // A long partition is not held to look: its window searches it first in its group.
        let Ok(plan) = self.plan(files, init, options.reading) else {
            return 0;
        };
        let long = plan
            .as_ref()
            .map_or_else(Vec::new, |p| self.long(p, options));
        let Ok((model, parts)) = self.build(files, init, options, &long, plan.as_ref()) else {
            return 0;
        };
        let refuted = |p: &&Partition<_>| model.refute(&model.init(p.key.as_deref()), &p.ops);
        let sizes = parts
            .iter()
            .filter(|p| refuted(p).is_some())
            .map(|p| p.ops.len());
        sizes.max().unwrap_or(0)
    }

    /// The spill files to search together: each alone, except that the files holding the
    /// counters of a partition deleted whole (and its deletes) go together.
    fn groups(&self) -> Vec<Vec<usize>> {
        let mut group: Vec<usize> = (0..FILES).collect();
        let root = |group: &[usize], mut f: usize| {
            while group[f] != f {
                f = group[f];
            }
            f
        };
        for partition in self.whole.keys() {
            let files = (self.names.iter())
                .filter(|k| ideal::partition_of(k) == partition)
                .map(|k| file_of(k));
            let mut first = None;
            for f in files {
                let r = root(&group, f);
                match first {
                    None => first = Some(r),
                    Some(first) => group[r] = first,
                }
            }
        }
        let mut groups: BTreeMap<usize, Vec<usize>> = BTreeMap::new();
        for f in (0..FILES).filter(|&f| self.records[f] > 0) {
            groups.entry(root(&group, f)).or_default().push(f);
        }
        groups.into_values().collect()
    }

    /// The records of some spill files, in call order.
    fn load(&self, files: &[usize]) -> std::io::Result<Vec<Record>> {
        let count: usize = files.iter().map(|&f| self.records[f] as usize).sum();
        // `group::partitions` names a record by its place in 32 bits.
        if u32::try_from(count).is_err() {
            let message = format!("{count} ops in one group of counters, more than 2^32");
            return Err(std::io::Error::new(
                std::io::ErrorKind::InvalidData,
                message,
            ));
        }
        let mut records = Vec::with_capacity(count);
        let mut buf = [0; RECORD];
        for &file in files {
            let mut input = BufReader::new(File::open(self.path(file))?);
            for _ in 0..self.records[file] {
                input.read_exact(&mut buf)?;
                records.push(Record::decode(&buf));
            }
        }
        records.sort_unstable_by_key(|r| r.call);
        Ok(records)
    }

    /// A group's model and partitions but those of the counters `leave_out` names (by
    /// number), read back from its files: as they were written, unless a file holds a retry
    /// the low mark could not join (then its records are held at once and sorted). One
    /// group at a time: the ops of a group are a search's peak of memory. `plan` is the
    /// group's plan when the caller has read it already.
    fn build(
        &self,
        files: &[usize],
        init: Count,
        options: &LinOptions,
        leave_out: &[bool],
        plan: Option<&stream::Plan>,
    ) -> std::io::Result<(CounterModel, Vec<Partition<CounterInput>>)> {
        let _one = self.building.lock().unwrap_or_else(PoisonError::into_inner);
        let read = match plan {
            Some(_) => None,
            None => self.plan(files, init, options.reading)?,
        };
        if let Some(plan) = plan.or(read.as_ref()) {
            let spilled = self.spilled(files);
            if let Some(parts) = stream::partitions(&spilled, plan, &self.names, leave_out)? {
                return Ok((plan.model.clone(), parts));
            }
        }
        let records = self.load(files)?;
        let (model, mut parts) = self.partitions(&records, init, options);
        // Whole partitions are left out: their keys tell them.
        let key = |c: usize| self.names.get(c).map(|name| model.partition_of(name));
        let out: BTreeSet<Option<String>> = (leave_out.iter().enumerate())
            .filter(|(_, &out)| out)
            .map(|(c, _)| key(c))
            .collect();
        parts.retain(|p| !out.contains(&p.key));
        Ok((model, parts))
    }

    /// A group's plan for reading it back as its records were written (`stream::Plan`);
    /// `None` when they must be read back whole.
    fn plan(
        &self,
        files: &[usize],
        init: Count,
        reading: Reading,
    ) -> std::io::Result<Option<stream::Plan>> {
        if self.disordered || files.iter().any(|&f| self.unjoined[f]) {
            return Ok(None);
        }
        let spilled = self.spilled(files);
        stream::Plan::read(&spilled, &self.names, &self.whole, init, reading).map(Some)
    }

    /// Spill files by number, with their records counted.
    fn spilled(&self, files: &[usize]) -> Vec<SpillFile> {
        (files.iter())
            .map(|&f| SpillFile {
                path: self.path(f),
                records: self.records[f],
            })
            .collect()
    }

    /// The model for a group's records (in call order), and their partitions.
    fn partitions(
        &self,
        records: &[Record],
        init: Count,
        options: &LinOptions,
    ) -> (CounterModel, Vec<Partition<CounterInput>>) {
        let keys = records.iter().map(|r| r.key);
        let model = group::model(keys, &self.names, &self.whole, init, options.reading);
        let parts = group::partitions(&model, records, &self.names);
        (model, parts)
    }

    /// Searches a group's partitions (or only counts them, once `shared` says another was
    /// not linearizable). Its records are read again only if a failure is explained.
    fn search(
        &self,
        files: &[usize],
        model: &CounterModel,
        parts: Vec<Partition<CounterInput>>,
        options: &LinOptions,
        deadline: Option<Instant>,
        shared: &Shared,
    ) -> LinResult {
        if shared.decided.load(Ordering::Relaxed) {
            return LinResult {
                keys: parts.len(),
                not_searched_keys: parts.len(),
                ops: parts.iter().map(|p| p.ops.len()).sum(),
                ..LinResult::default()
            };
        }
        let reloaded = OnceCell::new();
        let describe = |call: u64| {
            let records = reloaded.get_or_init(|| self.load(files).unwrap_or_default());
            let Ok(at) = records.binary_search_by_key(&call, |r| r.call) else {
                return format!("[{call}]");
            };
            let r = &records[at];
            let (value, returned) = match self.described.get(&call) {
                Some((value, returned)) => (value.clone(), returned.clone()),
                None => r.described(),
            };
            said(
                call,
                &Process::Client(r.process),
                &r.f(),
                &value,
                returned.as_ref(),
            )
        };
        check_partitions(model, parts, options, deadline, &describe, shared)
    }
}

impl Drop for Spill {
    fn drop(&mut self) {
        self.files.clear();
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

/// The name of spill file number `file`.
fn file_name(file: usize) -> String {
    format!("{file:02}.bin")
}

/// The spill file of a key.
fn file_of(key: &str) -> usize {
    let mut hasher = rustc_hash::FxHasher::default();
    key.hash(&mut hasher);
    (hasher.finish() % FILES as u64) as usize
}

#[cfg(test)]
mod tests;
