//! The self-contained HTML page that shows why a partition is not linearizable: its ops on a
//! timeline, one row per process, with the longest partial linearization numbered in order
//! and the op that cannot follow it in red. Opens from disk; no scripts, no network.

use super::html::escape;
use checkers::linear::{LinResult, PartitionFailure};
use checkers::{Op, OpType, Process};
use std::collections::{BTreeMap, HashMap, HashSet};
use std::fmt::Write;

/// Ops either side of a failing partition's window that its page shows.
pub const CONTEXT: u64 = 12;

/// Events a failing partition's page spans at most before its window's last call, and
/// after it (an op of the window that returns later runs to the page's right edge); ops
/// called before the span and still open are drawn from its start.
pub const LATE: u64 = 4_096;

/// Where a failing partition's page starts ([`CONTEXT`] before its window's first call, or
/// [`LATE`] before its last) and the furthest its window's returns may take its end
/// ([`LATE`] after its last call; [`CONTEXT`] more is shown).
pub fn failing_span(window: &[u64]) -> (u64, u64) {
    let first = window.first().copied().unwrap_or(0);
    let last = window.iter().copied().max().unwrap_or(0);
    let from = first.max(last.saturating_sub(LATE)).saturating_sub(CONTEXT);
    (from, last.saturating_add(LATE))
}

/// Pixels per history position on the timeline.
const STEP: f64 = 14.0;
/// Height of one process row.
const ROW: f64 = 34.0;

/// One op of the drawing: its invoke and, when known, its completion.
struct Drawn<'a> {
    call: &'a Op,
    done: Option<&'a Op>,
}

impl Drawn<'_> {
    /// Whether the outcome is unknown: it may take effect any time after its call.
    fn open_ended(&self) -> bool {
        self.done.is_none_or(|d| d.kind == OpType::Info)
    }

    fn failed(&self) -> bool {
        self.done.is_some_and(|d| d.kind == OpType::Fail)
    }

    fn end(&self, last: u64) -> u64 {
        match self.done {
            Some(d) if d.kind != OpType::Info => d.index,
            _ => last,
        }
    }

    fn label(&self) -> String {
        let call = if self.call.value.is_null() {
            self.call.f.to_string()
        } else {
            format!("{} {}", self.call.f, self.call.value)
        };
        let result = match self.done {
            Some(d) if d.kind == OpType::Ok && d.value != self.call.value => {
                format!(" → {}", d.value)
            }
            Some(d) if d.kind != OpType::Ok => format!(" ({})", d.kind.as_str()),
            None => " (never completed)".to_string(),
            Some(_) => String::new(),
        };
        format!("{call}{result}")
    }
}

/// An op's label inside its box at `(x, y)`, `width` wide: wrapped onto the box's two
/// lines (the box's title holds the whole label when even that is too short). Inline in
/// HTML, the foreign object's content is HTML without a namespace.
fn wrapped((x, y): (f64, f64), width: f64, label: &str) -> String {
    format!(
        r#"<foreignObject x="{}" y="{}" width="{}" height="{}"><div style="font:10px/12px sans-serif;overflow:hidden;height:100%;overflow-wrap:anywhere">{}</div></foreignObject>"#,
        x + 2.0,
        y + 1.0,
        (width - 4.0).max(1.0),
        ROW - 10.0,
        escape(label)
    )
}

