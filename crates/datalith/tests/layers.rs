//! The layer map of `crates/datalith/src`, checked: no module names a module of a layer above
//! its own (through a `crate::...` path, in a `use` or inline), outside unit tests.
//!
//! The map, bottom up (ARCHITECTURE.md shows the same one). Modules of one layer may name each
//! other; the reasons are written beside them.

use std::path::Path;

/// The layers, bottom up: each line is the top-level modules of one layer.
const LAYERS: &[&[&str]] = &[
    &["limits", "stack"],
    // Values and their errors: EDN is built on the codec's values, the codec's errors carry
    // EDN fields, and every error names its category (`error`, without the crate-level
    // `Error`, which is in the facade).
    &["codec", "edn", "error"],
    &["kv"],
    // The full-text engine: on the KV engine, used by the store's transactions and queries.
    &["search"],
    &["store"],
    &["db"],
    &["tx"],
    // Pull reports `QueryError`s and queries run pull expressions in `:find`.
    &["pull", "query"],
    // The facade: handles, options, the crate-level `Error` and the crate root's re-exports.
    &["api", "admin", "raw", "error::Error", "<root>"],
];

/// The layer of a path below `crate::` (`kv::env::Environment`, `Database`, `error::CORRUPT`).
fn layer_of(path: &str) -> usize {
    let top = path.split("::").next().unwrap_or("");
    let two: String = path.split("::").take(2).collect::<Vec<_>>().join("::");
    for (n, layer) in LAYERS.iter().enumerate() {
        if layer.contains(&two.as_str()) {
            return n;
        }
    }
    for (n, layer) in LAYERS.iter().enumerate() {
        if layer.contains(&top) {
            return n;
        }
    }
    // Not a module: an item the crate root re-exports (`crate::Database`, `crate::q`).
    LAYERS.len() - 1
}

/// The layer of a source file, from its path below `src/`.
fn file_layer(file: &str) -> usize {
    match file {
        "lib.rs" => LAYERS.len() - 1,
        "error/crate_error.rs" => layer_of("error::Error"),
        _ => layer_of(file.split('/').next().unwrap().trim_end_matches(".rs")),
    }
}

/// The `crate::` paths `source` names outside comments and unit tests, each as the text after
/// `crate::` (a group `crate::{a::B, C}` gives `a::B` and `C`).
fn crate_paths(source: &str) -> Vec<String> {
    let mut paths = Vec::new();
    let mut lines = source.lines().peekable();
    while let Some(line) = lines.next() {
        let code = line.trim_start();
        if code.starts_with("//") {
            continue;
        }
        // Unit tests may use the whole crate.
        if code.starts_with("#[cfg(test)]")
            && lines
                .peek()
                .is_some_and(|l| l.trim_start().starts_with("mod "))
        {
            break;
        }
        let code = match code.find(" // ") {
            Some(i) => &code[..i],
            None => code,
        };
        let mut rest = code;
        while let Some(i) = rest.find("crate::") {
            rest = &rest[i + "crate::".len()..];
            if let Some(group) = rest.strip_prefix('{') {
                let end = group.find('}').unwrap_or(group.len());
                paths.extend(group[..end].split(',').map(|p| p.trim().to_string()));
                continue;
            }
            let end = rest
                .find(|c: char| !(c.is_alphanumeric() || c == '_' || c == ':'))
                .unwrap_or(rest.len());
            paths.push(rest[..end].trim_end_matches(':').to_string());
        }
    }
    paths.retain(|p| !p.is_empty());
    paths
}

/// Each path in `source` (the file `file` below `src/`) that names a layer above the file's.
fn upward(file: &str, source: &str) -> Vec<String> {
    let own = file_layer(file);
    crate_paths(source)
        .into_iter()
        .filter(|p| layer_of(p) > own)
        .map(|p| format!("{file} names crate::{p}"))
        .collect()
}

fn rust_files(dir: &Path, base: &Path, out: &mut Vec<(String, String)>) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            rust_files(&path, base, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            let name = path
                .strip_prefix(base)
                .unwrap()
                .to_string_lossy()
                .into_owned();
            // Unit test files of a module (`mod tests;` behind `#[cfg(test)]`).
            if name.ends_with("/tests.rs") {
                continue;
            }
            out.push((name, std::fs::read_to_string(&path).unwrap()));
        }
    }
}

