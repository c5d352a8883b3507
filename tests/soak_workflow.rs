//! The nightly soak workflow (`.github/workflows/nightly-soak.yml`): valid YAML, a schedule
//! and a manual trigger with a duration, and steps that build, soak, and keep the soak
//! folder and its JUnit file.

use serde_yaml::Value;

fn workflow() -> Value {
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/.github/workflows/nightly-soak.yml"
    );
    let text = std::fs::read_to_string(path).expect("the workflow file");
    serde_yaml::from_str(&text).expect("the workflow is YAML")
}

/// The step whose `uses` or `run` contains `needle`.
fn step<'a>(steps: &'a [Value], needle: &str) -> &'a Value {
    steps
        .iter()
        .find(|s| {
            ["uses", "run"]
                .iter()
                .any(|k| s[*k].as_str().is_some_and(|v| v.contains(needle)))
        })
        .unwrap_or_else(|| panic!("no step with `{needle}`"))
}

#[test]
fn the_nightly_soak_runs_on_a_schedule_and_by_hand_and_keeps_its_results() {
    let w = workflow();
    let on = &w["on"];
    let cron = on["schedule"][0]["cron"].as_str().expect("a schedule");
    assert_eq!(cron.split_whitespace().count(), 5, "{cron}");
    let duration = &on["workflow_dispatch"]["inputs"]["duration"];
    assert!(duration["default"].as_str().is_some(), "a default duration");

    let steps = w["jobs"]["soak"]["steps"].as_sequence().expect("steps");
    step(steps, "actions/checkout");
    step(steps, "apt-get install");
    step(steps, "cargo build --release");
    let soak = step(steps, "checker soak")["run"].as_str().expect("run");
    assert!(soak.contains("--duration \"$DURATION\""), "{soak}");
    let out = soak
        .split("--out ")
        .nth(1)
        .and_then(|rest| rest.split_whitespace().next())
        .expect("the soak folder");
    let upload = step(steps, "actions/upload-artifact");
    assert_eq!(upload["with"]["path"].as_str(), Some(out));
    assert_eq!(upload["if"].as_str(), Some("always()"));
    let junit = step(steps, "action-junit-report");
    assert_eq!(
        junit["with"]["report_paths"].as_str(),
        Some(format!("{out}/junit.xml").as_str())
    );
    assert_eq!(junit["if"].as_str(), Some("always()"));
    let env = w["jobs"]["soak"]["env"]["DURATION"]
        .as_str()
        .expect("DURATION");
    assert!(env.contains("inputs.duration"), "{env}");
}

#[test]
fn the_soak_step_names_only_flags_the_soak_command_has() {
    let w = workflow();
    let steps = w["jobs"]["soak"]["steps"].as_sequence().expect("steps");
    let soak = step(steps, "checker soak")["run"].as_str().expect("run");
    let help = crate::process::run(&["soak", "--help"]);
    let help = String::from_utf8_lossy(&help.stdout);
    for flag in soak.split_whitespace().filter(|w| w.starts_with("--")) {
        assert!(help.contains(flag), "`checker soak` has no {flag}");
    }
}
