//! Damage torture: many damaged copies of one real database (random bytes in a page, a zeroed
//! page, truncation at a random length, two pages swapped), each given to `datalith check`,
//! `query`, `stat` and the shell (`open`). Counted: processes killed by a signal, hangs
//! (no answer within the timeout), panics, and damage `check` did not report. A copy `check`
//! passes is compared with the sound database (export and a query): equal means the damage
//! hit bytes nothing reads (free pages, a page's unused middle, a truncated free tail); a
//! difference would be damage `check` cannot see.
//!
//! A second test damages the transaction log (`txlog.dlog`) next to a sound data file: random
//! bytes in its checkpoint slots or records, a zeroed stretch, truncation. The data file holds
//! every committed transaction (a clean close checkpoints), so every command must either refuse
//! with a clear error or read exactly as the sound database; never a signal, a hang or a panic.
//!
//! Runs 24 copies by default; the full run:
//!   DATALITH_TORTURE_N=1000 cargo test -p datalith-cli --test damage_torture -- --nocapture
//! (`DATALITH_TORTURE_SEED` picks another sequence of damages; `DATALITH_BIN` another binary.)

use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// The binary under test (`DATALITH_BIN` overrides, e.g. a copy kept while rebuilding).
fn bin() -> String {
    std::env::var("DATALITH_BIN").unwrap_or_else(|_| env!("CARGO_BIN_EXE_datalith").to_string())
}
const TIMEOUT: Duration = Duration::from_secs(60);
const QUERY: &str = "[:find ?n ?g :where [?e :name ?n] [?e :group ?g]]";

#[derive(Debug, PartialEq)]
enum Outcome {
    Exit { code: i32, stdout: String },
    Signal(i32),
    Hang,
}

fn run(args: &[&str]) -> Outcome {
    use std::os::unix::process::ExitStatusExt;
    let mut child = Command::new(bin())
        .args(args)
        .env("DATALITH_HISTORY", "/dev/null")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("run datalith");
    let mut out = child.stdout.take().unwrap();
    let reader = std::thread::spawn(move || {
        let mut s = Vec::new();
        let _ = out.read_to_end(&mut s);
        s
    });
    let start = Instant::now();
    let status = loop {
        if let Some(s) = child.try_wait().unwrap() {
            break Some(s);
        }
        if start.elapsed() > TIMEOUT {
            let _ = child.kill();
            let _ = child.wait();
            break None;
        }
        std::thread::sleep(Duration::from_millis(5));
    };
    let stdout = String::from_utf8_lossy(&reader.join().unwrap()).into_owned();
    match status {
        None => Outcome::Hang,
        Some(s) => match (s.code(), s.signal()) {
            (Some(code), _) => Outcome::Exit { code, stdout },
            (None, Some(sig)) => Outcome::Signal(sig),
            (None, None) => Outcome::Signal(0),
        },
    }
}

fn ok(args: &[&str]) -> String {
    match run(args) {
        Outcome::Exit { code: 0, stdout } => stdout,
        other => panic!("{args:?}: {other:?}"),
    }
}

/// A database with the shapes a real one has: unique strings, many-valued keywords, refs,
/// values long enough for LMDB's overflow pages and for the giants table, and retractions.
fn build(db: &Path) {
    let s = db.to_str().unwrap();
    ok(&[
        "transact",
        s,
        "[{:db/ident :name :db/valueType :db.type/string :db/cardinality :db.cardinality/one :db/unique :db.unique/identity}
        {:db/ident :group :db/valueType :db.type/long :db/cardinality :db.cardinality/one}
        {:db/ident :tag :db/valueType :db.type/keyword :db/cardinality :db.cardinality/many}
        {:db/ident :friend :db/valueType :db.type/ref :db/cardinality :db.cardinality/many}
        {:db/ident :bio :db/valueType :db.type/string :db/cardinality :db.cardinality/one}]",
    ]);
    for round in 0..4 {
        let mut tx = String::from("[");
        for i in 0..500 {
            let n = round * 500 + i;
            tx.push_str(&format!(
                "{{:name \"p{n}\" :group {} :tag [:t{} :u{}] :friend [{{:name \"p{}\"}}]}}",
                n % 17,
                n % 5,
                n % 23,
                (n * 7) % 2000
            ));
        }
        tx.push(']');
        ok(&["transact", s, &tx]);
    }
    let mut tx = String::from("[");
    for i in 0..6 {
        tx.push_str(&format!(
            "{{:name \"p{i}\" :bio \"{}\"}}",
            "bio ".repeat(300 + 400 * i)
        ));
    }
    tx.push(']');
    ok(&["transact", s, &tx]);
    ok(&[
        "transact",
        s,
        "[[:db/retractEntity [:name \"p10\"]] [:db/retract [:name \"p11\"] :group 11]]",
    ]);
    std::fs::remove_file(db.join("lock.mdb")).unwrap();
}

