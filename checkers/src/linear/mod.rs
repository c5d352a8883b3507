//! The linearizability checker: is there one order of the ops, each taking effect between its
//! call and its return, that a sequential model explains? Partitions (keys) are independent
//! and are searched in parallel; the first found not linearizable decides the verdict and
//! stops the others (unless every partition is asked for); a search that runs out of time or
//! memory answers unknown.

mod bitset;
mod cache;
mod core;
mod events;
mod explain;
mod model;
pub mod models;
mod partition;
mod prepare;
mod resident;
mod search;
mod spill;
mod symmetry;
mod workers;

pub use explain::PartitionFailure;
pub use model::{Decision, Model, ModelError, Val};
pub use partition::{LinOp, Partition};
pub use prepare::partitions;
pub use resident::{default_memory_limit, resident_bytes};
pub use search::Window;
pub use spill::Spill;

use crate::ideal::Reading;
use crate::op::Op;
use crate::validity::Validity;
use models::{CounterModel, KvModel, RegisterModel};
use search::{search, Limits, Source, Verdict, Windowed};
use serde::{Deserialize, Serialize};
use std::str::FromStr;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::OnceLock;
use std::time::{Duration, Instant};

/// How many failing partitions a result explains.
const FAILURES_EXPLAINED: usize = 10;

/// The models a history can be checked against, by name.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum ModelKind {
    /// The ideal counter (`crate::ideal`), per key, or per partition where a history deletes
    /// whole partitions.
    Counter,
    /// A read / write register.
    Register,
    /// A read / write / compare-and-set register.
    CasRegister,
    /// Porcupine's string key-value store, per key.
    Kv,
}

impl FromStr for ModelKind {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s {
            "counter" => Ok(ModelKind::Counter),
            "register" => Ok(ModelKind::Register),
            "cas-register" => Ok(ModelKind::CasRegister),
            "kv" => Ok(ModelKind::Kv),
            _ => Err(format!(
                "unknown model `{s}`: expected counter, register, cas-register or kv"
            )),
        }
    }
}

impl ModelKind {
    /// The model's name.
    pub fn as_str(self) -> &'static str {
        match self {
            ModelKind::Counter => "counter",
            ModelKind::Register => "register",
            ModelKind::CasRegister => "cas-register",
            ModelKind::Kv => "kv",
        }
    }
}

/// When to give up and how to search.
#[derive(Debug, Clone)]
pub struct LinOptions {
    /// The model's initial value (`Val::Nil`: an empty register, an absent counter).
    pub init: Val,
    /// Past this the answer is unknown.
    pub time_limit: Option<Duration>,
    /// Bytes of resident memory the process may hold while searching (where the kernel does
    /// not say, bytes the search caches may hold together) before the answer is unknown.
    pub memory_limit: usize,
    /// Threads searching partitions in parallel.
    pub threads: usize,
    /// How the counter model compares reads (`absent_is_zero`).
    pub reading: Reading,
    /// Search every partition to the end (within the limits) instead of stopping at the
    /// first that is not linearizable.
    pub all_partitions: bool,
    /// Use the generic search even where the model has a procedure of its own (the
    /// counter's sweep): a cross-check.
    pub generic: bool,
    /// Which partitions a spilled check searches holding only a window of their ops.
    pub window: Window,
}

impl Default for LinOptions {
    fn default() -> Self {
        LinOptions {
            init: Val::Nil,
            time_limit: None,
            memory_limit: default_memory_limit(),
            threads: std::thread::available_parallelism().map_or(1, |n| n.get()),
            reading: Reading::default(),
            all_partitions: false,
            generic: false,
            window: Window::default(),
        }
    }
}