/// Renders the page for one failing partition of `result`, from the checked history (whole
/// or an excerpt that holds the failing window) whose last index is `last`.
pub fn render(history: &[Op], last: u64, result: &LinResult, failure: &PartitionFailure) -> String {
    let mut pairs: HashMap<u64, Drawn> = HashMap::new();
    let mut open: HashMap<&Process, u64> = HashMap::new();
    for op in history.iter().filter(|op| op.process.is_client()) {
        if op.kind == OpType::Invoke {
            open.insert(&op.process, op.index);
            pairs.insert(
                op.index,
                Drawn {
                    call: op,
                    done: None,
                },
            );
        } else if let Some(call) = open.remove(&op.process) {
            if let Some(d) = pairs.get_mut(&call) {
                d.done = Some(op);
            }
        }
    }
    let in_partition: HashSet<u64> = failure
        .linearized
        .iter()
        .chain(&failure.window)
        .copied()
        .collect();
    let (lo, cap) = failing_span(&failure.window);
    // Open-ended ops run to the right edge; the edge is set by the window's known returns.
    let hi = failure
        .window
        .iter()
        .filter_map(|i| {
            pairs
                .get(i)
                .map(|d| d.done.map_or(d.call.index, |c| c.index))
        })
        .max()
        .unwrap_or(lo)
        .min(cap)
        .saturating_add(CONTEXT)
        .min(last);
    let order: HashMap<u64, usize> = failure
        .linearized
        .iter()
        .enumerate()
        .map(|(n, &i)| (i, n + 1))
        .collect();
    let shown: Vec<&Drawn> = {
        let mut v: Vec<&Drawn> = pairs
            .values()
            .filter(|d| in_partition.contains(&d.call.index) || same_key(d.call, failure))
            .filter(|d| d.call.index <= hi && d.end(last) >= lo)
            .collect();
        v.sort_by_key(|d| d.call.index);
        v
    };
    // Processes in their own order: clients by number (2 before 10), then named ones.
    let rows: BTreeMap<String, usize> = shown
        .iter()
        .map(|d| &d.call.process)
        .collect::<std::collections::BTreeSet<_>>()
        .into_iter()
        .enumerate()
        .map(|(i, p)| (p.to_string(), i))
        .collect();
    let width = 140.0 + (hi - lo + 1) as f64 * STEP;
    let height = 30.0 + rows.len() as f64 * ROW;
    let x = |i: u64| 120.0 + (i.saturating_sub(lo)) as f64 * STEP;

    let mut svg = String::new();
    let _ = write!(
        svg,
        r#"<svg width="{width}" height="{height}" font-family="sans-serif" font-size="11">"#
    );
    for (process, row) in &rows {
        let y = 20.0 + *row as f64 * ROW;
        let _ = write!(
            svg,
            r##"<text x="4" y="{}">process {}</text><line x1="116" x2="{width}" y1="{}" y2="{}" stroke="#eee"/>"##,
            y + 16.0,
            escape(process),
            y + ROW - 2.0,
            y + ROW - 2.0
        );
    }
    for d in &shown {
        let row = rows[&d.call.process.to_string()];
        let y = 20.0 + row as f64 * ROW;
        let (x0, x1) = (x(d.call.index.max(lo)), x(d.end(last).min(hi)) + STEP * 0.8);
        let (fill, note) = if Some(d.call.index) == failure.failing_op {
            ("#d62728", "cannot be linearized here".to_string())
        } else if let Some(n) = order.get(&d.call.index) {
            ("#2ca02c", format!("linearized #{n}"))
        } else if d.failed() {
            ("#ffffff", "failed: did not take effect".to_string())
        } else {
            ("#9e9e9e", "not linearized".to_string())
        };
        let stroke = if d.failed() { "#9e9e9e" } else { fill };
        let dash = if d.open_ended() {
            "5 3"
        } else if d.failed() {
            "1 2"
        } else {
            "none"
        };
        let _ = write!(
            svg,
            r#"<g><title>index {} · {} · {}</title><rect x="{x0}" y="{y}" width="{}" height="{}" rx="3" fill="{fill}" fill-opacity="0.25" stroke="{stroke}" stroke-dasharray="{dash}"/>{}</g>"#,
            d.call.index,
            escape(&d.label()),
            note,
            (x1 - x0).max(4.0),
            ROW - 8.0,
            wrapped(
                (x0, y),
                (x1 - x0).max(4.0),
                &format!(
                    "{}{}",
                    order
                        .get(&d.call.index)
                        .map(|n| format!("#{n} "))
                        .unwrap_or_default(),
                    d.label()
                )
            ),
        );
    }
    svg.push_str("</svg>");

    let mut table = String::new();
    for i in &failure.window {
        if let Some(d) = pairs.get(i) {
            let status = if Some(*i) == failure.failing_op {
                "<b>cannot be linearized</b>".to_string()
            } else {
                order
                    .get(i)
                    .map_or("not linearized".to_string(), |n| format!("linearized #{n}"))
            };
            let _ = write!(
                table,
                "<tr><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>",
                d.call.index,
                d.done.map_or("–".to_string(), |c| c.index.to_string()),
                escape(&d.call.process.to_string()),
                escape(&d.label()),
                d.done.map_or("unknown", |c| c.kind.as_str()),
                status
            );
        }
    }
    let core = core_section(&pairs, failure, last);
    let key = failure.key.as_deref().unwrap_or("(the whole history)");
    let failing = failure
        .failing_op
        .and_then(|i| pairs.get(&i))
        .map(|d| {
            format!(
                "the op invoked at index {} ({})",
                d.call.index,
                escape(&d.label())
            )
        })
        .unwrap_or_else(|| "no op".to_string());
    format!(
        r#"<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>Not linearizable: {key_e}</title>
<style>body{{font-family:sans-serif;margin:24px;color:#222}} .banner{{background:#fdecea;border-left:6px solid #d62728;padding:12px 16px}} .timeline{{overflow-x:auto;border:1px solid #ddd;margin:16px 0}} table{{border-collapse:collapse}} td,th{{border:1px solid #ddd;padding:4px 8px;font-size:13px}} .legend span{{display:inline-block;margin-right:16px}} .sw{{display:inline-block;width:12px;height:12px;margin-right:4px;vertical-align:middle}}</style></head>
<body>
<div class="banner"><h1>Not linearizable: {key_e}</h1>
<p>Model <b>{model}</b>. {illegal} of {keys} partitions cannot be ordered. In this one ({ops} ops), the longest linearizable prefix has <b>{prefix}</b> ops, after which the {model} holds <b>{state}</b>; {failing} cannot follow it: no order of the ops around it, each taking effect between its call and its return, explains what they returned.</p></div>
{core}
<h2>The whole partition around the failure</h2>
<p class="legend"><span><i class="sw" style="background:#2ca02c"></i>linearized, numbered in order</span><span><i class="sw" style="background:#d62728"></i>the op that cannot be linearized</span><span><i class="sw" style="background:#9e9e9e"></i>not linearized</span><span>dashed, to the right edge: outcome unknown (may take effect any time after its call)</span><span>dotted: failed (did not take effect)</span></p>
<p>History positions {lo} to {hi}; hover an op for its index.</p>
<div class="timeline">{svg}</div>
<h2>The window</h2>
<p>The failing op, every op concurrent with it, and the last linearized op that returned before it was called.</p>
<table><tr><th>invoke</th><th>completion</th><th>process</th><th>op</th><th>outcome</th><th>status</th></tr>{table}</table>
</body></html>
"#,
        key_e = escape(key),
        model = escape(&result.model),
        illegal = result.illegal_keys,
        keys = result.keys,
        ops = failure.ops,
        prefix = failure.linearized.len(),
        state = escape(&failure.state),
    )
}

/// The core first: its ops on a timeline of their own, one row each, the events in order
/// (spaced evenly, not to scale), and the sentence that says why they cannot be ordered.
fn core_section(pairs: &HashMap<u64, Drawn>, failure: &PartitionFailure, last: u64) -> String {
    let ops: Vec<&Drawn> = failure.core.iter().filter_map(|i| pairs.get(i)).collect();
    if ops.is_empty() {
        return String::new();
    }
    let mut events: Vec<u64> = ops
        .iter()
        .flat_map(|d| [d.call.index, d.end(last)])
        .collect();
    events.sort_unstable();
    events.dedup();
    let rank = |i: u64| events.partition_point(|&e| e < i);
    let (gap, left) = (70.0, 150.0);
    let width = left + events.len() as f64 * gap + 40.0;
    let height = 20.0 + ops.len() as f64 * ROW;
    let mut svg = format!(
        r#"<svg width="{width}" height="{height}" font-family="sans-serif" font-size="12">"#
    );
    for (row, d) in ops.iter().enumerate() {
        let y = 10.0 + row as f64 * ROW;
        let x0 = left + rank(d.call.index) as f64 * gap;
        let x1 = if d.open_ended() {
            width - 10.0
        } else {
            left + rank(d.end(last)) as f64 * gap + 10.0
        };
        let dash = if d.open_ended() { "5 3" } else { "none" };
        let _ = write!(
            svg,
            r##"<g><title>invoke {} · completion {}</title><text x="4" y="{}">process {}</text><rect x="{x0}" y="{y}" width="{}" height="{}" rx="3" fill="#ff7f0e" fill-opacity="0.25" stroke="#ff7f0e" stroke-dasharray="{dash}"/>{}</g>"##,
            d.call.index,
            d.done
                .map_or("unknown".to_string(), |c| c.index.to_string()),
            y + 16.0,
            escape(&d.call.process.to_string()),
            (x1 - x0).max(4.0),
            ROW - 8.0,
            wrapped(
                (x0, y),
                (x1 - x0).max(4.0),
                &format!("[{}] {}", d.call.index, d.label())
            ),
        );
    }
    svg.push_str("</svg>");
    let caveat = if failure.core_minimal {
        "Removing any one of them leaves ops that can be ordered."
    } else {
        "The search for a smaller core ran out of its budget: this one may not be minimal."
    };
    format!(
        r#"<h2>The core: {n} {ops_word} that cannot be ordered</h2>
<p class="because">{because} {caveat}</p>
<div class="timeline">{svg}</div>"#,
        n = ops.len(),
        ops_word = if ops.len() == 1 { "op" } else { "ops" },
        because = escape(&failure.because),
    )
}

fn same_key(op: &Op, failure: &PartitionFailure) -> bool {
    failure.key.is_none() || op.key == failure.key
}

#[cfg(test)]
mod tests {
    use super::*;
    use checkers::builder::HistoryBuilder;
    use checkers::linear::{check, LinOptions, ModelKind};

    /// The index of the last op.
    fn last(ops: &[Op]) -> u64 {
        ops.last().map_or(0, |op| op.index)
    }

    #[test]
    fn the_page_numbers_the_linearization_and_marks_the_failing_read() {
        // +1 ok (indices 0, 1), +2 ok (2, 3), then a read of 1 (4, 5): the read cannot follow
        // the two adds, which linearize as #1 and #2.
        let mut h = HistoryBuilder::on("views/home");
        h.add(1, 1);
        h.added(1, 1, OpType::Ok);
        h.add(1, 2);
        h.added(1, 2, OpType::Ok);
        h.read(2);
        h.read_ok(2, 1);
        let result = check(ModelKind::Counter, h.ops(), &LinOptions::default()).expect("checkable");
        let failure = result.failures.first().expect("not linearizable");
        let page = render(h.ops(), last(h.ops()), &result, failure);
        assert!(page.starts_with("<!DOCTYPE html>"));
        assert!(page.contains("Not linearizable: views/home"));
        assert!(
            page.contains("#1 add 1") && page.contains("#2 add 2"),
            "{page}"
        );
        assert!(
            page.contains("index 4 · read → 1 · cannot be linearized here"),
            "{page}"
        );
        assert!(
            !page.contains("http://") && !page.contains("https://") && !page.contains("<script")
        );
        // The core comes first: the counter starts absent, so the read of 1 alone cannot
        // take effect (the adds are not needed to show it).
        let core_at = page
            .find("The core: 1 op that cannot")
            .expect("a core section");
        assert!(core_at < page.find("The whole partition").expect("context"));
        assert!(
            page.contains("This op cannot take effect on its own: starting from absent, [4] p2 read → 1 cannot."),
            "{page}"
        );
    }

    #[test]
    fn processes_are_drawn_in_number_order() {
        // Client 10 adds, then client 2 reads more than it could: rows 2 then 10, as numbers.
        let mut h = HistoryBuilder::on("views/home");
        h.add(10, 1);
        h.added(10, 1, OpType::Ok);
        h.read(2);
        h.read_ok(2, 5);
        let result = check(ModelKind::Counter, h.ops(), &LinOptions::default()).expect("checkable");
        let failure = result.failures.first().expect("not linearizable");
        let page = render(h.ops(), last(h.ops()), &result, failure);
        // In the whole partition's timeline, the row of client 2 is drawn above client 10's.
        let whole = &page[page.find("The whole partition").expect("the timeline")..];
        let row_y = |process: &str| -> f64 {
            let label = format!("\">process {process}</text>");
            let end = whole.find(&label).expect("a row label");
            let start = whole[..end].rfind("y=\"").expect("its y") + 3;
            whole[start..end].parse().expect("a number")
        };
        assert!(row_y("2") < row_y("10"), "{page}");
    }
}
