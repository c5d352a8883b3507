//! `checker run` and `checker replay`: a workload run end to end, from a workload file with
//! flags on top, or again from a run folder's record.

use crate::driver::{sequences, target};
use crate::error::BadInput;
use crate::runner::{run as run_plan, RunPlan};
use crate::store::{RunFolder, RunRecord};
use crate::workload::system::System;
use crate::workload::{self, mix::Pattern, net::NetMode};
use checkers::Validity;
use clap::Args;
use std::path::PathBuf;

/// `checker run`.
#[derive(Debug, Args)]
pub struct RunArgs {
    /// A workload name (workloads/NAME.toml) or a path to a workload file.
    #[arg(long, short)]
    pub workload: String,
    /// Number of nodes (overrides the workload).
    #[arg(long)]
    pub nodes: Option<usize>,
    /// How long the load runs, in seconds (overrides the workload).
    #[arg(long)]
    pub time_limit: Option<f64>,
    /// Concurrent clients (overrides the workload).
    #[arg(long)]
    pub concurrency: Option<usize>,
    /// Total ops per second across all clients (overrides the workload).
    #[arg(long)]
    pub rate: Option<f64>,
    /// Seed of the op generator (at most 2^53 - 1); random when left out, and printed
    /// either way.
    #[arg(long, value_parser = crate::workload::seed::parse)]
    pub seed: Option<u64>,
    /// Where run folders go.
    #[arg(long, default_value = "results")]
    pub results: PathBuf,
    /// Drive an already running service that speaks the node API instead of starting nodes
    /// (`http://HOST:PORT` or `HOST:PORT`, comma separated); no process-level faults.
    #[arg(long, value_delimiter = ',', value_parser = target::parse)]
    pub target: Vec<String>,
    /// With `--target`: use the workload's keys as they are, instead of moving them to a
    /// namespace of this run's own; counts they already hold are read first, and the
    /// checkers start from them.
    #[arg(long, requires = "target")]
    pub keys_as_is: bool,
    /// The target cannot tell an absent counter from 0: check `null` and `0` as the same
    /// (sets the workload's `absent_is_zero`).
    #[arg(long)]
    pub absent_is_zero: bool,
    /// Where the nodes live and who plays network faults (overrides the workload):
    /// `loopback` (the nodes' own fault plane) or `netns` (a network namespace per node,
    /// partitions as nftables rules; needs root).
    #[arg(long)]
    pub net: Option<NetMode>,
    /// The system under test (overrides the workload): `bundled` (our nodes), `etcd` or
    /// `redis` (with Sentinel), started by the run from the binaries on PATH.
    #[arg(long, conflicts_with_all = ["target", "sim"])]
    pub system: Option<System>,
    /// Run the whole cluster in this process on a simulated network and clock: the same
    /// seed gives the same history, byte for byte, and faster than real time.
    #[arg(long, conflicts_with_all = ["target", "net"])]
    pub sim: bool,
    /// Panic once the cluster is up: for testing that no node outlives a crashed run.
    #[arg(long, hide = true)]
    pub panic_after_start: bool,
}

/// `checker replay`.
#[derive(Debug, Args)]
pub struct ReplayArgs {
    /// The run folder to replay (it holds run.json).
    pub run_dir: PathBuf,
    /// Where the new run folder goes.
    #[arg(long, default_value = "results")]
    pub results: PathBuf,
}

/// `checker run`.
pub async fn run(args: RunArgs) -> anyhow::Result<Validity> {
    Ok(run_plan(plan(args)?).await?.verdict)
}

