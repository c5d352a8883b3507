//! The command line: every flag defined once, help generated from it.

use clap::{Args, Parser, Subcommand};
use std::net::SocketAddr;
use std::path::PathBuf;

/// Jepsen-style accuracy and linearizability checker for distributed counters.
#[derive(Debug, Parser)]
#[command(name = "checker", version, about)]
pub struct Cli {
    /// What to do.
    #[command(subcommand)]
    pub command: Command,
}

/// The subcommands.
#[derive(Debug, Subcommand)]
pub enum Command {
    /// Start a cluster, drive a workload at it, check the history and chart it.
    Run(RunArgs),
    /// Check a run folder or a history file offline.
    Check(CheckArgs),
    /// List the bundled workloads, one line each.
    Workloads,
    /// Check a history for linearizability against a model (ours, Jepsen's or Porcupine's).
    Lin(LinArgs),
    /// Write a history in another format (Jepsen EDN).
    Export(ExportArgs),
    /// Serve one bundled counter node (started by `run`; useful by hand too).
    Node(NodeArgs),
    /// Rebuild the charts and report pages of run folders, and the index of runs.
    Report(ReportArgs),
    /// Serve the results folder on 127.0.0.1 for browsing the reports.
    Serve(ServeArgs),
    /// Run workloads back to back for a set time, each held to its accuracy budget.
    Soak(SoakArgs),
    /// Run a run folder's workload again, with its seed and configuration.
    Replay(ReplayArgs),
}

/// `checker soak`.
#[derive(Debug, Args)]
pub struct SoakArgs {
    /// How long to keep starting runs (`8h`, `30m`, `90s`, `1h 30m`).
    #[arg(long)]
    pub duration: String,
    /// The workloads, in the order they take turns (names or paths, comma separated).
    #[arg(long, default_value = "soak")]
    pub workloads: String,
    /// The soak's seed; each run's seed is derived from it and printed.
    #[arg(long)]
    pub seed: Option<u64>,
    /// Keep the folders of only the newest N runs (the summary keeps every run's figures).
    #[arg(long)]
    pub keep: Option<usize>,
    /// Budgets overriding the workloads' own: a TOML file with a table per workload.
    #[arg(long)]
    pub budget: Option<PathBuf>,
    /// Each run's length in seconds, instead of its workload's `time_limit`.
    #[arg(long)]
    pub run_time: Option<f64>,
    /// The soak folder (default `results/soak-<time>`).
    #[arg(long)]
    pub out: Option<PathBuf>,
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

/// `checker report`.
#[derive(Debug, Args)]
pub struct ReportArgs {
    /// A run folder, or a folder of runs (`results/`, laid out `<workload>/<stamp>/`).
    #[arg(default_value = "results")]
    pub path: PathBuf,
}

/// `checker serve`.
#[derive(Debug, Args)]
pub struct ServeArgs {
    /// The folder of runs to serve.
    #[arg(long, default_value = "results")]
    pub dir: PathBuf,
    /// The port on 127.0.0.1 (0: any free one, printed).
    #[arg(long, default_value_t = 8080)]
    pub port: u16,
}

/// `checker lin`.
#[derive(Debug, Args)]
pub struct LinArgs {
    /// A history file: history.jsonl, Jepsen or Knossos EDN, a Jepsen log, Porcupine kv.
    pub path: PathBuf,
    /// The model: counter, register, cas-register or kv.
    #[arg(long)]
    pub model: checkers::linear::ModelKind,
    /// The initial value, a JSON or EDN scalar (`0`, `nil`, `null`); without it a register
    /// starts empty and a counter absent.
    #[arg(long)]
    pub init: Option<checkers::linear::Val>,
    /// The file's format (jsonl, edn, jepsen-log, porcupine-kv); detected when left out.
    #[arg(long)]
    pub format: Option<checkers::history::Format>,
    /// Give up after this many seconds: the answer is then unknown.
    #[arg(long)]
    pub time_limit: Option<f64>,
    /// Write the page that explains a violation to this HTML file.
    #[arg(long)]
    pub html: Option<PathBuf>,
    /// Print the result as JSON instead of the summary.
    #[arg(long)]
    pub json: bool,
}

/// `checker export`.
#[derive(Debug, Args)]
pub struct ExportArgs {
    /// A history file (format detected from its content).
    pub path: PathBuf,
    /// The output format; `edn` is Jepsen's.
    #[arg(long, default_value = "edn")]
    pub format: ExportFormat,
    /// Where to write it; stdout when left out.
    #[arg(long, short)]
    pub output: Option<PathBuf>,
}

/// Formats `checker export` writes.
#[derive(Debug, Clone, Copy, clap::ValueEnum)]
pub enum ExportFormat {
    /// Jepsen EDN, one op map per line.
    Edn,
}

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
    /// Seed of the op generator; random when left out, and printed either way.
    #[arg(long)]
    pub seed: Option<u64>,
    /// Where run folders go.
    #[arg(long, default_value = "results")]
    pub results: PathBuf,
    /// Drive an already running service that speaks the node API instead of starting nodes
    /// (`http://HOST:PORT` or `HOST:PORT`, comma separated); no process-level faults.
    #[arg(long, value_delimiter = ',', value_parser = parse_target)]
    pub target: Vec<String>,
    /// Panic once the cluster is up: for testing that no node outlives a crashed run.
    #[arg(long, hide = true)]
    pub panic_after_start: bool,
}

/// `checker check`.
#[derive(Debug, Args)]
pub struct CheckArgs {
    /// A run folder (its results.json is rewritten) or a history.jsonl file.
    pub path: PathBuf,
    /// Print the results.json document to stdout instead of the summary.
    #[arg(long)]
    pub json: bool,
}

/// `checker node`.
#[derive(Debug, Args)]
pub struct NodeArgs {
    /// The node's id.
    #[arg(long)]
    pub id: String,
    /// Address to listen on; port 0 picks a free one, printed on stdout as JSON.
    #[arg(long, default_value = "127.0.0.1:0")]
    pub listen: SocketAddr,
    /// The other replicas: `n2=127.0.0.1:PORT,n3=...` (or set later with PUT /admin/peers).
    #[arg(long, value_delimiter = ',', value_parser = parse_peer)]
    pub peers: Vec<(String, String)>,
    /// The cluster's settings, a JSON file of the workload's `[cluster]` table; defaults
    /// when left out.
    #[arg(long)]
    pub settings: Option<PathBuf>,
    /// Where the commit log and flushed segments live; a new temporary folder when left out.
    #[arg(long)]
    pub data_dir: Option<PathBuf>,
    /// Exit when the process that started this node exits.
    #[arg(long)]
    pub exit_with_parent: bool,
}

fn parse_peer(s: &str) -> Result<(String, String), String> {
    match s.split_once('=') {
        Some((id, addr)) if !id.is_empty() && addr.parse::<SocketAddr>().is_ok() => {
            Ok((id.to_string(), addr.to_string()))
        }
        _ => Err(format!("expected ID=HOST:PORT, got `{s}`")),
    }
}

fn parse_target(s: &str) -> Result<String, String> {
    let addr = s.trim_start_matches("http://").trim_end_matches('/');
    match addr.rsplit_once(':') {
        Some((host, port)) if !host.is_empty() && port.parse::<u16>().is_ok() => {
            Ok(addr.to_string())
        }
        _ => Err(format!("expected http://HOST:PORT or HOST:PORT, got `{s}`")),
    }
}
