//! junit.xml: one test case per run and checker, for CI systems to show; a failure carries
//! the figures, the seed and the commands that replay the run.

use super::summary::SoakSummary;
use crate::report::html::escape;
use std::collections::BTreeMap;
use std::fmt::Write;

/// The JUnit XML of a soak.
pub fn render(summary: &SoakSummary) -> String {
    let mut cases = String::new();
    let (mut tests, mut failures) = (0, 0);
    for (i, run) in summary.runs.iter().enumerate() {
        let mut by_checker: BTreeMap<&str, Vec<&super::budget::Check>> = BTreeMap::new();
        for check in &run.checks {
            by_checker
                .entry(check.checker.as_str())
                .or_default()
                .push(check);
        }
        for (checker, checks) in by_checker {
            tests += 1;
            let name = format!("run {} (seed {}): {checker}", i + 1, run.seed);
            let _ = write!(
                cases,
                "    <testcase classname=\"{}\" name=\"{}\" time=\"{:.1}\">",
                escape(&run.workload),
                escape(&name),
                run.time_limit
            );
            let failed: Vec<String> = (checks.iter().filter(|c| !c.within))
                .map(|c| format!("{} {:.4} over the budget {}", c.figure, c.value, c.limit))
                .collect();
            if !failed.is_empty() {
                failures += 1;
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
                let _ = write!(
                    cases,
                    "\n      <failure type=\"budget\" message=\"{}\">{}</failure>\n    ",
                    escape(&failed.join("; ")),
                    escape(&detail)
                );
            }
            cases.push_str("</testcase>\n");
        }
    }
    format!(
        "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<testsuites name=\"checker soak\" tests=\"{tests}\" failures=\"{failures}\">\n  <testsuite name=\"soak seed {}\" tests=\"{tests}\" failures=\"{failures}\" timestamp=\"{}\">\n{cases}  </testsuite>\n</testsuites>\n",
        summary.seed,
        escape(&summary.started),
    )
}
