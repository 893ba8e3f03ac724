//! The transaction log as data (`Database::tx_range`): each transaction's id, instant and net
//! datoms, as its report gave them, by range of transaction ids; kept across reopening, and
//! not kept when the options say so.

use datalith::edn::read_one;
use datalith::tx::edn::tx_data_from_edn;
use datalith::tx::TxReport;
use datalith::{Database, DbOptions};

fn transact(db: &Database, edn: &str) -> TxReport {
    db.transact(tx_data_from_edn(&read_one(edn).unwrap()).unwrap())
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
    let all = db.tx_range(None, None).unwrap();
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
        let got: Vec<u64> = db
            .tx_range(start, end)
            .unwrap()
            .iter()
            .map(|e| e.tx)
            .collect();
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
    assert_eq!(db.tx_range(None, None).unwrap(), vec![]);
}

/// `check` replays a complete log against EAV: a clean database passes; each damage is found
/// as a log problem.
#[test]
fn check_verifies_the_log_against_the_indexes() {
    use datalith::api::check::Inconsistency;
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
