//! Writing a JSON document so that a reader never sees half of it.

use anyhow::Context;
use std::path::Path;

/// Writes a JSON document, pretty-printed, replacing the file atomically.
pub fn write_json(path: &Path, value: &impl serde::Serialize) -> anyhow::Result<()> {
    let text = serde_json::to_string_pretty(value).context("serializing")?;
    let temp = path.with_extension("json.tmp");
    std::fs::write(&temp, text + "\n").with_context(|| format!("writing {}", temp.display()))?;
    std::fs::rename(&temp, path).with_context(|| format!("writing {}", path.display()))
}
