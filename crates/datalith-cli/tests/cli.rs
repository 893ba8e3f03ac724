//! The built `datalith` binary, run as scripts run it: subcommands, exit codes, output
//! formats, dump and reload, and `check` on a deliberately corrupted index.

use std::path::Path;

use datalith::edn::{read_one, Edn};

mod common;

const BIN: &str = env!("CARGO_BIN_EXE_datalith");

struct Out {
    code: i32,
    stdout: String,
    stderr: String,
}

fn run(args: &[&str], stdin: &str) -> Out {
    let o = common::run_in(None, BIN, args, stdin);
    Out {
        code: o.code.unwrap_or(-1),
        stdout: o.stdout,
        stderr: o.stderr,
    }
}

fn ok(args: &[&str]) -> String {
    let o = run(args, "");
    assert_eq!(o.code, 0, "{args:?}: {}", o.stderr);
    o.stdout
}

const SCHEMA: &str = r#"[{:db/ident :name :db/valueType :db.type/string :db/cardinality :db.cardinality/one :db/unique :db.unique/identity}
 {:db/ident :age :db/valueType :db.type/long :db/cardinality :db.cardinality/one}
 {:db/ident :tag :db/valueType :db.type/keyword :db/cardinality :db.cardinality/many}
 {:db/ident :friend :db/valueType :db.type/ref :db/cardinality :db.cardinality/many}
 {:db/ident :address :db/valueType :db.type/ref :db/cardinality :db.cardinality/one :db/isComponent true}
 {:db/ident :city :db/valueType :db.type/string :db/cardinality :db.cardinality/one}]"#;

const DATA: &str = r#"[{:db/id "ann" :name "Ann" :age 30 :tag [:admin :dev] :friend "bob" :address {:city "Oslo"}}
 {:db/id "bob" :name "Bob" :age 25 :friend "ann"}
 {:name "Cy, \"the\" third" :age 41}]"#;

fn sample(dir: &Path) -> String {
    let db = dir.join("db");
    let db_s = db.to_str().unwrap().to_string();
    ok(&["transact", &db_s, SCHEMA]);
    let report = read_one(&ok(&["transact", &db_s, DATA])).unwrap();
    let Edn::Map(pairs) = report else {
        panic!("{report:?}")
    };
    let tempids = &pairs
        .iter()
        .find(|(k, _)| *k == Edn::kw(":tempids"))
        .unwrap()
        .1;
    let Edn::Map(t) = tempids else { panic!() };
    let names: Vec<_> = t.iter().map(|(k, _)| k.clone()).collect();
    assert_eq!(
        names,
        vec![Edn::String("ann".into()), Edn::String("bob".into())]
    );
    db_s
}

/// A large result in EDN is printed as the engine makes it (past its first 64 KiB): the
/// same items as the whole result; other results as before.
#[test]
fn a_large_edn_result_is_printed_as_it_is_made() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("big");
    let db = datalith::Database::open(&path, datalith::DbOptions::default()).unwrap();
    db.transact(
        "[{:db/ident :s :db/valueType :db.type/string :db/cardinality :db.cardinality/one}]",
    )
    .unwrap();
    let maps: Vec<String> = (0..6_000)
        .map(|i| format!("{{:s \"item {i:05} with some text after it\"}}"))
        .collect();
    db.transact(format!("[{}]", maps.join(" ")).as_str())
        .unwrap();
    let query = "[:find ?e ?s :where [?e :s ?s]]";
    let whole = db.db().unwrap().q(query, &[]).unwrap();
    drop(db);
    let path = path.to_str().unwrap();
    let printed = ok(&["query", path, query]);
    assert!(printed.len() > 200_000, "{}", printed.len());
    let sorted = |e: Edn| -> Vec<String> {
        let Edn::Set(items) = e else {
            panic!("not a set")
        };
        let mut v: Vec<String> = items.iter().map(|x| x.to_string()).collect();
        v.sort();
        v
    };
    assert_eq!(sorted(read_one(&printed).unwrap()), sorted(whole));
    // `[?x ...]` as a vector; a count whole.
    let values = read_one(&ok(&["query", path, "[:find [?s ...] :where [_ :s ?s]]"])).unwrap();
    assert!(
        matches!(&values, Edn::Vector(v) if v.len() == 6_000),
        "{values}"
    );
    assert_eq!(
        ok(&["query", path, "[:find (count ?e) . :where [?e :s]]"]),
        "6000\n"
    );
}

