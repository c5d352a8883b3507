//! The phases of a run: warm-up without faults, faults, heal, and final reads.

use crate::api::invalid::{unless, Invalid};
use serde::{Deserialize, Serialize};

/// How a run begins and ends around its faults.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct Phases {
    /// Seconds of load before the first fault.
    pub warmup_s: f64,
    /// Seconds to wait after every fault is undone, before the final reads.
    pub heal_s: f64,
    /// Run anti-entropy repair on every node during the heal.
    pub repair: bool,
    /// Read every counter from every node at ALL at the end.
    pub final_reads: bool,
}

impl Default for Phases {
    fn default() -> Self {
        Phases {
            warmup_s: 2.0,
            heal_s: 2.0,
            repair: false,
            final_reads: true,
        }
    }
}

impl Phases {
    /// Checks the durations.
    pub fn validate(&self) -> Result<(), Invalid> {
        let bad = |s: f64| !(s.is_finite() && (0.0..=3600.0).contains(&s));
        let rule = "must be between 0 and 3600 seconds";
        unless(bad(self.warmup_s), "phases.warmup_s", rule)?;
        unless(bad(self.heal_s), "phases.heal_s", rule)
    }
}
