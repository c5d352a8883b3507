//! Convergence: after the heal, do the final reads from every node agree, and does the value
//! they agree on lie within the bounds of the whole history?
//!
//! The final reads are the client reads and scans after the `final-reads` marker the driver
//! records once the nemesis has healed the cluster. A history without that marker has no
//! convergence verdict. A counter (or partition) that no final read could get an answer for
//! (a scan over too many tombstones fails, as Cassandra's does) is taken from the nodes' own
//! dumps when the run folder has them: what each node holds at the end.

use crate::counter::Values;
use crate::ideal::Reading;
use crate::op::{Op, OpType, Process, F};
use crate::validity::Validity;
use rustc_hash::FxHashMap;
use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, BTreeSet};

/// The nemesis op the driver records before the final reads.
pub const FINAL_READS: &str = "final-reads";

/// How many divergent keys results.json lists.
const EXAMPLES_KEPT: usize = 20;

/// A counter whose final reads disagreed or fell outside its bounds.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Divergence {
    /// The counter.
    pub key: String,
    /// What each node answered (`None`: absent).
    pub values: BTreeMap<String, Option<i64>>,
    /// The states the whole history allows it at the end.
    pub allowed: Values,
}

impl Divergence {
    /// What each node answered, as `n1=3 n2=null`.
    pub fn answers(&self) -> String {
        let answers: Vec<String> = (self.values.iter())
            .map(|(node, v)| format!("{node}={}", v.map_or("null".into(), |v| v.to_string())))
            .collect();
        answers.join(" ")
    }
}

/// The convergence checker's verdict and figures, as results.json holds them.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ConvergenceResult {
    /// Invalid when nodes disagree or agree on a value no order allows; unknown when some
    /// counter got no answer at all.
    pub valid: Validity,
    /// Counters read after the heal.
    pub keys: u64,
    /// Counters whose nodes answered differently.
    pub disagreeing: u64,
    /// Counters whose nodes agreed on a value outside the history's final bounds.
    pub out_of_bounds: u64,
    /// Counters no final read answered, nor the nodes' dumps.
    pub unanswered: u64,
    /// Counters and partitions no final read answered, taken from the nodes' dumps instead.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub from_dumps: u64,
    /// The first divergent counters (at most 20).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub examples: Vec<Divergence>,
}

fn is_zero(n: &u64) -> bool {
    *n == 0
}

/// Each counter's value on each node that holds it, from the nodes' dumps.
pub type Dumps = BTreeMap<String, BTreeMap<String, Option<i64>>>;

/// Streams a history and collects the final reads.
#[derive(Debug, Default)]
pub struct ConvergenceChecker {
    started: bool,
    open: FxHashMap<Process, (F, String)>,
    answers: BTreeMap<String, BTreeMap<String, Option<i64>>>,
    scanned: Vec<(String, String)>,
    asked: BTreeSet<String>,
    /// What was asked and answered from the nodes' dumps.
    dumped: BTreeSet<String>,
}

impl ConvergenceChecker {
    /// A checker that has seen nothing.
    pub fn new() -> Self {
        Self::default()
    }

    /// Takes the next op of the history.
    pub fn observe(&mut self, op: &Op) {
        if !op.process.is_client() {
            self.started |= op.f.as_str() == FINAL_READS;
            return;
        }
        if !self.started {
            return;
        }
        let key = op.key.clone().unwrap_or_default();
        if op.kind == OpType::Invoke {
            if matches!(op.f, F::Read | F::Scan) {
                self.asked.insert(key.clone());
                self.open.insert(op.process.clone(), (op.f.clone(), key));
            }
            return;
        }
        let Some((f, key)) = self.open.remove(&op.process) else {
            return;
        };
        if op.kind != OpType::Ok {
            return;
        }
        let node = op.node.clone().unwrap_or_else(|| format!("{}", op.process));
        match f {
            F::Read => {
                let value = op.read_value().flatten();
                self.answers.entry(key).or_default().insert(node, value);
            }
            F::Scan => {
                for (cell, value) in op.value.as_object().into_iter().flatten() {
                    let answers = self.answers.entry(format!("{key}/{cell}")).or_default();
                    answers.insert(node.clone(), value.as_i64());
                }
                self.scanned.push((node, key));
            }
            _ => {}
        }
    }

    /// The counters that got a final read.
    pub fn keys(&self) -> BTreeSet<String> {
        self.answers.keys().cloned().collect()
    }

