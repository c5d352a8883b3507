//! Every bundled workload shows what it exists to show: a run at the file's own length, with
//! the seed its `[expect]` table names, has every expected finding, and a control workload
//! none at all.

use crate::process::{only_run_folder_of, run};
use checker::workload::{self, Workload};
use checkers::{Finding, Results};
use std::path::Path;
use std::sync::Mutex;

/// Runs going at once: each is a cluster of processes, light at these rates.
const AT_ONCE: usize = 2;

#[test]
fn every_workload_shows_the_findings_it_exists_for() {
    let names: Vec<String> = workload::list().into_iter().map(|(name, _)| name).collect();
    assert!(names.len() >= 12, "bundled workloads: {names:?}");
    let queue = Mutex::new(names.clone());
    let broken = Mutex::new(Vec::new());
    std::thread::scope(|s| {
        for _ in 0..AT_ONCE {
            s.spawn(|| loop {
                let Some(name) = queue.lock().expect("queue").pop() else {
                    break;
                };
                if let Some(problem) = promise_broken(&name) {
                    broken.lock().expect("broken").push(problem);
                }
            });
        }
    });
    let broken = broken.into_inner().expect("broken");
    assert!(broken.is_empty(), "{}", broken.join("\n"));
}

/// What is wrong with a run of workload `name` against its `[expect]` table, if anything.
fn promise_broken(name: &str) -> Option<String> {
    let w: Workload = workload::load(name).expect("a bundled workload loads");
    let Some(expect) = w.expect else {
        return Some(format!("{name}: names no [expect] table"));
    };
    let programs: Vec<&str> = w.system.programs().iter().map(|(p, _)| *p).collect();
    if !crate::systems::installed(&programs) {
        return None;
    }
    let results = tempfile::tempdir().expect("temp dir");
    let seed = expect.seed.to_string();
    let out = run(&[
        "run",
        "--workload",
        name,
        "--seed",
        &seed,
        "--results",
        results.path().to_str().expect("utf-8"),
    ]);
    if !matches!(out.status.code(), Some(0 | 1)) {
        return Some(format!(
            "{name}: exit {:?}\n{}",
            out.status.code(),
            String::from_utf8_lossy(&out.stderr)
        ));
    }
    let shown = findings(&only_run_folder_of(results.path(), name));
    (!expect.kept_by(&shown)).then(|| {
        format!(
            "{name} (seed {seed}): expected {:?}, the run showed {shown:?}",
            expect.findings
        )
    })
}

/// The findings of a run folder's results.json.
fn findings(dir: &Path) -> Vec<Finding> {
    let text = std::fs::read_to_string(dir.join("results.json")).expect("results.json");
    let results: Results = serde_json::from_str(&text).expect("results.json parses");
    results.findings()
}
