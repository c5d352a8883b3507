//! A latency sketch: counts in logarithmic bins 1 % wide, so that the quantiles of millions
//! of latencies take a few hundred counters, each (the middle of its bin) within 0.5 % of
//! the truth.

use std::collections::BTreeMap;

/// Ratio between the bounds of a bin.
const GAMMA: f64 = 1.01;

/// Latencies below this many ns share the first bin (the charts clamp them to 1 µs).
const FLOOR_NS: u64 = 1_000;

/// Latencies counted by bin, with the exact fastest and slowest.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Sketch {
    bins: BTreeMap<u16, u64>,
    count: u64,
    min: u64,
    max: u64,
}

/// The bin a latency of `ns` falls in.
fn bin(ns: u64) -> u16 {
    if ns < FLOOR_NS {
        return 0;
    }
    let above = (ns as f64 / FLOOR_NS as f64).ln() / GAMMA.ln();
    (above.floor() as u64 + 1).min(u64::from(u16::MAX)) as u16
}

/// The middle of bin `b`, ns.
fn middle(b: u16) -> f64 {
    match b {
        0 => FLOOR_NS as f64 / 2.0,
        b => FLOOR_NS as f64 * GAMMA.powi(i32::from(b) - 1) * (1.0 + GAMMA) / 2.0,
    }
}

impl Sketch {
    /// Counts a latency of `ns`.
    pub fn add(&mut self, ns: u64) {
        (self.min, self.max) = match self.count {
            0 => (ns, ns),
            _ => (self.min.min(ns), self.max.max(ns)),
        };
        self.count += 1;
        *self.bins.entry(bin(ns)).or_default() += 1;
    }

    /// Counts every latency `other` counted.
    pub fn merge(&mut self, other: &Sketch) {
        if other.count == 0 {
            return;
        }
        (self.min, self.max) = match self.count {
            0 => (other.min, other.max),
            _ => (self.min.min(other.min), self.max.max(other.max)),
        };
        self.count += other.count;
        for (b, n) in &other.bins {
            *self.bins.entry(*b).or_default() += n;
        }
    }

    /// The latency of rank `ceil(q * count)` (at least the first), ns: the slowest exactly
    /// at `q = 1`, else the middle of its bin held to the fastest and slowest; `None` when
    /// nothing was counted.
    pub fn quantile(&self, q: f64) -> Option<f64> {
        if self.count == 0 {
            return None;
        }
        let rank = ((q * self.count as f64).ceil() as u64).clamp(1, self.count);
        if rank == self.count {
            return Some(self.max as f64);
        }
        let mut below = 0;
        let b = self.bins.iter().find_map(|(b, n)| {
            below += n;
            (below >= rank).then_some(*b)
        })?;
        Some(middle(b).clamp(self.min as f64, self.max as f64))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quantiles_are_within_half_a_percent_and_the_extremes_exact() {
        let mut sketch = Sketch::default();
        let latencies: Vec<u64> = (1..=10_000u64)
            .map(|i| i * i * 997 % 50_000_000 + 1)
            .collect();
        latencies.iter().for_each(|&ns| sketch.add(ns));
        let mut sorted = latencies.clone();
        sorted.sort_unstable();
        for q in [0.0, 0.5, 0.95, 0.99, 1.0] {
            let rank = ((q * sorted.len() as f64).ceil() as usize).clamp(1, sorted.len());
            let exact = sorted[rank - 1] as f64;
            let got = sketch.quantile(q).expect("counted");
            let slack = if exact < FLOOR_NS as f64 {
                FLOOR_NS as f64
            } else {
                exact * 0.005
            };
            assert!((got - exact).abs() <= slack, "q {q}: {got} vs {exact}");
        }
        assert_eq!(
            sketch.quantile(1.0),
            Some(*sorted.last().expect("some") as f64)
        );
        assert_eq!(Sketch::default().quantile(0.5), None);
    }

    #[test]
    fn merged_sketches_count_as_one() {
        let (mut a, mut b, mut both) = (Sketch::default(), Sketch::default(), Sketch::default());
        for ns in [5_000u64, 70_000, 3_000_000] {
            a.add(ns);
            both.add(ns);
        }
        for ns in [10u64, 2_000_000_000] {
            b.add(ns);
            both.add(ns);
        }
        a.merge(&b);
        assert_eq!(a, both);
    }
}
