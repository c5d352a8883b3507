//! The house's rules, read from the source: the data flows one way (no two source files
//! import each other, directly or through others), and no room imports a room after it.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// A crate's source files by module path (`["node", "http", "state"]`; the root is `[]`).
fn modules(src: &Path) -> BTreeMap<Vec<String>, PathBuf> {
    let mut found = BTreeMap::new();
    let mut stack = vec![src.to_path_buf()];
    while let Some(dir) = stack.pop() {
        for entry in std::fs::read_dir(&dir).expect("a source folder") {
            let path = entry.expect("an entry").path();
            if path.is_dir() {
                stack.push(path);
            } else if path.extension().is_some_and(|e| e == "rs") {
                let relative = path
                    .strip_prefix(src)
                    .expect("under src")
                    .with_extension("");
                let mut module: Vec<String> = relative
                    .iter()
                    .map(|p| p.to_string_lossy().into_owned())
                    .collect();
                if matches!(
                    module.last().map(String::as_str),
                    Some("mod" | "lib" | "main")
                ) {
                    module.pop();
                }
                found.insert(module, path);
            }
        }
    }
    found
}

/// A file's code before its tests, without comments.
fn code(path: &Path) -> String {
    let text = std::fs::read_to_string(path).expect("a source file");
    let text = text.split("#[cfg(test)]").next().unwrap_or_default();
    text.lines()
        .map(|line| line.split("//").next().unwrap_or_default())
        .collect::<Vec<_>>()
        .join("\n")
}

/// Every path a file names through `crate::`, `super::` or `self::`, groups expanded one level.
fn named_paths(module: &[String], code: &str) -> Vec<Vec<String>> {
    let mut paths = Vec::new();
    let bytes = code.as_bytes();
    for head in ["crate::", "super::", "self::"] {
        let mut from = 0;
        while let Some(at) = code[from..].find(head) {
            let start = from + at;
            from = start + head.len();
            let before = start.checked_sub(1).map(|i| bytes[i] as char);
            if before.is_some_and(|c| c.is_alphanumeric() || c == '_' || c == ':') {
                continue;
            }
            // `super` is the parent module whether the file is `x.rs` or `x/mod.rs`.
            let mut base: Vec<String> = match head {
                "crate::" => Vec::new(),
                "self::" => module.to_vec(),
                _ => module[..module.len().saturating_sub(1)].to_vec(),
            };
            let rest = &code[from..];
            let end = rest
                .find(|c: char| !(c.is_alphanumeric() || c == '_' || c == ':' || c == '{'))
                .unwrap_or(rest.len());
            let path_text = &rest[..end];
            if let Some(brace) = path_text.find('{') {
                let prefix = path_text[..brace].trim_end_matches(':');
                base.extend(segments(prefix));
                let close = rest[brace..].find('}').map_or(rest.len(), |c| brace + c);
                let group = rest[brace + 1..close].replace('{', ",");
                for item in group.split(',') {
                    let item = item.split(" as ").next().unwrap_or_default().trim();
                    if !item.is_empty() && item != "self" && item != "*" {
                        let mut path = base.clone();
                        path.extend(segments(item));
                        paths.push(path);
                    }
                }
            } else {
                base.extend(segments(path_text));
                paths.push(base);
            }
        }
    }
    paths
}

fn segments(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    for s in text.split("::").filter(|s| !s.is_empty()) {
        if s == "super" {
            out.pop();
        } else {
            out.push(s.to_string());
        }
    }
    out
}

/// The file-level import graph of a crate: each module to the modules its code names.
fn graph(src: &Path) -> BTreeMap<Vec<String>, BTreeSet<Vec<String>>> {
    let files = modules(src);
    let mut edges = BTreeMap::new();
    for (module, path) in &files {
        let mut deps = BTreeSet::new();
        for named in named_paths(module, &code(path)) {
            let target = (0..=named.len())
                .rev()
                .map(|n| named[..n].to_vec())
                .find(|prefix| files.contains_key(prefix));
            if let Some(target) = target.filter(|t| t != module && !t.is_empty()) {
                deps.insert(target);
            }
        }
        edges.insert(module.clone(), deps);
    }
    edges
}

