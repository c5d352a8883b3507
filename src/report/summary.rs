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
    counter_lines(&mut out, results);
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
    for (name, why) in &results.not_applicable {
        let _ = writeln!(out, "  {name}: {why}");
    }
    availability_line(&mut out, stats);
    convergence_lines(&mut out, results);
    if let Some(lin) = &results.checkers.linearizable {
        let page = run_dir.map(|d| d.join(crate::store::folder::LIN_PAGE));
        lin_lines(&mut out, lin, page.as_deref().filter(|p| p.is_file()));
    }
    for warning in &results.warnings {
        let _ = writeln!(out, "  warning: {warning}");
    }
    if let Some(dir) = run_dir {
        let _ = writeln!(
            out,
            "  run folder: {} (every figure and the worst reads in results.json)",
            dir.display()
        );
    }
    out
}

fn counter_lines(out: &mut String, results: &Results) {
    let counter = &results.checkers.counter;
    let relative = |m: &checkers::counter::Magnitude| {
        if m.reads > 0 {
            format!(", worst {:.1}% of its bound", 100.0 * m.max_relative)
        } else {
            String::new()
        }
    };
    let _ = writeln!(
        out,
        "  counter  {}: {} reads checked against {} increments; overcount {} reads (max {}, sum {}{}); undercount {} reads (max {}, sum {}{}){}",
        counter.valid.word().to_lowercase(),
        counter.reads,
        counter.increments,
        counter.overcount.reads,
        counter.overcount.max,
        counter.overcount.sum,
        relative(&counter.overcount),
        counter.undercount.reads,
        counter.undercount.max,
        counter.undercount.sum,
        relative(&counter.undercount),
        if counter.unchecked_reads > 0 {
            format!("; {} reads not judged (not a number)", counter.unchecked_reads)
        } else {
            String::new()
        }
    );
    if counter.overflow_reads > 0 {
        let _ = writeln!(
            out,
            "    {} reads where the true sum may leave i64 (a 64-bit counter wraps)",
            counter.overflow_reads
        );
        for overflow in counter.overflows.iter().take(WORST_SHOWN) {
            let _ = writeln!(
                out,
                "      read {} of {}: {}",
                overflow.index,
                overflow.key,
                overflow.finding()
            );
        }
    }
    if counter.absent_as_zero + counter.zero_as_absent > 0 {
        let _ = writeln!(
            out,
            "    {} reads returned 0 where the counter must be absent, {} returned null where it must exist",
            counter.absent_as_zero, counter.zero_as_absent
        );
    }
    for read in counter
        .errors
        .iter()
        .filter(|r| !r.resurrection)
        .take(WORST_SHOWN)
    {
        let Some(finding) = read.finding() else {
            continue;
        };
        let _ = writeln!(
            out,
            "    read at index {} of {} returned {} (allowed {}): {finding}{}{}",
            read.index,
            read.key,
            read.value.map_or("null".to_string(), |v| v.to_string()),
            read.allowed,
            read.node
                .as_deref()
                .map(|n| format!(", served by {n}"))
                .unwrap_or_default(),
            bound_ops(read),
        );
    }
    let r = &results.checkers.resurrection;
    let _ = writeln!(
        out,
        "  resurrection {}: {} counters came back after a delete, seen by {} reads{}",
        r.valid.word().to_lowercase(),
        r.events,
        r.reads,
        if r.events > 0 {
            format!(", at most {} of the deleted count", r.max_magnitude)
        } else {
            String::new()
        }
    );
    for event in r.list.iter().take(WORST_SHOWN) {
        let _ = writeln!(
            out,
            "    {} deleted at index {} (up to {} deleted by then): {} back in {} reads, indices {}..={}, served by {}",
            event.key,
            event.delete,
            event.deleted_count,
            event.magnitude,
            event.reads,
            event.first_read,
            event.last_read,
            if event.nodes.is_empty() { "?".to_string() } else { event.nodes.join(", ") },
        );
    }
}

/// The ops behind the bound a read broke, and the delete before it.
fn bound_ops(read: &checkers::counter::ReadBounds) -> String {
    let mut out = String::new();
    if !read.bound_ops.is_empty() {
        let shown: Vec<String> = read.bound_ops.iter().take(8).map(u64::to_string).collect();
        let more = read.bound_ops.len().saturating_sub(8);
        let more = if more > 0 {
            format!(" and {more} more")
        } else {
            String::new()
        };
        out += &format!(
            "; bound set by the adds invoked at {}{more}",
            shown.join(", ")
        );
    }
    if let Some(settled) = read.settled_through {
        out += &format!("; with every op completed by index {settled}");
    }
    if let Some(delete) = read.after_delete {
        out += &format!("; after the delete invoked at {delete}");
    }
    out
}