/// The linearizability checker's verdict, as results.json holds it.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct LinResult {
    /// Invalid when some partition is not linearizable; unknown when a search gave up.
    pub valid: Validity,
    /// The model checked against.
    pub model: String,
    /// Partitions (keys) checked.
    pub keys: usize,
    /// Partitions that are not linearizable.
    pub illegal_keys: usize,
    /// Partitions whose search gave up.
    pub unknown_keys: usize,
    /// Partitions left unsearched, or searched only in part, because another was already
    /// found not linearizable (none with `all_partitions`).
    #[serde(default)]
    pub not_searched_keys: usize,
    /// Ops checked (failed ops and reads with unknown results left out).
    pub ops: usize,
    /// Why the answer is unknown, when it is.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    /// How long the search took, ms.
    pub elapsed_ms: u64,
    /// The first failing partitions, explained.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub failures: Vec<PartitionFailure>,
}

/// Checks a history against the model named `kind`.
pub fn check(
    kind: ModelKind,
    history: &[Op],
    options: &LinOptions,
) -> Result<LinResult, ModelError> {
    let init = options.init.clone();
    let mut result = match kind {
        ModelKind::Counter => {
            let init = match init {
                Val::Int(n) => Some(n),
                _ => None,
            };
            let model = CounterModel::for_history(init, options.reading, history)?;
            check_model(&model, history, options)
        }
        ModelKind::Register => check_model(&RegisterModel { init, cas: false }, history, options),
        ModelKind::CasRegister => check_model(&RegisterModel { init, cas: true }, history, options),
        ModelKind::Kv => check_model(&KvModel::default(), history, options),
    }?;
    result.model = kind.as_str().to_string();
    Ok(result)
}

/// Checks a history against any model.
pub fn check_model<M: Model>(
    model: &M,
    history: &[Op],
    options: &LinOptions,
) -> Result<LinResult, ModelError> {
    let start = Instant::now();
    let deadline = options.time_limit.map(|t| start + t);
    let parts = partitions(model, history)?;
    let describe = |call| explain::describe_op(history, call);
    let shared = Shared::default();
    let mut result = check_partitions(model, parts, options, deadline, &describe, &shared);
    result.elapsed_ms = start.elapsed().as_millis() as u64;
    Ok(result)
}

/// What the searches of one check share, however many calls of `check_partitions` make
/// them: when to stop, the memory their caches hold, and the failures explained so far.
#[derive(Default)]
struct Shared {
    memory_used: AtomicUsize,
    /// Set when any search gives up, so the others stop too.
    cancelled: AtomicBool,
    reason: OnceLock<&'static str>,
    /// Set once a partition is not linearizable (unless `all_partitions`): the others stop.
    decided: AtomicBool,
    /// Failures explained, or being explained; at most `FAILURES_EXPLAINED` are.
    explained: AtomicUsize,
}

/// Searches partitions already built, explaining failing ones with `describe` (an op, by
/// the index of its invoke, in words) while `shared` has room; `elapsed_ms` is left to the
/// caller.
fn check_partitions<M: Model>(
    model: &M,
    mut parts: Vec<Partition<M::Input>>,
    options: &LinOptions,
    deadline: Option<Instant>,
    describe: &dyn Fn(u64) -> String,
    shared: &Shared,
) -> LinResult {
    let models: Vec<M> = parts
        .iter_mut()
        .map(|p| model.for_partition(&mut p.ops))
        .collect();
    let verdicts = search_all(&models, &parts, options, deadline, shared);
    let mut result = LinResult {
        keys: parts.len(),
        ops: parts.iter().map(|p| p.ops.len()).sum(),
        ..LinResult::default()
    };
    for ((part, verdict), model) in parts.iter().zip(&verdicts).zip(&models) {
        match verdict {
            Verdict::Linearizable => {}
            Verdict::NotLinearizable { longest, failing } => {
                result.illegal_keys += 1;
                if shared.explained.fetch_add(1, Ordering::Relaxed) < FAILURES_EXPLAINED {
                    let start = init(model, part);
                    let limit = options.memory_limit;
                    let found = explain::Found {
                        longest,
                        failing: *failing,
                    };
                    let failure =
                        explain::failure(model, part, start, found, deadline, limit, describe);
                    result.failures.push(failure);
                }
            }
            Verdict::Unknown(reason) => {
                result.unknown_keys += 1;
                result.reason = Some(reason.to_string());
            }
            Verdict::NotSearched => result.not_searched_keys += 1,
        }
    }
    result.valid = result.verdict();
    result
}

