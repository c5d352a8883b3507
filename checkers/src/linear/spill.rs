//! Linearizability of a long counter history without holding it. Each client op is written,
//! when it completes, as one fixed-size record to one of a few spill files chosen by its
//! counter; once the history ends, the files are read back one after another (those holding
//! the counters of a partition deleted whole together), each grouped into partitions as
//! `prepare` groups a whole history, searched and dropped. Memory holds the ops in flight,
//! one file's records and its search at a time, never the history.

use super::explain::said;
use super::model::{Model, ModelError};
use super::models::{CounterInput, CounterModel};
use super::partition::{LinOp, Partition};
use super::{check_partitions, LinOptions, LinResult, ModelKind, Val};
use crate::ideal::{self, Count};
use crate::op::{Op, OpType, Process, F};
use crate::validity::Validity;
use serde_json::Value;
use std::cell::OnceCell;
use std::collections::{BTreeMap, HashMap};
use std::fs::File;
use std::hash::{Hash, Hasher};
use std::io::{BufReader, BufWriter, Read, Write};
use std::path::{Path, PathBuf};
use std::time::Instant;

/// Spill files: partitions are spread over this many, so memory holds about this share of
/// the history's ops at a time (more where one partition is hot).
const FILES: usize = 64;
/// Bytes of one record.
const RECORD: usize = 48;
/// No index (an op that never completed, or is no retry).
const NONE: u64 = u64::MAX;

/// How an attempt ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum End {
    Ok = 0,
    Fail = 1,
    Info = 2,
    Open = 3,
}

/// One attempt of a client op: its invoke and how it ended, in 48 bytes.
#[derive(Debug, Clone, Copy)]
struct Record {
    call: u64,
    /// Index of the completion (`NONE`: never completed).
    ret: u64,
    retry_of: u64,
    /// An add's delta; the count an ok read returned.
    value: i64,
    process: u64,
    key: u32,
    f: u8,
    end: End,
    /// An ok read that returned `null`.
    null: bool,
}

impl Record {
    fn encode(&self) -> [u8; RECORD] {
        let mut out = [0; RECORD];
        out[0..8].copy_from_slice(&self.call.to_le_bytes());
        out[8..16].copy_from_slice(&self.ret.to_le_bytes());
        out[16..24].copy_from_slice(&self.retry_of.to_le_bytes());
        out[24..32].copy_from_slice(&self.value.to_le_bytes());
        out[32..40].copy_from_slice(&self.process.to_le_bytes());
        out[40..44].copy_from_slice(&self.key.to_le_bytes());
        out[44] = self.f;
        out[45] = self.end as u8;
        out[46] = self.null as u8;
        out
    }

    fn decode(b: &[u8; RECORD]) -> Self {
        let u64_at = |i: usize| u64::from_le_bytes(b[i..i + 8].try_into().unwrap_or_default());
        Record {
            call: u64_at(0),
            ret: u64_at(8),
            retry_of: u64_at(16),
            value: u64_at(24) as i64,
            process: u64_at(32),
            key: u32::from_le_bytes(b[40..44].try_into().unwrap_or_default()),
            f: b[44],
            end: match b[45] {
                0 => End::Ok,
                1 => End::Fail,
                2 => End::Info,
                _ => End::Open,
            },
            null: b[46] != 0,
        }
    }

    fn f(&self) -> F {
        match self.f {
            0 => F::Add,
            1 => F::Delete,
            2 => F::Read,
            _ => F::Scan,
        }
    }

    /// What an ok read returned; `None` for anything else.
    fn returned(&self) -> Option<Count> {
        (self.f == 2 && self.end == End::Ok).then(|| (!self.null).then_some(self.value))
    }
}

/// The code of a counter function in a record; `None` for any other.
fn f_code(f: &F) -> Option<u8> {
    match f {
        F::Add => Some(0),
        F::Delete => Some(1),
        F::Read => Some(2),
        F::Scan => Some(3),
        F::Other(_) => None,
    }
}

/// Collects a counter history's client ops, as they stream by, into spill files; `finish`
/// searches them.
pub struct Spill {
    dir: PathBuf,
    files: Vec<Option<BufWriter<File>>>,
    records: Vec<u64>,
    keys: HashMap<String, u32>,
    names: Vec<String>,
    /// Invokes not completed yet, by client, with their key's number.
    open: HashMap<u64, (Op, u32)>,
    /// The first delete of each partition deleted whole (its index).
    whole: BTreeMap<String, u64>,
    /// Checks each op as the model will see it (cells do not matter for that).
    model: CounterModel,
    /// The first op the model rejects.
    error: Option<ModelError>,
    /// The first spill file that could not be written or read.
    io: Option<String>,
}

