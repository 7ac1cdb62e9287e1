//! The layers of `docs/architecture.md` point one way: the model (network,
//! flow control, mechanisms, engine, metrics) never imports the scenario
//! layer, the simulator or the results, and no two files import each other,
//! directly or around a circle. Read from the source, so that a new import
//! that breaks the rule fails here instead of in a review.
//!
//! A file's unit tests (from its `#[cfg(test)]` on) are left out: they may
//! build their input from scenario text.

use std::collections::{BTreeMap, BTreeSet};
use std::fs;
use std::path::{Path, PathBuf};

const SRC: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/src");
const MODEL: [&str; 8] = [
    "net",
    "traffic",
    "transport",
    "cm",
    "flowctl",
    "engine",
    "metrics",
    "units.rs",
];

/// Every `.rs` file under `src/`, as a path relative to it, with its text
/// up to its unit tests.
fn sources() -> BTreeMap<String, String> {
    fn walk(dir: &Path, out: &mut Vec<PathBuf>) {
        for e in fs::read_dir(dir).unwrap() {
            let p = e.unwrap().path();
            if p.is_dir() {
                walk(&p, out);
            } else if p.extension().is_some_and(|x| x == "rs") {
                out.push(p);
            }
        }
    }
    let mut files = Vec::new();
    walk(Path::new(SRC), &mut files);
    files
        .into_iter()
        .map(|p| {
            let text = fs::read_to_string(&p).unwrap();
            let code = text.split("#[cfg(test)]").next().unwrap().to_string();
            let rel = p
                .strip_prefix(SRC)
                .unwrap()
                .to_string_lossy()
                .replace('\\', "/");
            (rel, code)
        })
        .collect()
}

/// The paths a `use` tree names, with its braces expanded:
/// `a::{b::{c, d}, e}` gives `a::b::c`, `a::b::d`, `a::e`.
fn expand(prefix: &str, tree: &str, out: &mut Vec<String>) {
    let tree = tree.trim();
    let Some(open) = tree.find('{') else {
        out.push(format!("{prefix}{tree}"));
        return;
    };
    let head = format!("{prefix}{}", &tree[..open]);
    let inner = &tree[open + 1..tree.rfind('}').unwrap()];
    let (mut depth, mut start) = (0, 0);
    for (i, c) in inner.char_indices() {
        match c {
            '{' => depth += 1,
            '}' => depth -= 1,
            ',' if depth == 0 => {
                expand(&head, &inner[start..i], out);
                start = i + 1;
            }
            _ => {}
        }
    }
    if !inner[start..].trim().is_empty() {
        expand(&head, &inner[start..], out);
    }
}

/// Every path in `code` that starts at `crate::` or `super::`: the trees of
/// its `use` items and the paths written inline.
fn paths(code: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut offset = 0;
    for line in code.split_inclusive('\n') {
        let item = line.trim_start();
        let item = item.strip_prefix("pub ").unwrap_or(item);
        let item = ["pub(crate) ", "pub(super) "]
            .iter()
            .find_map(|v| item.strip_prefix(v))
            .unwrap_or(item);
        if let Some(tree) = item.strip_prefix("use ") {
            let at = offset + line.len() - tree.len();
            if let Some(end) = code[at..].find(';') {
                let tree: String = code[at..at + end].split_whitespace().collect();
                expand("", &tree, &mut out);
            }
        }
        offset += line.len();
    }
    for start in ["crate::", "super::"] {
        for (i, _) in code.match_indices(start) {
            if code[..i].ends_with("::") {
                continue;
            }
            let end = code[i..]
                .find(|c: char| !(c.is_alphanumeric() || c == '_' || c == ':'))
                .map_or(code.len(), |e| i + e);
            out.push(code[i..end].trim_end_matches(':').to_string());
        }
    }
    out.retain(|p| p.starts_with("crate::") || p.starts_with("super::"));
    out
}

