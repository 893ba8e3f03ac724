//! `datalith log`: each printed line read back as EDN is its transaction as the library
//! reported it; `--since`/`--until` choose the range; a missing database is an error.

use std::path::Path;
use std::process::Command;

use datalith::edn::{edn_from_value, read_one, Edn};
use datalith::tx::TxReport;
use datalith::{Database, DbOptions};

const BIN: &str = env!("CARGO_BIN_EXE_datalith");

const TXNS: [&str; 5] = [
    r#"[{:db/ident :name :db/valueType :db.type/string :db/cardinality :db.cardinality/one :db/unique :db.unique/identity}
        {:db/ident :tag :db/valueType :db.type/keyword :db/cardinality :db.cardinality/many}]"#,
    r#"[{:db/id "a" :name "Ann" :tag [:x :y]} {:db/id "b" :name "Bob"}]"#,
    r#"[[:db/retract [:name "Ann"] :tag :y]]"#,
    r#"[[:db/retractEntity [:name "Bob"]]]"#,
    r#"[[:db/add [:name "Ann"] :name "Anna"]]"#,
];

/// (exit code, stdout, stderr) of `datalith args...`.
fn run(args: &[&str]) -> (i32, String, String) {
    let o = Command::new(BIN).args(args).output().expect("run datalith");
    (
        o.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&o.stdout).into_owned(),
        String::from_utf8_lossy(&o.stderr).into_owned(),
    )
}

/// The line `datalith log` must print for `report`, as EDN.
fn expected(db: &Database, report: &TxReport) -> Edn {
    let snapshot = db.db().unwrap();
    let data = report
        .tx_data
        .iter()
        .map(|d| {
            let ident = snapshot.schema().get(d.a).unwrap().ident.clone();
            Edn::Vector(vec![
                Edn::Long(d.e as i64),
                Edn::Keyword(ident),
                edn_from_value(&d.v),
                Edn::Long(report.tx as i64),
                Edn::Bool(d.added),
            ])
        })
        .collect();
    let instant = report
        .tx_data
        .iter()
        .find(|d| d.e == report.tx && matches!(d.v, datalith::codec::Value::Instant(_)))
        .map(|d| edn_from_value(&d.v))
        .unwrap();
    Edn::Map(vec![
        (Edn::kw(":tx"), Edn::Long(report.tx as i64)),
        (Edn::kw(":instant"), instant),
        (Edn::kw(":data"), Edn::Vector(data)),
    ])
}

fn make(dir: &Path) -> (Vec<Edn>, Vec<u64>) {
    let db = Database::open(dir, DbOptions::default()).unwrap();
    let reports: Vec<TxReport> = TXNS.iter().map(|t| db.transact(*t).unwrap()).collect();
    (
        reports.iter().map(|r| expected(&db, r)).collect(),
        reports.iter().map(|r| r.tx).collect(),
    )
}

#[test]
fn log_prints_each_transaction_as_one_edn_line() {
    let dir = tempfile::tempdir().unwrap();
    let (lines, t) = make(dir.path());
    let db = dir.path().to_str().unwrap();
    let s = |i: usize| t[i].to_string();
    let after_last = (t[4] + 1).to_string();
    // (extra arguments, the transactions (indexes into TXNS) printed)
    let cases: Vec<(Vec<String>, Vec<usize>)> = vec![
        (vec![], vec![0, 1, 2, 3, 4]),
        (vec!["--since".into(), s(2)], vec![2, 3, 4]),
        (
            vec!["--since".into(), s(1), "--until".into(), s(3)],
            vec![1, 2],
        ),
        (vec!["--until".into(), s(1)], vec![0]),
        (vec!["--since".into(), after_last], vec![]),
        (vec!["--since".into(), s(3), "--until".into(), s(3)], vec![]),
    ];
    for (extra, want) in cases {
        let mut args = vec!["log", db];
        args.extend(extra.iter().map(String::as_str));
        let (code, out, err) = run(&args);
        assert_eq!(code, 0, "{args:?}: {err}");
        let got: Vec<Edn> = out.lines().map(|l| read_one(l).unwrap()).collect();
        let want: Vec<Edn> = want.iter().map(|&i| lines[i].clone()).collect();
        assert_eq!(got, want, "{args:?}");
    }
}

#[test]
fn log_of_a_missing_database_is_an_error() {
    let dir = tempfile::tempdir().unwrap();
    let missing = dir.path().join("nothing-here");
    let (code, out, err) = run(&["log", missing.to_str().unwrap()]);
    assert_eq!((code, out.as_str()), (2, ""), "{err}");
    assert!(err.contains("nothing-here"), "{err}");
    assert!(!missing.exists(), "log created the database");
}