impl Spill {
    /// A spill in a new folder under `scratch` (or the system's temporary folder, when
    /// `scratch` is `None` or cannot be written), removed when the spill is dropped.
    pub fn new(scratch: Option<&Path>) -> Self {
        let nanos = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.subsec_nanos());
        let name = format!(".lin-spill-{}-{nanos}", std::process::id());
        let temp = std::env::temp_dir().join(&name);
        let dir = match scratch.map(|s| s.join(&name)) {
            Some(dir) if std::fs::create_dir_all(&dir).is_ok() => dir,
            _ => temp,
        };
        let io = std::fs::create_dir_all(&dir)
            .err()
            .map(|e| format!("{}: {e}", dir.display()));
        Spill {
            dir,
            files: (0..FILES).map(|_| None).collect(),
            records: vec![0; FILES],
            keys: HashMap::new(),
            names: Vec::new(),
            open: HashMap::new(),
            whole: BTreeMap::new(),
            model: CounterModel::default(),
            error: None,
            io,
        }
    }

    /// Takes the next op of the history.
    pub fn observe(&mut self, op: &Op) {
        let Process::Client(process) = op.process else {
            return;
        };
        if self.error.is_some() {
            return;
        }
        if op.kind == OpType::Invoke {
            let key = self.key(op.key.as_deref().unwrap_or_default());
            if op.f == F::Delete && op.key.as_deref().is_some_and(ideal::deletes_partition) {
                let partition = op.key.clone().unwrap_or_default();
                self.whole.entry(partition).or_insert(op.index);
            }
            if let Some((previous, _)) = self.open.insert(process, (op.clone(), key)) {
                self.error = Some(ModelError {
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
        let end = match op.kind {
            OpType::Ok => End::Ok,
            OpType::Info => End::Info,
            _ => End::Fail,
        };
        self.record(&invoke, key, Some(op), end);
    }

    /// The number of a key, given at its first op.
    fn key(&mut self, key: &str) -> u32 {
        if let Some(&n) = self.keys.get(key) {
            return n;
        }
        let n = self.names.len() as u32;
        self.keys.insert(key.to_string(), n);
        self.names.push(key.to_string());
        n
    }

    /// Writes one attempt, once the model accepts it.
    fn record(&mut self, invoke: &Op, key: u32, done: Option<&Op>, end: End) {
        let ok = done.filter(|_| end == End::Ok);
        if end != End::Fail {
            if let Err(e) = self.model.input(invoke, ok) {
                self.error.get_or_insert(e);
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
        };
        let file = file_of(&self.names[key as usize]);
        self.records[file] += 1;
        if self.io.is_some() {
            return;
        }
        let path = self.path(file);
        let writer = match &mut self.files[file] {
            Some(w) => w,
            slot => match File::create(&path) {
                Ok(f) => slot.insert(BufWriter::with_capacity(64 << 10, f)),
                Err(e) => {
                    self.io = Some(format!("{}: {e}", path.display()));
                    return;
                }
            },
        };
        if let Err(e) = writer.write_all(&record.encode()) {
            self.io = Some(format!("{}: {e}", path.display()));
        }
    }

    fn path(&self, file: usize) -> PathBuf {
        self.dir.join(format!("{file:02}.bin"))
    }

    /// Searches every partition, one spill file after another, within `options`' limits.
    pub fn finish(mut self, options: &LinOptions) -> LinResult {
        let start = Instant::now();
        let deadline = options.time_limit.map(|t| start + t);
        let mut open: Vec<(Op, u32)> = std::mem::take(&mut self.open).into_values().collect();
        open.sort_by_key(|(op, _)| op.index);
        for (invoke, key) in open {
            self.record(&invoke, key, None, End::Open);
        }
        for (file, writer) in self.files.iter_mut().enumerate() {
            if let Some(Err(e)) = writer.take().map(|mut w| w.flush()) {
                let path = self.dir.join(format!("{file:02}.bin"));
                self.io.get_or_insert(format!("{}: {e}", path.display()));
            }
        }
        let init = match &options.init {
            Val::Int(n) => Some(*n),
            _ => None,
        };
        let first_whole = self.whole.iter().min_by_key(|(_, &index)| index);
        if let (Some(_), Some((partition, &index))) = (init, first_whole) {
            self.error.get_or_insert(ModelError {
                index,
                message: format!(
                    "the delete of the whole partition `{partition}` needs counters that start absent; drop --init"
                ),
            });
        }
        let mut result = LinResult {
            model: ModelKind::Counter.as_str().to_string(),
            ..LinResult::default()
        };
        let failed = self.error.as_ref().map(ToString::to_string).or(self
            .io
            .clone()
            .map(|e| format!("spilling the history: {e}")));
        if let Some(reason) = failed {
            result.valid = Validity::Unknown;
            result.reason = Some(reason);
            return result;
        }
        for files in self.groups() {
            let records = match self.load(&files) {
                Ok(records) => records,
                Err(e) => {
                    result.valid = Validity::Unknown;
                    result.reason = Some(format!("reading back the spilled history: {e}"));
                    return result;
                }
            };
            let decided = result.illegal_keys > 0 && !options.all_partitions;
            result.absorb(self.search(&files, records, init, options, deadline, decided));
            // Searched: their disk space is no longer needed.
            for &file in &files {
                let _ = std::fs::remove_file(self.path(file));
            }
        }
        result.valid = result.verdict();
        result.elapsed_ms = start.elapsed().as_millis() as u64;
        result
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
        let count = files.iter().map(|&f| self.records[f] as usize).sum();
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

    /// Groups the records of some spill files into partitions and searches them (or only
    /// counts them, once `decided`). The records are dropped before the search and read
    /// again only if a failure is explained.
    fn search(
        &self,
        files: &[usize],
        records: Vec<Record>,
        init: Count,
        options: &LinOptions,
        deadline: Option<Instant>,
        decided: bool,
    ) -> LinResult {
        let name = |r: &Record| self.names[r.key as usize].as_str();
        let mut whole: BTreeMap<&str, Vec<String>> = BTreeMap::new();
        let mut seen = vec![false; self.names.len()];
        for r in &records {
            let partition = ideal::partition_of(name(r));
            let cells = match self.whole.get_key_value(partition) {
                Some((p, _)) => whole.entry(p.as_str()).or_default(),
                None => continue,
            };
            if !ideal::deletes_partition(name(r))
                && !std::mem::replace(&mut seen[r.key as usize], true)
            {
                cells.push(name(r).to_string());
            }
        }
        let whole = whole.into_iter().map(|(p, k)| (p.to_string(), k));
        let model = CounterModel::with_whole(init, options.reading, whole.collect());
        let parts = partitions(&model, &records, &self.names);
        drop(records);
        if decided {
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
            let value = match r.f() {
                F::Add => Value::from(r.value),
                _ => Value::Null,
            };
            let returned = match (r.end, r.returned()) {
                (End::Ok, Some(count)) => Some(count.map_or(Value::Null, Value::from)),
                (End::Ok, None) => Some(value.clone()),
                _ => None,
            };
            said(
                call,
                &Process::Client(r.process),
                &r.f(),
                &value,
                returned.as_ref(),
            )
        };
        check_partitions(&model, parts, options, deadline, &describe)
    }
}

impl Drop for Spill {
    fn drop(&mut self) {
        self.files.clear();
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

/// The spill file of a key.
fn file_of(key: &str) -> usize {
    let mut hasher = rustc_hash::FxHasher::default();
    key.hash(&mut hasher);
    (hasher.finish() % FILES as u64) as usize
}

/// One intended op: its first attempt and how its attempts (the op and its retries) ended.
struct Intent {
    first: usize,
    /// The ok attempt that returned first.
    ok: Option<usize>,
    /// Some attempt may have taken effect without saying so.
    maybe: bool,
    /// The last info completion.
    info: Option<u64>,
}

/// One file's records (in call order) as partitions, by the rules of `prepare::partitions`:
/// retries joined to the op they retry, an op whose every attempt failed left out, one that
/// succeeded returning at its first ok completion.
fn partitions(
    model: &CounterModel,
    records: &[Record],
    names: &[String],
) -> Vec<Partition<CounterInput>> {
    let mut intents: Vec<Intent> = Vec::new();
    let mut intent_of: HashMap<u64, usize> = HashMap::new();
    for (i, r) in records.iter().enumerate() {
        let retried = (r.retry_of != NONE)
            .then(|| intent_of.get(&r.retry_of))
            .flatten();
        let n = match retried {
            Some(&n) => n,
            None => {
                intents.push(Intent {
                    first: i,
                    ok: None,
                    maybe: false,
                    info: None,
                });
                intents.len() - 1
            }
        };
        intent_of.insert(r.call, n);
        let intent = &mut intents[n];
        match r.end {
            End::Ok if intent.ok.is_none_or(|o| records[o].ret > r.ret) => intent.ok = Some(i),
            End::Ok | End::Fail => {}
            End::Info => {
                intent.maybe = true;
                intent.info = intent.info.max(Some(r.ret));
            }
            End::Open => intent.maybe = true,
        }
    }
    let mut groups: BTreeMap<String, Vec<LinOp<CounterInput>>> = BTreeMap::new();
    for intent in intents.iter().filter(|i| i.ok.is_some() || i.maybe) {
        let first = &records[intent.first];
        let ok = intent.ok.map(|o| &records[o]);
        let returned = ok.and_then(Record::returned);
        let key = names[first.key as usize].as_str();
        let Some(input) = model.input_for(key, &first.f(), first.value, returned) else {
            continue;
        };
        groups
            .entry(model.partition_of(key))
            .or_default()
            .push(LinOp {
                input,
                call: first.call,
                ret: ok.map(|o| o.ret),
                hint: intent.info.filter(|_| ok.is_none()),
                process: Process::Client(first.process),
            });
    }
    groups
        .into_iter()
        .map(|(key, ops)| Partition {
            key: Some(key),
            ops,
        })
        .collect()
}
