//! results/index.html: every run, newest first, with its workload, time, verdict and key
//! figures, each linking to its report. Rewritten after every run.

use super::html::{escape, page, verdict_class, verdict_word};
use crate::store::folder::{run_folders, INDEX, REPORT, RESULTS};
use anyhow::Context;
use serde_json::Value;
use std::fmt::Write;
use std::path::{Path, PathBuf};

/// One run as the index lists it.
struct Row {
    workload: String,
    stamp: String,
    results: Option<Value>,
    has_report: bool,
}

/// Every run under `root`, newest first.
fn rows(root: &Path) -> Vec<Row> {
    let mut rows: Vec<Row> = run_folders(root)
        .into_iter()
        .map(|run| Row {
            workload: run.parent().map(name_of).unwrap_or_default(),
            stamp: name_of(&run),
            results: std::fs::read_to_string(run.join(RESULTS))
                .ok()
                .and_then(|text| serde_json::from_str(&text).ok()),
            has_report: run.join(REPORT).is_file(),
        })
        .collect();
    rows.sort_by(|a, b| b.stamp.cmp(&a.stamp).then(a.workload.cmp(&b.workload)));
    rows
}

fn name_of(path: &Path) -> String {
    path.file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default()
}

/// `20261202T141227` as `2026-12-02 14:12:27`.
fn readable(stamp: &str) -> String {
    let digits: Vec<char> = stamp.chars().filter(char::is_ascii_digit).collect();
    if digits.len() != 14 {
        return stamp.to_string();
    }
    let part = |a: usize, b: usize| digits[a..b].iter().collect::<String>();
    format!(
        "{}-{}-{} {}:{}:{}",
        part(0, 4),
        part(4, 6),
        part(6, 8),
        part(8, 10),
        part(10, 12),
        part(12, 14)
    )
}

/// The figures a row shows for a run's results.json.
fn figures(results: &Value) -> String {
    let c = &results["checkers"];
    let mut parts = vec![
        format!("{} ops", results["ops"]),
        format!(
            "overcount {} reads (max {})",
            c["counter"]["overcount"]["reads"], c["counter"]["overcount"]["max"]
        ),
        format!(
            "undercount {} reads (max {})",
            c["counter"]["undercount"]["reads"], c["counter"]["undercount"]["max"]
        ),
    ];
    if c["resurrection"]["events"].as_u64().is_some_and(|n| n > 0) {
        parts.push(format!("{} resurrections", c["resurrection"]["events"]));
    }
    if c["tombstones"]["violations"]
        .as_u64()
        .is_some_and(|n| n > 0)
    {
        parts.push(format!(
            "{} tombstone violations",
            c["tombstones"]["violations"]
        ));
    }
    if let Some(keys) = c["linearizable"]["illegal_keys"]
        .as_u64()
        .filter(|n| *n > 0)
    {
        parts.push(format!("{keys} keys not linearizable"));
    }
    parts.push(format!(
        "{} unknown outcomes",
        c["stats"]["unknown_outcomes"]
    ));
    parts.join(" · ")
}

/// The page for the runs under `root`.
pub fn render(root: &Path) -> String {
    let rows = rows(root);
    let mut body = format!(
        "<h1>Runs</h1>\n<p class=\"muted\">{} runs in {}, newest first.</p>\n",
        rows.len(),
        escape(&root.display().to_string())
    );
    body.push_str(&super::budgets::section(root));
    body.push_str("<h2>Every run</h2>\n<table>\n<tr><th>time</th><th>workload</th><th>seed</th><th>verdict</th><th>figures</th></tr>\n");
    for row in &rows {
        let (word, seed, figures) = match &row.results {
            Some(r) => {
                let word = verdict_word(&r["valid"]);
                (word, r["seed"].to_string(), figures(r))
            }
            None => ("UNKNOWN", String::new(), "not checked".to_string()),
        };
        let target = format!("{}/{}/{REPORT}", row.workload, row.stamp);
        let time = escape(&readable(&row.stamp));
        let time = if row.has_report {
            format!("<a href=\"{}\">{time}</a>", escape(&target))
        } else {
            time
        };
        let _ = writeln!(
            body,
            "<tr><td>{time}</td><td>{}</td><td class=\"num\">{}</td><td><span class=\"tag {}\">{word}</span></td><td>{}</td></tr>",
            escape(&row.workload),
            escape(&seed),
            verdict_class(word),
            escape(&figures)
        );
    }
    body.push_str("</table>\n");
    page("checker runs", &body)
}

/// Rewrites `root/index.html`; returns its path.
pub fn write(root: &Path) -> anyhow::Result<PathBuf> {
    let path = root.join(INDEX);
    let temp = root.join(format!("{INDEX}.tmp"));
    std::fs::write(&temp, render(root)).with_context(|| format!("writing {}", temp.display()))?;
    std::fs::rename(&temp, &path).with_context(|| format!("writing {}", path.display()))?;
    Ok(path)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn runs_are_listed_newest_first_with_their_verdicts_and_links() -> anyhow::Result<()> {
        let root = tempfile::tempdir()?;
        for (workload, stamp, valid) in [
            ("a", "20261201T100000", true),
            ("b", "20261202T090000", false),
        ] {
            let run = root.path().join(workload).join(stamp);
            std::fs::create_dir_all(&run)?;
            std::fs::write(run.join("history.jsonl"), "")?;
            std::fs::write(run.join("report.html"), "")?;
            let results = serde_json::json!({"valid": valid, "seed": 7, "ops": 10, "checkers": {}});
            std::fs::write(run.join(RESULTS), results.to_string())?;
        }
        std::fs::create_dir_all(root.path().join("c/20261203T000000"))?; // no history: not a run
        let html = render(root.path());
        let newer = html.find("2026-12-02 09:00:00").expect("the newer run");
        let older = html.find("2026-12-01 10:00:00").expect("the older run");
        assert!(newer < older, "newest first");
        assert!(html.contains("href=\"b/20261202T090000/report.html\""));
        assert!(html.contains("tag invalid\">INVALID") && html.contains("tag valid\">VALID"));
        assert!(!html.contains("20261203"));
        assert!(html.contains("2 runs"));
        Ok(())
    }
}