#[test]
fn no_module_names_a_layer_above_its_own() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut files = Vec::new();
    rust_files(&src, &src, &mut files);
    assert!(files.len() > 50, "found only {} files", files.len());
    let mut problems: Vec<String> = files.iter().flat_map(|(f, s)| upward(f, s)).collect();
    problems.sort();
    assert!(
        problems.is_empty(),
        "upward imports:\n{}",
        problems.join("\n")
    );
}

#[test]
fn every_top_level_module_has_a_layer() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    for entry in std::fs::read_dir(&src).unwrap() {
        let name = entry.unwrap().file_name().to_string_lossy().into_owned();
        let module = name.trim_end_matches(".rs");
        if module == "lib" {
            continue;
        }
        assert!(
            LAYERS.iter().any(|l| l.contains(&module)),
            "src/{name} is in no layer of LAYERS"
        );
    }
}

#[test]
fn the_checker_finds_upward_paths_and_only_those() {
    let cases: &[(&str, &str, &[&str])] = &[
        ("kv/env.rs", "use crate::codec::Value;", &[]),
        (
            "kv/env.rs",
            "use crate::api::Db;",
            &["kv/env.rs names crate::api::Db"],
        ),
        ("pull/eval.rs", "use crate::db::Db;", &[]),
        (
            "pull/eval.rs",
            "let d: crate::api::Db;",
            &["pull/eval.rs names crate::api::Db"],
        ),
        ("query/run.rs", "use crate::pull::Eid;", &[]),
        (
            "tx/report.rs",
            "use crate::query::QueryError;",
            &["tx/report.rs names crate::query::QueryError"],
        ),
        (
            "db/value.rs",
            "use crate::{Database, store::Store};",
            &["db/value.rs names crate::Database"],
        ),
        ("store/x.rs", "use crate::error::{self, CORRUPT};", &[]),
        (
            "store/x.rs",
            "fn f() -> crate::error::Error {",
            &["store/x.rs names crate::error::Error"],
        ),
        (
            "error/crate_error.rs",
            "use crate::api::dump::DumpError;",
            &[],
        ),
        ("store/x.rs", "// see crate::api::Db", &[]),
        (
            "store/x.rs",
            "#[cfg(test)]\nmod tests {\n use crate::Database;\n}",
            &[],
        ),
        ("api/db.rs", "use crate::query::QueryCache;", &[]),
    ];
    for (file, source, expected) in cases {
        assert_eq!(&upward(file, source), expected, "{file}: {source}");
    }
}

/// The module a file below `src/` belongs to, as the layer map names it.
fn module_of(file: &str) -> String {
    match file {
        "error/crate_error.rs" => "error::Error".to_string(),
        _ => file
            .split('/')
            .next()
            .unwrap()
            .trim_end_matches(".rs")
            .to_string(),
    }
}

/// Prints the module graph: each edge `from -> to` between top-level modules (the files of
/// `from` that name `to`), outside comments and unit tests, for docs/module-graph.md. Another
/// tree's `src` (an older commit's, say) through `DATALITH_SRC`:
/// `cargo test -p datalith --test layers module_graph -- --ignored --nocapture`.
#[test]
#[ignore = "prints the graph; run on demand"]
fn module_graph() {
    let src = std::env::var_os("DATALITH_SRC")
        .map(std::path::PathBuf::from)
        .unwrap_or_else(|| Path::new(env!("CARGO_MANIFEST_DIR")).join("src"));
    let mut files = Vec::new();
    rust_files(&src, &src, &mut files);
    let mut edges: std::collections::BTreeMap<(String, String), usize> = Default::default();
    for (file, source) in &files {
        let from = module_of(file);
        let mut named: Vec<String> = crate_paths(source)
            .iter()
            .map(|p| match p.starts_with("error::Error") {
                true => "error::Error".to_string(),
                false => p.split("::").next().unwrap_or("").to_string(),
            })
            .filter(|to| *to != from && LAYERS.iter().any(|l| l.contains(&to.as_str())))
            .collect();
        named.sort();
        named.dedup();
        for to in named {
            *edges.entry((from.clone(), to)).or_default() += 1;
        }
    }
    for ((from, to), files) in edges {
        let upward = if layer_of(&to) > layer_of(&from) {
            "  UPWARD"
        } else {
            ""
        };
        println!("{from} -> {to} ({files} files){upward}");
    }
}
