//! The seeded generator: the same seed gives every client the same sequence of ops.

use super::mix::{KeyDistribution, OpKind, Pattern};
use super::spec::Workload;
use crate::api::DeleteScope;
use crate::api::{CounterKey, KeyError};
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use std::collections::VecDeque;

/// One op a client is to perform, before it is sent.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Planned {
    /// Add `delta` to `key` through node number `node`.
    Add {
        /// The counter.
        key: CounterKey,
        /// The delta.
        delta: i64,
        /// Index of the node to send it to.
        node: usize,
    },
    /// Read `key` through node number `node`.
    Read {
        /// The counter.
        key: CounterKey,
        /// Index of the node to send it to.
        node: usize,
    },
    /// Delete `key` (or its partition) through node number `node`.
    Delete {
        /// The counter.
        key: CounterKey,
        /// Row, column or partition.
        scope: DeleteScope,
        /// Index of the node to send it to.
        node: usize,
    },
    /// Scan a partition through node number `node`.
    Scan {
        /// The partition.
        partition: String,
        /// Index of the node to send it to.
        node: usize,
    },
}

/// One client's stream of ops, derived from the run's seed and the client's number.
pub struct Generator {
    rng: StdRng,
    workload: Workload,
    keys: Vec<CounterKey>,
    /// Cumulative weights of the keys, for `hot` and `zipf`.
    cumulative: Vec<f64>,
    client: u64,
    /// The queue pattern's cells of this client, oldest first, and the next one's number.
    queue: VecDeque<u64>,
    next_cell: u64,
}

impl Generator {
    /// The generator of client `client` in a run seeded with `seed`.
    pub fn new(workload: &Workload, seed: u64, client: u64) -> Result<Self, KeyError> {
        let stream = seed ^ client.wrapping_mul(0x9E37_79B9_7F4A_7C15);
        let keys: Vec<CounterKey> = workload
            .keys
            .iter()
            .map(|k| k.parse())
            .collect::<Result<_, _>>()?;
        let weights: Vec<f64> = (0..keys.len())
            .map(|i| match workload.key_distribution {
                KeyDistribution::Uniform => 1.0,
                KeyDistribution::Hot if i == 0 => workload.hot_share.max(f64::MIN_POSITIVE),
                KeyDistribution::Hot => (1.0 - workload.hot_share) / (keys.len() - 1) as f64,
                KeyDistribution::Zipf => 1.0 / ((i + 1) as f64).powf(workload.zipf_exponent),
            })
            .collect();
        let cumulative = weights
            .iter()
            .scan(0.0, |sum, w| {
                *sum += w;
                Some(*sum)
            })
            .collect();
        Ok(Generator {
            rng: StdRng::seed_from_u64(stream),
            workload: workload.clone(),
            keys,
            cumulative,
            client,
            queue: VecDeque::new(),
            next_cell: 0,
        })
    }

    fn pick_key(&mut self) -> CounterKey {
        let total = self.cumulative.last().copied().unwrap_or(1.0);
        let x = self.rng.gen_range(0.0..total);
        let i = self
            .cumulative
            .partition_point(|c| *c <= x)
            .min(self.keys.len() - 1);
        self.keys[i].clone()
    }

    fn pick_kind(&mut self) -> OpKind {
        let shares = self.workload.mix.shares();
        let total: f64 = shares.iter().map(|(_, share)| share).sum();
        let x = self.rng.gen_range(0.0..total);
        let mut sum = 0.0;
        shares
            .iter()
            .find(|(_, share)| {
                sum += share;
                x < sum
            })
            .map_or(OpKind::Add, |(kind, _)| *kind)
    }

    /// The next op, `elapsed_s` seconds into the run (time buckets depend on it).
    pub fn next_op(&mut self, elapsed_s: f64) -> Planned {
        let node = self.rng.gen_range(0..self.workload.nodes);
        let kind = self.pick_kind();
        let delta = self.workload.deltas[self.rng.gen_range(0..self.workload.deltas.len())];
        let scope = self.workload.delete_scope;
        let key = match self.workload.pattern {
            Pattern::Counters => self.pick_key(),
            Pattern::TimeBuckets => {
                let base = &self.keys[0];
                let bucket = (elapsed_s / self.workload.bucket_s).floor() as u64;
                CounterKey {
                    partition: base.partition.clone(),
                    cell: format!("{}-b{bucket}", base.cell),
                }
            }
            Pattern::Queue => return self.next_queue_op(kind, delta, node),
        };
        match kind {
            OpKind::Add => Planned::Add { key, delta, node },
            OpKind::Read => Planned::Read { key, node },
            OpKind::Delete => Planned::Delete { key, scope, node },
            OpKind::Scan => Planned::Scan {
                partition: key.partition,
                node,
            },
        }
    }

