//! `checker soak`: the flags turned into a soak's plan, and its verdict: valid when every
//! run stayed within its budget.

use super::Done;
use crate::error::BadInput;
use crate::soak::{self, SoakPlan};
use crate::workload::{self, budget};
use anyhow::Context;
use checkers::Validity;
use clap::Args;
use std::path::{Path, PathBuf};

/// `checker soak`.
#[derive(Debug, Args)]
pub struct SoakArgs {
    /// How long to keep starting runs (`8h`, `30m`, `90s`, `1h 30m`).
    #[arg(long)]
    pub duration: String,
    /// The workloads, in the order they take turns (names or paths, comma separated).
    #[arg(long, default_value = "soak")]
    pub workloads: String,
    /// The soak's seed (at most 2^53 - 1); each run's seed is derived from it and printed.
    #[arg(long, value_parser = crate::workload::seed::parse)]
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

/// `checker soak`: the verdict, or `Interrupted` when a signal stopped it (exit 130).
pub async fn soak(args: SoakArgs) -> anyhow::Result<Done> {
    let duration = humantime::parse_duration(&args.duration)
        .map_err(|e| BadInput::Usage(format!("--duration {}: {e}", args.duration)))?;
    let names: Vec<String> = args
        .workloads
        .split(',')
        .map(str::trim)
        .filter(|s| !s.is_empty())
        .map(str::to_string)
        .collect();
    if names.is_empty() {
        return Err(BadInput::Usage("--workloads names no workload".to_string()).into());
    }
    let mut workloads = Vec::new();
    for name in &names {
        workloads.push(workload::load(name).map_err(BadInput::from)?);
    }
    let overrides = match &args.budget {
        Some(path) => {
            let text = std::fs::read_to_string(path)
                .map_err(|e| BadInput::Usage(format!("reading {}: {e}", path.display())))?;
            budget::parse_overrides(&text)
                .map_err(|e| BadInput::Usage(format!("{}: {e}", path.display())))?
        }
        None => Default::default(),
    };
    let seed = args.seed.unwrap_or_else(crate::workload::seed::random);
    let dir = args.out.clone().unwrap_or_else(|| {
        Path::new("results").join(format!(
            "soak-{}",
            chrono::Local::now().format("%Y%m%dT%H%M%S")
        ))
    });
    std::fs::create_dir_all(&dir).with_context(|| format!("creating {}", dir.display()))?;
    eprintln!(
        "soak {} · {} · seed {seed} · workloads {}",
        dir.display(),
        args.duration,
        names.join(", ")
    );
    let plan = SoakPlan {
        duration,
        duration_text: args.duration,
        names,
        workloads,
        overrides,
        seed,
        dir,
        keep: args.keep,
        run_time: args.run_time,
    };
    let outcome = soak::run(plan).await?;
    Ok(match outcome.interrupted {
        true => Done::Interrupted,
        false => Done::Verdict(Validity::from_findings(!outcome.within_budget, false)),
    })
}