/// xorshift: the damages are reproducible from the seed, with no dependency.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }

    fn below(&mut self, n: usize) -> usize {
        (self.next() % n.max(1) as u64) as usize
    }
}

const KINDS: [&str; 4] = ["random bytes", "zeroed page", "truncation", "swapped pages"];

fn damage(kind: usize, sound: &[u8], rng: &mut Rng) -> Vec<u8> {
    const PAGE: usize = 4096;
    let pages = sound.len() / PAGE;
    let mut b = sound.to_vec();
    match kind {
        0 => {
            let p = rng.below(pages);
            for _ in 0..1 + rng.below(32) {
                let at = p * PAGE + rng.below(PAGE);
                b[at] = rng.next() as u8;
            }
        }
        1 => {
            let p = rng.below(pages);
            b[p * PAGE..(p + 1) * PAGE].fill(0);
        }
        2 => b.truncate(rng.below(sound.len())),
        _ => {
            let (x, y) = (rng.below(pages), rng.below(pages));
            let px = b[x * PAGE..(x + 1) * PAGE].to_vec();
            let py = b[y * PAGE..(y + 1) * PAGE].to_vec();
            b[x * PAGE..(x + 1) * PAGE].copy_from_slice(&py);
            b[y * PAGE..(y + 1) * PAGE].copy_from_slice(&px);
        }
    }
    b
}

#[derive(Default, Debug)]
struct Tally {
    copies: u32,
    identical: u32,
    signals: u32,
    hangs: u32,
    panics: u32,
    /// `check` exited 2.
    detected: u32,
    /// `check` passed and export and query equal the sound database's.
    undetected_harmless: u32,
    /// `check` passed but the data reads differently.
    undetected_changed: u32,
    /// `query` exited 0 with another answer than on the sound database (the structure is
    /// sound, a value is not: only `check`'s index comparison sees it).
    wrong_answers: u32,
}

