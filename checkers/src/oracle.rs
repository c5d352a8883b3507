//! The oracle cross-check: each counter's true final value, as the nodes themselves hold it
//! once the run has ended, against the counter checker's findings.
//!
//! A true value outside the bounds the history allows at the end must show up as a flagged
//! read of that counter when its final reads returned it. A counter read after the heal whose
//! true value is out of bounds while none of its reads was flagged means the checker (or the
//! read path) missed something: that fails loudly.

use crate::counter::{CounterResult, Values};
use crate::ideal::Reading;
use crate::unknown_adds::UnknownApplied;
use crate::validity::Validity;
use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, BTreeSet};

/// How many findings results.json lists.
const FINDINGS_KEPT: usize = 20;

/// A counter whose true value lies outside its final bounds.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct OracleFinding {
    /// The counter.
    pub key: String,
    /// Its true value (`None`: absent).
    pub value: Option<i64>,
    /// The states the history allows it at the end.
    pub allowed: Values,
    /// Some read of it was flagged.
    pub flagged: bool,
}

/// The oracle cross-check's verdict and figures, as results.json holds them.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct OracleResult {
    /// Invalid when a true value outside the bounds went unflagged: a checker bug.
    pub valid: Validity,
    /// Nodes whose dumps were read.
    pub nodes: u64,
    /// Counters the nodes hold.
    pub keys: u64,
    /// Counters whose holders disagree, so that no single true value exists.
    pub nodes_disagree: u64,
    /// Counters whose true value lies outside the final bounds.
    pub outside_bounds: u64,
    /// Of those, read after the heal yet never flagged.
    pub unflagged: u64,
    /// The counters outside their bounds (at most 20), unflagged ones first.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub findings: Vec<OracleFinding>,
    /// How many adds of unknown outcome took effect, by the nodes' final values.
    #[serde(default)]
    pub unknown_adds: UnknownApplied,
}

/// Compares the nodes' true values (`truth`: counter → node → value) with the counter
/// checker's result (its final values already as `reading` compares them); `final_read`
/// names the counters read after the heal.
pub fn cross_check(
    truth: &BTreeMap<String, BTreeMap<String, Option<i64>>>,
    nodes: u64,
    counter: &CounterResult,
    final_read: &BTreeSet<String>,
    reading: Reading,
) -> OracleResult {
    let mut result = OracleResult {
        nodes,
        ..OracleResult::default()
    };
    for (key, values) in truth {
        result.keys += 1;
        let counts: BTreeSet<Option<i64>> = values.values().map(|v| reading.of(*v)).collect();
        let Some(&count) = counts.first().filter(|_| counts.len() == 1) else {
            result.nodes_disagree += 1;
            continue;
        };
        let allowed = counter
            .final_values
            .get(key)
            .cloned()
            .unwrap_or_else(|| Values::absent().read(reading));
        if allowed.contains(count) {
            continue;
        }
        result.outside_bounds += 1;
        let flagged = counter.keys.get(key).is_some_and(|k| {
            k.overcount.reads
                + k.undercount.reads
                + k.resurrected
                + k.absent_as_zero
                + k.zero_as_absent
                > 0
        });
        if !flagged && final_read.contains(key) {
            result.unflagged += 1;
        }
        result.findings.push(OracleFinding {
            key: key.clone(),
            value: count,
            allowed,
            flagged,
        });
    }
    result.findings.sort_by_key(|f| (f.flagged, f.key.clone()));
    result.findings.truncate(FINDINGS_KEPT);
    result.valid = Validity::from_findings(result.unflagged > 0, false);
    result
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::counter::KeyFigures;

    fn counter(final_value: i64, flagged: bool) -> CounterResult {
        let mut result = CounterResult::default();
        result
            .final_values
            .insert("c/x".into(), Values::count(final_value.into()));
        let mut figures = KeyFigures::default();
        if flagged {
            figures.overcount.record(1, final_value);
        }
        result.keys.insert("c/x".into(), figures);
        result
    }

    fn truth(values: &[(&str, Option<i64>)]) -> BTreeMap<String, BTreeMap<String, Option<i64>>> {
        let nodes = values.iter().map(|(n, v)| (n.to_string(), *v)).collect();
        BTreeMap::from([("c/x".to_string(), nodes)])
    }

    #[test]
    fn a_true_value_within_bounds_agrees() {
        let result = cross_check(
            &truth(&[("n1", Some(3))]),
            1,
            &counter(3, false),
            &BTreeSet::new(),
            Reading::default(),
        );
        assert_eq!((result.outside_bounds, result.valid), (0, Validity::Valid));
    }

    #[test]
    fn a_true_value_outside_bounds_that_the_checker_flagged_agrees() {
        let read = BTreeSet::from(["c/x".to_string()]);
        let result = cross_check(
            &truth(&[("n1", Some(4))]),
            1,
            &counter(3, true),
            &read,
            Reading::default(),
        );
        assert_eq!((result.outside_bounds, result.unflagged), (1, 0));
        assert_eq!(result.valid, Validity::Valid);
    }

    #[test]
    fn a_true_value_outside_bounds_nobody_flagged_fails_loudly() {
        let read = BTreeSet::from(["c/x".to_string()]);
        let result = cross_check(
            &truth(&[("n1", Some(4))]),
            1,
            &counter(3, false),
            &read,
            Reading::default(),
        );
        assert_eq!((result.unflagged, result.valid), (1, Validity::Invalid));
    }

    #[test]
    fn a_counter_that_must_be_absent_yet_holds_zero_is_outside_unless_absent_is_zero() {
        let mut deleted = counter(0, false);
        deleted.final_values.insert("c/x".into(), Values::absent());
        let read = BTreeSet::from(["c/x".to_string()]);
        let values = truth(&[("n1", Some(0))]);
        let strict = cross_check(&values, 1, &deleted, &read, Reading::default());
        assert_eq!((strict.outside_bounds, strict.unflagged), (1, 1));
        let lenient = Reading {
            absent_is_zero: true,
        };
        deleted
            .final_values
            .insert("c/x".into(), Values::absent().read(lenient));
        let loose = cross_check(&values, 1, &deleted, &read, lenient);
        assert_eq!(loose.outside_bounds, 0);
    }

    #[test]
    fn holders_that_disagree_give_no_true_value() {
        let values = truth(&[("n1", Some(4)), ("n2", Some(3))]);
        let result = cross_check(
            &values,
            2,
            &counter(3, false),
            &BTreeSet::new(),
            Reading::default(),
        );
        assert_eq!((result.nodes_disagree, result.outside_bounds), (1, 0));
    }
}