fn availability_line(out: &mut String, stats: &checkers::stats::StatsResult) {
    if stats.faults.is_empty() {
        return;
    }
    let mut per_kind: std::collections::BTreeMap<&str, (u64, u64, usize)> = Default::default();
    for window in &stats.faults {
        let entry = per_kind.entry(window.fault.as_str()).or_default();
        let c = window.clients;
        entry.0 += c.ok;
        entry.1 += c.ok + c.fail + c.info;
        entry.2 += 1;
    }
    let share = |ok: u64, done: u64| 100.0 * ok as f64 / done.max(1) as f64;
    let kinds: Vec<String> = (per_kind.iter())
        .map(|(kind, (ok, done, n))| format!("{kind} {:.1}% ({n}×)", share(*ok, *done)))
        .collect();
    let healthy = stats.availability_healthy;
    let _ = writeln!(
        out,
        "  availability  ok share while healthy {:.1}% · {}",
        100.0 * healthy.share_ok,
        kinds.join(" · ")
    );
}

fn convergence_lines(out: &mut String, results: &Results) {
    if let Some(c) = &results.checkers.convergence {
        let _ = writeln!(
            out,
            "  convergence {}: {} counters read from every node after the heal; {} disagree, {} agree out of bounds{}",
            c.valid.word().to_lowercase(),
            c.keys,
            c.disagreeing,
            c.out_of_bounds,
            if c.unanswered > 0 { format!(", {} unanswered", c.unanswered) } else { String::new() },
        );
        if c.from_dumps > 0 {
            let _ = writeln!(
                out,
                "    no final read could answer for {} of the counters or partitions asked: taken from the nodes' dumps (what each node holds)",
                c.from_dumps
            );
        }
        for example in c.examples.iter().take(WORST_SHOWN) {
            let _ = writeln!(out, "    {}: {}", example.key, example.answers());
        }
    }
    if let Some(o) = &results.checkers.oracle {
        let _ = writeln!(
            out,
            "  oracle   {}: {} counters on {} nodes; {} hold a value outside the final bounds, {} of them unflagged{}",
            o.valid.word().to_lowercase(),
            o.keys,
            o.nodes,
            o.outside_bounds,
            o.unflagged,
            if o.nodes_disagree > 0 { format!("; {} held differently by different nodes", o.nodes_disagree) } else { String::new() },
        );
        let u = &o.unknown_adds;
        if u.adds > 0 {
            let _ = writeln!(
                out,
                "    of {} adds of unknown outcome (on {}), the nodes' final values account for {} taking effect",
                u.adds,
                super::verdict::plural(u.keys, "counter", "counters"),
                u.applied
            );
        }
        if o.unflagged > 0 {
            let _ = writeln!(
                out,
                "    CHECKER BUG: a true value lies outside the bounds and no read of it was flagged; please report it with this run folder"
            );
        }
    }
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
        "  linearizable  {}: model {} · {} of {} partitions not linearizable{}{} · {} ops · {} ms{}",
        lin.valid.word().to_lowercase(),
        lin.model,
        lin.illegal_keys,
        lin.keys,
        if lin.unknown_keys > 0 {
            format!(", {} undecided", lin.unknown_keys)
        } else {
            String::new()
        },
        if lin.not_searched_keys > 0 {
            format!(
                ", {} not searched (the verdict was decided; --all-partitions searches them)",
                lin.not_searched_keys
            )
        } else {
            String::new()
        },
        lin.ops,
        lin.elapsed_ms,
        lin.reason.as_deref().map(|r| format!(" (gave up: {r})")).unwrap_or_default(),
    );
    for failure in lin.failures.iter().take(WORST_SHOWN) {
        if !failure.because.is_empty() {
            let _ = writeln!(
                out,
                "    {}: {} (core: indices {:?}{})",
                failure.key.as_deref().unwrap_or("the history"),
                failure.because,
                failure.core,
                if failure.core_minimal {
                    ""
                } else {
                    "; may not be minimal"
                },
            );
        }
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
