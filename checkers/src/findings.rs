//! The kinds of anomaly a run can show, read off its results: what a workload names as the
//! reason it exists (`expect`), and what the workload test holds it to.

use crate::results::Results;
use crate::validity::Validity;
use serde::{Deserialize, Serialize};
use std::fmt;
use std::str::FromStr;

/// A kind of anomaly, as a workload file names it (`expect.findings = ["overcount"]`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Finding {
    /// Reads above what any order of the acknowledged ops allows.
    Overcount,
    /// Reads below what any order allows.
    Undercount,
    /// Reads wrong about whether the counter exists (`0` for absent, `null` for 0).
    ExistenceMisread,
    /// Reads after a delete that bring back counts it erased.
    Resurrection,
    /// Reads over the tombstone warn threshold.
    TombstoneWarning,
    /// Scans failed for tombstones (`tombstone_overwhelming`), as Cassandra fails them.
    TombstoneFailure,
    /// Reads that broke the tombstone rules (data past the failure threshold).
    TombstoneViolation,
    /// Some key's history has no linearization.
    NotLinearizable,
    /// The nodes' final reads disagree, or agree on a value no order allows.
    NoConvergence,
}

impl Finding {
    /// Every kind, in the order reports list them.
    pub const ALL: [Finding; 9] = [
        Finding::Overcount,
        Finding::Undercount,
        Finding::ExistenceMisread,
        Finding::Resurrection,
        Finding::TombstoneWarning,
        Finding::TombstoneFailure,
        Finding::TombstoneViolation,
        Finding::NotLinearizable,
        Finding::NoConvergence,
    ];

    /// The name workload files and reports use.
    pub fn as_str(self) -> &'static str {
        match self {
            Finding::Overcount => "overcount",
            Finding::Undercount => "undercount",
            Finding::ExistenceMisread => "existence-misread",
            Finding::Resurrection => "resurrection",
            Finding::TombstoneWarning => "tombstone-warning",
            Finding::TombstoneFailure => "tombstone-failure",
            Finding::TombstoneViolation => "tombstone-violation",
            Finding::NotLinearizable => "not-linearizable",
            Finding::NoConvergence => "no-convergence",
        }
    }

    /// Whether `results` show this kind of anomaly at least once.
    pub fn shown_by(self, results: &Results) -> bool {
        let c = &results.checkers;
        match self {
            Finding::Overcount => c.counter.overcount.reads > 0,
            Finding::Undercount => c.counter.undercount.reads > 0,
            Finding::ExistenceMisread => c.counter.absent_as_zero + c.counter.zero_as_absent > 0,
            Finding::Resurrection => c.resurrection.events > 0,
            Finding::TombstoneWarning => c.tombstones.warn_reads > 0,
            Finding::TombstoneFailure => c.tombstones.failed_reads > 0,
            Finding::TombstoneViolation => c.tombstones.violations > 0,
            Finding::NotLinearizable => c
                .linearizable
                .as_ref()
                .is_some_and(|l| l.valid == Validity::Invalid),
            Finding::NoConvergence => c
                .convergence
                .as_ref()
                .is_some_and(|v| v.valid == Validity::Invalid),
        }
    }
}

impl Results {
    /// Every kind of anomaly these results show, in [`Finding::ALL`] order.
    pub fn findings(&self) -> Vec<Finding> {
        Finding::ALL
            .into_iter()
            .filter(|f| f.shown_by(self))
            .collect()
    }
}

impl fmt::Display for Finding {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A name that is no kind of finding.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("`{0}` is not a finding; one of: overcount, undercount, existence-misread, resurrection, tombstone-warning, tombstone-failure, tombstone-violation, not-linearizable, no-convergence")]
pub struct UnknownFinding(pub String);

impl FromStr for Finding {
    type Err = UnknownFinding;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Finding::ALL
            .into_iter()
            .find(|f| f.as_str() == s)
            .ok_or_else(|| UnknownFinding(s.to_string()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_parse_back_and_match_serde() {
        for f in Finding::ALL {
            assert_eq!(f.as_str().parse::<Finding>(), Ok(f));
            let json = serde_json::to_string(&f).expect("serializes");
            assert_eq!(json, format!("\"{}\"", f.as_str()));
        }
        assert!("overcounts".parse::<Finding>().is_err());
    }

    #[test]
    fn results_show_what_their_checkers_counted() {
        let mut r = Results::default();
        assert!(r.findings().is_empty());
        r.checkers.counter.undercount.reads = 2;
        r.checkers.resurrection.events = 1;
        r.checkers.tombstones.failed_reads = 3;
        assert_eq!(
            r.findings(),
            [
                Finding::Undercount,
                Finding::Resurrection,
                Finding::TombstoneFailure
            ]
        );
        r.checkers.linearizable = Some(crate::linear::LinResult {
            valid: Validity::Unknown,
            ..Default::default()
        });
        assert!(!Finding::NotLinearizable.shown_by(&r));
    }
}
