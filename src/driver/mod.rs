//! The driver: clients that perform the workload's ops against the cluster and record every
//! invoke and completion in the history.

mod client;
pub mod etcd;
mod nemesis;
mod pacer;
pub mod plane;
mod progress;
mod recorder;
pub mod redis;
pub mod sequences;
pub mod system_plane;
pub mod target;

pub use client::{outcome_of, CounterClient, HttpClient, Outcome};
pub use nemesis::Nemesis;
pub use plane::{Plane, Processes};
pub use progress::Progress;
pub use recorder::{Recorder, Tally};

use crate::api::ConsistencyLevel;
use crate::api::DeleteScope;
use crate::api::{CounterKey, KeyError};
use crate::workload::{Generator, Planned, RetryPolicy, Workload};
use checkers::history::HistoryError;
use checkers::{Op, OpType, Process, F};
use pacer::Pacer;
use serde_json::{json, Value};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;
use tokio::time::Instant;

/// Why the load could not be driven to its end.
#[derive(Debug, thiserror::Error)]
pub enum DriveError {
    /// The history could not be written.
    #[error(transparent)]
    History(#[from] HistoryError),
    /// The workload names a key that is not a counter key.
    #[error(transparent)]
    Key(#[from] KeyError),
    /// A client task panicked.
    #[error("a client task failed: {0}")]
    Client(String),
}

/// Everything the clients share.
struct Shared<C> {
    client: Arc<C>,
    workload: Workload,
    recorder: Arc<Recorder>,
    pacer: Pacer,
    stop: Arc<AtomicBool>,
    started: Instant,
    deadline: Instant,
    invoked: AtomicU64,
}

impl<C> Shared<C> {
    /// Whether the run was stopped or ran out of time: no retry is started then.
    fn out_of_time(&self) -> bool {
        self.stop.load(Ordering::Relaxed) || Instant::now() >= self.deadline
    }

    /// Claims one of the run's ops; `false` when out of time or out of ops.
    fn claim_op(&self) -> bool {
        !self.out_of_time()
            && self.invoked.fetch_add(1, Ordering::Relaxed) < self.workload.ops_limit
    }
}

/// Runs the workload's clients until the time limit, the ops limit, or `stop` is set.
pub async fn drive<C: CounterClient>(
    client: Arc<C>,
    workload: &Workload,
    seed: u64,
    recorder: Arc<Recorder>,
    stop: Arc<AtomicBool>,
) -> Result<(), DriveError> {
    let concurrency = workload.concurrency as u64;
    let shared = Arc::new(Shared {
        client,
        workload: workload.clone(),
        recorder,
        pacer: Pacer::new(workload.rate),
        stop,
        started: Instant::now(),
        deadline: Instant::now() + Duration::from_secs_f64(workload.time_limit),
        invoked: AtomicU64::new(0),
    });
    let mut tasks = tokio::task::JoinSet::new();
    for client in 0..concurrency {
        let generator = Generator::new(workload, seed, client)?;
        tasks.spawn(run_client(shared.clone(), generator, client));
    }
    let mut first_error = None;
    while let Some(joined) = tasks.join_next().await {
        let result = joined.unwrap_or_else(|e| Err(DriveError::Client(e.to_string())));
        if let Err(e) = result {
            shared.stop.store(true, Ordering::Relaxed);
            first_error.get_or_insert(e);
        }
    }
    first_error.map_or(Ok(()), Err)
}

async fn run_client<C: CounterClient>(
    shared: Arc<Shared<C>>,
    mut generator: Generator,
    mut process: u64,
) -> Result<(), DriveError> {
    loop {
        shared.pacer.wait().await;
        if !shared.claim_op() {
            return Ok(());
        }
        let recorder = &shared.recorder;
        let (_, kind) = match generator.next_op(shared.started.elapsed().as_secs_f64()) {
            Planned::Add { key, delta, node } => {
                add_with_retries(&shared, &mut process, &key, delta, node).await?;
                continue;
            }
            Planned::Read { key, node } => {
                let cl = shared.workload.read_cl;
                let invoke = call(process, F::Read, &key.to_string(), cl);
                perform(recorder, invoke, shared.client.read(node, &key, cl)).await?
            }
            Planned::Delete { key, scope, node } => {
                let cl = shared.workload.delete_cl;
                let target = match scope {
                    DeleteScope::Partition => key.partition.clone(),
                    _ => key.to_string(),
                };
                let mut invoke = call(process, F::Delete, &target, cl);
                if scope == DeleteScope::Column {
                    invoke.value = json!({"scope": "column"});
                }
                perform(
                    recorder,
                    invoke,
                    shared.client.delete(node, &key, scope, cl),
                )
                .await?
            }
            Planned::Scan { partition, node } => {
                let cl = shared.workload.scan_cl;
                let invoke = call(process, F::Scan, &partition, cl);
                perform(recorder, invoke, shared.client.scan(node, &partition, cl)).await?
            }
        };
        retire_if_unknown(&shared, &mut process, kind);
    }
}

/// Performs an add, and retries it after a timeout as the retry policy says; every retry
/// is a new op of a new process, naming the invoke it retries.
async fn add_with_retries<C: CounterClient>(
    shared: &Shared<C>,
    process: &mut u64,
    key: &CounterKey,
    delta: i64,
    node: usize,
) -> Result<(), DriveError> {
    let cl = shared.workload.write_cl;
    let retries = match shared.workload.retry {
        RetryPolicy::None | RetryPolicy::Drop => 0,
        RetryPolicy::OnTimeout(n) => n,
    };
    let mut retry_of = None;
    for attempt in 0..=retries {
        let mut invoke = call(*process, F::Add, &key.to_string(), cl);
        invoke.value = json!(delta);
        invoke.retry_of = retry_of;
        // A driver retries on the next host of its query plan.
        let sent = shared.client.add(node + attempt as usize, key, delta, cl);
        let (index, kind) = perform(&shared.recorder, invoke, sent).await?;
        retire_if_unknown(shared, process, kind);
        if kind != OpType::Info || attempt == retries || shared.out_of_time() {
            break;
        }
        retry_of = Some(index);
    }
    Ok(())
}

/// Records `invoke`, then sends the request (`outcome` runs only when awaited, so the invoke
/// is on record first), then records the completion; returns the invoke's index and how the
/// op ended.
async fn perform(
    recorder: &Recorder,
    invoke: Op,
    outcome: impl std::future::Future<Output = Outcome>,
) -> Result<(u64, OpType), DriveError> {
    let index = recorder.record(invoke.clone())?;
    let outcome = outcome.await;
    let kind = outcome.kind;
    recorder.record(completion(&invoke, outcome))?;
    Ok((index, kind))
}

/// A process whose op ended in `info` is retired for a new one of the same client: the
/// next number that client `process mod concurrency` names (Jepsen's convention), so the
/// history says which client made every op.
fn retire_if_unknown<C>(shared: &Shared<C>, process: &mut u64, kind: OpType) {
    if kind == OpType::Info {
        *process += shared.workload.concurrency as u64;
    }
}

/// The completion of `invoke` with `outcome`; an add keeps its delta as its value.
fn completion(invoke: &Op, outcome: Outcome) -> Op {
    let mut done = invoke.clone();
    done.kind = outcome.kind;
    done.retry_of = None;
    if invoke.f != F::Add {
        done.value = outcome.value;
    }
    done.node = outcome.node;
    done.error = outcome.error;
    done.tombstones = outcome.tombstones;
    done
}

/// The invoke of `f` on `key` by client `process` at `cl`, with a null value.
fn call(process: u64, f: F, key: &str, cl: ConsistencyLevel) -> Op {
    let mut op = Op::new(
        Process::Client(process),
        OpType::Invoke,
        f,
        Some(key.to_string()),
        Value::Null,
    );
    op.cl = Some(cl.to_string());
    op
}

/// The end of a run: every counter read from every node at ALL (partitions scanned, for the
/// queue and time-bucket patterns), after a `final-reads` marker in the history.
pub async fn final_reads<C: CounterClient>(
    client: &C,
    workload: &Workload,
    recorder: &Recorder,
) -> Result<(), DriveError> {
    let marker = Op::new(
        Process::nemesis(),
        OpType::Info,
        F::from("final-reads".to_string()),
        None,
        Value::Null,
    );
    recorder.record(marker)?;
    let mut keys: Vec<CounterKey> = workload
        .keys
        .iter()
        .map(|k| k.parse())
        .collect::<Result<_, _>>()?;
    if workload.pattern == crate::workload::mix::Pattern::TimeBuckets {
        // Every bucket the run wrote to.
        let buckets = (workload.time_limit / workload.bucket_s).ceil() as u64;
        keys = keys
            .iter()
            .flat_map(|k| {
                (0..=buckets).map(move |b| CounterKey {
                    partition: k.partition.clone(),
                    cell: format!("{}-b{b}", k.cell),
                })
            })
            .collect();
    }
    let mut partitions: Vec<String> = keys.iter().map(|k| k.partition.clone()).collect();
    partitions.dedup();
    // Final readers get process numbers no client uses.
    let mut process = checkers::op::FINAL_READERS;
    for node in 0..workload.nodes {
        let cl = ConsistencyLevel::All;
        if workload.pattern != crate::workload::mix::Pattern::Queue {
            for key in &keys {
                let invoke = call(process, F::Read, &key.to_string(), cl);
                perform(recorder, invoke, client.final_read(node, key)).await?;
                process += 1;
            }
        } else {
            for partition in &partitions {
                let invoke = call(process, F::Scan, partition, cl);
                perform(recorder, invoke, client.scan(node, partition, cl)).await?;
                process += 1;
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::api::DataCall;
    use checkers::history::{read_jsonl, ReadOptions};

    /// A service whose every add times out and whose reads return 0.
    struct TimingOut;

    impl CounterClient for TimingOut {
        async fn call(&self, _: usize, call: DataCall) -> Outcome {
            let ok = |value| Outcome {
                kind: OpType::Ok,
                value,
                node: Some("n1".into()),
                error: None,
                tombstones: Some(0),
            };
            match call {
                DataCall::Add { .. } => Outcome {
                    kind: OpType::Info,
                    value: Value::Null,
                    node: None,
                    error: Some("write_timeout".into()),
                    tombstones: None,
                },
                DataCall::Read { .. } | DataCall::Delete { .. } => ok(json!(0)),
                DataCall::Scan { .. } => ok(json!({})),
            }
        }
    }

    #[tokio::test]
    async fn timed_out_adds_keep_their_delta_and_are_retried_by_new_processes() {
        let dir = tempfile::tempdir().expect("temp dir");
        let path = dir.path().join("history.jsonl");
        let workload = Workload {
            concurrency: 2,
            rate: 1000.0,
            ops_limit: 6,
            mix: crate::workload::mix::Mix {
                add: 1.0,
                read: 0.0,
                delete: 0.0,
                scan: 0.0,
            },
            deltas: vec![3],
            retry: RetryPolicy::OnTimeout(2),
            ..Workload::default()
        };
        let recorder = Arc::new(Recorder::create(&path).expect("history file"));
        drive(
            Arc::new(TimingOut),
            &workload,
            1,
            recorder,
            Arc::new(AtomicBool::new(false)),
        )
        .await
        .expect("drives");
        let (ops, _) = read_jsonl(&path, ReadOptions::default()).expect("a readable history");
        // 6 intended adds, each tried 3 times: 18 invokes and 18 info completions.
        assert_eq!(ops.len(), 36);
        assert!(ops.iter().all(|op| op.f == F::Add && op.value == json!(3)));
        let retries = ops.iter().filter(|op| op.retry_of.is_some()).count();
        assert_eq!(retries, 12);
        // Every info retires its process: no process number invokes twice.
        let mut invokers: Vec<&Process> = ops
            .iter()
            .filter(|op| op.kind == OpType::Invoke)
            .map(|op| &op.process)
            .collect();
        invokers.sort();
        invokers.dedup();
        assert_eq!(invokers.len(), 18);
        // Each retry names an earlier invoke of the same delta.
        for op in ops.iter().filter(|op| op.retry_of.is_some()) {
            let original = &ops[op.retry_of.expect("checked") as usize];
            assert_eq!(
                (original.kind, original.f.clone()),
                (OpType::Invoke, F::Add)
            );
            assert!(original.index < op.index);
        }
    }
}
