//! The seed hunt: one workload in simulation under many seeds, several at once, each checked
//! and held to a budget; the seeds that broke it, smallest history first, each with the
//! command that replays it exactly. A flaky failure becomes a fixed seed.

use crate::report::index;
use crate::report::junit;
use crate::runner::{self, RunPlan};
use crate::soak::summary::{junit_cases, RunSummary};
use crate::workload::budget::Budget;
use crate::workload::Workload;
use anyhow::Context;
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use tokio::sync::Semaphore;

/// What a hunt was asked to do.
pub struct HuntPlan {
    /// The workload, with flags applied.
    pub workload: Workload,
    /// The first seed tried.
    pub first: u64,
    /// How many seeds, from `first` on.
    pub seeds: u64,
    /// Runs at once.
    pub jobs: usize,
    /// What a run may show and still pass.
    pub budget: Budget,
    /// The hunt's folder.
    pub dir: PathBuf,
}

/// summary.json of a hunt.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct HuntSummary {
    /// The workload.
    pub workload: String,
    /// The first seed tried.
    pub first: u64,
    /// How many seeds.
    pub seeds: u64,
    /// The budget each run was held to.
    pub budget: Budget,
    /// When it began.
    pub started: String,
    /// Every run, by seed.
    pub runs: Vec<RunSummary>,
}

impl HuntSummary {
    /// The runs that broke the budget, smallest history first.
    pub fn broken(&self) -> Vec<&RunSummary> {
        let mut broken: Vec<&RunSummary> = self.runs.iter().filter(|r| !r.within_budget).collect();
        broken.sort_by_key(|r| (r.figures.ops, r.seed));
        broken
    }

    /// Writes summary.json and junit.xml into `dir`.
    pub fn write(&self, dir: &Path) -> anyhow::Result<()> {
        crate::store::write_json(&dir.join("summary.json"), self)?;
        let path = dir.join("junit.xml");
        let suite = format!("hunt {} seeds {}..", self.workload, self.first);
        let xml = junit::render(
            "checker hunt",
            &suite,
            &self.started,
            &junit_cases(&self.runs),
        );
        std::fs::write(&path, xml).with_context(|| format!("writing {}", path.display()))
    }

    /// The console table: the seeds that broke the budget and how, smallest history first.
    pub fn render(&self, dir: &Path) -> String {
        let broken = self.broken();
        let mut out = format!(
            "{}  hunt {} · seeds {}..={} · {} runs · {} broke the budget\n",
            if broken.is_empty() {
                "WITHIN BUDGET"
            } else {
                "OVER BUDGET"
            },
            self.workload,
            self.first,
            self.first + self.seeds.saturating_sub(1),
            self.runs.len(),
            broken.len(),
        );
        let rows: Vec<(&RunSummary, String)> = (broken.iter())
            .map(|run| {
                let how: Vec<String> = (run.checks.iter().filter(|c| !c.within))
                    .map(|c| how(&c.checker, &c.figure, c.value))
                    .collect();
                (*run, how.join(", "))
            })
            .collect();
        let width = rows.iter().map(|(_, how)| how.len()).max().unwrap_or(0);
        if !rows.is_empty() {
            out += &format!(
                "  {:<8} {:>7}  {:<8} {:<width$}  replay\n",
                "seed", "ops", "verdict", "broke"
            );
        }
        for (run, how) in rows {
            out += &format!(
                "  {:<8} {:>7}  {:<8} {how:<width$}  {}\n",
                run.seed,
                run.figures.ops,
                run.verdict.word(),
                run.rerun
            );
        }
        out += &format!(
            "  summary.json, junit.xml, index.html and every run folder in {}\n",
            dir.display()
        );
        out
    }
}

/// A broken budget line in words: `overcount 43% of reads`, `not linearizable 2 keys`.
fn how(checker: &str, figure: &str, value: f64) -> String {
    let pct = |what: &str| format!("{what} {:.1}% of reads", 100.0 * value);
    match (checker, figure) {
        ("counter", "overcount_share") => pct("overcount"),
        ("counter", "undercount_share") => pct("undercount"),
        ("counter", "existence_misreads") => format!("existence misread {value}"),
        ("counter", "overflow_reads") => format!("overflow {value} reads"),
        ("resurrection", "events") => format!("resurrection {value}"),
        ("tombstones", "violations") => format!("tombstones {value}"),
        ("linearizable", "illegal_keys") => format!("not linearizable {value} keys"),
        ("linearizable", "undecided") => "linearizability undecided".to_string(),
        ("convergence", "disagreeing_keys") => format!("no convergence {value} keys"),
        ("oracle", "checker_bug") => "oracle: a checker bug".to_string(),
        _ => format!("{checker}.{figure} {value}"),
    }
}

/// Runs every seed of the hunt in simulation, `jobs` at once, and writes its summary.
pub async fn run(plan: HuntPlan) -> anyhow::Result<HuntSummary> {
    let HuntPlan {
        workload,
        first,
        seeds,
        jobs,
        budget,
        dir,
    } = plan;
    let started = chrono::Local::now().to_rfc3339();
    let permits = Arc::new(Semaphore::new(jobs.max(1)));
    let mut tasks = tokio::task::JoinSet::new();
    for seed in first..first.saturating_add(seeds) {
        let (permits, w, dir) = (permits.clone(), workload.clone(), dir.clone());
        tasks.spawn(async move {
            let _permit = permits.acquire_owned().await;
            if crate::shutdown::requested() {
                return (seed, None);
            }
            let plan = RunPlan {
                workload: w,
                seed,
                results: dir,
                panic_after_start: false,
                targets: Vec::new(),
                keys_as_is: false,
                sim: true,
            };
            let outcome = runner::execute(plan).await;
            (seed, Some(outcome.with_context(|| format!("seed {seed}"))))
        });
    }
    let mut runs = Vec::new();
    while let Some(joined) = tasks.join_next().await {
        let (seed, outcome) = joined.context("a hunt task failed")?;
        // Not started: a stop signal came first.
        let Some(outcome) = outcome else { continue };
        let outcome = outcome?;
        let run = RunSummary::of(&outcome, &workload, seed, &budget);
        eprintln!(
            "hunt · seed {seed} · {} · {}",
            outcome.verdict.word(),
            if run.within_budget {
                "within budget"
            } else {
                "OVER BUDGET"
            }
        );
        runs.push(run);
    }
    runs.sort_by_key(|r| r.seed);
    let summary = HuntSummary {
        workload: workload.name.clone(),
        first,
        seeds,
        budget,
        started,
        runs,
    };
    summary.write(&dir)?;
    index::write(&dir).context("writing the index of runs")?;
    Ok(summary)
}

/// The strictest budget, which a hunt holds runs to unless told otherwise: nothing out of
/// bounds, nothing resurrected, no tombstone violation, every key linearizable, and the
/// nodes agreeing after the heal.
pub fn strictest() -> Budget {
    Budget {
        not_linearizable_keys: Some(0),
        ..Budget::default()
    }
}
