//! The ops a report shows beside its charts, taken from a history as it is read, without
//! holding it: the events around each finding's timeline, and the failing partition's
//! span for the linearizability page.

use super::linear_page::{failing_span, CONTEXT};
use super::timeline::EVENTS_AROUND;
use checkers::ideal::partition_of;
use checkers::linear::PartitionFailure;
use checkers::{Op, OpType, Process};
use std::collections::{HashMap, HashSet};

/// What a report shows ops of.
#[derive(Debug, Clone, Default)]
pub struct Wanted<'a> {
    /// History indices of the findings that get a timeline.
    pub focus: Vec<u64>,
    /// The failing partition the linearizability page explains.
    pub failing: Option<&'a PartitionFailure>,
}

/// Ops of a history, in index order, and the history's last index.
#[derive(Debug, Clone, Default)]
pub struct Excerpt {
    /// The ops kept, by index.
    pub ops: Vec<Op>,
    /// The index of the history's last op.
    pub last: u64,
}

/// The failing partition's span being followed: its key, where it starts, the furthest it
/// may end, the calls its page names (window and core), those of its window not yet
/// returned, and the latest return so far.
struct Failing {
    key: Option<String>,
    from: u64,
    cap: u64,
    named: HashSet<u64>,
    waiting: HashSet<u64>,
    latest: u64,
}

impl Failing {
    fn new(failure: &PartitionFailure) -> Self {
        let (from, cap) = failing_span(&failure.window);
        Failing {
            key: failure.key.clone(),
            from,
            cap,
            named: failure
                .window
                .iter()
                .chain(&failure.core)
                .copied()
                .collect(),
            waiting: failure.window.iter().copied().collect(),
            latest: 0,
        }
    }

    /// Whether the page's span may hold `index`: it ends [`CONTEXT`] after the window's
    /// last return, or after its cap while a call has not returned.
    fn covers(&self, index: u64) -> bool {
        let end = match self.waiting.is_empty() {
            true => self.latest.min(self.cap),
            false => self.cap,
        };
        index >= self.from && index <= end.saturating_add(CONTEXT)
    }

    /// Whether `op` is of the failing partition: its key, or a cell of it when the
    /// partition is checked whole (the page draws those it linearized).
    fn concerns(&self, op: &Op) -> bool {
        let Some(key) = &self.key else { return true };
        (op.key.as_deref()).is_some_and(|k| k == key || partition_of(k) == key)
    }

    /// The op called at `call` returned at `index`.
    fn returned(&mut self, call: u64, index: u64) {
        if self.waiting.remove(&call) {
            self.latest = self.latest.max(index);
        }
    }
}

