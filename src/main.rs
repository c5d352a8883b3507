//! The `checker` binary: parses the command line, runs the command, prints the error chain,
//! and picks the exit code in one place (0 valid, 1 invalid, 2 unknown, 130 a soak stopped
//! by a signal, 254 bad input, 255 internal error).

use anyhow::Context;
use checker::cli::{dispatch, Cli, Command, Done, NodeArgs};
use checker::error::BadInput;
use clap::Parser;
use std::process::ExitCode;

const BAD_INPUT: u8 = 254;
const INTERNAL: u8 = 255;

fn main() -> ExitCode {
    return_large_blocks();
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
        runtime_for(&cli.command)
            .enable_all()
            .build()
            .context("starting the async runtime")
            .and_then(|runtime| runtime.block_on(dispatch(cli.command)))
    });
    match outcome {
        Ok(Ok(Done::Verdict(verdict))) => ExitCode::from(verdict.exit_code() as u8),
        Ok(Ok(Done::NoVerdict)) => ExitCode::SUCCESS,
        Ok(Ok(Done::Interrupted)) => ExitCode::from(checker::shutdown::INTERRUPTED_EXIT),
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

/// The runtime a command runs on: a node asked for one thread gets a single-threaded one,
/// for more that many workers; everything else a worker per core.
fn runtime_for(command: &Command) -> tokio::runtime::Builder {
    match command {
        Command::Node(args) if args.threads == Some(1) => {
            tokio::runtime::Builder::new_current_thread()
        }
        Command::Node(NodeArgs {
            threads: Some(n), ..
        }) => {
            let mut builder = tokio::runtime::Builder::new_multi_thread();
            builder.worker_threads(usize::from(*n));
            builder
        }
        _ => tokio::runtime::Builder::new_multi_thread(),
    }
}

/// Blocks of 1 MiB and more (a counter's ops, a spill group's records) come from the system
/// and go back to it when freed. By default glibc raises that threshold as large blocks are
/// freed and then keeps them: a check of 2 M ops held 290 MB resident instead of 217 MB.
fn return_large_blocks() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    // SAFETY: sets one allocator parameter, before any other thread exists.
    unsafe {
        libc::mallopt(libc::M_MMAP_THRESHOLD, 1 << 20);
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
