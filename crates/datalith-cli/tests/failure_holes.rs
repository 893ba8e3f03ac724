//! The smaller holes of issue 18, each as the CLI meets it: a multi-form `transact` that fails
//! half-way, output into a closed pipe, permission errors, a full disk in the shell and at a
//! database's creation, ragged CSV rows, and a database directory named like a subcommand.

use std::io::Read;
use std::path::Path;
use std::process::{Command, Stdio};

mod common;

use common::{run_in, Out};

const BIN: &str = env!("CARGO_BIN_EXE_datalith");

fn run(args: &[&str]) -> Out {
    run_in(None, BIN, args, "")
}

fn ok(args: &[&str]) -> String {
    let o = run(args);
    assert_eq!(o.code, Some(0), "{args:?}: {}", o.stderr);
    o.stdout
}

const SCHEMA: &str = "[{:db/ident :n :db/valueType :db.type/long :db/cardinality :db.cardinality/one} {:db/ident :name :db/valueType :db.type/string :db/cardinality :db.cardinality/one}]";

fn values(db: &str) -> String {
    ok(&["query", db, "[:find [?v ...] :where [_ :n ?v]]"])
        .trim()
        .to_string()
}

#[test]
fn a_multi_form_transact_that_fails_says_which_forms_committed() {
    // Rows: forms after the schema -> reports printed, the error's start, values committed.
    let cases = [
        (
            r#"[{:n 1}] [{:n "x"}] [{:n 3}]"#,
            1,
            "error: form 2 of 3 failed and committed nothing; form 1 committed; form 3 not run: ",
            "[1]",
        ),
        (
            r#"[{:n "x"}] [{:n 2}]"#,
            0,
            "error: form 1 of 2 failed and committed nothing; no form committed; form 2 not run: ",
            "[]",
        ),
        (
            r#"[{:n 1}] [{:n 2}] [{:n 3} {:n "x"}]"#,
            2,
            "error: form 3 of 3 failed and committed nothing; forms 1-2 committed: ",
            "[1 2]",
        ),
        (
            r#"[{:n 1}] [{:n 2}] [{:n "x"}] [{:n 4}] [{:n 5}]"#,
            2,
            "error: form 3 of 5 failed and committed nothing; forms 1-2 committed; forms 4-5 not run: ",
            "[1 2]",
        ),
    ];
    for (forms, reports, error, committed) in cases {
        let dir = tempfile::tempdir().unwrap();
        let db = dir.path().join("db");
        let db = db.to_str().unwrap();
        ok(&["transact", db, SCHEMA]);
        let o = run(&["transact", db, forms]);
        assert_eq!(o.code, Some(1), "{forms}: {}", o.stderr);
        assert_eq!(
            o.stdout.matches("{:tx ").count(),
            reports,
            "{forms}: {}",
            o.stdout
        );
        assert!(o.stderr.starts_with(error), "{forms}: {}", o.stderr);
        let mut got: Vec<i64> = read_longs(&values(db));
        got.sort();
        assert_eq!(format!("{got:?}").replace(',', ""), committed, "{forms}");
    }
    // The structured form carries the same facts.
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("db");
    let db = db.to_str().unwrap();
    ok(&["transact", db, SCHEMA]);
    let o = run(&[
        "transact",
        db,
        r#"[{:n 1}] [{:n "x"}] [{:n 3}]"#,
        "--format",
        "edn",
    ]);
    for field in [":failed-form 2", ":committed-forms 1", ":forms 3"] {
        assert!(o.stderr.contains(field), "{field}: {}", o.stderr);
    }
}

fn read_longs(edn: &str) -> Vec<i64> {
    edn.trim_matches(|c| c == '[' || c == ']')
        .split_whitespace()
        .map(|s| s.parse().unwrap())
        .collect()
}

/// Runs `args` with standard output into a pipe whose reader closes after a few bytes.
fn into_closed_pipe(args: &[&str]) -> (std::process::ExitStatus, String) {
    let mut child = Command::new(BIN)
        .args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .env("DATALITH_HISTORY", "/dev/null")
        .spawn()
        .unwrap();
    let mut first = [0u8; 16];
    let _ = child.stdout.as_mut().unwrap().read(&mut first);
    drop(child.stdout.take());
    let mut stderr = String::new();
    child
        .stderr
        .take()
        .unwrap()
        .read_to_string(&mut stderr)
        .unwrap();
    (child.wait().unwrap(), stderr)
}

