//! The ops a report shows beside its charts, taken from a history as it is read, without
//! holding it: the events around each finding's timeline, and the failing partition's
//! window for the linearizability page.

use checkers::{Op, OpType, Process};
use std::collections::HashMap;

/// Events either side of a finding kept for its timeline; the timeline shows the
/// [`super::timeline::AROUND`] ops of the finding's counter among them.
pub const EVENTS_AROUND: u64 = 4_096;

/// Ops either side of a failing partition's window that its page shows.
pub const CONTEXT: u64 = 12;

/// Events a failing partition's page spans at most before its window's last call, and
/// after it waits for the window's calls to return (one that returns later is drawn as
/// never returning); ops called earlier and still open are drawn from the page's start.
pub const LATE: u64 = 4_096;

/// What a report shows ops of.
#[derive(Debug, Clone, Default)]
pub struct Wanted {
    /// History indices of the findings that get a timeline.
    pub focus: Vec<u64>,
    /// The failing partition the linearizability page explains: its key (`None`: the
    /// whole history) and the calls of the ops in its window.
    pub failing: Option<(Option<String>, Vec<u64>)>,
}

/// Ops of a history, in index order, and the history's last index.
#[derive(Debug, Clone, Default)]
pub struct Excerpt {
    /// The ops kept, by index.
    pub ops: Vec<Op>,
    /// The index of the history's last op.
    pub last: u64,
}

/// The failing window being followed: where it starts, its last call, its calls not yet
/// returned, the latest return so far, and where it ends once every call has returned.
struct Failing {
    key: Option<String>,
    from: u64,
    last_call: u64,
    waiting: Vec<u64>,
    latest: u64,
    to: Option<u64>,
}

impl Failing {
    fn covers(&self, index: u64) -> bool {
        index >= self.from && self.to.is_none_or(|to| index <= to)
    }

    fn concerns(&self, op: &Op) -> bool {
        self.key.is_none() || op.key == self.key
    }

    /// The history has reached `index`: a window still waiting [`LATE`] events after its
    /// last call ends.
    fn reached(&mut self, index: u64) {
        if self.to.is_none() && index > self.last_call.saturating_add(LATE) {
            let end = self.latest.max(self.last_call);
            self.to = Some(end.saturating_add(CONTEXT));
        }
    }

    /// The op called at `call` returned at `index`.
    fn returned(&mut self, call: u64, index: u64) {
        if let Some(at) = self.waiting.iter().position(|c| *c == call) {
            self.waiting.swap_remove(at);
            self.latest = self.latest.max(index);
            if self.waiting.is_empty() {
                self.to = Some(self.latest.saturating_add(CONTEXT));
            }
        }
    }
}

impl Excerpt {
    /// The ops of `history` that `wanted` needs: every op within [`EVENTS_AROUND`] of a
    /// focus, and from [`CONTEXT`] before the failing window to [`CONTEXT`] after its last
    /// return; with each, the other half of its pair (an invoke before, a completion
    /// after), and every op of the failing key that ended with an unknown outcome before
    /// the window (it may take effect in it).
    pub fn gather<E>(
        history: impl IntoIterator<Item = Result<Op, E>>,
        wanted: &Wanted,
    ) -> Result<Self, E> {
        let around: Vec<(u64, u64)> = (wanted.focus.iter())
            .map(|f| {
                (
                    f.saturating_sub(EVENTS_AROUND),
                    f.saturating_add(EVENTS_AROUND),
                )
            })
            .collect();
        let mut failing = wanted.failing.as_ref().map(|(key, window)| Failing {
            key: key.clone(),
            from: failing_from(window),
            last_call: window.iter().copied().max().unwrap_or(0),
            waiting: window.clone(),
            latest: 0,
            to: window.is_empty().then_some(0),
        });
        // Invokes not kept (yet), and the calls of those kept, by process.
        let mut open: HashMap<Process, Op> = HashMap::new();
        let mut kept_open: HashMap<Process, u64> = HashMap::new();
        let (mut ops, mut last, mut inside) = (Vec::new(), 0, false);
        for op in history {
            let op = op?;
            last = op.index;
            if let Some(f) = failing.as_mut() {
                f.reached(op.index);
            }
            let near = around
                .iter()
                .any(|(lo, hi)| (*lo..=*hi).contains(&op.index));
            let failing_covers = failing.as_ref().is_some_and(|f| f.covers(op.index));
            // The failing page draws only the client ops of its key.
            let wanted = near
                || (failing_covers && op.process.is_client())
                    && failing.as_ref().is_some_and(|f| f.concerns(&op));
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

/// Where a failing partition's page starts: [`CONTEXT`] before its window's first call, or
/// [`LATE`] before its last.
pub fn failing_from(window: &[u64]) -> u64 {
    let first = window.first().copied().unwrap_or(0);
    let last = window.iter().copied().max().unwrap_or(0);
    first.max(last.saturating_sub(LATE)).saturating_sub(CONTEXT)
}

/// The op at history index `index` of ops sorted by index.
pub fn op_at(ops: &[Op], index: u64) -> Option<&Op> {
    let at = ops.binary_search_by_key(&index, |op| op.index).ok()?;
    ops.get(at)
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
    /// ends; late, a read of `k/3` returns what no order allows; a nemesis acts now and then.
    fn history() -> (Vec<Op>, u64) {
        let mut h = HistoryBuilder::on("k/3");
        let mut sums = [0i64; 8];
        let mut wrong = 0;
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
            if round % 97 == 0 {
                let f = F::Other("flush".to_string());
                h.push(0, OpType::Info, f, Value::Null);
                let nemesis = h.last_mut().expect("pushed");
                nemesis.process = Process::nemesis();
            }
        }
        (h.ops().to_vec(), wrong)
    }

    #[test]
    fn the_pages_drawn_from_an_excerpt_are_those_drawn_from_the_whole_history() {
        let (whole, wrong) = history();
        let result = check(ModelKind::Counter, &whole, &LinOptions::default()).expect("checks");
        let failure = result.failures.first().expect("the wrong read fails");
        assert_eq!(failure.key.as_deref(), Some("k/3"));
        let focus = vec![20_001, 9_001, wrong, whole.len() as u64 - 2];
        let wanted = Wanted {
            focus: focus.clone(),
            failing: Some((failure.key.clone(), failure.window.clone())),
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
    fn nothing_wanted_keeps_nothing_but_the_last_index() {
        let (whole, _) = history();
        let ops = whole.iter().cloned().map(Ok::<Op, Infallible>);
        let excerpt = Excerpt::gather(ops, &Wanted::default()).expect("infallible");
        assert!(excerpt.ops.is_empty());
        assert_eq!(excerpt.last, whole.len() as u64 - 1);
    }
}
