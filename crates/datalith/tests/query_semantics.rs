//! probe
use datalith::edn::{read_one, to_edn_string, Edn};
use datalith::{Database, DbOptions};

fn edn(s: &str) -> Edn {
    read_one(s).unwrap()
}

fn transact(db: &Database, text: &str) {
    let data = datalith::tx::edn::tx_data_from_edn(&edn(text)).unwrap();
    db.transact(data).unwrap();
}

fn people() -> (tempfile::TempDir, Database) {
    let dir = tempfile::tempdir().unwrap();
    let db = Database::open(dir.path(), DbOptions::default()).unwrap();
    transact(
        &db,
        r#"[{:db/ident :person/name :db/valueType :db.type/string :db/cardinality :db.cardinality/one :db/unique :db.unique/identity}
            {:db/ident :person/city :db/valueType :db.type/string :db/cardinality :db.cardinality/one}
            {:db/ident :person/age :db/valueType :db.type/long :db/cardinality :db.cardinality/one}
            {:db/ident :person/nick :db/valueType :db.type/string :db/cardinality :db.cardinality/many}
            {:db/ident :person/friend :db/valueType :db.type/ref :db/cardinality :db.cardinality/many}]"#,
    );
    let mut tx = String::from("[");
    for i in 0..10 {
        tx.push_str(&format!(
            r#"{{:db/id "p{i}" :person/name "P{i}" :person/city "C{}" :person/age {} :person/nick ["n{i}a" "n{i}b"] :person/friend ["p{}" "p{}"]}}"#,
            i % 5,
            20 + (i % 3),
            (i + 1) % 10,
            (i + 2) % 10
        ));
    }
    tx.push(']');
    transact(&db, &tx);
    (dir, db)
}

#[test]
fn probe() {
    let (_d, db) = people();
    let snap = db.db().unwrap();
    for q in [
        "[:find ?c :where [_ :person/city ?c]]",
        "[:find ?c :where [?p :person/city ?c]]",
        "[:find [?c ...] :where [_ :person/city ?c]]",
        "[:find (count ?p) . :where [?p :person/nick _]]",
        "[:find (count ?p) :where [?p :person/nick _]]",
        "[:find (sum ?a) . :where [?p :person/age ?a]]",
        "[:find (count ?e) . :where [?e :person/name \"nobody\"]]",
        "[:find (count ?e) :where [?e :person/name \"nobody\"]]",
        "[:find [(count ?e) (sum ?e)] :where [?e :person/name \"nobody\"]]",
        "[:find [(count ?e) ...] :where [?e :person/name \"nobody\"]]",
        "[:find ?c :where [?p :person/city ?c] [?p :person/nick _]]",
        "[:find ?c :keys city :where [?p :person/city ?c] [?p :person/nick _]]",
        "[:find ?c :where [?p :person/city ?c] [?p :person/nick _] :limit 3]",
        "[:find (pull ?p [:person/name]) :where [?p :person/nick _] [?p :person/age 20]]",
        "[:find ?c :where [?p :person/city ?c] (or [?p :person/age 20] [?p :person/nick _])]",
        "[:find ?a :where [?p :person/friend ?f] [?f :person/age ?a]]",
        "[:find ?e :where [?e :person/nmae _]]",
    ] {
        let r = snap.explain(q, &[]);
        match r {
            Ok((res, steps)) => {
                println!("{q}\n  => {}", to_edn_string(&res));
                for s in steps {
                    println!("     {} est {} act {}", s.what, s.estimated, s.actual);
                }
            }
            Err(e) => println!("{q}\n  ERR {e}"),
        }
    }
}
