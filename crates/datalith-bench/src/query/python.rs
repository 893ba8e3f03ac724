//! `--python`: workload Q from Python, through the Datalith wheel, Datalevin's Python package
//! and Python's own `sqlite3`, each run by `bench/peers/python/query.py` in its own process
//! under the external peers' protocol (`external.rs`).
//!
//! The harness restates nothing: the bench writes a spec file (the timing plan, every task's
//! Datalog text, `:in` value and SQL, the schema, the write tasks' SQL statements) from the
//! same constants the Rust peers run, and the harness reads it.

use std::path::Path;

use serde_json::{json, Value as Json};

use super::tasks::{Kind, Task};
use super::timing::{Plan, READ_WARM_MIN};
use super::{datalith, sqlite};
use crate::common::BenchError;

/// The Python peers, in column order. `-nosync` variants run the write tasks only (their
/// reads would be the durable store's again), as the Rust `-nosync` peers do.
pub const PEERS: [&str; 5] = [
    "datalith-py",
    "datalith-py-nosync",
    "datalevin-py",
    "sqlite3-py",
    "sqlite3-py-nosync",
];

/// The peers `--python` runs by default: the Rust API beside them, for the conversion cost.
/// Datalevin's package starts a JVM (seconds): not with `--quick`.
pub fn default_peers(quick: bool) -> Vec<String> {
    std::iter::once("datalith")
        .chain(PEERS)
        .filter(|p| !(quick && *p == "datalevin-py"))
        .map(str::to_string)
        .collect()
}

/// Whether `peer` is one of the Python peers.
pub fn is_python(peer: &str) -> bool {
    PEERS.contains(&peer)
}

/// Whether a Python peer runs `task` at all.
pub fn runs(peer: &str, task: &Task) -> bool {
    task.kind == Kind::Write || !peer.ends_with("-nosync")
}

/// What `bench/peers/install.sh` installs for `peer` (none: Python's own `sqlite3`).
pub fn install_target(peer: &str) -> Option<&'static str> {
    match peer {
        "datalith-py" | "datalith-py-nosync" => Some("datalith-py"),
        "datalevin-py" => Some("datalevin"),
        _ => None,
    }
}

/// Writes the spec file the harness reads.
pub fn write_spec(path: &Path, tasks: &[Task], plan: Plan) -> Result<(), BenchError> {
    let spec = spec(tasks, plan)?;
    let text = serde_json::to_string_pretty(&spec)?;
    std::fs::write(path, text).map_err(BenchError::io(path))
}

fn spec(tasks: &[Task], plan: Plan) -> Result<Json, BenchError> {
    let mut rows = Vec::new();
    for t in tasks {
        let (sql, sql_param) = match sqlite::sql(t.name) {
            Some((text, param)) => (Json::from(text), param.map(sql_json).unwrap_or(Json::Null)),
            None => (Json::Null, Json::Null),
        };
        let input_value = match t.input {
            Some(text) => vec![edn_json(text)?],
            None => Vec::new(),
        };
        rows.push(json!({
            "name": t.name,
            "kind": match t.kind { Kind::Read => "read", Kind::Write => "write" },
            "query": t.query,
            "input_value": input_value,
            "sql": sql,
            "sql_param": sql_param,
        }));
    }
    Ok(json!({
        "cap_secs": plan.cap_secs,
        "min_runs": plan.min_runs,
        "read_warm_min": READ_WARM_MIN,
        "user_partition_start": ::datalith::raw::USER_PARTITION_START,
        "schema_edn": datalith::SCHEMA,
        "sql": {
            "schema": sqlite::SCHEMA,
            "insert": sqlite::INSERT,
            "add1_insert": sqlite::ADD_1_INSERT,
            "add1_updates": sqlite::ADD_1_UPDATES,
            "delete": sqlite::DELETE,
            "count": sqlite::CELL_COUNT,
        },
        "tasks": rows,
    }))
}

/// A task's `:in` value (EDN text) as the JSON the harness passes to each library.
fn edn_json(text: &str) -> Result<Json, BenchError> {
    use ::datalith::edn::{read_one, Edn};
    let bad = |why: &str| BenchError::Arg {
        arg: "--tasks",
        message: format!("input {text}: {why}"),
    };
    match read_one(text).map_err(|e| bad(&e.to_string()))? {
        Edn::Long(n) => Ok(Json::from(n)),
        Edn::String(s) => Ok(Json::from(s.to_string())),
        _ => Err(bad("only longs and strings cross to the Python harness")),
    }
}

fn sql_json(v: rusqlite::types::Value) -> Json {
    use rusqlite::types::Value as V;
    match v {
        V::Integer(n) => Json::from(n),
        V::Text(s) => Json::from(s),
        V::Real(x) => Json::from(x),
        V::Null | V::Blob(_) => Json::Null,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_spec_carries_every_task_with_the_rust_peers_texts() {
        let plan = Plan {
            secs: 1.0,
            cap_secs: 2.0,
            min_runs: 3,
            warm_secs: 0.0,
            warm_min: 1,
        };
        let spec = spec(&super::super::tasks::ALL, plan).unwrap();
        let tasks = spec["tasks"].as_array().unwrap();
        assert_eq!(tasks.len(), super::super::tasks::ALL.len());
        let by = |n: &str| tasks.iter().find(|t| t["name"] == n).unwrap().clone();
        let cases: [(&str, Json, Json, Json); 4] = [
            (
                "q1",
                json!([]),
                json!("SELECT id FROM people WHERE name = 'Ivan'"),
                Json::Null,
            ),
            (
                "qpred2",
                json!([50000]),
                json!("SELECT id, salary FROM people WHERE salary > ?1"),
                json!(50000),
            ),
            (
                "lookup-raw",
                json!([]),
                by("lookup-q")["sql"].clone(),
                json!("Ivan"),
            ),
            ("init", json!([]), Json::Null, Json::Null),
        ];
        for (name, input, sql, param) in cases {
            let t = by(name);
            assert_eq!(t["input_value"], input, "{name}");
            assert_eq!(t["sql"], sql, "{name}");
            assert_eq!(t["sql_param"], param, "{name}");
        }
        assert_eq!(
            by("q1")["query"],
            json!("[:find ?e :where [?e :name \"Ivan\"]]")
        );
        assert_eq!(spec["sql"]["add1_updates"].as_array().unwrap().len(), 4);
        assert_eq!(spec["min_runs"], json!(3));
    }

    #[test]
    fn nosync_variants_run_writes_only() {
        let q1 = super::super::tasks::by_name("q1").unwrap();
        let add = super::super::tasks::by_name("add-5").unwrap();
        let cases = [
            ("datalith-py", true, true),
            ("datalith-py-nosync", false, true),
            ("sqlite3-py-nosync", false, true),
            ("datalevin-py", true, true),
        ];
        for (peer, read, write) in cases {
            assert_eq!((runs(peer, &q1), runs(peer, &add)), (read, write), "{peer}");
        }
        assert!(!default_peers(true).contains(&"datalevin-py".to_string()));
        assert_eq!(default_peers(false).len(), 6);
    }
}
