//! The tombstones checker: from the tombstone counts reads and scans report, which went over
//! the warn threshold, which failed for tombstones, and which broke the rules (data returned
//! past the failure threshold; more tombstones than deletes were issued, when the cluster
//! started empty).

use crate::op::{Op, OpType, Process, F};
use crate::validity::Validity;
use rustc_hash::FxHashMap;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// How many example reads results.json lists of each kind (warned, failed).
const EXAMPLES_KEPT: usize = 10;

/// The thresholds reads were held to: Cassandra's defaults unless the run says otherwise.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Thresholds {
    /// `tombstone_warn_threshold`.
    pub warn: u64,
    /// `tombstone_failure_threshold`.
    pub fail: u64,
    /// The cluster held no data when the history began, so no partition can hold more
    /// tombstones than the deletes issued in it.
    pub started_empty: bool,
}

impl Default for Thresholds {
    fn default() -> Self {
        Thresholds {
            warn: 1_000,
            fail: 100_000,
            started_empty: false,
        }
    }
}

/// Figures for one partition.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct PartitionTombstones {
    /// Ok reads and scans that reported a count.
    pub reads: u64,
    /// Of those, over the warn threshold.
    pub warn_reads: u64,
    /// Reads and scans that failed for tombstones.
    pub failed_reads: u64,
    /// The most tombstones one read went over.
    pub max_scanned: u64,
    /// Row and column deletes issued.
    pub deletes: u64,
}

/// The tombstones checker's verdict and figures, as results.json holds them.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct TombstonesResult {
    /// Invalid when some read broke the rules.
    pub valid: Validity,
    /// Reads over the warn threshold.
    pub warn_reads: u64,
    /// Reads failed for tombstones (`tombstone_overwhelming`).
    pub failed_reads: u64,
    /// Reads that returned data past the failure threshold, or reported more tombstones
    /// than deletes were issued in their partition of a cluster that started empty.
    pub violations: u64,
    /// The most tombstones one read went over.
    pub max_scanned: u64,
    /// The history index of each violating read's completion (the first 100).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub violating_reads: Vec<u64>,
    /// The history index of each failed read's completion (the first 10): examples.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub failed_examples: Vec<u64>,
    /// The history index of each completion over the warn threshold (the first 10).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub warn_examples: Vec<u64>,
    /// Figures per partition.
    #[serde(default)]
    pub partitions: BTreeMap<String, PartitionTombstones>,
    /// Figures over time, in buckets of `bucket_s` seconds from the start of the history.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub over_time: Vec<TombstoneBucket>,
    /// The width of each bucket of `over_time`, seconds.
    #[serde(default)]
    pub bucket_s: u64,
    /// The warn threshold reads were held to.
    #[serde(default)]
    pub warn_threshold: u64,
    /// The failure threshold reads were held to.
    #[serde(default)]
    pub fail_threshold: u64,
}

/// Reads and their tombstones in one stretch of time.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct TombstoneBucket {
    /// Ok reads that reported a count.
    pub reads: u64,
    /// Of those, over the warn threshold.
    pub warn_reads: u64,
    /// Reads failed for tombstones.
    pub failed_reads: u64,
    /// The most tombstones one read went over.
    pub max_scanned: u64,
}

impl TombstoneBucket {
    fn merge(self, other: TombstoneBucket) -> TombstoneBucket {
        TombstoneBucket {
            reads: self.reads + other.reads,
            warn_reads: self.warn_reads + other.warn_reads,
            failed_reads: self.failed_reads + other.failed_reads,
            max_scanned: self.max_scanned.max(other.max_scanned),
        }
    }
}

/// Past this many buckets, neighbours merge and the width doubles: memory stays bounded.
const MAX_BUCKETS: usize = 1_000;

/// Streams a history and judges the tombstone counts its reads report.
#[derive(Default)]
pub struct TombstoneChecker {
    thresholds: Thresholds,
    open: FxHashMap<Process, (F, String)>,
    result: TombstonesResult,
}

