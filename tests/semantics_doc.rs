//! docs/semantics.md against the code: every default it gives is the node's, every default
//! that differs from Cassandra's says it departs, and every test it names exists.

use checker::api::ClusterSettings;
use serde_json::Value;
use std::path::{Path, PathBuf};

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// The rows of the table under the heading `heading`, each split into its cells.
fn table(doc: &str, heading: &str) -> Vec<Vec<String>> {
    doc.split("\n## ")
        .find(|section| section.starts_with(heading))
        .unwrap_or_else(|| panic!("docs/semantics.md has no section {heading}"))
        .lines()
        .filter(|l| l.starts_with('|'))
        .skip(2) // the header and its rule
        .map(|l| {
            l.trim_matches('|')
                .split('|')
                .map(|c| c.trim().to_string())
                .collect()
        })
        .collect()
}

/// A cell's value as JSON: `` `5000` `` is 5000, `` `"QUORUM"` `` the string; "–" is none.
fn value(cell: &str) -> Option<Value> {
    let text = cell.trim_matches('`');
    (text != "–").then(|| serde_json::from_str(text).unwrap_or_else(|e| panic!("{cell}: {e}")))
}

fn same(a: &Value, b: &Value) -> bool {
    match (a.as_f64(), b.as_f64()) {
        (Some(x), Some(y)) => x == y,
        _ => a == b,
    }
}

fn doc() -> String {
    std::fs::read_to_string(root().join("docs/semantics.md")).expect("docs/semantics.md")
}

#[test]
fn every_default_in_the_table_is_the_nodes_and_each_departure_is_marked() {
    let defaults = serde_json::to_value(ClusterSettings::default()).expect("JSON");
    let defaults = defaults.as_object().expect("an object");
    let rows = table(&doc(), "Defaults");
    for (field, expected) in defaults {
        let row = rows
            .iter()
            .find(|r| r[0] == format!("`{field}`"))
            .unwrap_or_else(|| panic!("docs/semantics.md has no row for `{field}`"));
        let node = value(&row[3]).unwrap_or_else(|| panic!("`{field}`: no node default"));
        assert!(
            same(&node, expected),
            "`{field}`: the doc says {node}, the node {expected}"
        );
        if let Some(cassandra) = value(&row[2]) {
            assert!(
                same(&cassandra, expected) || row[4].contains("*Departs*"),
                "`{field}`: Cassandra's {cassandra} is not the node's {expected}, and the row \
                 does not say it departs"
            );
        }
    }
    assert_eq!(
        rows.len(),
        defaults.len(),
        "a row for a field the node does not have"
    );
}

/// Every `fn NAME(` in the Rust files under `dir`.
fn functions(dir: &Path, out: &mut Vec<String>) {
    for entry in std::fs::read_dir(dir).expect("a folder").flatten() {
        let path = entry.path();
        if path.is_dir() && !path.ends_with("target") {
            functions(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            let text = std::fs::read_to_string(&path).expect("a source file");
            for piece in text.split("fn ").skip(1) {
                out.push(
                    piece
                        .split('(')
                        .next()
                        .unwrap_or_default()
                        .trim()
                        .to_string(),
                );
            }
        }
    }
}

#[test]
fn every_mechanism_names_tests_that_exist() {
    let mut known = Vec::new();
    for dir in ["src", "tests", "checkers/src", "checkers/tests"] {
        functions(&root().join(dir), &mut known);
    }
    let rows = table(&doc(), "Mechanisms");
    assert!(rows.len() >= 30, "{} mechanisms", rows.len());
    for row in rows {
        let tests: Vec<&str> = row[3].split(", ").map(|t| t.trim_matches('`')).collect();
        for test in tests {
            assert!(
                known.iter().any(|f| f == test),
                "{}: no test `{test}`",
                row[0]
            );
        }
    }
}