/// The workload file with the flags applied on top.
fn plan(args: RunArgs) -> anyhow::Result<RunPlan> {
    let mut w = workload::load(&args.workload).map_err(BadInput::from)?;
    w.nodes = args.nodes.unwrap_or(w.nodes);
    w.time_limit = args.time_limit.unwrap_or(w.time_limit);
    w.concurrency = args.concurrency.unwrap_or(w.concurrency);
    w.rate = args.rate.unwrap_or(w.rate);
    w.absent_is_zero |= args.absent_is_zero;
    w.net = args.net.unwrap_or(w.net);
    w.system = args.system.unwrap_or(w.system);
    if args.sim {
        // The simulation has a network of its own.
        w.net = NetMode::Loopback;
    }
    if !args.target.is_empty() {
        // The service is someone else's: its settings are its own business.
        w.nodes = args.target.len();
        w.cluster.rf = w.cluster.rf.min(w.nodes);
        if !args.keys_as_is {
            // Counters the target kept from earlier runs are not this run's.
            w.keys = target::namespaced(&w.keys, &target::fresh_namespace());
        } else if w.pattern != Pattern::Counters {
            // The baseline reads the listed keys; these patterns write cells of their own.
            return Err(BadInput::Usage(format!(
                "--keys-as-is reads a baseline of the workload's keys, but the `{}` pattern writes cells the keys do not name: drop --keys-as-is (keys then get a namespace of the run's own)",
                w.pattern.as_str()
            ))
            .into());
        }
    }
    w.validate()
        .map_err(|message| BadInput::Usage(format!("flags: {message}")))?;
    Ok(RunPlan {
        workload: w,
        seed: args.seed.unwrap_or_else(crate::workload::seed::random),
        results: args.results,
        panic_after_start: args.panic_after_start,
        targets: args.target,
        keys_as_is: args.keys_as_is,
        sim: args.sim,
    })
}

/// `checker replay`: the run folder's workload again, with its seed and configuration.
pub async fn replay(args: ReplayArgs) -> anyhow::Result<Validity> {
    let record = RunRecord::read(&RunFolder::open(&args.run_dir))
        .map_err(|e| BadInput::Usage(e.to_string()))?;
    eprintln!(
        "replaying {} · workload {} · seed {}",
        args.run_dir.display(),
        record.workload.name,
        record.seed
    );
    record
        .workload
        .validate()
        .map_err(|e| BadInput::Usage(format!("{}: its workload: {e}", args.run_dir.display())))?;
    let (concurrency, sim) = (record.workload.concurrency, record.sim);
    let time_keyed = record.workload.pattern == Pattern::TimeBuckets;
    let plan = RunPlan {
        workload: record.workload,
        seed: record.seed,
        results: args.results,
        panic_after_start: false,
        targets: Vec::new(),
        keys_as_is: false,
        sim,
    };
    let outcome = run_plan(plan).await?;
    let original = RunFolder::open(&args.run_dir).history();
    let replayed = RunFolder::open(&outcome.dir).history();
    let drawn = |path: &std::path::Path| sequences::per_client(path, concurrency, time_keyed);
    // The replay's verdict stands whatever the comparison finds.
    let line = match (drawn(&original), drawn(&replayed)) {
        (Ok(Some(a)), Ok(Some(b))) => agreement_line(&sequences::compare(&a, &b)),
        (Ok(None), _) | (_, Ok(None)) => "per-client op sequences: not compared, the original numbers its processes otherwise (a run by an older checker)".to_string(),
        (Err(e), _) | (_, Err(e)) => format!("per-client op sequences: not compared: {e}"),
    };
    eprintln!("{line}");
    if sim {
        eprintln!("{}", same_bytes(&original, &replayed));
    }
    Ok(outcome.verdict)
}

/// What `replay` of a simulated run says of the two histories: a simulation promises the
/// same bytes.
fn same_bytes(original: &std::path::Path, replayed: &std::path::Path) -> String {
    match (std::fs::read(original), std::fs::read(replayed)) {
        (Ok(a), Ok(b)) if a == b => format!(
            "history: the same bytes as the original ({} bytes, {} lines)",
            a.len(),
            a.iter().filter(|&&c| c == b'\n').count()
        ),
        (Ok(a), Ok(b)) => {
            let at = a.iter().zip(&b).take_while(|(x, y)| x == y).count();
            let line = a[..at].iter().filter(|&&c| c == b'\n').count() + 1;
            format!(
                "history: differs from the original at byte {at} (line {line}): not the same run"
            )
        }
        (Err(e), _) | (_, Err(e)) => format!("history: not compared: {e}"),
    }
}

/// What `replay` says of the two runs' per-client op sequences.
fn agreement_line(a: &sequences::Agreement) -> String {
    match a.first_difference {
        None => format!(
            "per-client op sequences: all {} clients drew the same ops as the original ({} ops compared; where the time limit cut each run may differ)",
            a.clients, a.compared
        ),
        Some((client, op)) => format!(
            "per-client op sequences: {} of {} clients drew different ops from the original, first client {client} at its op {op}: not the same run",
            a.clients - a.matching,
            a.clients
        ),
    }
}
