//! The offline commands: `check`, `lin`, `export` and `workloads` read a history or a
//! workload and never start a node.

use crate::check::{self, Target};
use crate::error::BadInput;
use crate::report::excerpt::{Excerpt, Wanted};
use crate::report::{linear_page, run_report, summary};
use crate::workload;
use anyhow::Context;
use checkers::history::{read_history, write_edn, ReadOptions, MAX_LINE_BYTES};
use checkers::ideal::Reading;
use checkers::linear::{self, LinOptions, LinResult, ModelKind};
use checkers::Validity;
use clap::Args;
use std::io::Write;
use std::path::PathBuf;
use std::time::{Duration, Instant};

/// What `check` and `lin` accept of a history.
#[derive(Debug, Args)]
pub struct ReadArgs {
    /// Accept a history with no operations (it then checks as valid).
    #[arg(long)]
    pub allow_empty: bool,
    /// Skip a completion without an invoke, or a second invoke from a busy process, with a
    /// warning, instead of stopping at it.
    #[arg(long)]
    pub lenient: bool,
    /// The longest line read, in bytes; a longer one is an error naming it.
    #[arg(long, default_value_t = MAX_LINE_BYTES as u64, value_parser = clap::value_parser!(u64).range(1..))]
    pub max_line_bytes: u64,
}

impl ReadArgs {
    /// The readers' options these flags say.
    pub fn options(&self) -> ReadOptions {
        ReadOptions {
            allow_empty: self.allow_empty,
            lenient: self.lenient,
            max_line_bytes: usize::try_from(self.max_line_bytes).unwrap_or(usize::MAX),
        }
    }
}