fn partition_of(key: &str) -> &str {
    key.split_once('/').map_or(key, |(p, _)| p)
}

impl TombstoneChecker {
    /// A checker holding reads to `thresholds`.
    pub fn new(thresholds: Thresholds) -> Self {
        TombstoneChecker {
            thresholds,
            ..Self::default()
        }
    }

    /// Takes the next op of the history.
    pub fn observe(&mut self, op: &Op) {
        if !op.process.is_client() {
            return;
        }
        let key = op.key.clone().unwrap_or_default();
        if op.kind == OpType::Invoke {
            if op.f == F::Delete && key.contains('/') {
                self.result
                    .partitions
                    .entry(partition_of(&key).to_string())
                    .or_default()
                    .deletes += 1;
            }
            self.open.insert(op.process.clone(), (op.f.clone(), key));
            return;
        }
        let Some((f, key)) = self.open.remove(&op.process) else {
            return;
        };
        if !matches!(f, F::Read | F::Scan) {
            return;
        }
        let t = self.thresholds;
        let bucket = self.bucket(op.time);
        let figures = self
            .result
            .partitions
            .entry(partition_of(&key).to_string())
            .or_default();
        match op.kind {
            OpType::Fail | OpType::Info
                if op.error.as_deref() == Some("tombstone_overwhelming") =>
            {
                figures.failed_reads += 1;
                self.result.failed_reads += 1;
                self.result.over_time[bucket].failed_reads += 1;
                if self.result.failed_examples.len() < EXAMPLES_KEPT {
                    self.result.failed_examples.push(op.index);
                }
            }
            OpType::Ok => {
                let Some(scanned) = op.tombstones else { return };
                let over_time = &mut self.result.over_time[bucket];
                over_time.reads += 1;
                over_time.max_scanned = over_time.max_scanned.max(scanned);
                over_time.warn_reads += u64::from(scanned > t.warn);
                figures.reads += 1;
                figures.max_scanned = figures.max_scanned.max(scanned);
                self.result.max_scanned = self.result.max_scanned.max(scanned);
                if scanned > t.warn {
                    figures.warn_reads += 1;
                    self.result.warn_reads += 1;
                    if self.result.warn_examples.len() < EXAMPLES_KEPT {
                        self.result.warn_examples.push(op.index);
                    }
                }
                let too_many = t.started_empty && scanned > figures.deletes;
                if scanned > t.fail || too_many {
                    self.result.violations += 1;
                    if self.result.violating_reads.len() < 100 {
                        self.result.violating_reads.push(op.index);
                    }
                }
            }
            _ => {}
        }
    }

    /// The bucket of time `ns`, created (and the buckets coarsened) as needed.
    fn bucket(&mut self, ns: u64) -> usize {
        let result = &mut self.result;
        result.bucket_s = result.bucket_s.max(1);
        let mut at = (ns / 1_000_000_000 / result.bucket_s) as usize;
        while at >= MAX_BUCKETS {
            let merged = (result.over_time.chunks(2))
                .map(|pair| {
                    pair.iter()
                        .fold(TombstoneBucket::default(), |a, b| a.merge(*b))
                })
                .collect();
            result.over_time = merged;
            result.bucket_s *= 2;
            at = (ns / 1_000_000_000 / result.bucket_s) as usize;
        }
        if result.over_time.len() <= at {
            result.over_time.resize(at + 1, TombstoneBucket::default());
        }
        at
    }