#[test]
fn damaged_copies_never_crash_or_hang_and_check_reports_them() {
    let n: usize = std::env::var("DATALITH_TORTURE_N").map_or(24, |v| v.parse().unwrap());
    let seed: u64 = std::env::var("DATALITH_TORTURE_SEED").map_or(1, |v| v.parse().unwrap());
    let tmp = tempfile::tempdir().unwrap();
    let sound_dir = tmp.path().join("sound");
    build(&sound_dir);
    let sound_s = sound_dir.to_str().unwrap();
    let sound = std::fs::read(sound_dir.join("data.mdb")).unwrap();
    assert!(ok(&["check", sound_s]).starts_with("ok:"));
    let sound_export = ok(&["export", sound_s]);
    let sound_answer = ok(&["query", sound_s, QUERY]);
    // The commands must not have touched the sound copy.
    assert!(std::fs::read(sound_dir.join("data.mdb")).unwrap() == sound);

    let mut rng = Rng(seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1);
    let mut tallies: Vec<Tally> = KINDS.iter().map(|_| Tally::default()).collect();
    let mut bad: Vec<String> = Vec::new();
    let copy: PathBuf = tmp.path().join("copy");
    for i in 0..n {
        let kind = i % KINDS.len();
        let bytes = damage(kind, &sound, &mut rng);
        let t = &mut tallies[kind];
        t.copies += 1;
        if bytes == sound {
            t.identical += 1;
            continue;
        }
        let _ = std::fs::remove_dir_all(&copy);
        std::fs::create_dir(&copy).unwrap();
        std::fs::write(copy.join("data.mdb"), &bytes).unwrap();
        let c = copy.to_str().unwrap();
        let mut check_code = None;
        for (name, args) in [
            ("check", vec!["check", c]),
            ("query", vec!["query", c, QUERY]),
            ("stat", vec!["stat", c]),
            ("open", vec![c]),
        ] {
            let outcome = run(&args);
            match &outcome {
                Outcome::Signal(sig) => {
                    t.signals += 1;
                    bad.push(format!(
                        "copy {i} ({}): {name} killed by signal {sig}",
                        KINDS[kind]
                    ));
                }
                Outcome::Hang => {
                    t.hangs += 1;
                    bad.push(format!("copy {i} ({}): {name} hung", KINDS[kind]));
                }
                Outcome::Exit { code: 101, .. } => {
                    t.panics += 1;
                    bad.push(format!("copy {i} ({}): {name} panicked", KINDS[kind]));
                }
                Outcome::Exit { code, stdout } => {
                    if name == "check" {
                        check_code = Some(*code);
                    }
                    if name == "query" && *code == 0 && *stdout != sound_answer {
                        t.wrong_answers += 1;
                        bad.push(format!(
                            "copy {i} ({}): query answered differently, exit 0 (check exited {})",
                            KINDS[kind],
                            check_code.map_or("-".into(), |c| c.to_string())
                        ));
                    }
                }
            }
            // A refused copy must stay as it was (nothing repaired, nothing created).
            if name == "check" {
                assert!(
                    std::fs::read(copy.join("data.mdb")).unwrap() == bytes,
                    "copy {i}: check wrote"
                );
                assert!(
                    !copy.join("lock.mdb").exists(),
                    "copy {i}: check made a lock file"
                );
            }
        }
        match check_code {
            Some(2) => t.detected += 1,
            Some(0) => {
                let same = matches!(run(&["export", c]), Outcome::Exit { code: 0, stdout } if stdout == sound_export)
                    && matches!(run(&["query", c, QUERY]), Outcome::Exit { code: 0, stdout } if stdout == sound_answer);
                if same {
                    t.undetected_harmless += 1;
                } else {
                    t.undetected_changed += 1;
                    bad.push(format!(
                        "copy {i} ({}): check passed a copy that reads differently",
                        KINDS[kind]
                    ));
                }
            }
            _ => {}
        }
    }

    println!(
        "damage torture: {n} copies of a {} byte database (seed {seed})",
        sound.len()
    );
    println!(
        "{:<14} {:>6} {:>9} {:>7} {:>5} {:>6} {:>8} {:>16} {:>17} {:>13}",
        "damage",
        "copies",
        "identical",
        "signals",
        "hangs",
        "panics",
        "detected",
        "undetected-same",
        "undetected-differ",
        "wrong-answers"
    );
    for (k, t) in tallies.iter().enumerate() {
        println!(
            "{:<14} {:>6} {:>9} {:>7} {:>5} {:>6} {:>8} {:>16} {:>17} {:>13}",
            KINDS[k],
            t.copies,
            t.identical,
            t.signals,
            t.hangs,
            t.panics,
            t.detected,
            t.undetected_harmless,
            t.undetected_changed,
            t.wrong_answers
        );
    }
    let sum = |f: fn(&Tally) -> u32| tallies.iter().map(f).sum::<u32>();
    println!(
        "total: {} signals, {} hangs, {} panics; check reported {} damaged copies; {} damaged copies it could not tell from sound ones, all reading exactly as the sound database; {} that read differently",
        sum(|t| t.signals), sum(|t| t.hangs), sum(|t| t.panics), sum(|t| t.detected),
        sum(|t| t.undetected_harmless), sum(|t| t.undetected_changed)
    );
    for line in &bad {
        println!("  {line}");
    }
    assert_eq!(
        sum(|t| t.signals) + sum(|t| t.hangs) + sum(|t| t.panics),
        0,
        "{bad:#?}"
    );
    assert_eq!(sum(|t| t.undetected_changed), 0, "{bad:#?}");
}

const LOG_KINDS: [&str; 4] = ["slot bytes", "record bytes", "zeroed range", "truncation"];

