//! The `checker` binary: parses the command line, runs the command, prints the error chain,
//! and picks the exit code in one place (0 valid, 1 invalid, 2 unknown, 254 bad input, 255
//! internal error).

use anyhow::Context;
use checker::analysis::BadInput;
use checker::api::ClusterSettings;
use checker::cli::{Cli, Command, NodeArgs, RunArgs};
use checker::node::{serve, NodeConfig};
use checker::run::{run, RunPlan};
use checker::workload;
use checker::{browse, offline, soak};
use checkers::Validity;
use clap::Parser;
use std::process::ExitCode;

const BAD_INPUT: u8 = 254;
const INTERNAL: u8 = 255;

/// What a command ended in: a verdict, or nothing to judge (a node that stopped).
enum Done {
    Verdict(Validity),
    NoVerdict,
}

fn main() -> ExitCode {
    let cli = match Cli::try_parse() {
        Ok(cli) => cli,
        Err(e) => {
            let _ = e.print();
            return if e.use_stderr() {
                ExitCode::from(BAD_INPUT)
            } else {
                ExitCode::SUCCESS
            };
        }
    };
    init_logging(&cli.command);
    let outcome = std::panic::catch_unwind(|| {
        tokio::runtime::Builder::new_multi_thread()
            .enable_all()
            .build()
            .context("starting the async runtime")
            .and_then(|runtime| runtime.block_on(dispatch(cli.command)))
    });
    match outcome {
        Ok(Ok(Done::Verdict(verdict))) => ExitCode::from(verdict.exit_code() as u8),
        Ok(Ok(Done::NoVerdict)) => ExitCode::SUCCESS,
        Ok(Err(e)) => {
            eprintln!("error: {e:#}");
            if e.chain().any(|c| c.is::<BadInput>()) {
                ExitCode::from(BAD_INPUT)
            } else {
                ExitCode::from(INTERNAL)
            }
        }
        Err(_) => ExitCode::from(INTERNAL),
    }
}

fn init_logging(command: &Command) {
    let default = match command {
        Command::Node(_) => "info",
        _ => "warn",
    };
    let filter = tracing_subscriber::EnvFilter::try_from_default_env()
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new(default));
    let _ = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr)
        .with_ansi(std::io::IsTerminal::is_terminal(&std::io::stderr()))
        .try_init();
}

async fn dispatch(command: Command) -> anyhow::Result<Done> {
    match command {
        Command::Run(args) => run(plan(args)?).await.map(|o| Done::Verdict(o.verdict)),
        Command::Check(args) => offline::check(args).map(Done::Verdict),
        Command::Workloads => {
            for (name, summary) in workload::list() {
                println!("{name:<22} {summary}");
            }
            Ok(Done::NoVerdict)
        }
        Command::Lin(args) => offline::lin(args).map(Done::Verdict),
        Command::Export(args) => offline::export(args).map(|()| Done::NoVerdict),
        Command::Node(args) => node(args).await.map(|()| Done::NoVerdict),
        Command::Report(args) => browse::report(args).map(|()| Done::NoVerdict),
        Command::Serve(args) => browse::serve(args).await.map(|()| Done::NoVerdict),
        Command::Soak(args) => soak::soak(args)
            .await
            .map(|within| Done::Verdict(Validity::from_findings(!within, false))),
        Command::Replay(args) => soak::replay(args).await.map(Done::Verdict),
    }
}

/// The workload file with the flags applied on top.
fn plan(args: RunArgs) -> anyhow::Result<RunPlan> {
    let mut w = workload::load(&args.workload).map_err(BadInput::from)?;
    w.nodes = args.nodes.unwrap_or(w.nodes);
    w.time_limit = args.time_limit.unwrap_or(w.time_limit);
    w.concurrency = args.concurrency.unwrap_or(w.concurrency);
    w.rate = args.rate.unwrap_or(w.rate);
    if !args.target.is_empty() {
        // The service is someone else's: its settings are its own business.
        w.nodes = args.target.len();
        w.cluster.rf = w.cluster.rf.min(w.nodes);
        w.nemesis.faults.clear();
    }
    w.validate()
        .map_err(|message| BadInput::Usage(format!("flags: {message}")))?;
    Ok(RunPlan {
        workload: w,
        seed: args
            .seed
            .unwrap_or_else(|| u64::from(rand::random::<u32>())),
        results: args.results,
        panic_after_start: args.panic_after_start,
        targets: args.target,
    })
}

async fn node(args: NodeArgs) -> anyhow::Result<()> {
    let settings = match &args.settings {
        Some(path) => {
            let text = std::fs::read_to_string(path)
                .with_context(|| format!("reading {}", path.display()))?;
            serde_json::from_str(&text)
                .map_err(|e| BadInput::Usage(format!("{}: {e}", path.display())))?
        }
        None => ClusterSettings::default(),
    };
    let data_dir = args.data_dir.unwrap_or_else(|| {
        std::env::temp_dir().join(format!("checker-node-{}-{}", args.id, std::process::id()))
    });
    let config = NodeConfig {
        id: args.id,
        listen: args.listen,
        peers: args.peers.into_iter().collect(),
        settings,
        data_dir,
        exit_with_parent: args.exit_with_parent,
    };
    serve(config)
        .await
        .with_context(|| format!("serving node on {}", args.listen))
}
