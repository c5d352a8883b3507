//! The nemesis schedule: which faults, how often, how many at once; planned up front from the
//! seed, so the same seed and workload give the same faults at the same offsets.

use crate::api::invalid::{unless, Invalid};
use rand::rngs::StdRng;
use rand::seq::SliceRandom;
use rand::{Rng, SeedableRng};
use serde::{Deserialize, Serialize};

/// A kind of fault the nemesis can inject.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum FaultKind {
    /// Isolate one node from all others.
    PartitionOne,
    /// Split the nodes into two random halves.
    PartitionHalves,
    /// Two halves and one node that still talks to both (Jepsen's bridge).
    Bridge,
    /// One node's messages to all others are lost, and so are its answers to theirs, while
    /// theirs still reach it and are acted on (a one-way partition).
    PartitionOneWay,
    /// kill -9 one node, and restart it when the fault ends: the process dies, what it
    /// wrote to its commit log survives (as with Cassandra's memory-mapped segments).
    Kill,
    /// The machine under one node loses power: the process dies and its commit log keeps
    /// only what was synced to the disk; restarted when the fault ends.
    PowerLoss,
    /// SIGSTOP one node, SIGCONT when the fault ends.
    Pause,
    /// Move one node's clock ahead by `clock_offset_ms`.
    ClockBump,
    /// Flip one node's clock between ahead and behind every `strobe_period_ms`.
    ClockStrobe,
    /// Delay every message to and from one node by `slow_ms`.
    Slow,
    /// Flush one node's memtable.
    Flush,
    /// Compact one node.
    Compact,
    /// Run anti-entropy repair from one node.
    Repair,
}

/// The `[nemesis]` table.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct NemesisSpec {
    /// The faults to pick from; none: no nemesis.
    pub faults: Vec<FaultKind>,
    /// Seconds between the starts of two rounds of faults.
    pub interval_s: f64,
    /// How long each fault lasts, seconds.
    pub duration_s: f64,
    /// Faults started together in each round.
    pub at_once: usize,
    /// How far a clock fault moves a clock, ms.
    pub clock_offset_ms: i64,
    /// How often a strobing clock flips, ms.
    pub strobe_period_ms: u64,
    /// The latency a slow node adds to each message, ms.
    pub slow_ms: u64,
}

impl Default for NemesisSpec {
    fn default() -> Self {
        NemesisSpec {
            faults: Vec::new(),
            interval_s: 5.0,
            duration_s: 3.0,
            at_once: 1,
            clock_offset_ms: 60_000,
            strobe_period_ms: 200,
            slow_ms: 600,
        }
    }
}

impl NemesisSpec {
    /// Checks the numbers.
    pub fn validate(&self) -> Result<(), Invalid> {
        unless(
            !(self.interval_s > 0.0 && self.interval_s.is_finite()),
            "nemesis.interval_s",
            "must be above 0",
        )?;
        unless(
            !(self.duration_s >= 0.0 && self.duration_s.is_finite()),
            "nemesis.duration_s",
            "must be 0 or more",
        )?;
        unless(
            self.at_once == 0 || self.at_once > 8,
            "nemesis.at_once",
            "must be between 1 and 8",
        )?;
        unless(
            self.strobe_period_ms == 0,
            "nemesis.strobe_period_ms",
            "must be at least 1",
        )
    }
}