/// A cycle of the graph, if it has one, as the modules along it.
fn cycle(edges: &BTreeMap<Vec<String>, BTreeSet<Vec<String>>>) -> Option<Vec<String>> {
    fn visit(
        node: &Vec<String>,
        edges: &BTreeMap<Vec<String>, BTreeSet<Vec<String>>>,
        state: &mut BTreeMap<Vec<String>, u8>,
        path: &mut Vec<Vec<String>>,
    ) -> Option<Vec<String>> {
        state.insert(node.clone(), 1);
        path.push(node.clone());
        for next in edges.get(node).into_iter().flatten() {
            match state.get(next) {
                Some(1) => {
                    let start = path.iter().position(|p| p == next).unwrap_or(0);
                    let mut names: Vec<String> =
                        path[start..].iter().map(|p| p.join("/")).collect();
                    names.push(next.join("/"));
                    return Some(names);
                }
                Some(_) => {}
                None => {
                    if let Some(found) = visit(next, edges, state, path) {
                        return Some(found);
                    }
                }
            }
        }
        path.pop();
        state.insert(node.clone(), 2);
        None
    }
    let mut state = BTreeMap::new();
    for node in edges.keys() {
        if !state.contains_key(node) {
            if let Some(found) = visit(node, edges, &mut state, &mut Vec::new()) {
                return Some(found);
            }
        }
    }
    None
}

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

#[test]
fn no_two_source_files_import_each_other_in_either_crate() {
    for src in [root().join("src"), root().join("checkers/src")] {
        if let Some(found) = cycle(&graph(&src)) {
            panic!("{}: an import cycle: {}", src.display(), found.join(" -> "));
        }
    }
}

#[test]
fn no_room_imports_a_room_after_it() {
    let rules: [(&str, &[&str]); 7] = [
        (
            "report",
            &[
                "soak", "runner", "check", "driver", "cluster", "node", "cli", "sim", "hunt",
                "systems",
            ],
        ),
        (
            "node",
            &[
                "driver", "report", "workload", "soak", "cluster", "cli", "runner", "check",
                "store", "sim", "hunt", "systems",
            ],
        ),
        (
            "workload",
            &[
                "node", "driver", "cluster", "report", "soak", "cli", "sim", "hunt", "systems",
            ],
        ),
        // A real system's processes stand where the bundled nodes' do: beside the driver.
        (
            "systems",
            &[
                "node", "driver", "report", "soak", "cli", "runner", "check", "sim", "hunt",
            ],
        ),
        // The simulated cluster stands where the node processes do: beside the driver.
        ("sim", &["report", "soak", "cli", "runner", "check", "hunt"]),
        (
            "driver",
            &[
                "node", "report", "soak", "cli", "runner", "check", "sim", "hunt",
            ],
        ),
        (
            "api",
            &[
                "node", "driver", "workload", "cluster", "report", "soak", "cli", "sim", "hunt",
                "systems",
            ],
        ),
    ];
    let edges = graph(&root().join("src"));
    let mut broken = Vec::new();
    for (room, forbidden) in rules {
        for (module, deps) in edges
            .iter()
            .filter(|(m, _)| m.first().is_some_and(|f| f == room))
        {
            for dep in deps {
                if dep.first().is_some_and(|d| forbidden.contains(&d.as_str())) {
                    broken.push(format!("{} imports {}", module.join("/"), dep.join("/")));
                }
            }
        }
    }
    assert!(
        broken.is_empty(),
        "arrows pointing backwards:\n{}",
        broken.join("\n")
    );
}

#[test]
fn the_rules_see_a_cycle_and_a_backward_arrow_when_there_is_one() {
    let dir = tempfile::tempdir().expect("temp dir");
    let src = dir.path();
    std::fs::create_dir_all(src.join("report")).expect("folder");
    std::fs::write(src.join("lib.rs"), "pub mod report;\npub mod soak;\n").expect("lib");
    std::fs::write(src.join("report/mod.rs"), "pub mod page;\n").expect("mod");
    std::fs::write(
        src.join("report/page.rs"),
        "use crate::soak::{Summary, other::Thing};\n",
    )
    .expect("page");
    std::fs::write(src.join("soak.rs"), "use crate::report::page::render;\n").expect("soak");
    let edges = graph(src);
    let page = vec!["report".to_string(), "page".to_string()];
    assert!(
        edges[&page].contains(&vec!["soak".to_string()]),
        "{edges:?}"
    );
    let found = cycle(&edges).expect("report/page and soak import each other");
    assert!(found.contains(&"soak".to_string()), "{found:?}");
}

#[test]
fn every_select_the_nodes_and_the_simulation_run_polls_in_a_fixed_order() {
    // tokio's `select!` picks among ready branches at random unless `biased`: one such pick
    // in a simulated run would make the same seed give two histories.
    let mut unbiased = Vec::new();
    for room in ["node", "sim", "driver"] {
        for (module, path) in modules(&root().join("src")) {
            if module.first().is_none_or(|m| m != room) {
                continue;
            }
            let code = code(&path);
            for (at, _) in code.match_indices("select! {") {
                let after = code[at + "select! {".len()..].trim_start();
                if !after.starts_with("biased;") {
                    unbiased.push(format!("{}: select! at byte {at}", path.display()));
                }
            }
        }
    }
    assert!(
        unbiased.is_empty(),
        "select! without `biased;`:\n{}",
        unbiased.join("\n")
    );
}
