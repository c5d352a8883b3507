//! The soak: workloads back to back for a set duration, each with a fresh seed derived from
//! one, each checked as it finishes and held to its budget; a summary, a JUnit file, a trend
//! chart and an index of the runs.

pub mod summary;

use crate::error::BadInput;
use crate::report::{index, plots};
use crate::runner::{self, RunPlan};
use crate::workload::seed::MAX_SEED;
use crate::workload::Workload;
use anyhow::Context;
use std::collections::BTreeMap;
use std::path::PathBuf;
use std::time::{Duration, Instant};
use summary::{RunSummary, SoakSummary};

/// A run shorter than this is not started: it would measure nothing.
const SHORTEST_RUN_S: f64 = 2.0;

/// What a soak was asked to do.
pub struct SoakPlan {
    /// How long to keep starting runs.
    pub duration: Duration,
    /// The duration as the user wrote it.
    pub duration_text: String,
    /// The workloads' names, in the order they take turns.
    pub names: Vec<String>,
    /// The workloads, in the same order.
    pub workloads: Vec<Workload>,
    /// Budget fields overriding the workloads' own, per workload name.
    pub overrides: BTreeMap<String, toml::Table>,
    /// The soak's seed.
    pub seed: u64,
    /// The soak folder.
    pub dir: PathBuf,
    /// Keep the folders of only the newest N runs.
    pub keep: Option<usize>,
    /// Each run's length in seconds, instead of its workload's.
    pub run_time: Option<f64>,
}

/// The seed of the `i`-th run of a soak seeded with `seed` (SplitMix64), at most
/// [`MAX_SEED`].
pub fn derive_seed(seed: u64, i: u64) -> u64 {
    let mut z = seed.wrapping_add((i + 1).wrapping_mul(0x9E37_79B9_7F4A_7C15));
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    (z ^ (z >> 31)) & MAX_SEED
}

/// How a soak ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SoakOutcome {
    /// Every run stayed within its budget.
    pub within_budget: bool,
    /// A stop signal ended it early.
    pub interrupted: bool,
}

/// Runs the soak until its duration is spent or a stop signal comes.
pub async fn run(plan: SoakPlan) -> anyhow::Result<SoakOutcome> {
    let SoakPlan {
        duration,
        duration_text,
        names,
        workloads,
        overrides,
        seed,
        dir,
        keep,
        run_time,
    } = plan;
    let started = Instant::now();
    let mut summary = SoakSummary::new(seed, &duration_text, &names);
    for i in 0u64.. {
        let left = duration.saturating_sub(started.elapsed()).as_secs_f64();
        let mut w = workloads[(i % workloads.len() as u64) as usize].clone();
        w.time_limit = run_time.unwrap_or(w.time_limit).min(left);
        if w.time_limit < SHORTEST_RUN_S {
            break;
        }
        if crate::shutdown::requested() {
            summary.interrupted = true;
            break;
        }
        let budget = match overrides.get(&w.name) {
            Some(table) => w.budget.overridden(table).map_err(BadInput::Usage)?,
            None => w.budget.clone(),
        };
        let run_seed = derive_seed(seed, i);
        eprintln!(
            "soak run {} · {} · seed {run_seed} · {:.0}s",
            i + 1,
            w.name,
            w.time_limit
        );
        let plan = RunPlan {
            workload: w.clone(),
            seed: run_seed,
            results: dir.clone(),
            panic_after_start: false,
            targets: Vec::new(),
            keys_as_is: false,
            sim: false,
        };
        let run_started = Instant::now();
        let outcome = runner::run(plan)
            .await
            .with_context(|| format!("soak run {} ({})", i + 1, w.name))?;
        let mut record = RunSummary::of(&outcome, &w, run_seed, &budget);
        record.elapsed_s = run_started.elapsed().as_secs_f64();
        eprintln!(
            "soak run {} · {} · {} · {}",
            i + 1,
            w.name,
            outcome.verdict.word(),
            if record.within_budget {
                "within budget"
            } else {
                "OVER BUDGET"
            }
        );
        summary.push(record);
        summary.prune(keep)?;
        summary.write(&dir)?;
        if outcome.interrupted || crate::shutdown::requested() {
            eprintln!("soak stopped by a signal after run {}", i + 1);
            summary.interrupted = true;
            break;
        }
    }
    summary.finish(&dir)?;
    let points = summary.trend();
    plots::render_trend(&points, &dir).context("drawing the trend chart")?;
    index::write(&dir)?;
    println!("{}", summary.render(&dir));
    Ok(SoakOutcome {
        within_budget: summary.within_budget,
        interrupted: summary.interrupted,
    })
}