/// What one fault does, to which nodes.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "fault", rename_all = "kebab-case")]
pub enum Action {
    /// Cut every listed link: both ways, or for `partition-one-way` only from the first node
    /// of each pair to the second.
    Partition {
        /// Which kind of partition.
        kind: FaultKind,
        /// The node pairs that cannot talk.
        cuts: Vec<(String, String)>,
    },
    /// kill -9, then restart.
    Kill {
        /// The node.
        node: String,
    },
    /// Power loss (kill -9 and the unsynced commit log lost), then restart.
    PowerLoss {
        /// The node.
        node: String,
    },
    /// SIGSTOP, then SIGCONT.
    Pause {
        /// The node.
        node: String,
    },
    /// A clock moved by `ms`; strobing flips it every `period_ms` when set.
    Clock {
        /// The node.
        node: String,
        /// The offset.
        ms: i64,
        /// The flip period of a strobe.
        period_ms: Option<u64>,
    },
    /// Every message to and from the node delayed by `ms`.
    Slow {
        /// The node.
        node: String,
        /// The delay.
        ms: u64,
    },
    /// Flush, compact or repair on one node (instantaneous).
    Maintenance {
        /// Which one.
        kind: FaultKind,
        /// The node.
        node: String,
    },
}

impl Action {
    /// The history's name for the fault, as in `start-partition` / `stop-partition`.
    pub fn name(&self) -> &'static str {
        match self {
            Action::Partition { .. } => "partition",
            Action::Kill { .. } => "kill",
            Action::PowerLoss { .. } => "power-loss",
            Action::Pause { .. } => "pause",
            Action::Clock { .. } => "clock-offset",
            Action::Slow { .. } => "slow",
            Action::Maintenance {
                kind: FaultKind::Flush,
                ..
            } => "flush",
            Action::Maintenance {
                kind: FaultKind::Compact,
                ..
            } => "compact",
            Action::Maintenance { .. } => "repair",
        }
    }
}

/// One fault of the schedule.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PlannedFault {
    /// Seconds after the load began.
    pub at_s: f64,
    /// Seconds it lasts (0 for maintenance).
    pub duration_s: f64,
    /// What it does.
    pub action: Action,
}

fn cuts_between(a: &[String], b: &[String]) -> Vec<(String, String)> {
    a.iter()
        .flat_map(|x| b.iter().map(move |y| (x.clone(), y.clone())))
        .collect()
}

fn plan_action(kind: FaultKind, nodes: &[String], spec: &NemesisSpec, rng: &mut StdRng) -> Action {
    let mut shuffled = nodes.to_vec();
    shuffled.shuffle(rng);
    let node = shuffled[0].clone();
    match kind {
        FaultKind::PartitionOne | FaultKind::PartitionOneWay => Action::Partition {
            kind,
            cuts: cuts_between(&shuffled[..1], &shuffled[1..]),
        },
        FaultKind::PartitionHalves => {
            let half = shuffled.len() / 2;
            Action::Partition {
                kind,
                cuts: cuts_between(&shuffled[..half], &shuffled[half..]),
            }
        }
        FaultKind::Bridge => {
            // shuffled[0] is the bridge, talking to both halves of the rest.
            let rest = &shuffled[1..];
            let half = rest.len() / 2;
            Action::Partition {
                kind,
                cuts: cuts_between(&rest[..half], &rest[half..]),
            }
        }
        FaultKind::Kill => Action::Kill { node },
        FaultKind::PowerLoss => Action::PowerLoss { node },
        FaultKind::Pause => Action::Pause { node },
        FaultKind::ClockBump => Action::Clock {
            node,
            ms: spec.clock_offset_ms,
            period_ms: None,
        },
        FaultKind::ClockStrobe => Action::Clock {
            node,
            ms: spec.clock_offset_ms,
            period_ms: Some(spec.strobe_period_ms),
        },
        FaultKind::Slow => Action::Slow {
            node,
            ms: spec.slow_ms,
        },
        FaultKind::Flush | FaultKind::Compact | FaultKind::Repair => {
            Action::Maintenance { kind, node }
        }
    }
}