    /// Ends the history.
    pub fn finish(mut self) -> TombstonesResult {
        self.result.warn_threshold = self.thresholds.warn;
        self.result.fail_threshold = self.thresholds.fail;
        self.result.valid = Validity::from_findings(self.result.violations > 0, false);
        self.result
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::builder::HistoryBuilder;
    use serde_json::json;

    fn scan(h: &mut HistoryBuilder, process: u64, tombstones: Option<u64>, failed: bool) {
        h.key("queue");
        h.push(process, OpType::Invoke, F::Scan, serde_json::Value::Null);
        let kind = if failed { OpType::Fail } else { OpType::Ok };
        h.push(
            process,
            kind,
            F::Scan,
            if failed {
                serde_json::Value::Null
            } else {
                json!({})
            },
        );
        if let Some(op) = h.last_mut() {
            op.tombstones = tombstones;
            op.error = failed.then(|| "tombstone_overwhelming".to_string());
        }
    }

    fn check(h: &HistoryBuilder, thresholds: Thresholds) -> TombstonesResult {
        let mut checker = TombstoneChecker::new(thresholds);
        h.ops().iter().for_each(|op| checker.observe(op));
        checker.finish()
    }

    #[test]
    fn buckets_over_time_coarsen_past_the_limit_and_keep_every_read() {
        // One warn read per second for 2,500 s: 1 s buckets would be 2,500 > 1,000, so the
        // width doubles twice to 4 s: 625 buckets of 4 reads each.
        let mut checker = TombstoneChecker::new(Thresholds {
            warn: 0,
            ..Thresholds::default()
        });
        let mut h = HistoryBuilder::on("queue/a");
        for _ in 0..2_500 {
            scan(&mut h, 1, Some(1), false);
        }
        let mut ops = h.ops().to_vec();
        for (i, op) in ops.iter_mut().enumerate() {
            op.time = (i as u64 / 2) * 1_000_000_000;
        }
        ops.iter().for_each(|op| checker.observe(op));
        let result = checker.finish();
        assert_eq!((result.bucket_s, result.over_time.len()), (4, 625));
        assert!(result
            .over_time
            .iter()
            .all(|b| b.reads == 4 && b.warn_reads == 4));
    }

    #[test]
    fn reads_over_the_thresholds_are_counted_and_failures_are_not_violations() {
        // Thresholds 2 / 4: scans of 1, 3 (warn), 5 tombstones failed properly: valid.
        let mut h = HistoryBuilder::on("queue/a");
        for n in [1, 3] {
            scan(&mut h, 1, Some(n), false);
        }
        scan(&mut h, 1, None, true);
        let result = check(
            &h,
            Thresholds {
                warn: 2,
                fail: 4,
                started_empty: false,
            },
        );
        assert_eq!(
            (result.warn_reads, result.failed_reads, result.violations),
            (1, 1, 0)
        );
        assert_eq!((result.max_scanned, result.valid), (3, Validity::Valid));
        assert_eq!(result.partitions["queue"].reads, 2);
        // Examples name the completions: the warned scan's and the failed one's.
        let last = h.ops().len() as u64 - 1;
        assert_eq!(result.failed_examples, vec![last]);
        assert_eq!(result.warn_examples, vec![last - 2]);
    }

    #[test]
    fn data_past_the_failure_threshold_or_more_tombstones_than_deletes_is_a_violation() {
        // One row delete in `queue`; a scan reporting 5 > fail 4 returned data: a violation.
        let mut h = HistoryBuilder::on("queue/a");
        h.delete(1);
        scan(&mut h, 2, Some(5), false);
        let result = check(
            &h,
            Thresholds {
                warn: 2,
                fail: 4,
                started_empty: false,
            },
        );
        assert_eq!((result.violations, result.valid), (1, Validity::Invalid));
        // From an empty cluster, 2 tombstones after 1 delete cannot be.
        let mut h = HistoryBuilder::on("queue/a");
        h.delete(1);
        scan(&mut h, 2, Some(1), false);
        scan(&mut h, 2, Some(2), false);
        let result = check(
            &h,
            Thresholds {
                warn: 10,
                fail: 20,
                started_empty: true,
            },
        );
        assert_eq!(result.violations, 1);
        assert_eq!(result.violating_reads, vec![h.ops().len() as u64 - 1]);
    }
}