#[test]
fn query_in_every_format() {
    let dir = tempfile::tempdir().unwrap();
    let db = sample(dir.path());
    let q = "[:find ?n ?a :where [?e :name ?n] [?e :age ?a] [(< ?a 40)]]";
    let cases: &[(&str, &str)] = &[
        ("edn", ""),
        ("json", ""),
        ("csv", "?n,?a\nAnn,30\nBob,25\n"),
        (
            "table",
            "?n  | ?a\n----+---\nAnn | 30\nBob | 25\n(2 rows)\n",
        ),
    ];
    for (format, want) in cases {
        let out = ok(&["query", &db, q, "--format", format]);
        match *format {
            // EDN reads back to the same values (set order is the engine's: compared as sets).
            "edn" => {
                let items = |e: Edn| -> Vec<String> {
                    let Edn::Set(v) = e else {
                        panic!("not a set: {e}")
                    };
                    let mut v: Vec<String> = v.iter().map(|x| x.to_string()).collect();
                    v.sort();
                    v
                };
                assert_eq!(
                    items(read_one(&out).unwrap()),
                    items(read_one(r#"#{["Ann" 30] ["Bob" 25]}"#).unwrap())
                )
            }
            "json" => {
                let t = out.trim();
                assert!(
                    t == r#"[["Ann",30],["Bob",25]]"# || t == r#"[["Bob",25],["Ann",30]]"#,
                    "{t}"
                );
            }
            _ => assert_eq!(out, *want, "{format}"),
        }
    }
    // Inputs bind to :in after $; the query may come from a file.
    let qfile = dir.path().join("q.edn");
    std::fs::write(
        &qfile,
        "[:find ?n . :in $ ?min :where [?e :age ?a] [(> ?a ?min)] [?e :name ?n]]",
    )
    .unwrap();
    let out = ok(&["query", &db, &format!("@{}", qfile.display()), "35"]);
    assert_eq!(
        read_one(&out).unwrap(),
        Edn::String("Cy, \"the\" third".into())
    );
    // A string with a quote and a comma survives CSV.
    let out = ok(&[
        "query",
        &db,
        "[:find ?n :where [?e :age 41] [?e :name ?n]]",
        "-f",
        "csv",
    ]);
    assert_eq!(out, "?n\n\"Cy, \"\"the\"\" third\"\n");
    // Query from standard input.
    let o = run(
        &["query", &db, "-"],
        "[:find (count ?e) . :where [?e :name]]",
    );
    assert_eq!((o.code, o.stdout.trim()), (0, "3"));
}

#[test]
fn exit_codes() {
    let dir = tempfile::tempdir().unwrap();
    let db = sample(dir.path());
    let missing = dir.path().join("missing");
    let missing = missing.to_str().unwrap();
    let cases: &[(&[&str], i32, &str)] = &[
        (&["query", &db, "[:find ?e :where [?e :name]]"], 0, ""),
        (
            &["query", &db, "[:find ?e :where [?e :name]"],
            1,
            "input:1:1: unclosed",
        ),
        (&["query", &db, "[:find ?x :where [?e :name]]"], 1, "?x"),
        (&["query", &db, "[:where [?e :name]]"], 1, "not a query"),
        (
            &["query", missing, "[:find ?e :where [?e :name]]"],
            2,
            "no database",
        ),
        (
            &["transact", &db, "[{:nope 1}]"],
            1,
            "unknown attribute :nope",
        ),
        (&["transact", &db, "[{:name 1}]"], 1, "wrong value type"),
        (&["transact", &db, "{:a"], 1, "input:1:"),
        (
            &["pull", &db, "[*]", "[:age 30]"],
            1,
            "Attribute values not unique: :age in [:age 30]",
        ),
        (&["pull", &db, "[*]", "[:nope 1]"], 1, "no attribute :nope"),
        (
            &["pull", &db, "[*]", "\"Ann\""],
            1,
            "cannot read \"Ann\" as a keyword",
        ),
        (
            &["pull", &db, "[*]", "1.5"],
            1,
            "not an entity id, ident or lookup ref",
        ),
        (
            &["pull", &db, "[{:friend 0}]", "[:name \"Ann\"]"],
            1,
            "invalid recursion limit 0",
        ),
        (&["stat", missing], 2, "no database"),
        (&["check", missing], 2, "no database"),
        (&["--frobnicate"], 1, "unexpected argument"),
    ];
    for (args, code, err) in cases {
        let o = run(args, "");
        assert_eq!(o.code, *code, "{args:?}: {}", o.stderr);
        assert!(o.stderr.contains(err), "{args:?}: {}", o.stderr);
    }
    let notdb = dir.path().join("file");
    std::fs::write(&notdb, "not a database").unwrap();
    let o = run(
        &[
            "query",
            notdb.to_str().unwrap(),
            "[:find ?e :where [?e :a]]",
        ],
        "",
    );
    assert_eq!(o.code, 2, "{}", o.stderr);
}

#[test]
fn pull_stat_and_copy() {
    let dir = tempfile::tempdir().unwrap();
    let db = sample(dir.path());
    let out = ok(&[
        "pull",
        &db,
        "[:name {:friend [:name]} {:address [:city]}]",
        "[:name \"Ann\"]",
    ]);
    assert_eq!(
        read_one(&out).unwrap(),
        read_one(r#"{:name "Ann" :friend [{:name "Bob"}] :address {:city "Oslo"}}"#).unwrap()
    );
    // The entity by lookup ref, ident or id; nil (as Datomic's pull) when it names none.
    let ann = ok(&["query", &db, "[:find ?e . :where [?e :name \"Ann\"]]"]);
    let cases: &[(&str, &str, &str)] = &[
        (
            "[:name :age]",
            "[:name \"Bob\"]",
            r#"{:name "Bob" :age 25}"#,
        ),
        ("[:name]", ann.trim(), r#"{:name "Ann"}"#),
        ("[:db/ident]", ":tag", "{:db/ident :tag}"),
        ("[:db/ident]", ":name", "{:db/ident :name}"),
        ("[*]", "[:name \"Nobody\"]", "nil"),
        ("[*]", ":no/such-ident", "nil"),
        (
            "[:name {:friend 1}]",
            "[:name \"Ann\"]",
            r#"{:name "Ann" :friend [{:name "Bob"}]}"#,
        ),
    ];
    for (pattern, eid, want) in cases {
        let out = ok(&["pull", &db, pattern, eid]);
        assert_eq!(
            read_one(&out).unwrap(),
            read_one(want).unwrap(),
            "{pattern} {eid}: {out}"
        );
    }
    let o = shell(
        &db,
        ".pull [:name {:friend [:name]}] [:name \"Bob\"]\n.pull [:name] :nope\n",
    );
    assert_eq!(o.code, 0, "{}", o.stderr);
    assert!(
        o.stdout
            .contains(r#"{:name "Bob", :friend [{:name "Ann"}]}"#),
        "{}",
        o.stdout
    );
    assert!(o.stdout.contains("nil"), "{}", o.stdout);
    let stat = ok(&["stat", &db]);
    assert!(
        stat.lines()
            .any(|l| l.starts_with(":friend ") && l.contains("| ref ") && l.contains("| many |")),
        "{stat}"
    );
    // The data file's free pages and the log's length (issue 57).
    for line in ["free pages  ", "log         "] {
        assert!(
            stat.lines().any(|l| l.starts_with(line)),
            "{line:?}: {stat}"
        );
    }
    let copy = dir.path().join("copy");
    let copy = copy.to_str().unwrap();
    ok(&["copy", &db, copy]);
    assert_eq!(
        ok(&["query", copy, "[:find (count ?e) . :where [?e :name]]"]).trim(),
        "3"
    );
    assert_eq!(run(&["copy", &db, copy], "").code, 1);
    assert!(ok(&["check", copy]).starts_with("ok:"));
}

fn shell(db: &str, script: &str) -> Out {
    run(&[db], script)
}

/// The rows of `stat`'s attribute table (ident, type, cardinality, datoms, distinct).
fn attr_stats(db: &str) -> Vec<String> {
    ok(&["stat", db])
        .lines()
        .filter(|l| l.starts_with(':'))
        .map(str::to_string)
        .collect()
}

/// The dump with every tempid blanked, sorted by line.
fn dump_shape(db: &str) -> Vec<String> {
    let text = ok(&["export", db]);
    let mut lines: Vec<String> = text
        .lines()
        .map(|l| {
            let mut out = String::new();
            let mut rest = l;
            while let Some(i) = rest.find("\"e") {
                out.push_str(&rest[..i]);
                let tail = &rest[i + 2..];
                let digits = tail.chars().take_while(char::is_ascii_digit).count();
                out.push_str("\"E");
                rest = &tail[digits..];
            }
            out.push_str(rest);
            out
        })
        .collect();
    lines.sort();
    lines
}

#[test]
fn dump_then_read_gives_the_same_datoms() {
    let dir = tempfile::tempdir().unwrap();
    let db = sample(dir.path());
    let dump = dir.path().join("dump.edn");
    let dump_s = dump.to_str().unwrap();
    let o = shell(&db, &format!(".dump {dump_s}\n"));
    assert_eq!(o.code, 0, "{}", o.stderr);
    let fresh = dir.path().join("fresh");
    let fresh = fresh.to_str().unwrap();
    let o = shell(fresh, &format!(".read {dump_s}\n"));
    assert_eq!(o.code, 0, "{}", o.stderr);
    // Same datoms: the same attributes with the same datom and distinct-value counts, the
    // same answers to queries over values and refs, and a dump of the same shape (entity ids
    // may differ: the dump names entities by tempids).
    assert_eq!(attr_stats(&db), attr_stats(fresh));
    assert_eq!(dump_shape(&db), dump_shape(fresh));
    for q in [
        "[:find ?n ?t :where [?e :name ?n] [?e :tag ?t]]",
        "[:find ?n ?f :where [?e :name ?n] [?e :friend ?x] [?x :name ?f]]",
        "[:find ?n ?c :where [?e :name ?n] [?e :address ?a] [?a :city ?c]]",
    ] {
        assert_eq!(ok(&["query", &db, q]), ok(&["query", fresh, q]), "{q}");
    }
    assert!(ok(&["check", fresh]).starts_with("ok:"));
    // `export` to a file and `import` of that file do the same.
    let other = dir.path().join("other");
    let other = other.to_str().unwrap();
    ok(&["dump", &db, dir.path().join("d2.edn").to_str().unwrap()]);
    ok(&["import", other, dir.path().join("d2.edn").to_str().unwrap()]);
    assert_eq!(attr_stats(&db), attr_stats(other));
}

#[test]
fn check_catches_a_deleted_ave_entry() {
    let dir = tempfile::tempdir().unwrap();
    let db = sample(dir.path());
    assert!(ok(&["check", &db]).starts_with("ok:"));
    {
        let database = datalith::Database::open(&db, datalith::DbOptions::default()).unwrap();
        let snap = database.db().unwrap();
        // `:name` is unique, so in AVE whichever layout the database keeps.
        let name = snap
            .attr(&datalith::codec::Keyword::parse(":name"))
            .unwrap()
            .id;
        let Edn::Long(bob) = snap
            .q("[:find ?e . :where [?e :name \"Bob\"]]", &[])
            .unwrap()
        else {
            panic!()
        };
        drop(snap);
        let mut key = Vec::new();
        datalith::store::reader::attr_value_bytes(
            name,
            &datalith::codec::Value::string("Bob"),
            &mut key,
        );
        let ave = database
            .env()
            .table("ave", datalith::kv::TableKind::List)
            .unwrap();
        database
            .env()
            .transact_kv(vec![datalith::kv::KvOp::list_remove(
                &ave,
                key,
                (bob as u64).to_be_bytes(),
            )])
            .unwrap();
    }
    let o = run(&["check", &db], "");
    println!("$ datalith check DB   (exit {})\n{}", o.code, o.stdout);
    assert_eq!(o.code, 2, "{}", o.stdout);
    assert!(
        o.stdout
            .contains(" :name \"Bob\"] is in EAV but missing from AVE"),
        "{}",
        o.stdout
    );
    assert!(
        o.stdout.contains("statistics of :name: recorded 3 datoms"),
        "{}",
        o.stdout
    );
    assert!(o.stdout.contains("FAILED"), "{}", o.stdout);
}

#[test]
fn csv_import_with_a_mapping() {
    let dir = tempfile::tempdir().unwrap();
    let db = sample(dir.path());
    let csv = dir.path().join("people.csv");
    std::fs::write(
        &csv,
        "who,years,tags,ignored\nDee,33,a;b,x\n\"Eve, Jr\",,c,y\n",
    )
    .unwrap();
    let o = run(
        &[
            "import",
            &db,
            csv.to_str().unwrap(),
            "--map",
            "who=:name",
            "--map",
            "years=:age",
            "--map",
            "tags=:tag",
            "--map",
            "ignored=-",
        ],
        "",
    );
    assert_eq!(o.code, 0, "{}", o.stderr);
    let out = ok(&[
        "query",
        &db,
        "[:find ?n ?t :where [?e :tag ?t] [?e :name ?n] [(not= ?n \"Ann\")]]",
        "-f",
        "csv",
    ]);
    assert_eq!(out, "?n,?t\nDee,:a\nDee,:b\n\"Eve, Jr\",:c\n");
    let bad = dir.path().join("bad.csv");
    std::fs::write(&bad, "name,age\nZed,old\n").unwrap();
    let o = run(&["import", &db, bad.to_str().unwrap()], "");
    assert_eq!(o.code, 1);
    assert!(o.stderr.contains("line 2: column 2"), "{}", o.stderr);
}

#[test]
fn a_script_goes_on_after_errors() {
    let dir = tempfile::tempdir().unwrap();
    let db = sample(dir.path());
    let script = "[:find ?e\n :where [?e :name \"Ann\"]]]\n.mode edn\n.nope\n[{:nope 1}]\n{:find [?n] :where [[?e :age 25] [?e :name ?n]]}\n[:find ?n\n :where\n [?e :age 30] [?e :name ?n]]\n[:find ?n\n :where [?e :age ?n]\n";
    let o = shell(&db, script);
    assert_eq!(o.code, 1);
    // The library prints the offending tx form in its own way: compare up to it.
    let errors: Vec<&str> = o
        .stderr
        .lines()
        .map(|l| l.split(" in ").next().unwrap())
        .collect();
    assert_eq!(
        errors,
        vec![
            "error: stdin:2:26: unbalanced ]",
            "error: unknown command .nope; did you mean .now? (.help lists them)",
            "error: unknown attribute :nope",
            "error: stdin:10:1: unclosed collection: expected ]",
        ],
        "{}",
        o.stderr
    );
    assert_eq!(o.stdout, "#{[\"Bob\"]}\n#{[\"Ann\"]}\n");
}

#[test]
fn demo_creates_the_database_and_tours_it() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("demo");
    let path_s = path.to_str().unwrap();
    let out = ok(&["demo", "--path", path_s]);
    for want in [
        "Creating the demo database",
        "1. How many people are called Ivan?",
        "(6 rows)",
        "Pull a project",
        ":project/name \"benchmarks\"",
        "Explain",
        "result: ",
        "Try it yourself in the shell:",
    ] {
        assert!(out.contains(want), "{want:?} missing from:\n{out}");
    }
    let count = ok(&["query", path_s, "[:find (count ?e) . :where [?e :name]]"]);
    assert_eq!(count.trim(), "20000");
    let graph = ok(&[
        "query",
        path_s,
        "[:find ?t :where [?p :project/name \"release\"] [?p :project/tasks ?x] [?x :task/title ?t]]",
        "-f",
        "csv",
    ]);
    assert_eq!(graph, "?t\nchangelog\ntag 0.1.0\n");
    assert!(ok(&["check", path_s]).starts_with("ok:"));
    // A second run reuses the database.
    let again = ok(&["demo", "--path", path_s]);
    assert!(again.starts_with("Using the demo database"), "{again}");
}

#[test]
fn dot_commands_in_a_script() {
    let dir = tempfile::tempdir().unwrap();
    let db = sample(dir.path());
    let p = |name: &str| dir.path().join(name).to_str().unwrap().to_string();
    std::fs::write(p("more.csv"), "name,age\nDee,52\n").unwrap();
    let script = format!(
        ".import {csv}\n.schema\n.attrs\n.explain [:find ?n\n :where [?e :age 52] [?e :name ?n]]\n\
         .mode json\n.output {out}\n[:find ?n :where [?e :age 52] [?e :name ?n]]\n.output\n\
         .backup {backup}\n.mode csv\n.timer on\n[:find ?a :where [?e :name \"Dee\"] [?e :age ?a]]\n\
         .quit\n[:find ?n :where [?e :name ?n]]\n",
        csv = p("more.csv"),
        out = p("out.json"),
        backup = p("backup"),
    );
    let o = shell(&db, &script);
    assert_eq!(o.code, 0, "{}", o.stderr);
    for want in [
        "imported 3 datoms in 1 transaction from",
        "{:db/ident :friend :db/valueType :db.type/ref :db/cardinality :db.cardinality/many}",
        ":age",
        "result: 1 row",
        "backed up to",
        "?a\n52\ntime: ",
    ] {
        assert!(
            o.stdout.contains(want),
            "{want:?} missing from:\n{}",
            o.stdout
        );
    }
    assert!(o
        .stdout
        .lines()
        .any(|l| l.starts_with(":address ") && l.contains("| component |")));
    // The plan in query terms: variable names and attribute idents.
    assert!(o.stdout.contains("[?e :age 52] "), "{}", o.stdout);
    // Each step says where (line:column of the query) the clause it ran was written.
    assert!(
        o.stdout
            .lines()
            .any(|l| l.starts_with("[?e :age 52] ") && l.ends_with("| 2:9")),
        "{}",
        o.stdout
    );
    // And which index it read: the constant pattern runs first, by a walk of `:age` (no
    // `:db/index`, so no AVE entries: `AEV`); the other, on its entity, reads the
    // attribute's whole AVE range (4 datoms: cheaper than a lookup).
    assert!(
        o.stdout
            .lines()
            .any(|l| l.starts_with("[?e :age 52] ") && l.contains("| AEV ")),
        "{}",
        o.stdout
    );
    assert!(
        o.stdout
            .lines()
            .any(|l| l.starts_with("[?e :name ?n] ") && l.contains("| AVE SCAN ")),
        "{}",
        o.stdout
    );
    assert!(o.stdout.contains("[?e :name ?n] "), "{}", o.stdout);
    assert!(!o.stdout.contains("Const("), "{}", o.stdout);
    // Nothing after .quit ran.
    assert!(!o.stdout.contains("Ann"), "{}", o.stdout);
    assert_eq!(
        std::fs::read_to_string(p("out.json")).unwrap(),
        "[[\"Dee\"]]\n"
    );
    assert!(ok(&["check", &p("backup")]).starts_with("ok:"));
}

/// `--format edn|json` prints an error as one map with its category; without it, as a line.
#[test]
fn errors_print_as_data_with_format() {
    let dir = tempfile::tempdir().unwrap();
    let db = sample(dir.path());
    // args (the format appended), exit code, :db/error, anomaly, a field and its EDN value
    let cases: &[(&[&str], i32, &str, &str, (&str, &str))] = &[
        (
            &[
                "transact",
                &db,
                r#"[[:db/add "n" :name "x"] [:db/add "n" :age "old"]]"#,
            ],
            1,
            ":db.error/wrong-type-for-attribute",
            ":cognitect.anomalies/incorrect",
            (":value", r#""old""#),
        ),
        (
            &["transact", &db, r#"[[:db/cas [:name "Ann"] :age 31 32]]"#],
            1,
            ":db.error/cas-failed",
            ":cognitect.anomalies/conflict",
            (":v", "30"),
        ),
        (
            &["query", &db, "[:find ?x :where [?e :age ?a] [(> ?x 1)]]"],
            1,
            ":db.error/insufficient-binding",
            ":cognitect.anomalies/incorrect",
            (":clause", "[(> ?x 1)]"),
        ),
        (
            &["query", &db, "[:find ?x :where [?e :age ?a] (]"],
            1,
            ":datalith.error/invalid-edn",
            ":cognitect.anomalies/incorrect",
            (":line", "1"),
        ),
        (
            // Pull of an entity that names none is nil (Datomic); a lookup ref on an
            // attribute that is not unique is an error.
            &["pull", &db, "[*]", "[:age 30]"],
            1,
            ":db.error/lookup-ref-attr-not-unique",
            ":cognitect.anomalies/incorrect",
            (":lookup-ref", "[:age 30]"),
        ),
        (
            &[
                "query",
                "/nonexistent/datalith-db",
                "[:find ?e :where [?e :age]]",
            ],
            2,
            ":datalith.error/io",
            ":cognitect.anomalies/not-found",
            (":path", r#""/nonexistent/datalith-db""#),
        ),
    ];
    for (args, code, error, anomaly, (field, value)) in cases {
        let edn_args: Vec<&str> = args.iter().copied().chain(["--format", "edn"]).collect();
        let o = run(&edn_args, "");
        assert_eq!(o.code, *code, "{args:?}: {}", o.stderr);
        assert_eq!(
            o.stderr.lines().count(),
            1,
            "{args:?}: one line: {}",
            o.stderr
        );
        let Ok(Edn::Map(pairs)) = read_one(&o.stderr) else {
            panic!("{args:?}: not an EDN map: {}", o.stderr)
        };
        let get = |k: &str| {
            pairs
                .iter()
                .find(|(key, _)| *key == Edn::kw(k))
                .map(|p| &p.1)
        };
        assert_eq!(get(":db/error"), Some(&Edn::kw(error)), "{}", o.stderr);
        assert_eq!(
            get(":cognitect.anomalies/category"),
            Some(&Edn::kw(anomaly)),
            "{}",
            o.stderr
        );
        assert!(
            matches!(get(":message"), Some(Edn::String(m)) if !m.is_empty()),
            "{}",
            o.stderr
        );
        assert_eq!(get(field), Some(&read_one(value).unwrap()), "{}", o.stderr);

        let json_args: Vec<&str> = args.iter().copied().chain(["--format", "json"]).collect();
        let o = run(&json_args, "");
        assert_eq!(o.code, *code, "{args:?}: {}", o.stderr);
        let json: serde_json::Value = serde_json::from_str(o.stderr.trim())
            .unwrap_or_else(|e| panic!("{args:?}: not JSON ({e}): {}", o.stderr));
        assert_eq!(json[":db/error"], *error, "{}", o.stderr);
        assert_eq!(
            json[":cognitect.anomalies/category"], *anomaly,
            "{}",
            o.stderr
        );
        assert!(json[":message"].is_string(), "{}", o.stderr);
        assert!(!json[*field].is_null(), "{}", o.stderr);

        // Without --format the error stays one line for people.
        let o = run(args, "");
        assert_eq!(o.code, *code);
        assert!(o.stderr.starts_with("error: "), "{}", o.stderr);
    }
}

#[test]
fn accept_log_damage_is_taken_after_a_command_and_by_the_shell() {
    // The flag only matters for a log damaged inside (the library's `kv_log_tail` tests the
    // damage itself); here: where it is accepted, and that a healthy database opens with it.
    let dir = tempfile::tempdir().unwrap();
    let db = sample(dir.path());
    let query = "[:find (count ?e) . :where [?e :name]]";
    assert_eq!(
        ok(&["query", "--accept-log-damage", &db, query]).trim(),
        "3"
    );
    let shell = run(
        &["--accept-log-damage", &db],
        &format!(".mode edn\n{query}\n"),
    );
    assert_eq!(shell.code, 0, "{}", shell.stderr);
    assert_eq!(shell.stdout.trim(), "3");
}

#[test]
fn check_looks_at_the_log_too() {
    // Closed cleanly, the log holds nothing to replay (damage inside a log is found by the
    // same look; the library's `kv_log_tail` tests it byte by byte).
    let dir = tempfile::tempdir().unwrap();
    let db = sample(dir.path());
    let out = ok(&["check", &db]);
    assert!(
        out.lines().any(|l| l == "log: whole, nothing to replay"),
        "{out}"
    );
}

#[test]
fn check_on_a_log_damaged_inside_fails_from_its_first_line() {
    // A power cut's copy of a live database: the data file with the meta pages of its last
    // checkpoint, and a log whose middle record of three (each acknowledged) is damaged. The
    // indexes alone are consistent, so only the log fails the check: its verdict must lead.
    const PAGE: usize = 4096;
    let dir = tempfile::tempdir().unwrap();
    let live = dir.path().join("live");
    let mut options = datalith::DbOptions::default();
    options.env.log_checkpoint_interval = std::time::Duration::from_secs(3600);
    options.env.log_checkpoint_bytes = u64::MAX;
    options.env.log_checkpoint_freed_bytes = u64::MAX;
    let database = datalith::Database::open(&live, options).unwrap();
    database.transact(SCHEMA).unwrap();
    database.env().checkpoint().unwrap();
    let meta = std::fs::read(live.join("data.mdb")).unwrap()[..2 * PAGE].to_vec();
    let log_path = live.join(datalith::kv::wal::LOG_FILE);
    let mut logs = vec![std::fs::read(&log_path).unwrap()];
    for name in ["Ann", "Bob", "Cid"] {
        let tx = format!(r#"[{{:name "{name}" :age 1}}]"#);
        database.transact(tx.as_str()).unwrap();
        logs.push(std::fs::read(&log_path).unwrap());
    }
    let mut disk = std::fs::read(live.join("data.mdb")).unwrap();
    disk[..2 * PAGE].copy_from_slice(&meta);
    // The middle record: the bytes its write changed.
    let changed: Vec<usize> = (0..logs[2].len())
        .filter(|&i| logs[1][i] != logs[2][i])
        .collect();
    let copy = |name: &str, log: &[u8]| {
        let to = dir.path().join(name);
        std::fs::create_dir(&to).unwrap();
        std::fs::write(to.join("data.mdb"), &disk).unwrap();
        std::fs::write(to.join(datalith::kv::wal::LOG_FILE), log).unwrap();
        to
    };
    let whole = copy("whole", &logs[3]);
    let mut log = logs[3].clone();
    log[changed[changed.len() / 2]] ^= 0x5a;
    let broken = copy("broken", &log);
    drop(database);

    let o = run(&["check", whole.to_str().unwrap()], "");
    assert_eq!(o.code, 0, "{}{}", o.stdout, o.stderr);
    assert!(o.stdout.starts_with("ok: "), "{}", o.stdout);
    assert!(
        o.stdout
            .lines()
            .any(|l| l
                == "log: 3 records after its checkpoint, replayed at the next open for writing"),
        "{}",
        o.stdout
    );

    let o = run(&["check", broken.to_str().unwrap()], "");
    assert_eq!(o.code, 2, "{}{}", o.stdout, o.stderr);
    assert!(o.stdout.starts_with("FAILED: "), "{}", o.stdout);
    assert!(
        o.stdout.lines().any(|l| l.starts_with("log: DAMAGED: ")),
        "{}",
        o.stdout
    );
}
