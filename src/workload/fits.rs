//! Whether a workload asks only for what its system under test can do: the faults, ops and
//! phases a real system (etcd, Redis) cannot have are refused by name, never dropped.

use super::mix::Pattern;
use super::spec::Workload;
use super::system::System;
use crate::api::invalid::{unless, Invalid};
use crate::api::DeleteScope;

/// Checks that `workload` asks only for what its system can do, naming the field; once
/// the flags are applied, since `--net` decides whether partitions can be played.
pub fn fits_its_system(workload: &Workload) -> Result<(), Invalid> {
    let system = workload.system;
    if system == System::Bundled {
        return Ok(());
    }
    let name = system.as_str();
    for fault in &workload.nemesis.faults {
        if let Some(why) = system.refuses(*fault, workload.net) {
            let fault = serde_json::to_value(fault).unwrap_or_default();
            let fault = fault.as_str().unwrap_or_default().to_string();
            return Err(Invalid {
                field: "nemesis.faults",
                rule: format!("`{fault}` is not played against {name}: {why}"),
            });
        }
    }
    unless(
        workload.mix.scan > 0.0,
        "mix.scan",
        format!("must be 0 for {name}: a scan is the bundled nodes' partition read"),
    )?;
    unless(
        workload.delete_scope != DeleteScope::Row,
        "delete_scope",
        format!("must be `row` for {name}: each counter is one key"),
    )?;
    unless(
        workload.pattern != Pattern::Counters,
        "pattern",
        format!("must be `counters` for {name}"),
    )?;
    unless(
        workload.phases.repair,
        "phases.repair",
        format!("must be false for {name}: repair is the bundled nodes' own"),
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::workload::nemesis::FaultKind;
    use crate::workload::net::NetMode;

    #[test]
    fn faults_a_real_system_cannot_have_are_refused_by_name() {
        let mut w = Workload {
            system: System::Etcd,
            ..Workload::default()
        };
        w.nemesis.faults = vec![FaultKind::Kill, FaultKind::Pause];
        assert_eq!(fits_its_system(&w), Ok(()));
        w.nemesis.faults.push(FaultKind::ClockBump);
        let err = fits_its_system(&w).expect_err("clock").to_string();
        assert!(err.contains("clock-bump") && err.contains("etcd"), "{err}");
        w.system = System::Bundled;
        assert_eq!(fits_its_system(&w), Ok(()));
        w.system = System::Redis;
        w.nemesis.faults = vec![FaultKind::PartitionOne];
        let err = fits_its_system(&w).expect_err("loopback").to_string();
        assert!(err.contains("--net netns"), "{err}");
        w.net = NetMode::Netns;
        assert_eq!(fits_its_system(&w), Ok(()));
        w.mix.scan = 0.1;
        let err = fits_its_system(&w).expect_err("scan").to_string();
        assert!(err.contains("mix.scan"), "{err}");
    }
}
