//! The floors of `src/kv/`, checked: each room (a file or folder directly in `kv/`) names only
//! rooms on floors below its own (through `super::`, `super::super::` or `crate::kv::` paths),
//! outside comments and unit tests. `kv/mod.rs` draws the same map for a newcomer; this keeps
//! it true and keeps the engine free of the circles that made it hard to enter (the
//! environment, the committer, the applier and the readers once all named one another).

use std::collections::BTreeSet;
use std::path::Path;

/// The rooms of `kv/`, bottom up. A room names only rooms of lower floors, never one of its
/// own floor.
const FLOORS: &[&[&str]] = &[
    // Leaves: LMDB's C API, and helpers that know nothing of the engine.
    &[
        "lmdb",
        "chunked",
        "commit_timing",
        "flush",
        "gate",
        "warm",
        "whole",
    ],
    &["error", "tally"],
    &["file", "handle", "table"],
    // A request's writes before they touch LMDB.
    &["stage"],
    // The log knows tables and stages, not the environment.
    &["pending", "wal"],
    &["durability", "overlay"],
    // What every stage shares; the one reading API.
    &["core", "view"],
    // The groups durable in the log that LMDB does not hold yet, and the applier thread.
    &["unapplied"],
    &["shared"],
    &["read"],
    &["batch_snapshot"],
    &["committer"],
    &["env"],
    // The user's face.
    &["api"],
    &["typed"],
];

fn floor_of(room: &str) -> Option<usize> {
    FLOORS.iter().position(|f| f.contains(&room))
}

/// The source without comments and without its unit tests (a `#[cfg(test)]` or
/// `#[cfg(all(test, ...))]` item that is a `mod`, to the end of the file: they come last).
fn code_of(source: &str) -> String {
    let mut out = String::new();
    let mut lines = source.lines().peekable();
    while let Some(line) = lines.next() {
        let code = line.trim_start();
        if code.starts_with("//") {
            continue;
        }
        if (code.starts_with("#[cfg(test)]") || code.starts_with("#[cfg(all(test"))
            && lines
                .peek()
                .is_some_and(|l| l.trim_start().starts_with("mod "))
        {
            break;
        }
        let code = code.find(" // ").map_or(code, |i| &code[..i]);
        out.push_str(code);
        out.push('\n');
    }
    out
}

/// The other rooms of `kv/` that `source` names, the file being `file` below `kv/` (its module
/// path decides where `super::` leads).
fn rooms_named(file: &str, source: &str, rooms: &BTreeSet<String>) -> BTreeSet<String> {
    let mut module: Vec<&str> = file.trim_end_matches(".rs").split('/').collect();
    if module.last() == Some(&"mod") {
        module.pop();
    }
    let own = module[0];
    let code = code_of(source);
    let mut named = BTreeSet::new();
    let mut rest = code.as_str();
    while let Some(i) = rest.find(['s', 'c']) {
        rest = &rest[i..];
        let at_word_start = code.len() == rest.len()
            || !code.as_bytes()[code.len() - rest.len() - 1].is_ascii_alphanumeric()
                && code.as_bytes()[code.len() - rest.len() - 1] != b'_';
        // The module path the prefix leads to, from `kv` down.
        let mut base: Option<Vec<&str>> = None;
        let mut after = rest;
        if at_word_start && rest.starts_with("crate::kv::") {
            base = Some(Vec::new());
            after = &rest["crate::kv::".len()..];
        } else if at_word_start && rest.starts_with("super::") {
            let mut ups = 0;
            while let Some(r) = after.strip_prefix("super::") {
                ups += 1;
                after = r;
            }
            base = module.len().checked_sub(ups).map(|n| module[..n].to_vec());
        }
        let Some(base) = base else {
            rest = &rest[1..];
            continue;
        };
        // The first names after the prefix: one, or each of a `{...}` group.
        let firsts: Vec<&str> = match after.strip_prefix('{') {
            Some(group) => group[..group.find('}').unwrap_or(group.len())]
                .split(',')
                .map(|p| p.trim().split("::").next().unwrap_or(""))
                .collect(),
            None => vec![after
                .split(|c: char| !(c.is_alphanumeric() || c == '_'))
                .next()
                .unwrap_or("")],
        };
        for first in firsts {
            let room = match base.first() {
                Some(room) => *room,
                None => first,
            };
            if room != own && rooms.contains(room) {
                named.insert(room.to_string());
            }
        }
        rest = after;
    }
    named
}

