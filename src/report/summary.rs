//! The short console summary of a checked history: the verdict and the figures behind it.

use checkers::linear::LinResult;
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
            format!("; {} reads not judged (after deletes)", counter.unchecked_reads)
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
    let t = &results.checkers.tombstones;
    if t.max_scanned > 0 || t.failed_reads > 0 {
        let _ = writeln!(
            out,
            "  tombstones {}: {} reads over the warn threshold, {} failed for tombstones, {} violations, at most {} scanned{}",
            t.valid.word().to_lowercase(),
            t.warn_reads,
            t.failed_reads,
            t.violations,
            t.max_scanned,
            t.violating_reads
                .first()
                .map(|i| format!(" (first violation: the read completed at index {i})"))
                .unwrap_or_default(),
        );
    }
    if let Some(lin) = &results.checkers.linearizable {
        let page = run_dir.map(|d| d.join(crate::analysis::LIN_PAGE));
        lin_lines(&mut out, lin, page.as_deref().filter(|p| p.is_file()));
    }
    for warning in &results.warnings {
        let _ = writeln!(out, "  warning: {warning}");
    }
    if let Some(dir) = run_dir {
        let _ = writeln!(out, "  run folder: {}", dir.display());
    }
    out
}

/// The summary `checker lin` prints for the history at `path`.
pub fn render_lin(path: &Path, lin: &LinResult, page: Option<&Path>) -> String {
    let mut out = format!("{}  {}\n", lin.valid.word(), path.display());
    lin_lines(&mut out, lin, page);
    out
}

fn lin_lines(out: &mut String, lin: &LinResult, page: Option<&Path>) {
    let _ =
        writeln!(
        out,
        "  linearizable  {}: model {} · {} of {} partitions not linearizable{} · {} ops · {} ms{}",
        lin.valid.word().to_lowercase(),
        lin.model,
        lin.illegal_keys,
        lin.keys,
        if lin.unknown_keys > 0 {
            format!(", {} undecided", lin.unknown_keys)
        } else {
            String::new()
        },
        lin.ops,
        lin.elapsed_ms,
        lin.reason.as_deref().map(|r| format!(" (gave up: {r})")).unwrap_or_default(),
    );
    for failure in lin.failures.iter().take(WORST_SHOWN) {
        let _ = writeln!(
            out,
            "    {}: longest linearizable prefix {} of {} ops, leaving the state {}; the op invoked at index {} cannot follow it; look at indices {:?}",
            failure.key.as_deref().unwrap_or("the history"),
            failure.linearized.len(),
            failure.ops,
            failure.state,
            failure.failing_op.map_or("?".to_string(), |i| i.to_string()),
            failure.window,
        );
    }
    if let Some(page) = page {
        let _ = writeln!(out, "    explained in {}", page.display());
    }
}