/// Plans every fault between `start_s` and `end_s` (seconds after the load began).
pub fn schedule(
    spec: &NemesisSpec,
    nodes: &[String],
    start_s: f64,
    end_s: f64,
    seed: u64,
) -> Vec<PlannedFault> {
    let mut rng = StdRng::seed_from_u64(seed ^ 0x6E65_6D65_7369_7321);
    let mut planned = Vec::new();
    if spec.faults.is_empty() || nodes.is_empty() {
        return planned;
    }
    let mut at = start_s;
    while at < end_s {
        for _ in 0..spec.at_once {
            let kind = spec.faults[rng.gen_range(0..spec.faults.len())];
            let action = plan_action(kind, nodes, spec, &mut rng);
            let duration_s = match action {
                Action::Maintenance { .. } => 0.0,
                _ => spec.duration_s.min(end_s - at),
            };
            planned.push(PlannedFault {
                at_s: at,
                duration_s,
                action,
            });
        }
        at += spec.interval_s;
    }
    planned
}

#[cfg(test)]
mod tests {
    use super::*;

    fn nodes() -> Vec<String> {
        (1..=5).map(|i| format!("n{i}")).collect()
    }

    fn spec() -> NemesisSpec {
        NemesisSpec {
            faults: vec![
                FaultKind::PartitionHalves,
                FaultKind::Kill,
                FaultKind::Bridge,
                FaultKind::Flush,
            ],
            interval_s: 2.0,
            ..NemesisSpec::default()
        }
    }

    #[test]
    fn a_one_way_partition_cuts_one_node_towards_every_other() {
        let nodes: Vec<String> = (1..=5).map(|i| format!("n{i}")).collect();
        let spec = NemesisSpec::default();
        let mut rng = StdRng::seed_from_u64(9);
        let Action::Partition { kind, cuts } =
            plan_action(FaultKind::PartitionOneWay, &nodes, &spec, &mut rng)
        else {
            panic!("a partition");
        };
        assert_eq!(kind, FaultKind::PartitionOneWay);
        assert_eq!(cuts.len(), 4, "{cuts:?}");
        let from = &cuts[0].0;
        assert!(cuts.iter().all(|(a, _)| a == from), "{cuts:?}");
        let to: std::collections::BTreeSet<&String> = cuts.iter().map(|(_, b)| b).collect();
        assert_eq!(to.len(), 4);
        assert!(!to.contains(from));
        let text = serde_json::to_string(&FaultKind::PartitionOneWay).expect("JSON");
        assert_eq!(text, "\"partition-one-way\"");
    }

    #[test]
    fn the_same_seed_plans_the_same_faults() {
        assert_eq!(
            schedule(&spec(), &nodes(), 1.0, 30.0, 7),
            schedule(&spec(), &nodes(), 1.0, 30.0, 7)
        );
        assert_ne!(
            schedule(&spec(), &nodes(), 1.0, 30.0, 7),
            schedule(&spec(), &nodes(), 1.0, 30.0, 8)
        );
    }

    #[test]
    fn faults_stay_inside_the_fault_phase() {
        let planned = schedule(&spec(), &nodes(), 1.0, 10.0, 3);
        assert_eq!(planned.len(), 5, "rounds at 1, 3, 5, 7, 9");
        assert!(planned
            .iter()
            .all(|f| f.at_s >= 1.0 && f.at_s + f.duration_s <= 10.0));
    }

    #[test]
    fn a_bridge_node_keeps_talking_to_both_halves() {
        let mut rng = StdRng::seed_from_u64(1);
        let Action::Partition { cuts, .. } =
            plan_action(FaultKind::Bridge, &nodes(), &spec(), &mut rng)
        else {
            panic!("a partition");
        };
        let cut: std::collections::BTreeSet<&String> =
            cuts.iter().flat_map(|(a, b)| [a, b]).collect();
        assert_eq!(cut.len(), 4, "one of five nodes is in no cut: {cuts:?}");
        assert_eq!(cuts.len(), 4, "2 × 2 links cut");
    }

    #[test]
    fn no_faults_plan_nothing() {
        assert!(schedule(&NemesisSpec::default(), &nodes(), 0.0, 60.0, 1).is_empty());
    }
}