/// `checker check`.
#[derive(Debug, Args)]
pub struct CheckArgs {
    /// A run folder (its results.json is rewritten) or a history.jsonl file.
    pub path: PathBuf,
    /// Print the results.json document to stdout instead of the summary.
    #[arg(long)]
    pub json: bool,
    /// The target cannot tell an absent counter from 0: check `null` and `0` as the same
    /// (also on when the run's workload says `absent_is_zero`).
    #[arg(long)]
    pub absent_is_zero: bool,
    /// What the reader accepts.
    #[command(flatten)]
    pub read: ReadArgs,
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
    /// Give up when the process's resident memory passes this many megabytes: the answer is
    /// then unknown. Without it, what the process holds plus three quarters of the memory
    /// the machine has available.
    #[arg(long)]
    pub memory_limit: Option<u64>,
    /// Search every partition to the end (within the time limit), instead of stopping at the
    /// first that is not linearizable.
    #[arg(long)]
    pub all_partitions: bool,
    /// Use the generic search even where the model has a procedure of its own (the counter
    /// model's sweep): a cross-check, slower.
    #[arg(long)]
    pub generic: bool,
    /// Write the page that explains a violation to this HTML file.
    #[arg(long)]
    pub html: Option<PathBuf>,
    /// Print the result as JSON instead of the summary.
    #[arg(long)]
    pub json: bool,
    /// With the counter model: the target cannot tell an absent counter from 0, so `null`
    /// and `0` are the same value.
    #[arg(long)]
    pub absent_is_zero: bool,
    /// What the reader accepts.
    #[command(flatten)]
    pub read: ReadArgs,
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

/// `checker check`: every checker on a run folder or a history file.
pub fn check(args: CheckArgs) -> anyhow::Result<Validity> {
    let mut target = Target::resolve(&args.path)?;
    target.absent_is_zero = args.absent_is_zero;
    target.read = args.read.options();
    let results = check::check_streamed(&target)?;
    if let Some(folder) = &target.folder {
        // The page that explains a violation needs the failing window's ops: read again
        // only then, keeping only those.
        let failing = (results.checkers.linearizable.as_ref()).and_then(|l| l.failures.first());
        if failing.is_some() {
            let wanted = Wanted {
                focus: Vec::new(),
                failing,
            };
            let excerpt = Excerpt::gather(check::ops(&target)?, &wanted).map_err(BadInput::from)?;
            run_report::write_lin_page(folder, &excerpt, &results)?;
        }
    }
    if args.json {
        println!("{}", serde_json::to_string_pretty(&results)?);
    } else {
        print!(
            "{}",
            summary::render(&results, target.folder.as_ref().map(|f| f.dir.as_path()))
        );
    }
    Ok(results.valid)
}

/// `checker lin`: linearizability of any supported history against a model.
pub fn lin(args: LinArgs) -> anyhow::Result<Validity> {
    let start = Instant::now();
    let time_limit = match args.time_limit {
        Some(s) if !(s > 0.0 && s.is_finite()) => {
            return Err(BadInput::Usage(format!(
                "--time-limit must be a positive number of seconds, got {s}"
            ))
            .into())
        }
        s => s.map(Duration::from_secs_f64),
    };
    let memory_limit = match args.memory_limit {
        Some(0) => {
            return Err(BadInput::Usage("--memory-limit must be at least 1 MB".into()).into())
        }
        Some(mb) => usize::try_from(mb.saturating_mul(1 << 20)).unwrap_or(usize::MAX),
        None => linear::default_memory_limit(),
    };
    let options = |start: Instant| LinOptions {
        init: args.init.clone().unwrap_or(linear::Val::Nil),
        // The limit counts from the command's start: reading the file is part of it.
        time_limit: time_limit.map(|t| t.saturating_sub(start.elapsed())),
        memory_limit,
        reading: Reading {
            absent_is_zero: args.absent_is_zero,
        },
        all_partitions: args.all_partitions,
        generic: args.generic,
        ..LinOptions::default()
    };
    // A counter history in our format is streamed (nothing kept) unless a page of its
    // failure is asked for, which draws the failing key's ops from the history.
    let streamed = args.model == ModelKind::Counter
        && args.html.is_none()
        && check::is_jsonl(&args.path, args.format)?;
    if streamed {
        let (result, warnings) =
            check::lin_streamed(&args.path, args.read.options(), || options(start))?;
        for warning in &warnings {
            eprintln!("warning: {warning}");
        }
        return print_lin(&args, &result, None);
    }
    let (ops, warnings) =
        read_history(&args.path, args.format, args.read.options()).map_err(BadInput::from)?;
    for warning in &warnings {
        eprintln!("warning: {warning}");
    }
    let result = linear::check(args.model, &ops, &options(start))
        .map_err(|e| BadInput::Usage(format!("{}: {e}", args.path.display())))?;
    let page = match (&args.html, result.failures.first()) {
        (Some(path), Some(failure)) => {
            let last = ops.last().map_or(0, |op| op.index);
            std::fs::write(path, linear_page::render(&ops, last, &result, failure))
                .with_context(|| format!("writing {}", path.display()))?;
            Some(path.as_path())
        }
        _ => None,
    };
    print_lin(&args, &result, page)
}

/// Prints a `checker lin` result, as JSON or as the summary.
fn print_lin(
    args: &LinArgs,
    result: &LinResult,
    page: Option<&std::path::Path>,
) -> anyhow::Result<Validity> {
    if args.json {
        println!("{}", serde_json::to_string_pretty(result)?);
    } else {
        print!("{}", summary::render_lin(&args.path, result, page));
    }
    Ok(result.valid)
}

/// `checker export`: a history in another format.
pub fn export(args: ExportArgs) -> anyhow::Result<()> {
    let (ops, _) =
        read_history(&args.path, None, ReadOptions::default()).map_err(BadInput::from)?;
    let mut out: Box<dyn Write> = match &args.output {
        Some(path) => Box::new(std::io::BufWriter::new(std::fs::File::create(path).map_err(
            |e| {
                BadInput::Usage(format!(
                    "cannot write {}: {e}; give --output a file in a folder that exists and that you may write to",
                    path.display()
                ))
            },
        )?)),
        None => Box::new(std::io::BufWriter::new(std::io::stdout().lock())),
    };
    let written = match args.format {
        ExportFormat::Edn => write_edn(&ops, &mut out).and_then(|()| out.flush()),
    };
    match written {
        // A reader such as `head` that stopped early is not an error.
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => Ok(()),
        other => other.with_context(|| match &args.output {
            Some(path) => format!("writing the export to {}", path.display()),
            None => "writing the export to stdout".to_string(),
        }),
    }
}

/// `checker workloads`: the bundled workloads, one line each.
pub fn workloads() {
    for (name, summary) in workload::list() {
        println!("{name:<22} {summary}");
    }
}
