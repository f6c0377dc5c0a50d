//! The library's layers (docs/ARCHITECTURE.md, "Layers"): every module of `src/` imports
//! only modules of its own layer or of a lower one, and the modules' imports form no
//! circle. Read from the sources: every `crate::` path outside `#[cfg(test)]` code.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// The layers, lowest first, as docs/ARCHITECTURE.md lists them.
const LAYERS: &[&[&str]] = &[
    &["square", "color", "role", "bitboard", "attacks", "prefetch"],
    &["rules", "board", "position", "fen", "san", "retro", "value"],
    &["material", "index", "stats"],
    &["format"],
    &["probe"],
    &["generate"],
    &["solve"],
    &["service", "http", "ffi"],
];

fn layer_of(module: &str) -> Option<usize> {
    LAYERS.iter().position(|layer| layer.contains(&module))
}

fn src() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("src")
}

/// The top-level module a file of `src/` belongs to (`src/probe/lookup.rs` -> `probe`);
/// `None` for the crate roots and the binary's command line.
fn module_of(path: &Path) -> Option<String> {
    let rel = path.strip_prefix(src()).ok()?;
    let first = rel.components().next()?.as_os_str().to_str()?;
    let name = first.strip_suffix(".rs").unwrap_or(first);
    (!matches!(name, "lib" | "main" | "cli")).then(|| name.to_string())
}

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            rust_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

/// The source without comments and without its `#[cfg(test)]` part (test modules come
/// last in every file of this crate).
fn code(text: &str) -> String {
    let text = text.split("#[cfg(test)]").next().unwrap();
    text.lines()
        .map(|line| match line.find("//") {
            Some(i) => &line[..i],
            None => line,
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// The crate-root names re-exported by `src/lib.rs` (`Position` -> `position`).
fn root_reexports() -> BTreeMap<String, String> {
    let lib = std::fs::read_to_string(src().join("lib.rs")).unwrap();
    let mut names = BTreeMap::new();
    for line in lib.lines() {
        let Some(rest) = line.trim().strip_prefix("pub use ") else {
            continue;
        };
        let (module, items) = rest.trim_end_matches(';').split_once("::").unwrap();
        let items = items.trim_matches(|c| c == '{' || c == '}');
        for item in items.split(',') {
            names.insert(item.trim().to_string(), module.to_string());
        }
    }
    names
}

/// The top-level modules a piece of code names through `crate::`.
fn imports(code: &str, reexports: &BTreeMap<String, String>) -> BTreeSet<String> {
    let mut found = BTreeSet::new();
    let mut name = |ident: &str| {
        let ident = ident.trim();
        if ident.is_empty() || ident == "self" {
            return;
        }
        let module = reexports.get(ident).cloned().unwrap_or(ident.to_string());
        found.insert(module);
    };
    let mut rest = code;
    while let Some(i) = rest.find("crate::") {
        // `pub(crate)` and `$crate::` are not paths into the crate root.
        let before = rest[..i].chars().next_back();
        rest = &rest[i + "crate::".len()..];
        if matches!(before, Some(c) if c.is_alphanumeric() || c == '_' || c == '$') {
            continue;
        }
        if let Some(group) = rest.strip_prefix('{') {
            // `crate::{a::B, C, d::{e, f}}`: the first segment of each top-level item.
            let (mut depth, mut item, mut at_start) = (0, String::new(), true);
            for c in group.chars() {
                match c {
                    '{' => depth += 1,
                    '}' if depth == 0 => break,
                    '}' => depth -= 1,
                    ',' if depth == 0 => {
                        name(&item);
                        item.clear();
                        at_start = true;
                        continue;
                    }
                    _ => {}
                }
                if depth == 0 && at_start {
                    if c.is_alphanumeric() || c == '_' {
                        item.push(c);
                    } else if c == ':' || !item.is_empty() {
                        at_start = false;
                    }
                }
            }
            name(&item);
        } else {
            let ident: String = rest
                .chars()
                .take_while(|c| c.is_alphanumeric() || *c == '_')
                .collect();
            name(&ident);
        }
    }
    found
}

fn graph() -> BTreeMap<String, BTreeSet<String>> {
    let reexports = root_reexports();
    let mut files = Vec::new();
    rust_files(&src(), &mut files);
    let mut graph: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for file in files {
        let Some(module) = module_of(&file) else {
            continue;
        };
        let text = std::fs::read_to_string(&file).unwrap();
        let uses = graph.entry(module.clone()).or_default();
        for import in imports(&code(&text), &reexports) {
            if import != module {
                uses.insert(import);
            }
        }
    }
    graph
}

#[test]
fn the_scanner_reads_paths_groups_and_reexports() {
    let reexports = root_reexports();
    assert_eq!(
        reexports.get("Position").map(String::as_str),
        Some("position")
    );
    let code = "use crate::{Color, probe::{A, B}, fen::Fen};\n\
                pub(crate) fn f() { crate::index::TableIndex::new(); }";
    let found = imports(code, &reexports);
    let expected: BTreeSet<String> = ["color", "probe", "fen", "index"].map(String::from).into();
    assert_eq!(found, expected);
}

#[test]
fn every_module_has_a_layer() {
    let unplaced: Vec<_> = graph()
        .into_keys()
        .filter(|m| layer_of(m).is_none())
        .collect();
    assert!(
        unplaced.is_empty(),
        "modules missing from the layer list (add them to docs/ARCHITECTURE.md and here): {unplaced:?}"
    );
}

#[test]
fn modules_import_only_their_own_or_lower_layers() {
    let mut wrong = Vec::new();
    for (module, uses) in graph() {
        let Some(layer) = layer_of(&module) else {
            continue;
        };
        for used in uses {
            match layer_of(&used) {
                Some(l) if l <= layer => {}
                _ => wrong.push(format!("{module} imports {used}")),
            }
        }
    }
    assert!(
        wrong.is_empty(),
        "imports against the layer order: {wrong:?}"
    );
}

#[test]
fn the_solver_never_imports_the_generator() {
    assert!(!graph()["solve"].contains("generate"));
}

#[test]
fn no_two_modules_import_each_other_round_a_circle() {
    let graph = graph();
    // Depth-first search; a module met again while it is on the path closes a circle.
    fn visit(
        module: &str,
        graph: &BTreeMap<String, BTreeSet<String>>,
        path: &mut Vec<String>,
        done: &mut BTreeSet<String>,
        circles: &mut Vec<String>,
    ) {
        if let Some(i) = path.iter().position(|m| m == module) {
            let mut circle = path[i..].to_vec();
            circle.push(module.to_string());
            circles.push(circle.join(" -> "));
            return;
        }
        if !done.insert(module.to_string()) {
            return;
        }
        path.push(module.to_string());
        for next in graph.get(module).into_iter().flatten() {
            visit(next, graph, path, done, circles);
        }
        path.pop();
    }
    let (mut done, mut circles) = (BTreeSet::new(), Vec::new());
    for module in graph.keys() {
        visit(module, &graph, &mut Vec::new(), &mut done, &mut circles);
    }
    assert!(circles.is_empty(), "import circles: {circles:?}");
}
