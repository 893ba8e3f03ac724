//! The transaction log as data (`Database::tx_range`): each transaction's id, instant and net
//! datoms, as its report gave them, by range of transaction ids; kept across reopening, and
//! not kept when the options say so.

use datalith::edn::read_one;
use datalith::store::StoreError;
use datalith::tx::log::TxLogEntry;
use datalith::tx::TxReport;
use datalith::{Database, DbOptions};

fn log(db: &Database, start: Option<u64>, end: Option<u64>) -> Vec<TxLogEntry> {
    db.tx_range(start, end)
        .unwrap()
        .collect::<Result<Vec<_>, _>>()
        .unwrap()
}

fn transact(db: &Database, edn: &str) -> TxReport {
    db.transact(datalith::TxData::from_edn(&read_one(edn).unwrap()).unwrap())
        .unwrap()
}

const TXNS: [&str; 4] = [
    r#"[{:db/ident :person/name :db/valueType :db.type/string :db/cardinality :db.cardinality/one :db/unique :db.unique/identity}]"#,
    r#"[{:db/id "a" :person/name "Ann"} {:db/id "b" :person/name "Bob"}]"#,
    r#"[[:db/add [:person/name "Ann"] :person/name "Anna"]]"#,
    r#"[[:db/retractEntity [:person/name "Bob"]]]"#,
];

#[test]
fn tx_range_yields_each_transaction_as_its_report_gave_it() {
    let dir = tempfile::tempdir().unwrap();
    let reports: Vec<TxReport> = {
        let db = Database::open(dir.path(), DbOptions::default()).unwrap();
        TXNS.iter().map(|t| transact(&db, t)).collect()
    };
    let db = Database::open(dir.path(), DbOptions::default()).unwrap();
    let all = log(&db, None, None);
    let txs: Vec<u64> = reports.iter().map(|r| r.tx).collect();
    assert_eq!(all.iter().map(|e| e.tx).collect::<Vec<_>>(), txs);
    for (entry, report) in all.iter().zip(&reports) {
        assert_eq!(entry.datoms, report.tx_data, "tx {}", entry.tx);
        assert!(entry.instant.is_some(), "tx {} has no instant", entry.tx);
    }
    // (start, end) -> the transactions (by index into TXNS) in the range.
    let cases: [(Option<u64>, Option<u64>, &[usize]); 5] = [
        (Some(txs[1]), Some(txs[3]), &[1, 2]),
        (Some(txs[3]), None, &[3]),
        (None, Some(txs[1]), &[0]),
        (Some(txs[2]), Some(txs[2]), &[]),
        (Some(txs[3] + 1), None, &[]),
    ];
    for (start, end, want) in cases {
        let got: Vec<u64> = log(&db, start, end).iter().map(|e| e.tx).collect();
        let want: Vec<u64> = want.iter().map(|&i| txs[i]).collect();
        assert_eq!(got, want, "range {start:?}..{end:?}");
    }
    let retraction = &all[3].datoms;
    assert!(
        !retraction.is_empty() && retraction.iter().any(|d| !d.added),
        "{retraction:?}"
    );
}

#[test]
fn a_database_that_skips_the_log_keeps_none() {
    let dir = tempfile::tempdir().unwrap();
    let mut options = DbOptions::default();
    options.skip_tx_log = true;
    let db = Database::open(dir.path(), options).unwrap();
    for t in TXNS {
        transact(&db, t);
    }
    assert_eq!(log(&db, None, None), vec![]);
    assert!(!db.keeps_tx_log());
}

