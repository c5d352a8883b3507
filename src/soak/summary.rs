//! summary.json: every run of a soak with its figures, budget lines and the commands that
//! replay it, kept after old run folders are pruned.

use crate::report::junit::{self, Case};
use crate::report::plots::trend::TrendPoint;
use crate::runner::RunOutcome;
use crate::store::write_json;
use crate::workload::budget::{Budget, Check};
use crate::workload::Workload;
use anyhow::Context;
use checkers::Validity;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::path::Path;

/// The figures a soak keeps of each run.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Figures {
    /// Events in the history.
    pub ops: u64,
    /// Reads checked.
    pub reads: u64,
    /// Reads above every allowed value.
    pub overcount_reads: u64,
    /// The largest overcount.
    pub overcount_max: i64,
    /// Reads below every allowed value.
    pub undercount_reads: u64,
    /// The largest undercount.
    pub undercount_max: i64,
    /// Resurrection events.
    pub resurrections: u64,
    /// Tombstone violations.
    pub tombstone_violations: u64,
    /// Client ops whose outcome is unknown.
    pub unknown_outcomes: u64,
    /// Client ops invoked.
    pub invocations: u64,
    /// Keys that are not linearizable.
    pub not_linearizable_keys: u64,
}

/// One run of a soak.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RunSummary {
    /// The workload.
    pub workload: String,
    /// The run's seed.
    pub seed: u64,
    /// How long the load ran, s.
    pub time_limit: f64,
    /// How long the whole run took, checks and report included, s (0 when not measured).
    #[serde(default)]
    pub elapsed_s: f64,
    /// The run folder.
    pub folder: String,
    /// The folder was deleted to keep the soak's disk bounded.
    pub pruned: bool,
    /// The checkers' combined verdict.
    pub verdict: Validity,
    /// The run's key figures.
    pub figures: Figures,
    /// The budget, line by line.
    pub checks: Vec<Check>,
    /// Every budget line held.
    pub within_budget: bool,
    /// Replays the run from its folder.
    pub replay: String,
    /// Replays the run from the workload file (also once the folder is pruned).
    pub rerun: String,
}

impl RunSummary {
    /// A finished run, held to `budget`.
    pub fn of(outcome: &RunOutcome, w: &Workload, seed: u64, budget: &Budget) -> Self {
        let results = &outcome.results;
        let c = &results.checkers;
        let figures = Figures {
            ops: results.ops,
            reads: c.counter.reads,
            overcount_reads: c.counter.overcount.reads,
            overcount_max: c.counter.overcount.max,
            undercount_reads: c.counter.undercount.reads,
            undercount_max: c.counter.undercount.max,
            resurrections: c.resurrection.events,
            tombstone_violations: c.tombstones.violations,
            unknown_outcomes: c.stats.unknown_outcomes,
            invocations: c.stats.invocations,
            not_linearizable_keys: c.linearizable.as_ref().map_or(0, |l| l.illegal_keys as u64),
        };
        let checks = budget.checks(results);
        RunSummary {
            workload: w.name.clone(),
            seed,
            time_limit: w.time_limit,
            elapsed_s: 0.0,
            folder: outcome.dir.display().to_string(),
            pruned: false,
            verdict: results.valid,
            within_budget: checks.iter().all(|c| c.within),
            checks,
            figures,
            replay: format!("checker replay {}", outcome.dir.display()),
            rerun: format!(
                "checker run --workload {}{} --seed {seed} --time-limit {}",
                w.name,
                if outcome.sim { " --sim" } else { "" },
                w.time_limit
            ),
        }
    }
}

/// summary.json.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SoakSummary {
    /// The soak's seed; each run's is derived from it.
    pub seed: u64,
    /// The duration asked for.
    pub duration: String,
    /// The workloads, in the order they take turns.
    pub workloads: Vec<String>,
    /// When it began.
    pub started: String,
    /// When it ended; none while it runs.
    pub finished: Option<String>,
    /// Ctrl-C ended it early.
    pub interrupted: bool,
    /// Every run stayed within its budget.
    pub within_budget: bool,
    /// Every run, in order.
    pub runs: Vec<RunSummary>,
}

impl SoakSummary {
    /// A soak that has run nothing yet.
    pub fn new(seed: u64, duration: &str, workloads: &[String]) -> Self {
        SoakSummary {
            seed,
            duration: duration.to_string(),
            workloads: workloads.to_vec(),
            started: chrono::Local::now().to_rfc3339(),
            finished: None,
            interrupted: false,
            within_budget: true,
            runs: Vec::new(),
        }
    }

    /// Adds a finished run.
    pub fn push(&mut self, run: RunSummary) {
        self.within_budget &= run.within_budget;
        self.runs.push(run);
    }

