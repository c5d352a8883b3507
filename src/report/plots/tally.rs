//! What the charts draw, tallied from the history in one pass as its ops go by: nothing
//! is kept per op beyond a thinned sample for the scatter charts.

use super::frame::{bucket_seconds, MAX_POINTS, NS_PER_S, OUTCOMES};
use super::sketch::Sketch;
use super::spans::{Pairing, Span};
use super::tombstones::Scanned;
use crate::report::rate::Invokes;
use checkers::thinned::Thinned;
use checkers::{Op, Process, F};
use std::collections::BTreeMap;

/// Tallied time slots beyond which two slots become one (the slot doubles), so that a long
/// or sparse history's tally holds at most this many slots, each a latency sketch of at
/// most a few hundred bins (chart buckets are about 200, so slots of up to half a bucket
/// leave them their width within a few percent).
const MAX_SLOTS: usize = 1 << 12;

/// One slot of time, by completion: completions per op kind and outcome, and their latencies.
#[derive(Debug, Clone, Default)]
struct Slot {
    completed: BTreeMap<(F, usize), u64>,
    latencies: Sketch,
}

impl Slot {
    fn merge(&mut self, other: Slot) {
        for (line, n) in other.completed {
            *self.completed.entry(line).or_default() += n;
        }
        self.latencies.merge(&other.latencies);
    }
}

/// One time bucket of a chart: when it starts (s), its completions per op kind and
/// outcome (by rank in `OUTCOMES`), and their latencies.
#[derive(Debug, Clone, Default)]
pub(super) struct Bucket {
    pub(super) start_s: u64,
    pub(super) completed: BTreeMap<(F, usize), u64>,
    pub(super) latencies: Sketch,
}

/// What the charts draw, tallied from a history's ops.
#[derive(Debug)]
pub struct Tally {
    pairing: Pairing,
    /// Completed client ops per outcome (in `OUTCOMES` order), thinned.
    scatter: [Thinned<Span>; 3],
    /// Where the last completed op ends, ns.
    end: u64,
    /// The fastest and the slowest op, ns.
    latency: Option<(u64, u64)>,
    /// Seconds per slot: a power of two, 1 unless the history spans very many seconds.
    slot_s: u64,
    slots: BTreeMap<u64, Slot>,
    /// The nemesis's ops (few: one or two per fault).
    pub(super) nemesis: Vec<Op>,
    /// When the load's ops were invoked.
    pub invokes: Invokes,
    /// The tombstones reads went over.
    pub(super) scanned: Scanned,
}

impl Default for Tally {
    fn default() -> Self {
        Tally {
            pairing: Pairing::default(),
            scatter: std::array::from_fn(|_| Thinned::new(MAX_POINTS)),
            end: 0,
            latency: None,
            slot_s: 1,
            slots: BTreeMap::new(),
            nemesis: Vec::new(),
            invokes: Invokes::default(),
            scanned: Scanned::default(),
        }
    }
}

impl Tally {
    /// The tally of a whole history.
    #[cfg(test)]
    pub(super) fn of(history: &[Op]) -> Self {
        let mut tally = Tally::default();
        history.iter().for_each(|op| tally.observe(op));
        tally
    }

    /// Takes the next op of the history.
    pub fn observe(&mut self, op: &Op) {
        if op.process == Process::nemesis() {
            self.nemesis.push(op.clone());
        }
        self.invokes.observe(op);
        self.scanned.observe(op);
        if let Some(span) = self.pairing.observe(op) {
            self.add(span);
        }
    }

    /// Counts one completed op.
    pub(super) fn add(&mut self, span: Span) {
        let Some(rank) = OUTCOMES.iter().position(|kind| *kind == span.kind) else {
            return;
        };
        self.end = self.end.max(span.end());
        self.latency = Some(match self.latency {
            None => (span.latency, span.latency),
            Some((lo, hi)) => (lo.min(span.latency), hi.max(span.latency)),
        });
        let slot = self
            .slots
            .entry(span.end() / NS_PER_S / self.slot_s)
            .or_default();
        *slot.completed.entry((span.f.clone(), rank)).or_default() += 1;
        slot.latencies.add(span.latency);
        self.scatter[rank].push(span);
        if self.slots.len() > MAX_SLOTS {
            self.widen();
        }
    }

