//! A timeline of the operations around one point of a history, one column per process, as
//! Jepsen's timeline.html: each operation is a cell from its invoke to its completion.

use super::html::escape;
use checkers::{Op, OpType, Process};
use std::collections::{BTreeMap, HashMap};
use std::fmt::Write;

/// How many ops either side of the focus a timeline shows.
pub const AROUND: u64 = 12;

/// How far from the focus, in events, a timeline's ops may be.
pub const EVENTS_AROUND: u64 = 4_096;

/// The op at history index `index` of ops sorted by index.
pub fn op_at(ops: &[Op], index: u64) -> Option<&Op> {
    let at = ops.binary_search_by_key(&index, |op| op.index).ok()?;
    ops.get(at)
}

/// Each op's invoke and completion indices, both ways.
#[derive(Debug, Default)]
pub struct Pairs {
    /// The completion's index, by the invoke's.
    pub end_of: HashMap<u64, u64>,
    /// The invoke's index, by the completion's.
    pub invoke_of: HashMap<u64, u64>,
}

/// Pairs every invoke with its process's next completion.
pub fn completions(history: &[Op]) -> Pairs {
    let mut open: HashMap<&Process, u64> = HashMap::new();
    let mut pairs = Pairs::default();
    for op in history {
        if op.kind == OpType::Invoke {
            open.insert(&op.process, op.index);
        } else if let Some(invoke) = open.remove(&op.process) {
            pairs.end_of.insert(invoke, op.index);
            pairs.invoke_of.insert(op.index, invoke);
        }
    }
    pairs
}

/// One op as a cell: where it starts and ends (rows), how it ended, what it says.
struct Cell {
    first: usize,
    last: usize,
    class: &'static str,
    text: String,
    focus: bool,
}

fn label(invoke: &Op, end: Option<&Op>) -> String {
    let key = invoke.key.as_deref().unwrap_or("");
    let result = match end {
        Some(end) => {
            // Only what reads return is news; an add's completion repeats its delta.
            let returns = matches!(invoke.f, checkers::F::Read | checkers::F::Scan);
            let value = if returns {
                format!(" → {}", end.value)
            } else {
                String::new()
            };
            let node = end
                .node
                .as_deref()
                .map(|n| format!(" @{n}"))
                .unwrap_or_default();
            format!("{}{value}{node}", end.kind.as_str())
        }
        None => "pending".to_string(),
    };
    let arg = if invoke.value.is_null() {
        String::new()
    } else {
        format!(" {}", invoke.value)
    };
    format!("[{}] {} {key}{arg}: {result}", invoke.index, invoke.f)
}

/// Whether `op` belongs on the timeline of `key`: an op of that counter, of its whole
/// partition, or of the nemesis.
fn concerns(op: &Op, key: Option<&str>) -> bool {
    let Some(key) = key else { return true };
    let partition = key.split_once('/').map_or(key, |(p, _)| p);
    !op.process.is_client()
        || op
            .key
            .as_deref()
            .is_some_and(|k| k == key || k == partition)
}