    /// The queue anti-pattern: adds enqueue a new cell, deletes dequeue the oldest, reads
    /// look at the newest, scans read the partition from the head.
    fn next_queue_op(&mut self, kind: OpKind, delta: i64, node: usize) -> Planned {
        let partition = self.keys[0].partition.clone();
        let cell = |n: u64| CounterKey {
            partition: partition.clone(),
            cell: format!("c{}-{n:08}", self.client),
        };
        match (kind, self.queue.front(), self.queue.back()) {
            (OpKind::Delete, Some(&oldest), _) => {
                self.queue.pop_front();
                Planned::Delete {
                    key: cell(oldest),
                    scope: DeleteScope::Row,
                    node,
                }
            }
            (OpKind::Read, _, Some(&newest)) => Planned::Read {
                key: cell(newest),
                node,
            },
            (OpKind::Scan, _, _) => Planned::Scan {
                partition: partition.clone(),
                node,
            },
            _ => {
                let n = self.next_cell;
                self.next_cell += 1;
                self.queue.push_back(n);
                Planned::Add {
                    key: cell(n),
                    delta,
                    node,
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::workload::mix::Mix;

    fn workload() -> Workload {
        Workload {
            keys: vec!["a/x".into(), "a/y".into(), "a/z".into()],
            deltas: vec![1, -1, 5],
            mix: Mix {
                add: 1.0,
                read: 1.0,
                delete: 0.5,
                scan: 0.5,
            },
            ..Workload::default()
        }
    }

    fn ops(w: &Workload, seed: u64, client: u64) -> Vec<Planned> {
        let mut generator = Generator::new(w, seed, client).expect("valid keys");
        (0..200)
            .map(|i| generator.next_op(i as f64 * 0.1))
            .collect()
    }

    #[test]
    fn the_same_seed_gives_the_same_ops() {
        assert_eq!(ops(&workload(), 42, 3), ops(&workload(), 42, 3));
    }

    #[test]
    fn seeds_and_clients_give_different_ops() {
        assert_ne!(ops(&workload(), 42, 3), ops(&workload(), 43, 3));
        assert_ne!(ops(&workload(), 42, 3), ops(&workload(), 42, 4));
    }

    #[test]
    fn every_kind_of_op_appears_in_proportion() {
        let all = ops(&workload(), 1, 0);
        let adds = all
            .iter()
            .filter(|p| matches!(p, Planned::Add { .. }))
            .count();
        let scans = all
            .iter()
            .filter(|p| matches!(p, Planned::Scan { .. }))
            .count();
        assert!(
            (60..=100).contains(&adds),
            "adds {adds} of 200 (expected ~67)"
        );
        assert!(
            (15..=55).contains(&scans),
            "scans {scans} of 200 (expected ~33)"
        );
    }

    #[test]
    fn a_hot_key_gets_its_share() {
        let w = Workload {
            key_distribution: KeyDistribution::Hot,
            hot_share: 0.9,
            ..workload()
        };
        let all = ops(&w, 5, 0);
        let keyed: Vec<&CounterKey> = all
            .iter()
            .filter_map(|p| match p {
                Planned::Add { key, .. }
                | Planned::Read { key, .. }
                | Planned::Delete { key, .. } => Some(key),
                Planned::Scan { .. } => None,
            })
            .collect();
        let hot = keyed.iter().filter(|k| k.cell == "x").count();
        assert!(hot * 100 >= keyed.len() * 80, "{hot} of {}", keyed.len());
    }

    #[test]
    fn the_queue_deletes_its_oldest_cell_and_time_buckets_follow_the_clock() {
        let w = Workload {
            pattern: Pattern::Queue,
            ..workload()
        };
        let all = ops(&w, 9, 2);
        let mut live: VecDeque<String> = VecDeque::new();
        for op in &all {
            match op {
                Planned::Add { key, .. } => live.push_back(key.cell.clone()),
                Planned::Delete { key, .. } => {
                    assert_eq!(live.pop_front().as_deref(), Some(key.cell.as_str()))
                }
                _ => {}
            }
        }
        let w = Workload {
            pattern: Pattern::TimeBuckets,
            bucket_s: 1.0,
            ..workload()
        };
        let mut generator = Generator::new(&w, 1, 0).expect("valid keys");
        let cell = |p: Planned| match p {
            Planned::Add { key, .. } | Planned::Read { key, .. } | Planned::Delete { key, .. } => {
                key.cell
            }
            Planned::Scan { partition, .. } => partition,
        };
        let early = cell(generator.next_op(0.5));
        assert!(early.ends_with("-b0") || early == "a", "{early}");
        let late = cell(generator.next_op(3.5));
        assert!(late.ends_with("-b3") || late == "a", "{late}");
    }
}