    /// The verdict, given each counter's final allowed states (as `reading` compares them)
    /// and the nodes' dumps, if any, for what no final read answered; none without final
    /// reads. Absent and 0 are different answers unless `reading` says not.
    pub fn finish(
        mut self,
        finals: &BTreeMap<String, Values>,
        reading: Reading,
        dumps: Option<&Dumps>,
    ) -> Option<ConvergenceResult> {
        if !self.started {
            return None;
        }
        let from_dumps = match dumps {
            Some(dumps) => self.answer_from(dumps, finals),
            None => 0,
        };
        // A scan that left a known counter out answered that it is absent.
        for (node, partition) in &self.scanned {
            let prefix = format!("{partition}/");
            for key in finals.keys().filter(|k| k.starts_with(&prefix)) {
                let answers = self.answers.entry(key.clone()).or_default();
                answers.entry(node.clone()).or_insert(None);
            }
        }
        let mut result = ConvergenceResult {
            from_dumps,
            ..ConvergenceResult::default()
        };
        for (key, values) in &self.answers {
            result.keys += 1;
            let allowed = finals
                .get(key)
                .cloned()
                .unwrap_or_else(|| Values::absent().read(reading));
            let counts: BTreeSet<Option<i64>> = values.values().map(|v| reading.of(*v)).collect();
            let diverged = if counts.len() > 1 {
                result.disagreeing += 1;
                true
            } else if counts.iter().any(|c| !allowed.contains(*c)) {
                result.out_of_bounds += 1;
                true
            } else {
                false
            };
            if diverged && result.examples.len() < EXAMPLES_KEPT {
                result.examples.push(Divergence {
                    key: key.clone(),
                    values: values.clone(),
                    allowed,
                });
            }
        }
        let answered = |asked: &String| {
            self.answers.contains_key(asked)
                || self.scanned.iter().any(|(_, partition)| partition == asked)
                || self.dumped.contains(asked)
        };
        result.unanswered = self.asked.iter().filter(|k| !answered(k)).count() as u64;
        let wrong = result.disagreeing + result.out_of_bounds > 0;
        result.valid = Validity::from_findings(wrong, result.unanswered > 0);
        Some(result)
    }

