//! Each fuzz target on stable Rust: every file of its seed corpus (`fuzz/corpus/<target>/`),
//! then deterministic mutations of them. A panic inside a target fails the test and names
//! the input (printed lossily and as bytes) so it can be added to the corpus and replayed.
//!
//! The counts keep the whole replay around 20 s in a debug build; the long runs are
//! cargo-fuzz's (see `fuzz/README.md`). `DATALITH_FUZZ_REPLAY_SCALE=N` multiplies every
//! target's mutation count by N, for a longer stable run without nightly.

use std::path::PathBuf;

use datalith_fuzz_targets::mutate::{mutate, Rng};

fn corpus(target: &str) -> Vec<Vec<u8>> {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../../fuzz/corpus")
        .join(target);
    let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("seed corpus {}: {e}", dir.display()))
        .map(|e| e.unwrap().path())
        .collect();
    files.sort();
    let seeds: Vec<Vec<u8>> = files.iter().map(|f| std::fs::read(f).unwrap()).collect();
    assert!(!seeds.is_empty(), "empty seed corpus {}", dir.display());
    seeds
}

fn run_guarded(target: &str, body: fn(&[u8]), input: &[u8]) {
    if let Err(panic) = std::panic::catch_unwind(|| body(input)) {
        panic!(
            "fuzz target {target} failed on input {:?} (bytes {:?}): {}",
            String::from_utf8_lossy(input),
            input,
            panic
                .downcast_ref::<String>()
                .map(String::as_str)
                .or_else(|| panic.downcast_ref::<&str>().copied())
                .unwrap_or("(no message)")
        );
    }
}

fn replay(target: &str, mutations: usize) {
    let body = datalith_fuzz_targets::TARGETS
        .iter()
        .find(|(name, _)| *name == target)
        .map(|(_, f)| *f)
        .expect("a target of that name");
    let seeds = corpus(target);
    for s in &seeds {
        run_guarded(target, body, s);
    }
    let scale: usize = std::env::var("DATALITH_FUZZ_REPLAY_SCALE")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(1);
    let mut rng = Rng::new(0x5eed ^ target.len() as u64);
    for _ in 0..mutations * scale {
        let seed = &seeds[rng.below(seeds.len())];
        run_guarded(target, body, &mutate(seed, &mut rng));
    }
}

#[test]
fn edn() {
    replay("edn", 4000);
}

#[test]
fn cbor() {
    replay("cbor", 4000);
}

#[test]
fn query() {
    replay("query", 1500);
}

#[test]
fn tx() {
    replay("tx", 600);
}

#[test]
fn pull() {
    replay("pull", 1500);
}

#[test]
fn damaged_file() {
    replay("damaged_file", 150);
}

#[test]
fn search_query() {
    replay("search_query", 3000);
}