    /// Deletes the folders of all but the newest `keep` runs; their figures stay.
    pub fn prune(&mut self, keep: Option<usize>) -> anyhow::Result<()> {
        let Some(keep) = keep else { return Ok(()) };
        let old = self.runs.len().saturating_sub(keep);
        for run in self.runs[..old].iter_mut().filter(|r| !r.pruned) {
            std::fs::remove_dir_all(&run.folder)
                .with_context(|| format!("pruning {}", run.folder))?;
            run.pruned = true;
        }
        Ok(())
    }

    /// Writes summary.json and junit.xml into `dir`.
    pub fn write(&self, dir: &Path) -> anyhow::Result<()> {
        write_json(&dir.join("summary.json"), self)?;
        let path = dir.join("junit.xml");
        let suite = format!("soak seed {}", self.seed);
        let xml = junit::render("checker soak", &suite, &self.started, &self.junit_cases());
        std::fs::write(&path, xml).with_context(|| format!("writing {}", path.display()))
    }

    /// One JUnit case per run and checker, and one for a soak a signal cut short.
    fn junit_cases(&self) -> Vec<Case> {
        let mut cases = junit_cases(&self.runs);
        if self.interrupted {
            let message = format!(
                "the soak was stopped by a signal after {} runs, before its {} were up",
                self.runs.len(),
                self.duration
            );
            cases.push(Case {
                class: "soak".to_string(),
                name: "ran its whole duration".to_string(),
                time_s: 0.0,
                failure: Some((message.clone(), message)),
            });
        }
        cases
    }

    /// Marks the soak finished and writes its files.
    pub fn finish(&mut self, dir: &Path) -> anyhow::Result<()> {
        self.finished = Some(chrono::Local::now().to_rfc3339());
        self.write(dir)
    }

    /// Each run's key figures, for the trend chart.
    pub fn trend(&self) -> Vec<TrendPoint> {
        let pct = |n: u64, of: u64| 100.0 * n as f64 / of.max(1) as f64;
        (self.runs.iter())
            .map(|r| TrendPoint {
                workload: r.workload.clone(),
                overcount_pct: pct(r.figures.overcount_reads, r.figures.reads),
                undercount_pct: pct(r.figures.undercount_reads, r.figures.reads),
                resurrections: r.figures.resurrections as f64,
                unknown_pct: pct(r.figures.unknown_outcomes, r.figures.invocations),
            })
            .collect()
    }

    /// The console summary.
    pub fn render(&self, dir: &Path) -> String {
        let mut out = String::new();
        let over = self.runs.iter().filter(|r| !r.within_budget).count();
        out += &format!(
            "{}  soak seed {} · {} runs · {over} over budget{}\n",
            if self.within_budget {
                "WITHIN BUDGET"
            } else {
                "OVER BUDGET"
            },
            self.seed,
            self.runs.len(),
            if self.interrupted {
                " · stopped by a signal"
            } else {
                ""
            },
        );
        for (i, run) in self.runs.iter().enumerate() {
            let failed: Vec<String> = (run.checks.iter().filter(|c| !c.within))
                .map(|c| format!("{}.{} {:.4} > {}", c.checker, c.figure, c.value, c.limit))
                .collect();
            out += &format!(
                "  run {:>3}  {:<20} seed {:<20} {:<8} {}\n",
                i + 1,
                run.workload,
                run.seed,
                run.verdict.word(),
                if failed.is_empty() {
                    "within budget".to_string()
                } else {
                    format!("over: {}; replay: {}", failed.join(", "), run.rerun)
                },
            );
        }
        out += &format!(
            "  summary.json, junit.xml, trend.png and index.html in {}\n",
            dir.display()
        );
        out
    }
}

/// One JUnit case per run and checker; a failure carries the figures, the seed and the
/// commands that replay the run.
pub fn junit_cases(runs: &[RunSummary]) -> Vec<Case> {
    let mut cases = Vec::new();
    for (i, run) in runs.iter().enumerate() {
        let mut by_checker: BTreeMap<&str, Vec<&Check>> = BTreeMap::new();
        for check in &run.checks {
            by_checker
                .entry(check.checker.as_str())
                .or_default()
                .push(check);
        }
        for (checker, checks) in by_checker {
            let failed: Vec<String> = (checks.iter().filter(|c| !c.within))
                .map(|c| format!("{} {:.4} over the budget {}", c.figure, c.value, c.limit))
                .collect();
            let failure = (!failed.is_empty()).then(|| {
                let detail = format!(
                    "{}\nfigures: {}\nseed: {}\nreplay: {}\nor: {}\nrun folder: {}{}",
                    failed.join("\n"),
                    serde_json::to_string(&run.figures).unwrap_or_default(),
                    run.seed,
                    run.replay,
                    run.rerun,
                    run.folder,
                    if run.pruned { " (pruned)" } else { "" },
                );
                (failed.join("; "), detail)
            });
            cases.push(Case {
                class: run.workload.clone(),
                name: format!("run {} (seed {}): {checker}", i + 1, run.seed),
                time_s: if run.elapsed_s > 0.0 {
                    run.elapsed_s
                } else {
                    run.time_limit
                },
                failure,
            });
        }
    }
    cases
}