#[test]
fn output_into_a_closed_pipe_ends_quietly() {
    use std::os::unix::process::ExitStatusExt;
    let dir = tempfile::tempdir().unwrap();
    let demo = dir.path().join("demo");
    let demo = demo.to_str().unwrap();
    // Rows: a command with a lot of output, read only in part (`| head`).
    let cases: [&[&str]; 3] = [
        &["demo", "--path", demo],
        &["export", demo],
        // Every datom of every person (an unanchored [?e ?a ?v] alone is refused, as in
        // Datomic: a full scan).
        &[
            "query",
            demo,
            "[:find ?e ?a ?v :where [?e :name] [?e ?a ?v]]",
        ],
    ];
    for args in cases {
        let (status, stderr) = into_closed_pipe(args);
        assert!(
            !stderr.contains("panicked") && status.code() != Some(101),
            "{args:?}: {status:?} {stderr}"
        );
        // Either the output fit in the pipe before it closed (exit 0) or SIGPIPE ended it.
        assert!(
            status.code() == Some(0) || status.signal() == Some(libc::SIGPIPE),
            "{args:?}: {status:?} {stderr}"
        );
    }
}

/// A command as an unprivileged user: directly when not root, through `setpriv` as nobody
/// when root (root passes every permission check). `None` when neither is possible.
fn unprivileged(args: &[&str]) -> Option<Out> {
    // SAFETY: geteuid has no preconditions.
    let root = unsafe { libc::geteuid() } == 0;
    if !root {
        return Some(run(args));
    }
    let mut all = vec![
        "--reuid",
        "65534",
        "--regid",
        "65534",
        "--clear-groups",
        BIN,
    ];
    all.extend_from_slice(args);
    let probe = Command::new("setpriv").arg("--version").output();
    if probe.is_err() {
        return None;
    }
    Some(run_in(None, "setpriv", &all, ""))
}

#[test]
fn a_permission_error_names_the_path_and_has_its_own_code() {
    use std::os::unix::fs::PermissionsExt;
    let dir = tempfile::tempdir().unwrap();
    std::fs::set_permissions(dir.path(), std::fs::Permissions::from_mode(0o755)).unwrap();
    let db = dir.path().join("db");
    let db_s = db.to_str().unwrap();
    ok(&["transact", db_s, SCHEMA]);
    let data = db.join("data.mdb");
    let locked = dir.path().join("locked");
    std::fs::create_dir(&locked).unwrap();
    std::fs::set_permissions(&locked, std::fs::Permissions::from_mode(0o555)).unwrap();
    let new_db = locked.join("new");
    std::fs::set_permissions(&data, std::fs::Permissions::from_mode(0o000)).unwrap();
    // Rows: command -> the path the message names.
    let cases: [(&[&str], &Path); 3] = [
        (&["query", db_s, "[:find ?e :where [?e :n]]"], &data),
        (&["check", db_s], &data),
        (&["transact", new_db.to_str().unwrap(), "[]"], &locked),
    ];
    for (args, path) in cases {
        let Some(o) = unprivileged(args) else {
            eprintln!("running as root without setpriv: skipping the permission test");
            return;
        };
        assert_eq!(o.code, Some(3), "{args:?}: {}", o.stderr);
        assert!(
            o.stderr.starts_with("error: permission denied: cannot "),
            "{args:?}: {}",
            o.stderr
        );
        assert!(
            o.stderr.contains(&format!(" {} (", path.display())),
            "{args:?} must name {}: {}",
            path.display(),
            o.stderr
        );
        let mut edn_args = args.to_vec();
        if args[0] == "query" {
            edn_args.extend(["--format", "edn"]);
            let o = unprivileged(&edn_args).unwrap();
            assert!(
                o.stderr
                    .contains(":db/error :datalith.error/permission-denied")
                    && o.stderr.contains(":cognitect.anomalies/forbidden")
                    && o.stderr.contains(&format!(":path \"{}\"", path.display())),
                "{}",
                o.stderr
            );
        }
    }
    assert!(!new_db.exists(), "nothing was created");
}

