//! Creating and deleting databases (`--create-in`, the admin role), and their coming back
//! after a restart.

use crate::client::{edn_row as row, run_table};
use crate::server;

const A: (&str, &str) = ("Authorization", "Bearer admin-secret");
const W: (&str, &str) = ("Authorization", "Bearer writer-secret");

#[test]
fn admins_create_and_delete_databases_in_create_in() {
    let dir = tempfile::tempdir().unwrap();
    let tokens = dir.path().join("tokens");
    std::fs::write(
        &tokens,
        format!(
            "root admin * {}\nwriter write scratch {}\n",
            crate::auth::sha256_hex("admin-secret"),
            crate::auth::sha256_hex("writer-secret"),
        ),
    )
    .unwrap();
    let created = dir.path().join("created");
    let args = [
        "--tokens",
        tokens.to_str().unwrap(),
        "--create-in",
        created.to_str().unwrap(),
    ];
    let s = server::start_in(dir.path(), &["people"], &args).expect("starts");
    const SCHEMA: &str = r#"{:tx-data "[{:db/ident :n :db/valueType :db.type/long :db/cardinality :db.cardinality/one}]"}"#;
    let rows = [
        row(
            "POST",
            "/dbs",
            &[W],
            r#"{:name "scratch"}"#,
            403,
            &[":datalith.error/forbidden"],
        ),
        row("POST", "/dbs", &[], r#"{:name "scratch"}"#, 401, &[]),
        row(
            "POST",
            "/dbs",
            &[A],
            r#"{:name "scratch"}"#,
            200,
            &[r#"{:database "scratch", :created true}"#],
        ),
        row(
            "POST",
            "/dbs",
            &[A],
            r#"{:name "scratch"}"#,
            409,
            &[":datalith.error/database-exists"],
        ),
        row(
            "POST",
            "/dbs",
            &[A],
            r#"{:name "../escape"}"#,
            400,
            &["cannot name a database"],
        ),
        // Longer than a directory's name may be (was a 500, the file system's error).
        row(
            "POST",
            "/dbs",
            &[A],
            format!(r#"{{:name "{}"}}"#, "a".repeat(300)).leak(),
            400,
            &["cannot name a database: 1 to 128"],
        ),
        row(
            "POST",
            "/dbs",
            &[A],
            r#"{:name "people"}"#,
            409,
            &[":datalith.error/database-exists"],
        ),
        row("GET", "/dbs", &[A], "", 200, &[r#"["people" "scratch"]"#]),
        // The writer's grant named it before it existed.
        row("POST", "/db/scratch/transact", &[W], SCHEMA, 200, &[]),
        row(
            "POST",
            "/db/scratch/transact",
            &[W],
            "{:tx-data [{:n 1}]}",
            200,
            &[],
        ),
        row(
            "DELETE",
            "/db/scratch",
            &[W],
            "",
            403,
            &[":datalith.error/forbidden"],
        ),
        row(
            "DELETE",
            "/db/people",
            &[A],
            "",
            400,
            &["given on the command line"],
        ),
    ];
    run_table(&s, &rows);
    assert!(created.join("scratch").join("data.mdb").is_file());
    // Stopped and started again, the created database is served again, with its data.
    let (status, stderr) = s.stop();
    assert!(status.success(), "{stderr}");
    let s = server::start_in(dir.path(), &["people"], &args).expect("starts again");
    let rows = [
        row(
            "POST",
            "/db/scratch/q",
            &[W],
            r#"{:query "[:find ?n . :where [_ :n ?n]]"}"#,
            200,
            &[":result 1"],
        ),
        row(
            "DELETE",
            "/db/scratch",
            &[A],
            "",
            200,
            &[r#"{:database "scratch", :deleted true}"#],
        ),
        row(
            "POST",
            "/db/scratch/q",
            &[W],
            r#"{:query "[:find ?n . :where [_ :n ?n]]"}"#,
            404,
            &[":datalith.error/unknown-database"],
        ),
        row(
            "DELETE",
            "/db/scratch",
            &[A],
            "",
            404,
            &[":datalith.error/unknown-database"],
        ),
    ];
    run_table(&s, &rows);
    assert!(!created.join("scratch").exists());
}

#[test]
fn without_create_in_no_database_is_created() {
    let s = server::start(&["people"], &[]);
    let rows = [row(
        "POST",
        "/dbs",
        &[],
        r#"{:name "x"}"#,
        400,
        &["--create-in"],
    )];
    run_table(&s, &rows);
}

#[test]
fn a_server_with_only_create_in_starts_empty_and_creates() {
    let dir = tempfile::tempdir().unwrap();
    let created = dir.path().join("created");
    let s = server::start_in(dir.path(), &[], &["--create-in", created.to_str().unwrap()])
        .expect("starts");
    let rows = [
        row("GET", "/dbs", &[], "", 200, &[":databases []"]),
        row(
            "POST",
            "/dbs",
            &[],
            r#"{:name "first"}"#,
            200,
            &[":created true"],
        ),
        row("GET", "/dbs", &[], "", 200, &[r#":databases ["first"]"#]),
    ];
    run_table(&s, &rows);
}

/// `--value-index declared`: the databases the server makes keep AVE entries for declared
/// attributes alone (`stat` says so, and leaves out the distinct values nothing counts);
/// queries answer as ever, by value too.
#[test]
fn a_server_makes_databases_that_keep_ave_for_declared_attributes() {
    let dir = tempfile::tempdir().unwrap();
    let created = dir.path().join("created");
    let args = [
        "--create-in",
        created.to_str().unwrap(),
        "--value-index",
        "declared",
    ];
    let s = server::start_in(dir.path(), &["people"], &args).expect("starts");
    const SCHEMA: &str = r#"{:tx-data "[{:db/ident :v :db/valueType :db.type/string :db/cardinality :db.cardinality/one}
      {:db/ident :n :db/valueType :db.type/long :db/cardinality :db.cardinality/one :db/index true}]"}"#;
    let rows = [
        row("POST", "/dbs", &[], r#"{:name "fresh"}"#, 200, &[]),
        row("POST", "/db/fresh/transact", &[], SCHEMA, 200, &[]),
        row(
            "POST",
            "/db/fresh/transact",
            &[],
            r#"{:tx-data "[{:v \"a\" :n 1} {:v \"b\" :n 2} {:v \"a\" :n 3}]"}"#,
            200,
            &[],
        ),
        row(
            "POST",
            "/db/fresh/q",
            &[],
            r#"{:query "[:find [?n ...] :where [?e :v \"a\"] [?e :n ?n]]"}"#,
            200,
            &["[1 3]"],
        ),
        row(
            "GET",
            "/db/fresh/stat",
            &[],
            "",
            200,
            &[
                ":value-index :declared",
                ":db/ident :v, :db/valueType :db.type/string, :db/cardinality :db.cardinality/one, :datoms 3}",
                ":db/index true, :datoms 3, :distinct 3}",
            ],
        ),
        // A database the server opened new at its start is made so too.
        row(
            "GET",
            "/db/people/stat",
            &[],
            "",
            200,
            &[":value-index :declared"],
        ),
    ];
    run_table(&s, &rows);
    let (status, stderr) = s.stop();
    assert!(status.success(), "{stderr}");
}