fn kv_files(dir: &Path, base: &Path, out: &mut Vec<(String, String)>) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            kv_files(&path, base, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            let name = path.strip_prefix(base).unwrap().to_string_lossy();
            // Unit test files of a room (`mod tests;` behind `#[cfg(test)]`).
            if !name.ends_with("/tests.rs") {
                out.push((name.into_owned(), std::fs::read_to_string(&path).unwrap()));
            }
        }
    }
}

fn kv_dir() -> std::path::PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("src/kv")
}

/// The rooms of `kv/`: its files and folders, `mod.rs` aside.
fn rooms() -> BTreeSet<String> {
    std::fs::read_dir(kv_dir())
        .unwrap()
        .map(|e| {
            let name = e.unwrap().file_name().to_string_lossy().into_owned();
            name.trim_end_matches(".rs").to_string()
        })
        .filter(|n| n != "mod")
        .collect()
}

#[test]
fn every_room_has_a_floor() {
    let missing: Vec<String> = rooms()
        .into_iter()
        .filter(|r| floor_of(r).is_none())
        .collect();
    assert!(missing.is_empty(), "rooms of kv/ on no floor: {missing:?}");
}

#[test]
fn no_room_names_a_room_on_its_floor_or_above() {
    let rooms = rooms();
    let mut files = Vec::new();
    kv_files(&kv_dir(), &kv_dir(), &mut files);
    assert!(files.len() > 60, "found only {} files", files.len());
    let mut problems = Vec::new();
    for (file, source) in &files {
        let Some(own) = file.split('/').next().map(|r| r.trim_end_matches(".rs")) else {
            continue;
        };
        let Some(own_floor) = floor_of(own) else {
            continue;
        };
        for room in rooms_named(file, source, &rooms) {
            if floor_of(&room).is_some_and(|f| f >= own_floor) {
                problems.push(format!("kv/{file} names {room}"));
            }
        }
    }
    assert!(
        problems.is_empty(),
        "imports that do not go down:\n{}",
        problems.join("\n")
    );
}

#[test]
fn the_checker_reads_every_kind_of_path() {
    let rooms: BTreeSet<String> = ["env", "read", "core", "wal", "unapplied", "committer"]
        .iter()
        .map(|s| s.to_string())
        .collect();
    let cases: &[(&str, &str, &[&str])] = &[
        ("read.rs", "use super::core::EnvCore;", &["core"]),
        (
            "read.rs",
            "use super::{env::X, wal::Tail};",
            &["env", "wal"],
        ),
        (
            "committer/later.rs",
            "use super::super::read::ReadTxn;",
            &["read"],
        ),
        // A sibling inside its own room.
        ("committer/later.rs", "use super::Runner;", &[]),
        (
            "committer/mod.rs",
            "use super::unapplied::Lazy;",
            &["unapplied"],
        ),
        ("wal/tail.rs", "let x = crate::kv::env::open();", &["env"]),
        ("read.rs", "// see super::env::Environment", &[]),
        (
            "read.rs",
            "fn f() {}\n#[cfg(test)]\nmod tests {\n use super::super::env::E;\n}",
            &[],
        ),
        ("read.rs", "let supper::env = 1; use superb::env;", &[]),
    ];
    for (file, source, expected) in cases {
        let got = rooms_named(file, source, &rooms);
        let expected: BTreeSet<String> = expected.iter().map(|s| s.to_string()).collect();
        assert_eq!(got, expected, "{file}: {source}");
    }
}
