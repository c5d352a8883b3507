//! The soak index's budget section: per workload, each run's budget verdict in the order
//! they ran, and the trend of its key figures from the first run to the last, read from the
//! soak's summary.json.

use super::html::escape;
use serde_json::Value;
use std::collections::BTreeMap;
use std::fmt::Write;
use std::path::Path;

/// The figures whose trend the section shows: (summary.json name, what people read).
const TRENDED: [(&str, &str); 4] = [
    ("overcount_reads", "overcounting reads"),
    ("undercount_reads", "undercounting reads"),
    ("resurrections", "resurrections"),
    ("not_linearizable_keys", "keys not linearizable"),
];

/// The section for the soak whose summary.json is in `root`; empty when there is none.
pub fn section(root: &Path) -> String {
    let Some(summary) = std::fs::read_to_string(root.join("summary.json"))
        .ok()
        .and_then(|text| serde_json::from_str::<Value>(&text).ok())
    else {
        return String::new();
    };
    let runs = summary["runs"].as_array().cloned().unwrap_or_default();
    let mut by_workload: BTreeMap<String, Vec<&Value>> = BTreeMap::new();
    for run in &runs {
        let name = run["workload"].as_str().unwrap_or("?").to_string();
        by_workload.entry(name).or_default().push(run);
    }
    let mut out = String::from("<h2>Budgets per workload</h2>\n<table>\n<tr><th>workload</th><th>within budget</th><th>each run, in order</th><th>trend, first run → last</th></tr>\n");
    for (workload, runs) in &by_workload {
        let within = runs.iter().filter(|r| r["within_budget"] == true).count();
        let chips: Vec<String> = runs.iter().map(|r| chip(r)).collect();
        let _ = writeln!(
            out,
            "<tr><td>{}</td><td class=\"num\">{within} of {}</td><td>{}</td><td>{}</td></tr>",
            escape(workload),
            runs.len(),
            chips.join(" "),
            escape(&trend(runs))
        );
    }
    out.push_str("</table>\n");
    if root.join("trend.svg").is_file() {
        out.push_str("<p><img src=\"trend.svg\" alt=\"each run's key figures, run after run\" style=\"max-width:100%\"></p>\n");
    }
    out
}

/// One run as a tag: within budget or over it, linked to its report unless pruned.
fn chip(run: &Value) -> String {
    let (class, word) = match run["within_budget"] == true {
        true => ("valid", "✓"),
        false => ("invalid", "✗"),
    };
    let title = format!("seed {}: {}", run["seed"], over_budget(run));
    let tag = format!(
        "<span class=\"tag {class}\" title=\"{}\">{word}</span>",
        escape(&title)
    );
    match (run["pruned"] == true, run["folder"].as_str()) {
        (false, Some(folder)) => {
            let name = Path::new(folder)
                .file_name()
                .map(|n| n.to_string_lossy().into_owned())
                .unwrap_or_default();
            let workload = run["workload"].as_str().unwrap_or("");
            let href = format!("{workload}/{name}/report.html");
            format!("<a href=\"{}\">{tag}</a>", escape(&href))
        }
        _ => tag,
    }
}

/// The budget lines a run broke, or "within budget".
fn over_budget(run: &Value) -> String {
    let broken: Vec<String> = (run["checks"].as_array().into_iter().flatten())
        .filter(|c| c["within"] == false)
        .map(|c| {
            format!(
                "{} {} over {}",
                c["figure"].as_str().unwrap_or("?"),
                c["value"],
                c["limit"]
            )
        })
        .collect();
    match broken.is_empty() {
        true => "within budget".to_string(),
        false => broken.join("; "),
    }
}

/// How the key figures moved from the first run to the last: `overcounting reads 12 → 40 (up)`.
fn trend(runs: &[&Value]) -> String {
    let (Some(first), Some(last)) = (runs.first(), runs.last()) else {
        return String::new();
    };
    if runs.len() < 2 {
        return "one run".to_string();
    }
    let moved: Vec<String> = TRENDED
        .iter()
        .filter_map(|(name, what)| {
            let a = first["figures"][name].as_u64()?;
            let b = last["figures"][name].as_u64()?;
            let way = match b.cmp(&a) {
                std::cmp::Ordering::Greater => "up",
                std::cmp::Ordering::Less => "down",
                std::cmp::Ordering::Equal => return (a > 0).then(|| format!("{what} {a}, steady")),
            };
            Some(format!("{what} {a} → {b} ({way})"))
        })
        .collect();
    match moved.is_empty() {
        true => "nothing found in any run".to_string(),
        false => moved.join("; "),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_workload_gets_its_runs_verdicts_in_order_and_a_trend() {
        let dir = tempfile::tempdir().expect("temp dir");
        let run = |workload: &str, seed: u64, within: bool, over: u64| {
            serde_json::json!({
                "workload": workload, "seed": seed, "within_budget": within, "pruned": false,
                "folder": format!("/soak/{workload}/2026120{seed}T000000"),
                "figures": {"overcount_reads": over, "undercount_reads": 0, "resurrections": 0,
                            "not_linearizable_keys": 0},
                "checks": [{"checker": "counter", "figure": "overcount_share", "value": 0.2,
                            "limit": 0.1, "within": within}]
            })
        };
        let summary = serde_json::json!({"runs": [
            run("hot-counter", 1, true, 12),
            run("zombie", 2, true, 0),
            run("hot-counter", 3, false, 40),
        ]});
        std::fs::write(dir.path().join("summary.json"), summary.to_string()).expect("write");
        let html = section(dir.path());
        let hot = html
            .lines()
            .find(|l| l.contains("<td>hot-counter</td>"))
            .expect("a row");
        assert!(hot.contains("1 of 2"), "{hot}");
        let (ok, bad) = (hot.find("✓").expect("ok"), hot.find("✗").expect("over"));
        assert!(ok < bad, "in run order: {hot}");
        assert!(hot.contains("overcounting reads 12 → 40 (up)"), "{hot}");
        assert!(hot.contains("overcount_share 0.2 over 0.1"), "{hot}");
        assert!(
            hot.contains("hot-counter/20261203T000000/report.html"),
            "{hot}"
        );
        let zombie = html
            .lines()
            .find(|l| l.contains("<td>zombie</td>"))
            .expect("a row");
        assert!(
            zombie.contains("1 of 1") && zombie.contains("one run"),
            "{zombie}"
        );
        assert_eq!(section(&dir.path().join("none")), "");
    }
}
