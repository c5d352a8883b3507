//! The offline commands: `check`, `lin` and `export` read a history and never start a node.

use crate::analysis::{analyse, BadInput, Target};
use crate::cli::{CheckArgs, ExportArgs, ExportFormat, LinArgs};
use crate::report::{linear_page, summary};
use anyhow::Context;
use checkers::history::{read_history, write_edn};
use checkers::linear::{self, LinOptions};
use checkers::Validity;
use std::io::Write;
use std::time::Duration;

/// `checker check`: every checker on a run folder or a history file.
pub fn check(args: CheckArgs) -> anyhow::Result<Validity> {
    let target = Target::resolve(&args.path)?;
    let results = analyse(&target, false)?;
    if args.json {
        println!("{}", serde_json::to_string_pretty(&results)?);
    } else {
        print!("{}", summary::render(&results, target.run_dir.as_deref()));
    }
    Ok(results.valid)
}

/// `checker lin`: linearizability of any supported history against a model.
pub fn lin(args: LinArgs) -> anyhow::Result<Validity> {
    let time_limit = match args.time_limit {
        Some(s) if !(s > 0.0 && s.is_finite()) => {
            return Err(BadInput::Usage(format!(
                "--time-limit must be a positive number of seconds, got {s}"
            ))
            .into())
        }
        s => s.map(Duration::from_secs_f64),
    };
    let (ops, warnings) = read_history(&args.path, args.format).map_err(BadInput::from)?;
    for warning in &warnings {
        eprintln!("warning: {warning}");
    }
    let options = LinOptions {
        init: args.init.unwrap_or(linear::Val::Nil),
        time_limit,
        ..LinOptions::default()
    };
    let result = linear::check(args.model, &ops, &options)
        .map_err(|e| BadInput::Usage(format!("{}: {e}", args.path.display())))?;
    let page = match (&args.html, result.failures.first()) {
        (Some(path), Some(failure)) => {
            std::fs::write(path, linear_page::render(&ops, &result, failure))
                .with_context(|| format!("writing {}", path.display()))?;
            Some(path.as_path())
        }
        _ => None,
    };
    if args.json {
        println!("{}", serde_json::to_string_pretty(&result)?);
    } else {
        print!("{}", summary::render_lin(&args.path, &result, page));
    }
    Ok(result.valid)
}

/// `checker export`: a history in another format.
pub fn export(args: ExportArgs) -> anyhow::Result<()> {
    let (ops, _) = read_history(&args.path, None).map_err(BadInput::from)?;
    let mut out: Box<dyn Write> = match &args.output {
        Some(path) => Box::new(std::io::BufWriter::new(
            std::fs::File::create(path).with_context(|| format!("creating {}", path.display()))?,
        )),
        None => Box::new(std::io::BufWriter::new(std::io::stdout().lock())),
    };
    let written = match args.format {
        ExportFormat::Edn => write_edn(&ops, &mut out).and_then(|()| out.flush()),
    };
    match written {
        // A reader such as `head` that stopped early is not an error.
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => Ok(()),
        other => other.context("writing the export"),
    }
}
