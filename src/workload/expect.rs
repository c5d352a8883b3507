//! What a workload exists to show: the findings a run of it at its own length and seed must
//! have, held by the workload test (`tests/workloads.rs`).

use checkers::Finding;
use serde::{Deserialize, Serialize};

/// The `[expect]` table of a workload file.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Expect {
    /// The kinds of anomaly every run with `seed` shows; empty for a control workload, whose
    /// runs show none.
    pub findings: Vec<Finding>,
    /// The seed the findings were measured with.
    pub seed: u64,
}

impl Expect {
    /// Whether a run that showed `shown` keeps this promise: every expected finding shown,
    /// and for a control workload nothing at all.
    pub fn kept_by(&self, shown: &[Finding]) -> bool {
        match self.findings.is_empty() {
            true => shown.is_empty(),
            false => self.findings.iter().all(|f| shown.contains(f)),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_promise_is_kept_by_every_expected_finding_and_a_control_by_none() {
        let expect = Expect {
            findings: vec![Finding::Overcount, Finding::NotLinearizable],
            seed: 11,
        };
        assert!(expect.kept_by(&[Finding::Overcount, Finding::NotLinearizable]));
        assert!(expect.kept_by(&[
            Finding::Overcount,
            Finding::Undercount,
            Finding::NotLinearizable
        ]));
        assert!(!expect.kept_by(&[Finding::Overcount]));
        let control = Expect {
            findings: vec![],
            seed: 11,
        };
        assert!(control.kept_by(&[]));
        assert!(!control.kept_by(&[Finding::Undercount]));
    }
}
