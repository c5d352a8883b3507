//! Accuracy budgets: what a run may show and still pass the nightly. Each workload file
//! may set its own in a `[budget]` table; `--budget FILE` overrides them per workload.

use checkers::{Results, Validity};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// What one run may show. Without a `[budget]` table a workload gets the strictest:
/// nothing out of bounds, nothing resurrected, no tombstone violation.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct Budget {
    /// The largest share of checked reads that may overcount (0.005 = 0.5 %).
    pub overcount_share: f64,
    /// The largest share of checked reads that may undercount.
    pub undercount_share: f64,
    /// The most reads wrong about whether the counter exists (`0` for absent, `null` for 0).
    pub existence_misreads: u64,
    /// The most resurrection events (counter and delete pairs).
    pub resurrections: u64,
    /// The most tombstone violations.
    pub tombstone_violations: u64,
    /// The most keys that may fail linearizability; none: not budgeted.
    pub not_linearizable_keys: Option<u64>,
    /// The nodes' final reads must agree (how far off they are is the counter's lines).
    pub converge: bool,
}

impl Default for Budget {
    fn default() -> Self {
        Budget {
            overcount_share: 0.0,
            undercount_share: 0.0,
            existence_misreads: 0,
            resurrections: 0,
            tombstone_violations: 0,
            not_linearizable_keys: None,
            converge: true,
        }
    }
}

/// One line of a budget held against a run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Check {
    /// The checker it comes from, as in results.json.
    pub checker: String,
    /// What is measured.
    pub figure: String,
    /// The run's value.
    pub value: f64,
    /// The most allowed.
    pub limit: f64,
    /// Whether the run stayed within it.
    pub within: bool,
}

impl Budget {
    /// Holds a run's results to this budget, line by line. The oracle cross-check is not
    /// budgeted: it failing means a checker bug, which fails every budget.
    pub fn checks(&self, results: &Results) -> Vec<Check> {
        let c = &results.checkers;
        let reads = c.counter.reads.max(1) as f64;
        let line = |checker: &str, figure: &str, value: f64, limit: f64| Check {
            checker: checker.to_string(),
            figure: figure.to_string(),
            value,
            limit,
            within: value <= limit,
        };
        let mut checks = vec![
            line(
                "counter",
                "overcount_share",
                c.counter.overcount.reads as f64 / reads,
                self.overcount_share,
            ),
            line(
                "counter",
                "undercount_share",
                c.counter.undercount.reads as f64 / reads,
                self.undercount_share,
            ),
            line(
                "counter",
                "existence_misreads",
                (c.counter.absent_as_zero + c.counter.zero_as_absent) as f64,
                self.existence_misreads as f64,
            ),
            // A sum past 64 bits is never within budget: no reading of it is right.
            line(
                "counter",
                "overflow_reads",
                c.counter.overflow_reads as f64,
                0.0,
            ),
            line(
                "resurrection",
                "events",
                c.resurrection.events as f64,
                self.resurrections as f64,
            ),
            line(
                "tombstones",
                "violations",
                c.tombstones.violations as f64,
                self.tombstone_violations as f64,
            ),
        ];
        if let Some(lin) = &c.linearizable {
            // Whether or not its findings are budgeted, a check that could not decide is not
            // within any budget.
            let undecided = lin.valid == Validity::Unknown || lin.unknown_keys > 0;
            let undecided = f64::from(u8::from(undecided));
            checks.push(line("linearizable", "undecided", undecided, 0.0));
            if let Some(limit) = self.not_linearizable_keys {
                let illegal = lin.illegal_keys as f64;
                checks.push(line("linearizable", "illegal_keys", illegal, limit as f64));
            }
        }
        if let Some(convergence) = c.convergence.as_ref().filter(|_| self.converge) {
            let disagreeing = convergence.disagreeing as f64;
            checks.push(line("convergence", "disagreeing_keys", disagreeing, 0.0));
        }
        if let Some(oracle) = &c.oracle {
            let bug = f64::from(u8::from(oracle.valid == Validity::Invalid));
            checks.push(line("oracle", "checker_bug", bug, 0.0));
        }
        checks
    }