/// The timeline table of the `AROUND` ops either side of index `focus`, within
/// `EVENTS_AROUND` events of it, that concern the focus op's counter (its partition's ops
/// and the nemesis's too); the op whose invoke or completion is at `focus` is outlined.
/// `id` is the table's anchor. `history` is sorted by index: whole, or an excerpt.
pub fn render(history: &[Op], pairs: &Pairs, focus: u64, id: &str) -> String {
    let key = op_at(history, focus).and_then(|op| op.key.as_deref());
    let near = |op: &&Op| op.index.abs_diff(focus) <= EVENTS_AROUND;
    let rows: Vec<&Op> = (history.iter())
        .filter(near)
        .filter(|op| concerns(op, key))
        .collect();
    let at = rows.iter().position(|op| op.index >= focus).unwrap_or(0);
    let window =
        &rows[at.saturating_sub(AROUND as usize)..(at + AROUND as usize + 1).min(rows.len())];
    let row_of: HashMap<u64, usize> = window
        .iter()
        .enumerate()
        .map(|(row, op)| (op.index, row))
        .collect();
    let by_index: HashMap<u64, &Op> = window.iter().map(|op| (op.index, *op)).collect();
    let last_row = window.len().saturating_sub(1);
    let mut columns: BTreeMap<String, Vec<Cell>> = BTreeMap::new();
    for (row, op) in window.iter().enumerate() {
        let column = match &op.process {
            Process::Client(p) => format!("{p:>12}"),
            other => format!("~{other}"),
        };
        let class_of = |kind: Option<OpType>| match kind {
            Some(OpType::Ok) => "ok",
            Some(OpType::Fail) => "fail",
            _ => "info",
        };
        let cell = if !op.process.is_client() {
            let text = format!("[{}] {} {}", op.index, op.f, op.value);
            Cell {
                first: row,
                last: row,
                class: "nemesis",
                text,
                focus: op.index == focus,
            }
        } else if op.kind == OpType::Invoke {
            let end_index = pairs.end_of.get(&op.index);
            let end = end_index.and_then(|i| by_index.get(i).copied());
            let last = end_index
                .and_then(|i| row_of.get(i).copied())
                .unwrap_or(last_row);
            let end_kind = end_index.and_then(|i| op_at(history, *i)).map(|e| e.kind);
            let focus = op.index == focus || end_index == Some(&focus);
            Cell {
                first: row,
                last,
                class: class_of(end_kind),
                text: label(op, end),
                focus,
            }
        } else if let Some(invoke) = pairs
            .invoke_of
            .get(&op.index)
            .filter(|i| !row_of.contains_key(i))
        {
            // Completed here, invoked before the window: shown from the top.
            let invoke = op_at(history, *invoke);
            let text = invoke.map_or_else(
                || format!("[{}] {}", op.index, op.f),
                |i| label(i, Some(op)),
            );
            Cell {
                first: 0,
                last: row,
                class: class_of(Some(op.kind)),
                text,
                focus: op.index == focus,
            }
        } else {
            continue;
        };
        columns.entry(column).or_default().push(cell);
    }
    let mut out = format!(
        "<table class=\"timeline\" id=\"{}\">\n<tr><th>index</th>",
        escape(id)
    );
    for name in columns.keys() {
        let name = name.trim();
        let name = name
            .strip_prefix('~')
            .map_or(format!("process {name}"), str::to_string);
        let _ = write!(out, "<th>{}</th>", escape(&name));
    }
    out.push_str("</tr>\n");
    for (row, op) in window.iter().enumerate() {
        let _ = write!(out, "<tr><td class=\"num\">{}</td>", op.index);
        for cells in columns.values() {
            match cells.iter().find(|c| c.first <= row && row <= c.last) {
                Some(cell) if cell.first == row => {
                    let focus = if cell.focus { " focus" } else { "" };
                    let _ = write!(
                        out,
                        "<td class=\"{}{focus}\" rowspan=\"{}\">{}</td>",
                        cell.class,
                        cell.last - cell.first + 1,
                        escape(&cell.text)
                    );
                }
                Some(_) => {}
                None => out.push_str("<td></td>"),
            }
        }
        out.push_str("</tr>\n");
    }
    out.push_str("</table>\n");
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use checkers::builder::HistoryBuilder;

    #[test]
    fn each_op_spans_its_rows_in_its_process_column_and_the_focus_is_outlined() {
        // p1 adds over indices 0..=2 while p2 reads at 1..=3 (returning 1, the focus).
        let mut h = HistoryBuilder::on("c/x");
        h.add(1, 1); // 0
        h.read(2); // 1
        h.added(1, 1, OpType::Ok); // 2
        h.read_ok(2, 1); // 3
        let history = h.ops().to_vec();
        let pairs = completions(&history);
        assert_eq!(pairs.end_of[&0], 2);
        let html = render(&history, &pairs, 3, "t-3");
        assert!(html.contains("id=\"t-3\""));
        assert!(
            html.contains("<th>process 1</th><th>process 2</th>"),
            "{html}"
        );
        assert!(
            html.contains("class=\"ok\" rowspan=\"3\">[0] add c/x 1: ok</td>"),
            "{html}"
        );
        assert!(
            html.contains("class=\"ok focus\" rowspan=\"3\">[1] read c/x: ok → 1"),
            "{html}"
        );
        assert_eq!(
            html.matches("<tr><td class=\"num\">").count(),
            4,
            "rows 0..=3 only"
        );
    }

    #[test]
    fn a_timeline_shows_only_the_focus_counter_its_partition_and_the_nemesis() {
        let mut h = HistoryBuilder::on("c/x");
        h.add(1, 1); // 0
        h.key("c/y");
        h.add(2, 5); // 1
        h.key("c");
        h.delete(3); // 2, 3
        h.key("c/x");
        h.added(1, 1, OpType::Ok); // 4
        h.key("c/y");
        h.added(2, 5, OpType::Ok); // 5
        let history = h.ops().to_vec();
        let html = render(&history, &completions(&history), 4, "t");
        assert!(html.contains("[2] delete c"), "{html}");
        assert!(!html.contains("c/y"), "{html}");
        assert_eq!(
            html.matches("<tr><td class=\"num\">").count(),
            4,
            "events 0, 2, 3, 4"
        );
    }
}
