//! `datalith query|transact|pull --connect URL`: the local commands against a server.

use std::process::{Command, Output};

use crate::server;

fn datalith(args: &[&str], token: Option<&str>) -> Output {
    let mut c = Command::new(env!("CARGO_BIN_EXE_datalith"));
    c.args(args).env_remove("DATALITH_TOKEN");
    if let Some(t) = token {
        c.env("DATALITH_TOKEN", t);
    }
    c.output().unwrap()
}

fn text(o: &Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    )
}

#[test]
fn query_transact_and_pull_connect_to_a_server() {
    let dir = tempfile::tempdir().unwrap();
    let tokens = dir.path().join("tokens");
    std::fs::write(
        &tokens,
        format!("w write people {}\n", crate::auth::sha256_hex("w-secret")),
    )
    .unwrap();
    let s = server::start_in(
        dir.path(),
        &["people"],
        &["--tokens", tokens.to_str().unwrap()],
    )
    .expect("starts");
    let url = s.base.clone();
    let schema = r#"[{:db/ident :person/email :db/valueType :db.type/string :db/cardinality :db.cardinality/one :db/unique :db.unique/identity}
                     {:db/ident :person/name :db/valueType :db.type/string :db/cardinality :db.cardinality/one}]"#;
    let cases: &[(&[&str], Option<&str>, i32, &str)] = &[
        (
            &["transact", "--connect", &url, "people", schema],
            Some("w-secret"),
            0,
            ":tx ",
        ),
        (
            &[
                "transact",
                "--connect",
                &url,
                "people",
                r#"[{:db/id "ann" :person/email "ann@x" :person/name "Ann"}]"#,
            ],
            Some("w-secret"),
            0,
            r#":tempids {"ann" "#,
        ),
        (
            &[
                "query",
                "--connect",
                &url,
                "people",
                "[:find ?n :in $ ?e :where [?p :person/email ?e] [?p :person/name ?n]]",
                r#""ann@x""#,
            ],
            Some("w-secret"),
            0,
            r#"#{["Ann"]}"#,
        ),
        (
            &[
                "query",
                "--connect",
                &url,
                "people",
                "-f",
                "table",
                "[:find ?e ?n :where [?p :person/email ?e] [?p :person/name ?n]]",
            ],
            Some("w-secret"),
            0,
            "ann@x | Ann",
        ),
        (
            &[
                "pull",
                "--connect",
                &url,
                "people",
                "[:person/name]",
                r#"[:person/email "ann@x"]"#,
            ],
            Some("w-secret"),
            0,
            r#"{:person/name "Ann"}"#,
        ),
        // The server's refusals, with its code; a refused token exits 3, as a refused file does.
        (
            &[
                "query",
                "--connect",
                &url,
                "people",
                "[:find ?e :where [?e :person/name]]",
            ],
            None,
            3,
            "unauthorized",
        ),
        (
            &[
                "query",
                "--connect",
                &url,
                "nope",
                "[:find ?e :where [?e :person/name]]",
            ],
            Some("w-secret"),
            1,
            "unknown-database",
        ),
        (
            &[
                "transact",
                "--connect",
                &url,
                "people",
                "-f",
                "edn",
                r#"[{:person/email "bob@x" :person/name 1}]"#,
            ],
            Some("w-secret"),
            1,
            ":server-error :db.error/wrong-type-for-attribute",
        ),
    ];
    let mut failures = Vec::new();
    for (args, token, code, want) in cases {
        let o = datalith(args, *token);
        let out = text(&o);
        if o.status.code() != Some(*code) || !out.contains(want) {
            failures.push(format!("{args:?}: exit {:?}: {out}", o.status.code()));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}