    /// This budget with the fields of `table` replacing its own.
    pub fn overridden(&self, table: &toml::Table) -> Result<Budget, String> {
        let mut merged = toml::Table::try_from(self).map_err(|e| e.to_string())?;
        merged.extend(table.clone());
        merged
            .try_into()
            .map_err(|e: toml::de::Error| e.message().to_string())
    }
}

/// A `--budget` file: one table per workload name, each with any fields of [`Budget`].
pub fn parse_overrides(text: &str) -> Result<BTreeMap<String, toml::Table>, String> {
    let table: toml::Table = text
        .parse()
        .map_err(|e: toml::de::Error| e.message().to_string())?;
    let mut overrides = BTreeMap::new();
    for (workload, value) in table {
        let toml::Value::Table(fields) = value else {
            return Err(format!("`{workload}` must be a table of budget fields"));
        };
        Budget::default()
            .overridden(&fields)
            .map_err(|e| format!("[{workload}]: {e}"))?;
        overrides.insert(workload, fields);
    }
    Ok(overrides)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn results(reads: u64, over: u64, resurrections: u64) -> Results {
        let mut r = Results::default();
        r.checkers.counter.reads = reads;
        r.checkers.counter.overcount.reads = over;
        r.checkers.resurrection.events = resurrections;
        r
    }

    #[test]
    fn a_run_within_its_budget_passes_every_line_and_one_over_fails_that_line() {
        // 5 of 1,000 reads overcount: 0.5 %, exactly the budget; 6 is over it.
        let budget = Budget {
            overcount_share: 0.005,
            ..Budget::default()
        };
        assert!(budget
            .checks(&results(1_000, 5, 0))
            .iter()
            .all(|c| c.within));
        let checks = budget.checks(&results(1_000, 6, 0));
        let failed: Vec<&str> = checks
            .iter()
            .filter(|c| !c.within)
            .map(|c| c.figure.as_str())
            .collect();
        assert_eq!(failed, ["overcount_share"]);
        let checks = budget.checks(&results(1_000, 0, 1));
        assert!(checks.iter().any(|c| c.figure == "events" && !c.within));
    }

    #[test]
    fn an_override_file_replaces_only_the_fields_it_names() -> Result<(), String> {
        let overrides = parse_overrides("[hot-counter]\novercount_share = 1.0\n")?;
        let budget = Budget {
            resurrections: 3,
            ..Budget::default()
        }
        .overridden(&overrides["hot-counter"])?;
        assert_eq!((budget.overcount_share, budget.resurrections), (1.0, 3));
        assert!(
            parse_overrides("[hot-counter]\novercount = 1\n").is_err(),
            "an unknown field"
        );
        assert!(parse_overrides("hot-counter = 1\n").is_err(), "not a table");
        Ok(())
    }

    #[test]
    fn a_linearizability_check_that_could_not_decide_is_over_any_budget() {
        use checkers::linear::LinResult;
        let with_lin = |valid: Validity, illegal_keys: usize| {
            let mut r = results(1_000, 0, 0);
            r.checkers.linearizable = Some(LinResult {
                valid,
                illegal_keys,
                ..LinResult::default()
            });
            r
        };
        let lines = |r: &Results, budget: &Budget| -> Vec<(String, bool)> {
            let checks = budget.checks(r).into_iter();
            let lin = checks.filter(|c| c.checker == "linearizable");
            lin.map(|c| (c.figure, c.within)).collect()
        };
        let unbudgeted = Budget::default();
        let decided = with_lin(Validity::Valid, 0);
        assert_eq!(
            lines(&decided, &unbudgeted),
            [("undecided".to_string(), true)]
        );
        let undecided = with_lin(Validity::Unknown, 0);
        assert_eq!(
            lines(&undecided, &unbudgeted),
            [("undecided".to_string(), false)]
        );
        // Illegal keys count only where the budget names them.
        let illegal = with_lin(Validity::Invalid, 2);
        assert_eq!(
            lines(&illegal, &unbudgeted),
            [("undecided".to_string(), true)]
        );
        let budgeted = Budget {
            not_linearizable_keys: Some(1),
            ..Budget::default()
        };
        let figures = lines(&illegal, &budgeted);
        assert_eq!(figures[1], ("illegal_keys".to_string(), false));
    }
}
