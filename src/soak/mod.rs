//! `checker soak`: workloads back to back for a set duration, each with a fresh seed derived
//! from one, each checked as it finishes and held to its budget; a summary, a JUnit file, a
//! trend chart and an index of the runs. `checker replay` runs one run again.

pub mod budget;
mod junit;
pub mod summary;

use crate::analysis::BadInput;
use crate::cli::{ReplayArgs, SoakArgs};
use crate::report::{index, plots};
use crate::run::{run, RunPlan};
use crate::workload;
use anyhow::Context;
use std::path::Path;
use std::time::Instant;
use summary::{RunSummary, SoakSummary};

/// A run shorter than this is not started: it would measure nothing.
const SHORTEST_RUN_S: f64 = 2.0;

/// The seed of the `i`-th run of a soak seeded with `seed` (SplitMix64).
pub fn derive_seed(seed: u64, i: u64) -> u64 {
    let mut z = seed.wrapping_add((i + 1).wrapping_mul(0x9E37_79B9_7F4A_7C15));
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    (z ^ (z >> 31)) >> 1
}

/// Runs the soak; returns whether every run stayed within its budget.
pub async fn soak(args: SoakArgs) -> anyhow::Result<bool> {
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
                .with_context(|| format!("reading {}", path.display()))?;
            budget::parse_overrides(&text)
                .map_err(|e| BadInput::Usage(format!("{}: {e}", path.display())))?
        }
        None => Default::default(),
    };
    let seed = args
        .seed
        .unwrap_or_else(|| u64::from(rand::random::<u32>()));
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
    let started = Instant::now();
    let mut summary = SoakSummary::new(seed, &args.duration, &names);
    for i in 0u64.. {
        let left = duration.saturating_sub(started.elapsed()).as_secs_f64();
        let mut w = workloads[(i % workloads.len() as u64) as usize].clone();
        w.time_limit = args.run_time.unwrap_or(w.time_limit).min(left);
        if w.time_limit < SHORTEST_RUN_S {
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
        };
        let outcome = run(plan)
            .await
            .with_context(|| format!("soak run {} ({})", i + 1, w.name))?;
        let record = RunSummary::of(&outcome, &w, run_seed, &budget);
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
        summary.prune(args.keep)?;
        summary.write(&dir)?;
        if outcome.interrupted {
            eprintln!("soak stopped by Ctrl-C after run {}", i + 1);
            summary.interrupted = true;
            break;
        }
    }
    summary.finish(&dir)?;
    let points = summary.trend();
    plots::render_trend(&points, &dir).context("drawing the trend chart")?;
    index::write(&dir)?;
    println!("{}", summary.render(&dir));
    Ok(summary.within_budget)
}

/// `checker replay`: the run folder's workload again, with its seed and configuration.
pub async fn replay(args: ReplayArgs) -> anyhow::Result<checkers::Validity> {
    let path = args.run_dir.join("run.json");
    let text = std::fs::read_to_string(&path)
        .map_err(|e| BadInput::Usage(format!("{}: {e}", path.display())))?;
    let record: serde_json::Value = serde_json::from_str(&text)
        .map_err(|e| BadInput::Usage(format!("{}: {e}", path.display())))?;
    let mut config = record["workload"].clone();
    let name = config["name"].as_str().unwrap_or("replay").to_string();
    if let Some(fields) = config.as_object_mut() {
        fields.remove("name");
    }
    let mut w: workload::Workload = serde_json::from_value(config)
        .map_err(|e| BadInput::Usage(format!("{}: the workload: {e}", path.display())))?;
    w.name = name;
    let seed = record["seed"]
        .as_u64()
        .ok_or_else(|| BadInput::Usage(format!("{} has no seed", path.display())))?;
    eprintln!(
        "replaying {} · workload {} · seed {seed}",
        args.run_dir.display(),
        w.name
    );
    let plan = RunPlan {
        workload: w,
        seed,
        results: args.results,
        panic_after_start: false,
        targets: Vec::new(),
    };
    Ok(run(plan).await?.verdict)
}