impl Excerpt {
    /// The ops of `history` that `wanted` needs: every op within [`EVENTS_AROUND`] of a
    /// focus; the failing partition's client ops within its page's span (see
    /// [`failing_span`]), every op its page names, and its ops that ended with an unknown
    /// outcome before the span (they may take effect in it); with each, the other half of
    /// its pair (an invoke before, a completion after), and the ops still open where a kept
    /// stretch starts.
    pub fn gather<E>(
        history: impl IntoIterator<Item = Result<Op, E>>,
        wanted: &Wanted<'_>,
    ) -> Result<Self, E> {
        let around: Vec<(u64, u64)> = (wanted.focus.iter())
            .map(|f| {
                (
                    f.saturating_sub(EVENTS_AROUND),
                    f.saturating_add(EVENTS_AROUND),
                )
            })
            .collect();
        let mut failing = wanted.failing.map(Failing::new);
        // Invokes not kept (yet), and the calls of those kept, by process.
        let mut open: HashMap<Process, Op> = HashMap::new();
        let mut kept_open: HashMap<Process, u64> = HashMap::new();
        let (mut ops, mut last, mut inside) = (Vec::new(), 0, false);
        for op in history {
            let op = op?;
            last = op.index;
            let near = around
                .iter()
                .any(|(lo, hi)| (*lo..=*hi).contains(&op.index));
            let failing_covers = failing.as_ref().is_some_and(|f| f.covers(op.index));
            // The failing page draws only the client ops of its key, and those it names.
            let wanted = near
                || failing.as_ref().is_some_and(|f| {
                    op.process.is_client()
                        && (failing_covers && f.concerns(&op) || f.named.contains(&op.index))
                });
            if (near || failing_covers) && !inside {
                // Ops still open as the excerpt resumes run into it.
                for (process, invoke) in open.drain() {
                    kept_open.insert(process, invoke.index);
                    ops.push(invoke);
                }
            }
            inside = near || failing_covers;
            if !op.process.is_client() {
                if wanted {
                    ops.push(op);
                }
                continue;
            }
            if op.kind == OpType::Invoke {
                if wanted {
                    open.remove(&op.process);
                    kept_open.insert(op.process.clone(), op.index);
                    ops.push(op);
                } else {
                    kept_open.remove(&op.process);
                    open.insert(op.process.clone(), op);
                }
                continue;
            }
            let invoke = open.remove(&op.process);
            let call = (invoke.as_ref().map(|i| i.index)).or(kept_open.remove(&op.process));
            if let (Some(f), Some(call)) = (failing.as_mut(), call) {
                f.returned(call, op.index);
            }
            let unknown_before = op.kind == OpType::Info
                && invoke.as_ref().is_some_and(|i| {
                    failing
                        .as_ref()
                        .is_some_and(|f| f.concerns(i) && i.index < f.from)
                });
            let paired = invoke.is_none() && call.is_some();
            if wanted || paired || unknown_before {
                ops.extend(invoke);
                ops.push(op);
            }
        }
        ops.sort_by_key(|op| op.index);
        Ok(Excerpt { ops, last })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::{linear_page, timeline};
    use checkers::builder::HistoryBuilder;
    use checkers::linear::{check, LinOptions, ModelKind};
    use checkers::F;
    use serde_json::Value;
    use std::convert::Infallible;

    /// Eight processes, each adding to and reading its own counter, their ops overlapping
    /// one another's: 4,000 rounds. Early on, an add to `k/3` ends unknown and another never
    /// ends; late, a read of `k/3` returns what no order allows while an add to it is in
    /// flight, which ends unknown long after; a nemesis acts now and then.
    fn history() -> (Vec<Op>, u64, u64) {
        let mut h = HistoryBuilder::on("k/3");
        let mut sums = [0i64; 8];
        let (mut wrong, mut cold) = (0, 0);
        for round in 0..4_000u64 {
            for p in 0..8u64 {
                h.key(&format!("k/{p}"));
                match round % 3 {
                    2 => h.read(p),
                    _ => h.add(p, 1),
                };
            }
            for p in 0..8u64 {
                h.key(&format!("k/{p}"));
                let sum = &mut sums[p as usize];
                match round % 3 {
                    2 if p == 3 && round == 3_401 => wrong = h.read_ok(p, *sum + 1_000),
                    2 => _ = h.read_ok(p, *sum),
                    _ => {
                        *sum += 1;
                        h.added(p, 1, OpType::Ok);
                    }
                }
            }
            if round == 5 {
                h.key("k/3");
                h.add(100, 7);
                h.add(101, 9); // never ends
                h.added(100, 7, OpType::Info);
            }
            if round == 3_400 {
                h.key("k/3");
                h.add(102, 4);
            }
            if round % 1_000 == 500 {
                // A counter written once every 16,000 events or so.
                h.key("cold");
                cold = h.add(200 + round, 1);
                h.added(200 + round, 1, OpType::Ok);
            }
            if round == 3_950 {
                // Ends unknown some 8,800 events later: past the page's span.
                h.key("k/3");
                h.added(102, 4, OpType::Info);
            }
            if round % 97 == 0 {
                let f = F::Other("flush".to_string());
                h.push(0, OpType::Info, f, Value::Null);
                let nemesis = h.last_mut().expect("pushed");
                nemesis.process = Process::nemesis();
            }
        }
        (h.ops().to_vec(), wrong, cold)
    }

    #[test]
    fn the_pages_drawn_from_an_excerpt_are_those_drawn_from_the_whole_history() {
        let (whole, wrong, cold) = history();
        let result = check(ModelKind::Counter, &whole, &LinOptions::default()).expect("checks");
        let failure = result.failures.first().expect("the wrong read fails");
        assert_eq!(failure.key.as_deref(), Some("k/3"));
        let late = whole.iter().find(|op| op.process == Process::Client(102));
        let late = late.expect("the late add").index;
        assert!(failure.window.contains(&late), "{:?}", failure.window);
        let focus = vec![20_001, 9_001, wrong, cold, whole.len() as u64 - 2];
        let wanted = Wanted {
            focus: focus.clone(),
            failing: Some(failure),
        };
        let ops = whole.iter().cloned().map(Ok::<Op, Infallible>);
        let excerpt = Excerpt::gather(ops, &wanted).expect("infallible");
        assert_eq!(excerpt.last, whole.len() as u64 - 1);
        assert!(excerpt.ops.len() < whole.len() / 2, "{}", excerpt.ops.len());
        let last = whole.len() as u64 - 1;
        assert_eq!(
            linear_page::render(&excerpt.ops, excerpt.last, &result, failure),
            linear_page::render(&whole, last, &result, failure)
        );
        let (pairs, excerpt_pairs) = (
            timeline::completions(&whole),
            timeline::completions(&excerpt.ops),
        );
        for at in focus {
            assert_eq!(
                timeline::render(&excerpt.ops, &excerpt_pairs, at, "t"),
                timeline::render(&whole, &pairs, at, "t"),
                "around {at}"
            );
        }
    }

    #[test]
    fn a_partition_checked_whole_keeps_the_cells_its_page_draws() {
        // A partition delete makes `views` one partition; a read of `views/a` returns what
        // no order allows while adds to `views/b` go on around it, linearized.
        let mut h = HistoryBuilder::on("views/a");
        h.add(1, 1);
        h.added(1, 1, OpType::Ok);
        h.key("views");
        h.delete(2);
        for round in 0..6_000u64 {
            h.key("views/b");
            h.add(3, 1);
            h.added(3, 1, OpType::Ok);
            if round == 5_000 {
                h.key("views/a");
                h.read(4);
                h.add(3, 1);
                h.added(3, 1, OpType::Ok);
                h.read_ok(4, 5);
            }
        }
        let whole = h.ops().to_vec();
        let result = check(ModelKind::Counter, &whole, &LinOptions::default()).expect("checks");
        let failure = result.failures.first().expect("the wrong read fails");
        assert_eq!(failure.key.as_deref(), Some("views"));
        let wanted = Wanted {
            focus: Vec::new(),
            failing: Some(failure),
        };
        let ops = whole.iter().cloned().map(Ok::<Op, Infallible>);
        let excerpt = Excerpt::gather(ops, &wanted).expect("infallible");
        assert!(excerpt.ops.len() < whole.len() / 2, "{}", excerpt.ops.len());
        let last = whole.len() as u64 - 1;
        assert_eq!(
            linear_page::render(&excerpt.ops, excerpt.last, &result, failure),
            linear_page::render(&whole, last, &result, failure)
        );
    }

    #[test]
    fn nothing_wanted_keeps_nothing_but_the_last_index() {
        let (whole, _, _) = history();
        let ops = whole.iter().cloned().map(Ok::<Op, Infallible>);
        let excerpt = Excerpt::gather(ops, &Wanted::default()).expect("infallible");
        assert!(excerpt.ops.is_empty());
        assert_eq!(excerpt.last, whole.len() as u64 - 1);
    }
}