    /// Takes what each node holds, from `dumps`, for every counter or partition asked that
    /// no final read answered: of the nodes that hold some counter of its partition (its
    /// replicas), one that holds nothing of a counter answers absent. Returns how many were
    /// answered so.
    fn answer_from(&mut self, dumps: &Dumps, finals: &BTreeMap<String, Values>) -> u64 {
        let unanswered: Vec<String> = (self.asked.iter())
            .filter(|asked| {
                !self.answers.contains_key(*asked)
                    && !self
                        .scanned
                        .iter()
                        .any(|(_, partition)| partition == *asked)
            })
            .cloned()
            .collect();
        for asked in &unanswered {
            let partition = crate::ideal::partition_of(asked);
            let replicas: BTreeSet<String> = (dumps.iter())
                .filter(|(key, _)| crate::ideal::partition_of(key) == partition)
                .flat_map(|(_, held)| held.keys().cloned())
                .collect();
            let prefix = format!("{asked}/");
            let covered = |k: &&String| *k == asked || k.starts_with(&prefix);
            let keys: BTreeSet<&String> =
                dumps.keys().chain(finals.keys()).filter(covered).collect();
            for key in keys {
                let held = dumps.get(key);
                let answers = self.answers.entry(key.clone()).or_default();
                for node in &replicas {
                    let value = held.and_then(|h| h.get(node).copied().flatten());
                    answers.insert(node.clone(), value);
                }
            }
            // Answered, also when no node holds anything of it: absent everywhere.
            self.dumped.insert(asked.clone());
        }
        unanswered.len() as u64
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::builder::HistoryBuilder;
    use serde_json::{json, Value};

    /// +3 ok on c/x, the marker, then one final read per node with `answers`.
    fn final_reads(answers: &[(&str, Value)]) -> Option<ConvergenceResult> {
        let mut h = HistoryBuilder::on("c/x");
        h.add(1, 3);
        h.added(1, 3, OpType::Ok);
        let mut marker = Op::new(
            Process::nemesis(),
            OpType::Info,
            F::from(FINAL_READS.to_string()),
            None,
            Value::Null,
        );
        marker.index = h.ops().len() as u64;
        let mut ops = h.ops().to_vec();
        ops.push(marker);
        let mut checker = ConvergenceChecker::new();
        for (i, (node, value)) in answers.iter().enumerate() {
            let p = 100 + i as u64;
            let mut read = Op::new(
                Process::Client(p),
                OpType::Invoke,
                F::Read,
                Some("c/x".into()),
                Value::Null,
            );
            ops.push(read.clone());
            read.kind = OpType::Ok;
            read.value = value.clone();
            read.node = Some(node.to_string());
            ops.push(read);
        }
        ops.iter().for_each(|op| checker.observe(op));
        let finals = BTreeMap::from([("c/x".to_string(), Values::count(3))]);
        checker.finish(&finals, Reading::default(), None)
    }

    #[test]
    fn nodes_that_agree_on_an_allowed_value_converged() {
        let result = final_reads(&[("n1", json!(3)), ("n2", json!(3))]).expect("final reads");
        assert_eq!((result.keys, result.valid), (1, Validity::Valid));
    }

    #[test]
    fn nodes_that_answer_differently_did_not_converge() {
        let result = final_reads(&[("n1", json!(3)), ("n2", json!(2))]).expect("final reads");
        assert_eq!((result.disagreeing, result.valid), (1, Validity::Invalid));
        assert_eq!(result.examples[0].values["n2"], Some(2));
    }

    #[test]
    fn nodes_that_agree_on_a_value_no_order_allows_are_out_of_bounds() {
        // The only add was +3 and it completed: 4 is one too many, however they agree.
        let result = final_reads(&[("n1", json!(4)), ("n2", json!(4))]).expect("final reads");
        assert_eq!((result.out_of_bounds, result.valid), (1, Validity::Invalid));
    }

    #[test]
    fn a_null_and_a_three_are_different_answers() {
        let result = final_reads(&[("n1", json!(3)), ("n2", Value::Null)]).expect("final reads");
        assert_eq!((result.disagreeing, result.valid), (1, Validity::Invalid));
    }

    #[test]
    fn a_history_without_final_reads_has_no_verdict() {
        let mut checker = ConvergenceChecker::new();
        HistoryBuilder::on("c/x")
            .ops()
            .iter()
            .for_each(|op| checker.observe(op));
        assert_eq!(
            checker.finish(&BTreeMap::new(), Reading::default(), None),
            None
        );
    }

    /// +3 ok on q/1, the marker, then a final scan of `q` that failed on every node.
    fn failed_scan() -> (ConvergenceChecker, BTreeMap<String, Values>) {
        let mut h = HistoryBuilder::on("q/1");
        h.add(1, 3);
        h.added(1, 3, OpType::Ok);
        let mut ops = h.ops().to_vec();
        ops.push(Op::new(
            Process::nemesis(),
            OpType::Info,
            F::from(FINAL_READS.to_string()),
            None,
            Value::Null,
        ));
        let mut scan = Op::new(
            Process::Client(100),
            OpType::Invoke,
            F::Scan,
            Some("q".into()),
            Value::Null,
        );
        ops.push(scan.clone());
        scan.kind = OpType::Fail;
        ops.push(scan);
        let mut checker = ConvergenceChecker::new();
        ops.iter().for_each(|op| checker.observe(op));
        (
            checker,
            BTreeMap::from([("q/1".to_string(), Values::count(3))]),
        )
    }

    #[test]
    fn a_partition_no_final_read_could_answer_is_taken_from_the_dumps() {
        let (checker, finals) = failed_scan();
        let result = checker
            .finish(&finals, Reading::default(), None)
            .expect("final reads");
        assert_eq!((result.unanswered, result.valid), (1, Validity::Unknown));

        let agree = Dumps::from([(
            "q/1".to_string(),
            BTreeMap::from([("n1".to_string(), Some(3)), ("n2".to_string(), Some(3))]),
        )]);
        let (checker, finals) = failed_scan();
        let result = checker
            .finish(&finals, Reading::default(), Some(&agree))
            .expect("final reads");
        assert_eq!(
            (
                result.keys,
                result.unanswered,
                result.from_dumps,
                result.valid
            ),
            (1, 0, 1, Validity::Valid)
        );

        // n3 holds nothing of partition q: not one of its replicas, it is not asked.
        let elsewhere = Dumps::from([
            (
                "q/1".to_string(),
                BTreeMap::from([("n1".to_string(), Some(3)), ("n2".to_string(), Some(3))]),
            ),
            (
                "r/1".to_string(),
                BTreeMap::from([("n3".to_string(), Some(1))]),
            ),
        ]);
        let (checker, finals) = failed_scan();
        let result =
            (checker.finish(&finals, Reading::default(), Some(&elsewhere))).expect("final reads");
        assert_eq!((result.disagreeing, result.valid), (0, Validity::Valid));

        // n2 holds nothing of q/1 but a counter of q: it answers absent, and they disagree.
        let apart = Dumps::from([
            (
                "q/1".to_string(),
                BTreeMap::from([("n1".to_string(), Some(3))]),
            ),
            (
                "q/2".to_string(),
                BTreeMap::from([("n2".to_string(), None)]),
            ),
        ]);
        let (checker, finals) = failed_scan();
        let result = checker
            .finish(&finals, Reading::default(), Some(&apart))
            .expect("final reads");
        assert_eq!((result.disagreeing, result.valid), (1, Validity::Invalid));
        assert_eq!(result.examples[0].answers(), "n1=3 n2=null");
    }
}