impl LinResult {
    /// Invalid when some partition is not linearizable, else unknown when some search gave
    /// up, else valid.
    fn verdict(&self) -> Validity {
        if self.illegal_keys > 0 {
            Validity::Invalid
        } else if self.unknown_keys > 0 {
            Validity::Unknown
        } else {
            Validity::Valid
        }
    }

    /// Adds the partitions of another part of the same history (`spill`); its failures are
    /// put in key order, as one search of the whole history gives them.
    fn absorb(&mut self, other: LinResult) {
        self.keys += other.keys;
        self.illegal_keys += other.illegal_keys;
        self.unknown_keys += other.unknown_keys;
        self.not_searched_keys += other.not_searched_keys;
        self.ops += other.ops;
        self.reason = other.reason.or(self.reason.take());
        self.failures.extend(other.failures);
        self.failures.sort_by(|a, b| a.key.cmp(&b.key));
        self.valid = self.verdict();
    }
}

/// The state partition `part` starts in.
fn init<M: Model>(model: &M, part: &Partition<M::Input>) -> M::State {
    model.init(part.key.as_deref())
}

/// Searches the partitions (each with its own model), biggest first, on `options.threads` threads; once one is not
/// linearizable the others stop (are not searched), unless `options.all_partitions`.
fn search_all<M: Model>(
    models: &[M],
    parts: &[Partition<M::Input>],
    options: &LinOptions,
    deadline: Option<Instant>,
    shared: &Shared,
) -> Vec<Verdict> {
    let decided = &shared.decided;
    let limits = limits(options, deadline, shared);
    let mut order: Vec<usize> = (0..parts.len()).collect();
    order.sort_by_key(|&i| std::cmp::Reverse(parts[i].ops.len()));
    // A read out of bounds is found in one pass over a key: every key is looked at so
    // before any long search starts, so that a refuted key decides at once.
    let mut refuted: Vec<Option<Verdict>> = vec![None; parts.len()];
    for &i in &order {
        if let Some(failing) = models[i].refute(&init(&models[i], &parts[i]), &parts[i].ops) {
            refuted[i] = Some(Verdict::NotLinearizable {
                longest: Vec::new(),
                failing: Some(failing),
            });
            if !options.all_partitions {
                decided.store(true, Ordering::Relaxed);
                break;
            }
        }
    }
    let searched = workers::in_parallel(order.len(), options.threads, |k| {
        let i = order[k];
        if refuted[i].is_some() || decided.load(Ordering::Relaxed) {
            return None;
        }
        let verdict = search(
            &models[i],
            init(&models[i], &parts[i]),
            &parts[i].ops,
            &limits,
        );
        let illegal = matches!(verdict, Verdict::NotLinearizable { .. });
        if illegal && !options.all_partitions {
            decided.store(true, Ordering::Relaxed);
        }
        Some(verdict)
    });
    let mut verdicts = refuted;
    for (&i, verdict) in order.iter().zip(searched) {
        if verdict.is_some() {
            verdicts[i] = verdict;
        }
    }
    verdicts
        .into_iter()
        .map(|v| v.unwrap_or(Verdict::NotSearched))
        .collect()
}

/// The limits of the searches of one check.
fn limits<'a>(options: &LinOptions, deadline: Option<Instant>, shared: &'a Shared) -> Limits<'a> {
    Limits {
        reason: &shared.reason,
        deadline,
        memory_limit: options.memory_limit,
        memory_used: &shared.memory_used,
        cancelled: &shared.cancelled,
        decided: &shared.decided,
        generic: options.generic,
    }
}

/// Searches one long partition for a witness holding a window of its ops, which `source`
/// gives in call order, within the limits of the check's other searches.
fn search_windowed<M: Model>(
    model: &M,
    init: M::State,
    source: &mut dyn Source<M::Input>,
    options: &LinOptions,
    deadline: Option<Instant>,
    shared: &Shared,
) -> std::io::Result<Windowed> {
    let limits = limits(options, deadline, shared);
    search::search_windowed(model, init, source, &limits, options.window)
}