/// `check` replays a complete log against EAV: a clean database passes; each damage is found
/// as a log problem.
#[test]
fn check_verifies_the_log_against_the_indexes() {
    use datalith::admin::Inconsistency;
    use datalith::kv::{KvOp, TableKind};
    let log_problems = |db: &Database| -> Vec<String> {
        db.db()
            .unwrap()
            .check()
            .unwrap()
            .problems
            .into_iter()
            .filter(|p| matches!(p, Inconsistency::TxLog { .. }))
            .map(|p| p.to_string())
            .collect()
    };
    // (what is damaged, text the problem must contain)
    let cases: [(&str, &str); 3] = [
        ("nothing", ""),
        ("an entry's bytes", "does not decode"),
        ("an EAV entry", "that EAV lacks"),
    ];
    for (damage, expected) in cases {
        let dir = tempfile::tempdir().unwrap();
        let db = Database::open(dir.path(), DbOptions::default()).unwrap();
        let reports: Vec<TxReport> = TXNS.iter().map(|t| transact(&db, t)).collect();
        let env = db.env();
        match damage {
            "an entry's bytes" => {
                let log = env.table("tx_log", TableKind::Plain).unwrap();
                let key = reports[1].tx.to_be_bytes().to_vec();
                env.transact_kv(vec![KvOp::put(&log, key, vec![0, 0, 0, 9, 1])])
                    .unwrap();
            }
            "an EAV entry" => {
                let eav = env.table("eav", TableKind::List).unwrap();
                // "Anna", still current (tx 2 renamed Ann).
                let d = reports[2]
                    .tx_data
                    .iter()
                    .find(|d| d.a != 7 && d.added)
                    .unwrap();
                let mut value = d.a.to_be_bytes().to_vec();
                datalith::codec::encode(&d.v, &mut value);
                env.transact_kv(vec![KvOp::list_remove(
                    &eav,
                    d.e.to_be_bytes().to_vec(),
                    value,
                )])
                .unwrap();
            }
            _ => {}
        }
        let found = log_problems(&db);
        match expected {
            "" => assert_eq!(found, Vec::<String>::new(), "{damage}"),
            text => assert!(
                found.iter().any(|p| p.contains(text)),
                "{damage}: {found:?}"
            ),
        }
    }
}

/// The schema and transactions of the table tests below: retractions, retractEntity,
/// cardinality-many, and a transaction that only retracts.
const WIDER: [&str; 6] = [
    r#"[{:db/ident :name :db/valueType :db.type/string :db/cardinality :db.cardinality/one :db/unique :db.unique/identity}
        {:db/ident :tag :db/valueType :db.type/keyword :db/cardinality :db.cardinality/many}]"#,
    r#"[{:db/id "a" :name "Ann" :tag [:x :y :z]} {:db/id "b" :name "Bob" :tag [:x]}]"#,
    r#"[[:db/retract [:name "Ann"] :tag :y] [:db/add [:name "Ann"] :tag :w]]"#,
    r#"[[:db/retract [:name "Ann"] :tag :z]]"#,
    r#"[[:db/retractEntity [:name "Bob"]]]"#,
    r#"[{:db/id [:name "Ann"] :tag [:x]}]"#,
];

