//! The command line: every flag defined once, help generated from it, one file per family
//! of commands; `dispatch` runs the command and returns what it ended in.

mod check;
mod hunt;
mod node;
mod report;
mod run;
mod soak;

pub use check::{CheckArgs, ExportArgs, ExportFormat, LinArgs};
pub use hunt::HuntArgs;
pub use node::NodeArgs;
pub use report::{ReportArgs, ServeArgs};
pub use run::{ReplayArgs, RunArgs};
pub use soak::SoakArgs;

use anyhow::Context;
use checkers::Validity;
use clap::{Parser, Subcommand};

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
    /// Run a workload in simulation under many seeds; list the seeds that broke the budget.
    Hunt(HuntArgs),
}

/// What a command ended in: a verdict, or nothing to judge (a listing, a node that stopped).
pub enum Done {
    /// The verdict, which picks the exit code.
    Verdict(Validity),
    /// Nothing to judge.
    NoVerdict,
    /// Stopped by a signal before it was done (exit 130).
    Interrupted,
}

/// Runs a command.
pub async fn dispatch(command: Command) -> anyhow::Result<Done> {
    if matches!(
        command,
        Command::Run(_)
            | Command::Replay(_)
            | Command::Soak(_)
            | Command::Serve(_)
            | Command::Hunt(_)
    ) {
        crate::shutdown::listen().context("listening for SIGINT, SIGTERM and SIGHUP")?;
    }
    match command {
        Command::Run(args) => run::run(args).await.map(Done::Verdict),
        Command::Replay(args) => run::replay(args).await.map(Done::Verdict),
        Command::Check(args) => check::check(args).map(Done::Verdict),
        Command::Lin(args) => check::lin(args).map(Done::Verdict),
        Command::Export(args) => check::export(args).map(|()| Done::NoVerdict),
        Command::Workloads => {
            check::workloads();
            Ok(Done::NoVerdict)
        }
        Command::Report(args) => report::report(args).map(|()| Done::NoVerdict),
        Command::Serve(args) => report::serve(args).await.map(|()| Done::NoVerdict),
        Command::Soak(args) => soak::soak(args).await,
        Command::Hunt(args) => hunt::hunt(args).await,
        Command::Node(args) => node::node(args).await.map(|()| Done::NoVerdict),
    }
}
