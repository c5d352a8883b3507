//! The reads kept for charts: every read out of bounds, and of the reads that fit, a
//! thinned series per counter, so that a long history's charts hold a bounded number of
//! the reads that fit: the most read counter's up to [`FITTING_KEPT`], the others sharing
//! [`FITTING_SHARED`].

use super::figures::ReadBounds;
use crate::thinned::Thinned;
use rustc_hash::FxHashMap;

/// Reads that fit kept of the most read counter (the hot one), at most: its chart draws
/// no more points than this.
pub const FITTING_KEPT: usize = 10_000;

/// Reads that fit kept of the other counters together, about: each keeps its share of
/// this among the counters seen so far, held to it whenever it is read again (counters
/// read in phases, one after another, may each keep more).
pub const FITTING_SHARED: usize = 50_000;

/// The reads kept for charts, in the order they were judged.
#[derive(Debug, Default)]
pub struct KeptReads {
    fitting: FxHashMap<String, Thinned<ReadBounds>>,
    wrong: Vec<ReadBounds>,
    /// The counter with the most reads that fit so far, and how many.
    top: Option<(String, u64)>,
}

impl KeptReads {
    /// Whether the next read of `key` that fits is to be kept (and so judged in full).
    pub fn wants_fitting(&self, key: &str) -> bool {
        self.fitting.get(key).is_none_or(Thinned::wants_next)
    }

    /// Counts a read of `key` that fits and is not kept.
    pub fn pass_fitting(&mut self, key: &str) {
        if let Some(series) = self.fitting.get_mut(key) {
            series.pass();
        }
        self.counted(key);
    }

    /// Keeps a read judged in full: always when it does not fit, else in its counter's
    /// thinned series.
    pub fn keep(&mut self, bounds: ReadBounds, fits: bool) {
        if !fits {
            self.wrong.push(bounds);
            return;
        }
        let key = bounds.key.clone();
        let series =
            (self.fitting.entry(bounds.key.clone())).or_insert_with(|| Thinned::new(FITTING_KEPT));
        series.push(bounds);
        self.counted(&key);
    }

    /// After a read of `key` that fits: the most read counter may change, and `key`'s
    /// series is held to its limit.
    fn counted(&mut self, key: &str) {
        let Some(series) = self.fitting.get_mut(key) else {
            return;
        };
        let seen = series.seen();
        let top = match &mut self.top {
            Some((top, most)) if top == key => {
                *most = seen;
                true
            }
            Some((_, most)) if *most >= seen => false,
            _ => {
                self.top = Some((key.to_string(), seen));
                true
            }
        };
        let shared = FITTING_SHARED / self.fitting.len().max(1);
        let limit = if top {
            FITTING_KEPT
        } else {
            shared.min(FITTING_KEPT)
        };
        if let Some(series) = self.fitting.get_mut(key) {
            series.set_limit(limit);
        }
    }

    /// Every read kept, by history index.
    pub fn into_reads(self) -> Vec<ReadBounds> {
        let mut reads = self.wrong;
        reads.extend(self.fitting.into_values().flat_map(Thinned::into_kept));
        reads.sort_by_key(|r| r.index);
        reads
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::builder::HistoryBuilder;
    use crate::counter::CounterChecker;
    use crate::OpType;

    #[test]
    fn a_long_run_of_fitting_reads_is_thinned_and_every_wrong_read_kept() {
        let mut h = HistoryBuilder::on("k");
        h.add(1, 1);
        h.added(1, 1, OpType::Ok);
        let n = 3 * FITTING_KEPT;
        for i in 0..n {
            h.read(2);
            h.read_ok(2, if i % 1_000 == 7 { 5 } else { 1 });
        }
        let run = |mut checker: CounterChecker| {
            h.ops().iter().for_each(|op| checker.observe(op));
            checker.finish()
        };
        let (mut kept, figures_only) = (
            run(CounterChecker::keeping_reads()),
            run(CounterChecker::new()),
        );
        let wrong = kept
            .read_bounds
            .iter()
            .filter(|r| r.misread().is_some())
            .count();
        assert_eq!(wrong, n / 1_000);
        let fitting = kept.read_bounds.len() - wrong;
        assert!(
            (FITTING_KEPT / 2..=FITTING_KEPT).contains(&fitting),
            "{fitting}"
        );
        assert!(kept.read_bounds.windows(2).all(|w| w[0].index < w[1].index));
        kept.read_bounds.clear();
        assert_eq!(kept, figures_only, "keeping reads changes no figure");
    }

    #[test]
    fn many_counters_share_a_bounded_sample_and_the_most_read_keeps_the_most() {
        let mut kept = KeptReads::default();
        let mut keep = |key: &str, index: u64| {
            if kept.wants_fitting(key) {
                let bounds = ReadBounds {
                    key: key.to_string(),
                    index,
                    ..ReadBounds::default()
                };
                kept.keep(bounds, true);
            } else {
                kept.pass_fitting(key);
            }
        };
        let mut index = 0;
        for _ in 0..1_000u64 {
            for cold in 0..300u64 {
                index += 1;
                keep(&format!("cold/{cold}"), index);
            }
            for _ in 0..40 {
                index += 1;
                keep("hot", index);
            }
        }
        let reads = kept.into_reads();
        let hot = reads.iter().filter(|r| r.key == "hot").count();
        assert!((FITTING_KEPT / 2..=FITTING_KEPT).contains(&hot), "{hot}");
        let cold = reads.len() - hot;
        assert!(cold <= 2 * FITTING_SHARED, "{cold} of 300,000 kept");
        assert!(cold >= 300, "every counter keeps some: {cold}");
        assert!(reads.windows(2).all(|w| w[0].index < w[1].index));
    }
}