#[test]
fn tx_range_bounds_as_a_table() {
    let dir = tempfile::tempdir().unwrap();
    let db = Database::open(dir.path(), DbOptions::default()).unwrap();
    let reports: Vec<TxReport> = WIDER.iter().map(|t| transact(&db, t)).collect();
    let t: Vec<u64> = reports.iter().map(|r| r.tx).collect();
    // (start, end) -> the transactions (indexes into WIDER) the range yields.
    let cases: Vec<(Option<u64>, Option<u64>, Vec<usize>)> = vec![
        (None, None, vec![0, 1, 2, 3, 4, 5]),
        (Some(t[0]), None, vec![0, 1, 2, 3, 4, 5]),
        (Some(0), Some(u64::MAX), vec![0, 1, 2, 3, 4, 5]),
        (None, Some(t[0]), vec![]),
        (None, Some(t[0] + 1), vec![0]),
        (Some(t[2]), Some(t[4]), vec![2, 3]),
        (Some(t[2] + 1), Some(t[4] + 1), vec![3, 4]),
        (Some(t[5]), None, vec![5]),
        (Some(t[5] + 1), None, vec![]),
        (Some(t[3]), Some(t[3]), vec![]),
        (Some(t[4]), Some(t[2]), vec![]),
        (Some(u64::MAX), None, vec![]),
    ];
    for (start, end, want) in cases {
        let got: Vec<u64> = log(&db, start, end).iter().map(|e| e.tx).collect();
        let want: Vec<u64> = want.iter().map(|&i| t[i]).collect();
        assert_eq!(got, want, "range {start:?}..{end:?}");
    }
    // Each entry is its report's datoms, with the report's instant.
    for (entry, report) in log(&db, None, None).iter().zip(&reports) {
        assert_eq!(entry.datoms, report.tx_data, "tx {}", entry.tx);
        let instant = report
            .tx_data
            .iter()
            .find_map(|d| match (&d.v, d.e == report.tx) {
                (datalith::codec::Value::Instant(ms), true) => Some(*ms),
                _ => None,
            });
        assert_eq!(entry.instant, instant, "tx {}", entry.tx);
        assert!(entry.instant.is_some(), "tx {} has no instant", entry.tx);
    }
    // (transaction, datoms retracted besides the instant, datoms asserted besides it)
    let shapes: [(usize, usize, usize); 5] =
        [(1, 0, 6), (2, 1, 1), (3, 1, 0), (4, 2, 0), (5, 0, 0)];
    let all = log(&db, None, None);
    for (i, retracted, asserted) in shapes {
        let user: Vec<_> = all[i].datoms.iter().filter(|d| d.e != t[i]).collect();
        let got = (
            user.iter().filter(|d| !d.added).count(),
            user.iter().filter(|d| d.added).count(),
        );
        assert_eq!(got, (retracted, asserted), "tx {i}: {user:?}");
    }
}

/// Garbage under one transaction's key: that entry is a typed error naming it; the entries
/// around it still read.
#[test]
fn a_damaged_entry_is_a_typed_error_naming_its_tx() {
    use datalith::kv::{KvOp, TableKind};
    // (what is written under tx 2's key, words the error detail must contain)
    let cases: [(Vec<u8>, &str); 6] = [
        (vec![], "ends early"),
        (vec![0, 0], "ends early"),
        (vec![0, 0, 0, 9, 1], "datom count"),
        (
            vec![0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 1, 7, 0, 0, 0, 0],
            "added flag",
        ),
        (
            vec![0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 1, 1, 0, 0, 0, 200],
            "ends early",
        ),
        (vec![0, 0, 0, 0, 5], "bytes after"),
    ];
    for (bytes, words) in cases {
        let dir = tempfile::tempdir().unwrap();
        let db = Database::open(dir.path(), DbOptions::default()).unwrap();
        let reports: Vec<TxReport> = WIDER.iter().map(|t| transact(&db, t)).collect();
        let damaged = reports[2].tx;
        let env = db.env();
        let table = env.table("tx_log", TableKind::Plain).unwrap();
        env.transact_kv(vec![KvOp::put(
            &table,
            damaged.to_be_bytes().to_vec(),
            bytes.clone(),
        )])
        .unwrap();
        let items: Vec<_> = db.tx_range(None, None).unwrap().collect();
        assert_eq!(items.len(), WIDER.len(), "{bytes:?}");
        for (i, item) in items.into_iter().enumerate() {
            match (i, item) {
                (2, Err(StoreError::CorruptTxLogEntry { tx, detail })) => {
                    assert_eq!(tx, damaged, "{bytes:?}");
                    assert!(detail.contains(words), "{bytes:?}: {detail}");
                }
                (2, other) => panic!("{bytes:?}: {other:?}"),
                (_, Ok(entry)) => assert_eq!(entry.tx, reports[i].tx),
                (_, Err(e)) => panic!("{bytes:?}: tx {i}: {e}"),
            }
        }
    }
}
