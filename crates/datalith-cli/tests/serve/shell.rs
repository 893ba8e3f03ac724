//! `datalith shell URL`: the shell on a server, driven as a script on standard input (the
//! terminal side, line editing and Ctrl-C, is the local shell's: `tests/shell_tty.rs`).

use std::io::Write;
use std::process::{Command, Stdio};

use crate::server;

/// Runs `datalith ARGS` with `script` on standard input: (exit code, stdout, stderr).
fn shell(args: &[&str], script: &str) -> (i32, String, String) {
    let mut child = Command::new(env!("CARGO_BIN_EXE_datalith"))
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    child
        .stdin
        .take()
        .unwrap()
        .write_all(script.as_bytes())
        .unwrap();
    let out = child.wait_with_output().unwrap();
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).to_string(),
        String::from_utf8_lossy(&out.stderr).to_string(),
    )
}

#[test]
fn the_shell_queries_transacts_and_pulls_through_a_server() {
    let s = server::start(&["people", "films"], &[]);
    let url = s.url("/db/people");
    let script = r#"
[{:db/ident :person/name :db/valueType :db.type/string :db/cardinality :db.cardinality/one :db/unique :db.unique/identity}]
[{:person/name "Ann"}
 {:person/name "Bob"}]
.mode edn
[:find (count ?e) . :where [?e :person/name]]
{:query [:find ?n . :in $ ?n :where [_ :person/name ?n]] :args ["Bob"]}
.pull [:person/name] [:person/name "Ann"]
[:find ?x . :where [?x :no/such]]
.dump
.dbs
.use films
.stat
.use nowhere
"#;
    let (code, out, err) = shell(&["shell", &url], script);
    // Three inputs fail (an unknown attribute, a local-only command, an unknown database),
    // each said on stderr, and the script goes on to its end: exit 1.
    assert_eq!(code, 1, "{out}\n{err}");
    let lines: Vec<&str> = out.lines().collect();
    let want: &[&str] = &[
        // the schema's and the people's transactions print their reports
        "{:tx ",
        "{:tx ",
        "2",
        r#""Bob""#,
        r#"{:person/name "Ann"}"#,
        "films",
        "people",
    ];
    assert!(lines.len() > want.len(), "{out}");
    for (line, want) in lines.iter().zip(want) {
        assert!(line.starts_with(want), "{line:?} wanted {want:?}\n{out}");
    }
    // `.stat` after `.use films` is the other database's.
    assert!(lines[want.len()].starts_with(r#"{:name "films""#), "{out}");
    let errors: Vec<&str> = err.lines().collect();
    assert_eq!(errors.len(), 3, "{err}");
    assert!(errors[0].contains(":db.error/not-an-entity"), "{err}");
    assert!(
        errors[1].contains(".dump works on a local database"),
        "{err}"
    );
    assert!(
        errors[2].contains(":datalith.error/unknown-database"),
        "{err}"
    );

    // What the shell wrote is in the database, for any client.
    let (code, out, _) = shell(
        &["shell", &url],
        ".mode edn\n[:find [?n ...] :where [_ :person/name ?n]]\n",
    );
    assert_eq!(code, 0);
    let mut names: Vec<&str> = out.trim().trim_matches(['[', ']']).split(' ').collect();
    names.sort();
    assert_eq!(names, [r#""Ann""#, r#""Bob""#]);

    // Several databases and none in the URL: `.use` picks; a bad URL is refused at once.
    let (code, out, err) = shell(
        &[&s.base],
        "[:find ?x . :in ?x]\n.use people\n.mode edn\n{:query [:find ?x . :in $ ?x] :args [1]}\n",
    );
    assert_eq!(code, 1, "{out}\n{err}");
    assert!(err.contains("no database chosen"), "{err}");
    assert_eq!(out.trim(), "1", "{err}");
    let (code, _, err) = shell(&["shell", &s.url("/people")], "");
    assert_eq!(code, 1);
    assert!(err.contains("its path is not /db/NAME"), "{err}");
}

#[test]
fn the_shell_on_a_server_shows_the_schema_and_writes_and_reads_files() {
    let s = server::start(&["people"], &[]);
    let url = s.url("/db/people");
    let dir = tempfile::tempdir().unwrap();
    let saved = dir.path().join("names.edn");
    let script_file = dir.path().join("more.txt");
    std::fs::write(
        &script_file,
        ".mode edn\n[:find (count ?e) . :where [?e :person/name]]\n",
    )
    .unwrap();
    let script = format!(
        r#"[{{:db/ident :person/name :db/valueType :db.type/string :db/cardinality :db.cardinality/one :db/unique :db.unique/identity :db/doc "a name"}}
 {{:db/ident :person/pet :db/valueType :db.type/ref :db/cardinality :db.cardinality/many :db/isComponent true}}
 {{:db/ident :person/age :db/valueType :db.type/long :db/cardinality :db.cardinality/one :db/index true}}]
[{{:person/name "Ann"}}]
.schema
.attrs
.output {}
.mode edn
[:find ?n . :where [_ :person/name ?n]]
.output
.read {}
.mode table
.explain [:find ?n :where [?p :person/name "Ann"] [?p :person/name ?n]]
.open elsewhere
"#,
        saved.display(),
        script_file.display()
    );
    let (code, out, err) = shell(&["shell", &url], &script);
    // One input fails: `.open` needs a local file.
    assert_eq!(code, 1, "{out}\n{err}");
    assert!(err.contains(".open works on a local database"), "{err}");
    for want in [
        // .schema: tx data that recreates the attributes, what is set and only that
        r#"[{:db/ident :person/name :db/valueType :db.type/string :db/cardinality :db.cardinality/one :db/unique :db.unique/identity :db/doc "a name"}"#,
        r#" {:db/ident :person/pet :db/valueType :db.type/ref :db/cardinality :db.cardinality/many :db/isComponent true}"#,
        r#" {:db/ident :person/age :db/valueType :db.type/long :db/cardinality :db.cardinality/one :db/index true}]"#,
    ] {
        assert!(out.lines().any(|l| l == want), "{want}\n{out}");
    }
    // .attrs: a table row per attribute with its counts
    let row = out
        .lines()
        .find(|l| l.starts_with(":person/name") && l.contains("| identity"))
        .unwrap_or_else(|| panic!("{out}"));
    let cells: Vec<&str> = row.split('|').map(str::trim).collect();
    assert!(cells.contains(&"string") && cells.contains(&"1"), "{row}");
    assert!(
        out.lines()
            .any(|l| l.starts_with(":person/pet") && l.contains("| component")),
        "{out}"
    );
    // .output sent the query's answer to the file, not the screen; .read ran the file.
    assert_eq!(std::fs::read_to_string(&saved).unwrap().trim(), r#""Ann""#);
    assert!(!out.lines().any(|l| l == r#""Ann""#), "{out}");
    assert!(out.lines().any(|l| l == "1"), "{out}");
    // .explain: the server's plan as the local shell shows it, a step a row.
    let step = out
        .lines()
        .find(|l| l.starts_with(r#"[?p :person/name "Ann"]"#))
        .unwrap_or_else(|| panic!("{out}"));
    let cells: Vec<&str> = step.split('|').map(str::trim).collect();
    // index, estimated, actual, where the clause was written in the line typed
    assert_eq!(cells[1..], ["AVE", "1", "1", "1:18"], "{step}");
    assert!(out.contains("result: 1 row"), "{out}");
}