    /// Two slots become one.
    fn widen(&mut self) {
        self.slot_s *= 2;
        let mut wider: BTreeMap<u64, Slot> = BTreeMap::new();
        for (at, slot) in std::mem::take(&mut self.slots) {
            wider.entry(at / 2).or_default().merge(slot);
        }
        self.slots = wider;
    }

    /// The tally of completed ops given as spans.
    #[cfg(test)]
    pub(super) fn of_spans(spans: impl IntoIterator<Item = Span>) -> Self {
        let mut tally = Tally::default();
        spans.into_iter().for_each(|span| tally.add(span));
        tally
    }

    /// Where the last completed op ends, ns (0 when none did).
    pub(super) fn end(&self) -> u64 {
        self.end
    }

    /// The fastest and the slowest completed op, ns.
    pub(super) fn latency_range(&self) -> Option<(u64, u64)> {
        self.latency
    }

    /// The completed ops of outcome `rank` (in `OUTCOMES`), thinned, and how many there were.
    pub(super) fn scatter(&self, rank: usize) -> (&[Span], u64) {
        let series = &self.scatter[rank];
        (series.kept(), series.seen())
    }

    /// The width of the charts' time buckets, s: about `MAX_BUCKETS` of them over the run,
    /// whole slots each.
    pub(super) fn bucket_width(&self) -> u64 {
        bucket_seconds(self.end).div_ceil(self.slot_s) * self.slot_s
    }

    /// The tally per time bucket of `bucket_width` seconds, by completion; buckets with
    /// nothing completed are left out.
    pub(super) fn buckets(&self) -> Vec<Bucket> {
        let width = self.bucket_width();
        let mut buckets: BTreeMap<u64, Bucket> = BTreeMap::new();
        for (at, slot) in &self.slots {
            let start_s = at * self.slot_s / width * width;
            let bucket = buckets.entry(start_s).or_insert_with(|| Bucket {
                start_s,
                ..Bucket::default()
            });
            for (line, n) in &slot.completed {
                *bucket.completed.entry(line.clone()).or_default() += n;
            }
            bucket.latencies.merge(&slot.latencies);
        }
        buckets.into_values().collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use checkers::OpType;

    #[test]
    fn a_history_over_very_many_seconds_is_tallied_in_wider_slots_and_loses_no_op() {
        let seconds = 3 * MAX_SLOTS as u64;
        let span = |s: u64| Span {
            f: F::Add,
            kind: if s.is_multiple_of(10) {
                OpType::Info
            } else {
                OpType::Ok
            },
            start: s * NS_PER_S,
            latency: 1_000_000 + s,
        };
        let tally = Tally::of_spans((0..seconds).map(span));
        assert_eq!(tally.slot_s, 4);
        assert!(tally.slots.len() <= MAX_SLOTS);
        assert_eq!(tally.bucket_width() % tally.slot_s, 0);
        let buckets = tally.buckets();
        assert!(buckets.len() <= 201, "{}", buckets.len());
        let count = |rank: usize| -> u64 {
            (buckets.iter())
                .flat_map(|b| b.completed.iter())
                .filter(|((_, r), _)| *r == rank)
                .map(|(_, n)| n)
                .sum()
        };
        let info = seconds.div_ceil(10);
        assert_eq!((count(0), count(1)), (seconds - info, info));
        let max = buckets
            .iter()
            .map(|b| b.latencies.quantile(1.0).unwrap_or(0.0));
        assert_eq!(max.fold(0.0, f64::max), (1_000_000 + seconds - 1) as f64);
    }
}
