//! `checker hunt`: a workload in simulation under many seeds; its verdict is invalid when
//! some seed broke the budget.

use super::Done;
use crate::error::BadInput;
use crate::hunt::{self, HuntPlan};
use crate::workload;
use crate::workload::net::NetMode;
use crate::workload::seed::MAX_SEED;
use anyhow::Context;
use checkers::Validity;
use clap::Args;
use std::path::{Path, PathBuf};

/// `checker hunt`.
#[derive(Debug, Args)]
pub struct HuntArgs {
    /// A workload name (workloads/NAME.toml) or a path to a workload file.
    #[arg(long, short)]
    pub workload: String,
    /// How many seeds to try.
    #[arg(long)]
    pub seeds: u64,
    /// The first seed tried; the others follow it.
    #[arg(long, default_value_t = 1)]
    pub first_seed: u64,
    /// Runs at once (default: one per core).
    #[arg(long)]
    pub jobs: Option<usize>,
    /// How long each run's load runs, in simulated seconds (overrides the workload).
    #[arg(long)]
    pub time_limit: Option<f64>,
    /// Hold each run to the workload's own `[budget]` (what its nightly accepts) instead of
    /// the strictest: nothing out of bounds, resurrected or unlinearizable.
    #[arg(long)]
    pub workload_budget: bool,
    /// The hunt folder (default `results/hunt-<workload>-<time>`).
    #[arg(long)]
    pub out: Option<PathBuf>,
}

/// `checker hunt`: invalid when some seed broke the budget.
pub async fn hunt(args: HuntArgs) -> anyhow::Result<Done> {
    let mut w = workload::load(&args.workload).map_err(BadInput::from)?;
    w.time_limit = args.time_limit.unwrap_or(w.time_limit);
    // The simulation has a network of its own.
    w.net = NetMode::Loopback;
    w.validate()
        .map_err(|message| BadInput::Usage(format!("flags: {message}")))?;
    let last = args.first_seed.checked_add(args.seeds.saturating_sub(1));
    if args.seeds == 0 || last.is_none_or(|last| last > MAX_SEED) {
        let message = format!(
            "--seeds {} from --first-seed {}: give at least one seed, the last at most {MAX_SEED}",
            args.seeds, args.first_seed
        );
        return Err(BadInput::Usage(message).into());
    }
    let jobs = match args.jobs {
        Some(0) => return Err(BadInput::Usage("--jobs 0: give at least 1".into()).into()),
        Some(jobs) => jobs,
        None => std::thread::available_parallelism().map_or(1, |n| n.get()),
    };
    let budget = match args.workload_budget {
        true => w.budget.clone(),
        false => hunt::strictest(),
    };
    let dir = args.out.clone().unwrap_or_else(|| {
        let stamp = chrono::Local::now().format("%Y%m%dT%H%M%S");
        Path::new("results").join(format!("hunt-{}-{stamp}", w.name))
    });
    std::fs::create_dir_all(&dir).with_context(|| format!("creating {}", dir.display()))?;
    eprintln!(
        "hunt {} · {} · seeds {}..={} · {jobs} at once",
        dir.display(),
        w.name,
        args.first_seed,
        args.first_seed + args.seeds - 1
    );
    let plan = HuntPlan {
        workload: w,
        first: args.first_seed,
        seeds: args.seeds,
        jobs,
        budget,
        dir: dir.clone(),
    };
    let summary = hunt::run(plan).await?;
    print!("{}", summary.render(&dir));
    if crate::shutdown::requested() {
        return Ok(Done::Interrupted);
    }
    let broken = !summary.broken().is_empty();
    Ok(Done::Verdict(Validity::from_findings(broken, false)))
}
