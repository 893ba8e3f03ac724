//! The small databases the targets run against: one read-only sample database shared by the
//! query and pull targets, and the bytes of a sound data file for the damaged-file target.
//!
//! Each database lives in a temporary directory that is removed as soon as it is open (LMDB
//! keeps using the unlinked files), so a fuzzer killed at any moment leaves nothing behind.

use std::sync::OnceLock;

use datalith::edn::read_one;
use datalith::kv::Durability;
use datalith::{Database, DbOptions};

/// The schema of every fixture database: each value type, both cardinalities, a unique
/// identity, refs and a component.
pub const SCHEMA: &str = r#"[
 {:db/ident :name :db/valueType :db.type/string :db/cardinality :db.cardinality/one :db/unique :db.unique/identity}
 {:db/ident :age :db/valueType :db.type/long :db/cardinality :db.cardinality/one :db/index true}
 {:db/ident :score :db/valueType :db.type/double :db/cardinality :db.cardinality/one}
 {:db/ident :tag :db/valueType :db.type/keyword :db/cardinality :db.cardinality/many}
 {:db/ident :friend :db/valueType :db.type/ref :db/cardinality :db.cardinality/many}
 {:db/ident :address :db/valueType :db.type/ref :db/cardinality :db.cardinality/one :db/isComponent true}
 {:db/ident :city :db/valueType :db.type/string :db/cardinality :db.cardinality/one}
 {:db/ident :born :db/valueType :db.type/instant :db/cardinality :db.cardinality/one}
 {:db/ident :id :db/valueType :db.type/uuid :db/cardinality :db.cardinality/one :db/unique :db.unique/value}
 {:db/ident :alive :db/valueType :db.type/boolean :db/cardinality :db.cardinality/one}
 {:db/ident :nick :db/valueType :db.type/string :db/cardinality :db.cardinality/one}]"#;

/// The sample data: a handful of people with friends (a cycle), addresses and every type.
pub const DATA: &str = r#"[
 {:db/id "ann" :name "Ann" :age 31 :score 1.5 :tag [:a :b] :friend ["bob" "cid"] :address {:city "Oslo"} :alive true :born #inst "1990-01-02T03:04:05.006-00:00" :id #uuid "6f0c2b4a-1d1e-4c6b-9b3f-0a1b2c3d4e5f"}
 {:db/id "bob" :name "Bob" :age 42 :score -0.25 :tag [:b] :friend ["ann"] :address {:city "Rome"} :alive false :nick "bobby"}
 {:db/id "cid" :name "Cid" :age 31 :tag [:c :a] :friend ["dee"]}
 {:db/id "dee" :name "Dee" :age 7 :friend ["ann"] :score 9.0}
 {:name "Eve" :age 99 :nick ""}]"#;

/// Opens a fresh database in a temporary directory (removed once open) with the fixture
/// schema and data.
pub fn fresh_database() -> Database {
    let dir = tempfile::tempdir().expect("temporary directory");
    let db = Database::open(dir.path(), DbOptions::with_durability(Durability::NoSync))
        .expect("open a fresh database");
    for text in [SCHEMA, DATA] {
        let data =
            datalith::TxData::from_edn(&read_one(text).expect("fixture EDN")).expect("tx data");
        db.transact(data).expect("fixture transaction");
    }
    db
}

/// The shared sample database (query and pull targets only read it).
pub fn sample() -> &'static Database {
    static SAMPLE: OnceLock<Database> = OnceLock::new();
    SAMPLE.get_or_init(fresh_database)
}

/// The bytes of a sound `data.mdb` holding the fixture, several pages long (more people are
/// added so that the indexes span branch pages).
pub fn sound_data_file() -> &'static [u8] {
    static BYTES: OnceLock<Vec<u8>> = OnceLock::new();
    BYTES.get_or_init(|| {
        let dir = tempfile::tempdir().expect("temporary directory");
        {
            let db = Database::open(dir.path(), DbOptions::with_durability(Durability::NoSync))
                .expect("open");
            for text in [SCHEMA, DATA] {
                let data = datalith::TxData::from_edn(&read_one(text).unwrap()).unwrap();
                db.transact(data).unwrap();
            }
            let mut more = String::from("[");
            for i in 0..300 {
                more.push_str(&format!(
                    "{{:name \"p{i}\" :age {} :tag [:t{}] :friend [[:name \"Ann\"]] :nick \"{}\"}}",
                    i % 50,
                    i % 7,
                    "n".repeat(i % 40)
                ));
            }
            more.push(']');
            db.transact(datalith::TxData::from_edn(&read_one(&more).unwrap()).unwrap())
                .unwrap();
            // A value long enough for an overflow page.
            let long = format!("[{{:name \"Ann\" :nick \"{}\"}}]", "long ".repeat(2000));
            db.transact(datalith::TxData::from_edn(&read_one(&long).unwrap()).unwrap())
                .unwrap();
        }
        std::fs::read(dir.path().join("data.mdb")).expect("read data.mdb")
    })
}
