//! The short console summary of a checked history: the verdict and the figures behind it.

use checkers::Results;
use std::fmt::Write;
use std::path::Path;

/// How many of the worst reads the summary lists.
const WORST_SHOWN: usize = 5;

/// Renders the summary printed after a run and by `checker check`.
pub fn render(results: &Results, run_dir: Option<&Path>) -> String {
    let mut out = String::new();
    let counter = &results.checkers.counter;
    let stats = &results.checkers.stats;
    let _ = writeln!(
        out,
        "{verdict}  {workload}{seed}{ops} ops",
        verdict = results.valid.word(),
        workload = results
            .workload
            .as_deref()
            .map(|w| format!("workload {w} · "))
            .unwrap_or_default(),
        seed = results
            .seed
            .map(|s| format!("seed {s} · "))
            .unwrap_or_default(),
        ops = results.ops,
    );
    let _ = writeln!(
        out,
        "  counter  {}: {} reads checked; overcount {} reads (max {}, sum {}); undercount {} reads (max {}, sum {}){}",
        counter.valid.word().to_lowercase(),
        counter.reads,
        counter.overcount.reads,
        counter.overcount.max,
        counter.overcount.sum,
        counter.undercount.reads,
        counter.undercount.max,
        counter.undercount.sum,
        if counter.unchecked_reads > 0 {
            format!("; {} reads not judged (deletes, scans)", counter.unchecked_reads)
        } else {
            String::new()
        }
    );
    for read in counter.errors.iter().take(WORST_SHOWN) {
        let (word, by) = if read.overcount() > 0 {
            ("over", read.overcount())
        } else {
            ("under", read.undercount())
        };
        let _ = writeln!(
            out,
            "    read at index {} of {} returned {} (allowed {}..={}): {word}count by {by}{}",
            read.index,
            read.key,
            read.value.map_or("null".to_string(), |v| v.to_string()),
            read.lower,
            read.upper,
            read.node
                .as_deref()
                .map(|n| format!(", served by {n}"))
                .unwrap_or_default(),
        );
    }
    let outcomes: Vec<String> = stats
        .by_f
        .iter()
        .map(|(f, o)| {
            format!(
                "{f} ok {} fail {} info {}",
                o.ok,
                o.fail,
                o.info + o.pending
            )
        })
        .collect();
    let _ = writeln!(
        out,
        "  stats    {}: {}; {} unknown outcomes, {} retries",
        stats.valid.word().to_lowercase(),
        outcomes.join(" · "),
        stats.unknown_outcomes,
        stats.retries,
    );
    for warning in &results.warnings {
        let _ = writeln!(out, "  warning: {warning}");
    }
    if let Some(dir) = run_dir {
        let _ = writeln!(out, "  run folder: {}", dir.display());
    }
    out
}
