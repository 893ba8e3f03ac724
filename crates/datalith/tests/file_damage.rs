//! Damaged data files: opening and checking them returns a typed error, never a crash, and
//! never creates or changes a file. Each case damages a copy of one real database.

use std::path::{Path, PathBuf};

use datalith::edn::read_one;
use datalith::kv::{file, Durability, KvError};
use datalith::tx::edn::tx_data_from_edn;
use datalith::{Database, DbOptions};

/// A database with several pages per index, list keys with many values (value trees), long
/// values (overflow pages), and retractions (free pages), closed.
fn build(dir: &Path, durability: Durability) {
    let db = Database::open(dir, DbOptions::with_durability(durability)).unwrap();
    let tx = |text: &str| {
        db.transact(tx_data_from_edn(&read_one(text).unwrap()).unwrap())
            .unwrap();
    };
    tx(
        "[{:db/ident :name :db/valueType :db.type/string :db/unique :db.unique/identity}
         {:db/ident :group :db/valueType :db.type/long}
         {:db/ident :tag :db/valueType :db.type/keyword :db/cardinality :db.cardinality/many}
         {:db/ident :text :db/valueType :db.type/string}]",
    );
    for round in 0..6 {
        let mut t = String::from("[");
        for i in 0..400 {
            let n = round * 400 + i;
            t.push_str(&format!(
                "{{:name \"person {n:05}\" :group {} :tag [:t{} :t{}]}}",
                n % 7,
                n % 3,
                n % 11
            ));
        }
        t.push(']');
        tx(&t);
    }
    let long = "x".repeat(9000);
    tx(&format!("[{{:name \"person 00001\" :text \"{long}\"}} {{:name \"person 00002\" :text \"{long}y\"}}]"));
    tx("[[:db/retract [:name \"person 00003\"] :group 3] [:db/retractEntity [:name \"person 00004\"]]]");
}

fn sample(durability: Durability) -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("db");
    build(&db, durability);
    (dir, db)
}

#[test]
fn sound_databases_pass_the_walk() {
    for durability in [Durability::Durable, Durability::WriteMapAsync] {
        let (_d, db) = sample(durability);
        let s = file::check_structure(&db.join("data.mdb"))
            .unwrap_or_else(|e| panic!("{durability:?}: {e}"));
        let names: Vec<&str> = s.tables.iter().map(|(n, _)| n.as_str()).collect();
        for t in ["eav", "ave", "store_meta", "giants", "__datalith_meta"] {
            assert!(names.contains(&t), "{durability:?}: {names:?}");
        }
        assert!(s.pages_in_use > 20, "{s:?}");
        file::check_catalog(&db.join("data.mdb")).unwrap();
    }
}

#[test]
#[ignore]
fn dump_page() {
    let (_d, db) = sample(Durability::Durable);
    let bytes = std::fs::read(db.join("data.mdb")).unwrap();
    let p: usize = std::env::var("PAGE").unwrap().parse().unwrap();
    let page = &bytes[p * 4096..(p + 1) * 4096];
    for (i, c) in page
        .chunks(32)
        .enumerate()
        .skip(std::env::var("SKIP").map_or(0, |s| s.parse().unwrap()))
    {
        eprintln!("{:4}: {:02x?}", i * 32, c);
    }
}
