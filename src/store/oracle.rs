//! The nodes' oracle dumps in a run folder (`nodes/<id>.oracle.json`, saved as the run ends),
//! read as the truth the counter checker is cross-checked against.

use super::folder::RunFolder;
use anyhow::Context;
use checkers::results::Truth;
use std::path::Path;

/// Saves node `id`'s oracle dump as `nodes_dir/<id>.oracle.json`.
pub fn save(nodes_dir: &Path, id: &str, dump: &serde_json::Value) -> std::io::Result<()> {
    let text = serde_json::to_string_pretty(dump)?;
    let path = nodes_dir.join(format!("{id}.oracle.json"));
    std::fs::write(&path, text)
        .map_err(|e| std::io::Error::new(e.kind(), format!("writing {}: {e}", path.display())))
}

/// Each counter's value on each node that dumped it; none when the run saved no dumps.
pub fn read_truth(folder: &RunFolder) -> anyhow::Result<Option<Truth>> {
    let nodes = folder.nodes();
    let Ok(entries) = std::fs::read_dir(&nodes) else {
        return Ok(None);
    };
    let mut paths: Vec<_> = entries
        .filter_map(Result::ok)
        .map(|e| e.path())
        .filter(|p| p.to_string_lossy().ends_with(".oracle.json"))
        .collect();
    if paths.is_empty() {
        return Ok(None);
    }
    paths.sort();
    let mut truth = Truth::default();
    for path in paths {
        let text = std::fs::read_to_string(&path)
            .with_context(|| format!("reading {}", path.display()))?;
        let dump: serde_json::Value = serde_json::from_str(&text)
            .with_context(|| format!("{} is not JSON", path.display()))?;
        let node = dump["node"]
            .as_str()
            .map(str::to_string)
            .with_context(|| format!("{} names no node", path.display()))?;
        let values = dump["values"].as_object().with_context(|| {
            format!(
                "{} has no \"values\" (dumped by an older node?)",
                path.display()
            )
        })?;
        truth.nodes += 1;
        for (key, value) in values {
            let holders = truth.values.entry(key.clone()).or_default();
            holders.insert(node.clone(), value.as_i64());
        }
    }
    Ok(Some(truth))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dumps_are_read_per_counter_and_node() -> anyhow::Result<()> {
        let dir = tempfile::tempdir()?;
        std::fs::create_dir(dir.path().join("nodes"))?;
        let dump = |node: &str, value: i64| {
            serde_json::json!({"node": node, "values": {"c/x": value, "c/y": null}}).to_string()
        };
        std::fs::write(dir.path().join("nodes/n1.oracle.json"), dump("n1", 3))?;
        std::fs::write(dir.path().join("nodes/n2.oracle.json"), dump("n2", 4))?;
        std::fs::write(dir.path().join("nodes/n1.log"), "not a dump")?;
        let truth = read_truth(&RunFolder::open(dir.path()))?.expect("two dumps");
        assert_eq!(truth.nodes, 2);
        assert_eq!(truth.values["c/x"]["n2"], Some(4));
        assert_eq!(truth.values["c/y"]["n1"], None);
        Ok(())
    }

    #[test]
    fn a_run_without_dumps_has_no_truth_and_a_broken_dump_is_an_error() -> anyhow::Result<()> {
        let dir = tempfile::tempdir()?;
        assert!(read_truth(&RunFolder::open(dir.path()))?.is_none());
        std::fs::create_dir(dir.path().join("nodes"))?;
        std::fs::write(dir.path().join("nodes/n1.oracle.json"), "{")?;
        let error = read_truth(&RunFolder::open(dir.path())).expect_err("broken dump");
        assert!(format!("{error:#}").contains("n1.oracle.json"));
        Ok(())
    }
}