/// Damages a copy of the log `sound` (only its used part: past it the file is preallocated
/// zeroes that nothing reads).
fn damage_log(kind: usize, sound: &[u8], rng: &mut Rng) -> Vec<u8> {
    let used = sound
        .iter()
        .rposition(|b| *b != 0)
        .map_or(0, |p| p + 1)
        .max(1);
    // The two checkpoint slots share the first page.
    let slots = 4096.min(used);
    let mut b = sound.to_vec();
    match kind {
        0 => {
            for _ in 0..1 + rng.below(8) {
                let at = rng.below(slots);
                b[at] = rng.next() as u8;
            }
        }
        1 => {
            for _ in 0..1 + rng.below(8) {
                let at = (slots + rng.below(used.saturating_sub(slots).max(1))).min(b.len() - 1);
                b[at] = rng.next() as u8;
            }
        }
        2 => {
            let at = rng.below(used);
            let len = 1 + rng.below(4096);
            let end = (at + len).min(b.len());
            b[at..end].fill(0);
        }
        _ => b.truncate(rng.below(used)),
    }
    b
}

#[test]
fn damaged_logs_never_crash_or_hang_and_never_change_an_answer() {
    // Each copy writes the whole preallocated 64 MiB log: 8 by default keeps `cargo test` short.
    let n: usize = std::env::var("DATALITH_TORTURE_N").map_or(8, |v| v.parse().unwrap());
    let seed: u64 = std::env::var("DATALITH_TORTURE_SEED").map_or(1, |v| v.parse().unwrap());
    let tmp = tempfile::tempdir().unwrap();
    let sound_dir = tmp.path().join("sound");
    build(&sound_dir);
    let sound_s = sound_dir.to_str().unwrap();
    let data = std::fs::read(sound_dir.join("data.mdb")).unwrap();
    let log = std::fs::read(sound_dir.join("txlog.dlog")).expect("a durable database has a log");
    let sound_export = ok(&["export", sound_s]);
    let sound_answer = ok(&["query", sound_s, QUERY]);

    let mut rng = Rng(seed.wrapping_mul(0x2545_F491_4F6C_DD1D) | 1);
    // Per kind: copies, refused by check (exit 2), passed and reading as the sound database.
    let mut tallies = [(0u32, 0u32, 0u32); 4];
    let mut bad: Vec<String> = Vec::new();
    let copy: PathBuf = tmp.path().join("copy");
    for i in 0..n {
        let kind = i % LOG_KINDS.len();
        let bytes = damage_log(kind, &log, &mut rng);
        tallies[kind].0 += 1;
        let _ = std::fs::remove_dir_all(&copy);
        std::fs::create_dir(&copy).unwrap();
        std::fs::write(copy.join("data.mdb"), &data).unwrap();
        std::fs::write(copy.join("txlog.dlog"), &bytes).unwrap();
        let c = copy.to_str().unwrap();
        for (name, args) in [
            ("check", vec!["check", c]),
            ("query", vec!["query", c, QUERY]),
            ("stat", vec!["stat", c]),
            ("open", vec![c]),
            ("export", vec!["export", c]),
        ] {
            match run(&args) {
                Outcome::Signal(sig) => bad.push(format!(
                    "log copy {i} ({}): {name} killed by signal {sig}",
                    LOG_KINDS[kind]
                )),
                Outcome::Hang => {
                    bad.push(format!("log copy {i} ({}): {name} hung", LOG_KINDS[kind]))
                }
                Outcome::Exit { code: 101, .. } => bad.push(format!(
                    "log copy {i} ({}): {name} panicked",
                    LOG_KINDS[kind]
                )),
                Outcome::Exit { code: 0, stdout } => {
                    let differs = (name == "query" && stdout != sound_answer)
                        || (name == "export" && stdout != sound_export);
                    if differs {
                        bad.push(format!(
                            "log copy {i} ({}): {name} answered differently, exit 0",
                            LOG_KINDS[kind]
                        ));
                    }
                    if name == "check" {
                        tallies[kind].2 += 1;
                    }
                }
                Outcome::Exit { code, .. } => {
                    if name == "check" && code == 2 {
                        tallies[kind].1 += 1;
                    }
                }
            }
        }
    }
    println!(
        "log damage torture: {n} copies of a {} byte log (seed {seed})",
        log.len()
    );
    println!(
        "{:<14} {:>6} {:>14} {:>12}",
        "damage", "copies", "check-refused", "check-passed"
    );
    for (k, (copies, refused, passed)) in tallies.iter().enumerate() {
        println!(
            "{:<14} {:>6} {:>14} {:>12}",
            LOG_KINDS[k], copies, refused, passed
        );
    }
    println!(
        "total: {} signals, hangs, panics or changed answers",
        bad.len()
    );
    for line in &bad {
        println!("  {line}");
    }
    assert!(bad.is_empty(), "{bad:#?}");
}