/// The file of module path `segs` (from `src/`): `a/b.rs` or `a/b/mod.rs`,
/// else the closest ancestor that is a file.
fn file_of(segs: &[&str], files: &BTreeMap<String, String>) -> Option<String> {
    for n in (0..=segs.len()).rev() {
        let dir = segs[..n].join("/");
        for cand in [format!("{dir}.rs"), format!("{dir}/mod.rs")] {
            if files.contains_key(&cand) {
                return Some(cand);
            }
        }
    }
    None
}

/// The module path (from `src/`) of a file: `sim/adapter.rs` is `sim::adapter`.
fn module_of(file: &str) -> Vec<&str> {
    let f = file.trim_end_matches(".rs");
    let f = f.strip_suffix("/mod").unwrap_or(f);
    if f == "lib" {
        return Vec::new();
    }
    f.split('/').collect()
}

/// Edges between files. A child's references to its parent's `mod.rs` (the
/// type its `impl` blocks extend) are part of a module's structure, not an
/// import between peers, and are left out.
fn imports(files: &BTreeMap<String, String>) -> BTreeMap<String, BTreeSet<String>> {
    let mut graph = BTreeMap::new();
    for (file, code) in files {
        let here = module_of(file);
        let parent = &here[..here.len().saturating_sub(1)];
        let parent_file = file_of(parent, files);
        let mut to = BTreeSet::new();
        for p in paths(code) {
            let mut segs: Vec<&str> = p.split("::").collect();
            let target = if segs[0] == "crate" {
                segs.remove(0);
                file_of(&segs, files)
            } else {
                segs.remove(0);
                let mut full = parent.to_vec();
                full.extend(segs);
                file_of(&full, files)
            };
            if let Some(t) = target {
                if t != *file && Some(&t) != parent_file.as_ref() {
                    to.insert(t);
                }
            }
        }
        graph.insert(file.clone(), to);
    }
    graph
}

#[test]
fn the_model_does_not_import_the_layers_above_it() {
    let files = sources();
    let mut bad = Vec::new();
    for (file, code) in &files {
        if !MODEL
            .iter()
            .any(|m| file == m || file.starts_with(&format!("{m}/")))
        {
            continue;
        }
        for p in paths(code) {
            let top = p.split("::").nth(1).unwrap_or("");
            if p.starts_with("crate::") && matches!(top, "scenario" | "sim" | "results") {
                bad.push(format!("{file}: {p}"));
            }
        }
    }
    assert!(
        bad.is_empty(),
        "the model imports a layer above it:\n{}",
        bad.join("\n")
    );
}

#[test]
fn no_import_circle_between_files() {
    let graph = imports(&sources());
    // Depth-first search: an edge back to a file still on the stack closes a circle.
    fn visit<'g>(
        n: &'g str,
        graph: &'g BTreeMap<String, BTreeSet<String>>,
        stack: &mut Vec<&'g str>,
        done: &mut BTreeSet<&'g str>,
        circles: &mut Vec<String>,
    ) {
        if let Some(i) = stack.iter().position(|s| *s == n) {
            circles.push(format!("{} -> {n}", stack[i..].join(" -> ")));
            return;
        }
        if !done.insert(n) {
            return;
        }
        stack.push(n);
        for m in &graph[n] {
            visit(m, graph, stack, done, circles);
        }
        stack.pop();
    }
    let (mut done, mut circles) = (BTreeSet::new(), Vec::new());
    for n in graph.keys() {
        visit(n, &graph, &mut Vec::new(), &mut done, &mut circles);
    }
    assert!(
        circles.is_empty(),
        "import circles:\n{}",
        circles.join("\n")
    );
}

#[test]
fn the_checks_see_imports() {
    // Guards the parser: a circle-free result must not come from seeing nothing.
    let graph = imports(&sources());
    assert!(graph["sim/setup.rs"].contains("cm/mod.rs"));
    assert!(graph["scenario/repeat.rs"].contains("scenario/entry.rs"));
    assert!(graph["net/routing.rs"].contains("net/topology.rs"));
}