#[test]
fn after_a_failed_commit_the_shell_reopens_the_database() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("db");
    let db_s = db.to_str().unwrap();
    ok(&["transact", db_s, SCHEMA]);
    // About 2 MB of values: more than the file-size limit below lets the file grow.
    let big: Vec<String> = (0..4000)
        .map(|i| format!("{{:name \"{}{i}\"}}", "x".repeat(500)))
        .collect();
    let script = format!(
        ".mode edn\n[{}]\n[{{:n 1}}]\n.open\n[{{:n 2}}]\n[:find [?v ...] :where [_ :n ?v]]\n",
        big.join(" ")
    );
    // A file-size limit stands in for a full disk (the write fails; SIGXFSZ is ignored so
    // that it fails with an error instead of killing the process).
    let o = run_in(
        None,
        "sh",
        &[
            "-c",
            &format!("ulimit -f 600; trap '' XFSZ; exec '{BIN}' '{db_s}'"),
        ],
        &script,
    );
    assert_eq!(o.code, Some(1), "{}{}", o.stdout, o.stderr);
    let errors: Vec<&str> = o
        .stderr
        .lines()
        .filter(|l| l.starts_with("error:"))
        .collect();
    assert_eq!(errors.len(), 2, "{}", o.stderr);
    assert!(errors[1].contains("poisoned"), "{}", o.stderr);
    assert!(o.stderr.contains("type .open"), "{}", o.stderr);
    assert!(o.stdout.contains("opened "), "{}", o.stdout);
    // After `.open` the write goes through; the one refused before it stays refused.
    assert!(o.stdout.trim_end().ends_with("[2]"), "{}", o.stdout);
}

#[test]
fn a_database_whose_creation_met_a_full_disk_opens_once_there_is_room() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("db");
    let db_s = db.to_str().unwrap();
    // A file-size limit stands in for a full disk. A new log (256 KiB) is smaller than LMDB's
    // lock file, so the limit cannot fail the one and not the other: the database is made
    // first and its log removed (closed cleanly, the data file holds everything), and the
    // limit then fails only the creation of the log (LMDB's files exist, and it reads them).
    ok(&["transact", db_s, SCHEMA]);
    std::fs::remove_file(db.join("txlog.dlog")).unwrap();
    let o = run_in(
        None,
        "sh",
        &[
            "-c",
            &format!("ulimit -f 200; trap '' XFSZ; exec '{BIN}' transact '{db_s}' '{SCHEMA}'"),
        ],
        "",
    );
    assert_ne!(o.code, Some(0), "{}", o.stdout);
    assert!(o.stderr.contains("creating the log"), "{}", o.stderr);
    // With room again the database opens (a log cut short by the failed creation was
    // refused as corrupt by every later open).
    ok(&["transact", db_s, SCHEMA]);
    ok(&["transact", db_s, "[{:n 7}]"]);
    assert_eq!(values(db_s), "[7]");
}

#[test]
fn a_ragged_csv_row_fails_naming_its_line_and_imports_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("db");
    let db_s = db.to_str().unwrap();
    ok(&["transact", db_s, SCHEMA]);
    // Rows: CSV text -> the error's start.
    let cases = [
        (
            "name,n\nann,1\nbob\ncid,3\n",
            "error: csv: line 3: 1 cells where the header has 2 columns",
        ),
        (
            "name,n\nann,1\n\n\"b\nob\",2,9\n",
            "error: csv: line 4: 3 cells where the header has 2 columns",
        ),
    ];
    for (text, want) in cases {
        let csv = dir.path().join("people.csv");
        std::fs::write(&csv, text).unwrap();
        let o = run(&["import", db_s, csv.to_str().unwrap()]);
        assert_eq!(o.code, Some(1), "{text:?}: {}", o.stderr);
        assert!(o.stderr.starts_with(want), "{text:?}: {}", o.stderr);
        assert_eq!(values(db_s), "[]", "{text:?}: nothing imported");
    }
}

#[test]
fn a_database_named_like_a_subcommand_opens() {
    let dir = tempfile::tempdir().unwrap();
    for name in ["check", "stat", "query"] {
        ok(&["transact", dir.path().join(name).to_str().unwrap(), SCHEMA]);
        ok(&[
            "transact",
            dir.path().join(name).to_str().unwrap(),
            "[{:n 7}]",
        ]);
    }
    let query = ".mode edn\n[:find [?v ...] :where [_ :n ?v]]\n";
    // Rows: arguments given in the directory that holds the databases.
    let cases: [&[&str]; 4] = [&["check"], &["stat"], &["./query"], &["shell", "check"]];
    for args in cases {
        let o = run_in(Some(dir.path()), BIN, args, query);
        assert_eq!(o.code, Some(0), "{args:?}: {}", o.stderr);
        assert_eq!(o.stdout.trim(), "[7]", "{args:?}: {}", o.stdout);
    }
    // The subcommand with its argument is still the subcommand.
    let o = run_in(Some(dir.path()), BIN, &["check", "check"], "");
    assert_eq!(o.code, Some(0), "{}", o.stderr);
    assert!(o.stdout.contains("ok: "), "{}", o.stdout);
    // Without such a directory the bare subcommand is a usage error, as before.
    let empty = tempfile::tempdir().unwrap();
    let o = run_in(Some(empty.path()), BIN, &["check"], "");
    assert_eq!(o.code, Some(1), "{}", o.stderr);
}
