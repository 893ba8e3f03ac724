//! Damaged data files: opening and checking them returns a typed error, never a crash, and
//! never creates or changes a file. Each case damages a copy of one real database.

use std::path::{Path, PathBuf};

use datalith::admin;
use datalith::edn::read_one;
use datalith::kv::Environment;
use datalith::kv::Verify;
use datalith::kv::{Durability, EnvOptions, KvError};
use datalith::{Database, DbOptions};

/// A database with several pages per index, list keys with many values (value trees), long
/// values (overflow pages), and retractions (free pages), closed.
fn build(dir: &Path, durability: Durability) {
    let db = Database::open(dir, DbOptions::with_durability(durability)).unwrap();
    let tx = |text: &str| {
        db.transact(datalith::TxData::from_edn(&read_one(text).unwrap()).unwrap())
            .unwrap();
    };
    tx(
        "[{:db/ident :name :db/valueType :db.type/string :db/cardinality :db.cardinality/one :db/unique :db.unique/identity}
         {:db/ident :group :db/valueType :db.type/long :db/cardinality :db.cardinality/one}
         {:db/ident :tag :db/valueType :db.type/keyword :db/cardinality :db.cardinality/many}
         {:db/ident :text :db/valueType :db.type/string :db/cardinality :db.cardinality/one}]",
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

fn data(db: &Path) -> PathBuf {
    db.join("data.mdb")
}

/// A bulk-loaded database (appended pages, full leaves) whose map started small and grew
/// several times.
fn bulk_sample(durability: Durability) -> (tempfile::TempDir, PathBuf) {
    use datalith::codec::{Keyword, Value};
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("bulk");
    let mut env = EnvOptions::with_durability(durability);
    env.initial_map_bytes = 1 << 20;
    let db = Database::open(&path, db_options(env)).unwrap();
    db.transact(
        datalith::TxData::from_edn(
            &read_one(
                "[{:db/ident :s :db/valueType :db.type/string :db/cardinality :db.cardinality/one}
                  {:db/ident :l :db/valueType :db.type/long :db/cardinality :db.cardinality/many}]",
            )
            .unwrap(),
        )
        .unwrap(),
    )
    .unwrap();
    let base = datalith::raw::USER_PARTITION_START;
    let mut datoms = Vec::new();
    for i in 0..40_000u64 {
        datoms.push((
            base + i,
            Keyword::parse(":s"),
            Value::String(format!("s{}", i % 977).into()),
        ));
        for j in 0..3 {
            datoms.push((
                base + i,
                Keyword::parse(":l"),
                Value::Long((i % 50 + j) as i64),
            ));
        }
    }
    db.fill_db(&datoms).unwrap();
    // Closed, everything is in the data file (with the log, LMDB may be written after the
    // call returns); it outgrew the initial map, so the map grew.
    drop(db);
    let data = std::fs::metadata(path.join("data.mdb")).unwrap().len();
    assert!(
        data > 1 << 20,
        "the file grew past its initial map: {data} bytes"
    );
    (dir, path)
}

#[test]
fn sound_databases_pass_the_walk() {
    for durability in [Durability::Durable, Durability::WriteMapAsync] {
        let (_d, db) = bulk_sample(durability);
        admin::check_structure(&data(&db), Verify::Everything)
            .unwrap_or_else(|e| panic!("bulk {durability:?}: {e}"));
        let ro = Database::open_read_only(&db, db_options(everything())).unwrap();
        assert!(ro.db().unwrap().check().unwrap().is_ok());
    }
    for durability in [Durability::Durable, Durability::WriteMapAsync] {
        let (_d, db) = sample(durability);
        let s = admin::check_structure(&data(&db), Verify::Everything)
            .unwrap_or_else(|e| panic!("{durability:?}: {e}"));
        let names: Vec<&str> = s.tables.iter().map(|t| t.name.as_str()).collect();
        assert_eq!(
            names,
            [
                "__datalith_meta",
                "attr_entities",
                "ave",
                "eav",
                "giants",
                "history",
                "history_attr",
                "search_docs",
                "search_meta",
                "search_owners",
                "search_postings",
                "search_term_stats",
                "search_terms",
                "store_meta",
                "tx_log"
            ],
            "{durability:?}"
        );
        assert!(s.pages_in_use > 20, "{s:?}");
        assert!(s.free_pages > 0, "{s:?}");
        admin::check_structure(&data(&db), Verify::Catalog).unwrap();
        let ro = Database::open_read_only(&db, DbOptions::default()).unwrap();
        assert!(ro.db().unwrap().check().unwrap().is_ok());
    }
}

/// A damage done to a copy of the sample's data file, given the sound file's bytes, its page
/// size and the root pages of its tables.
struct Case {
    name: &'static str,
    damage: fn(&mut Vec<u8>, &Roots),
    /// What `check` must answer: `Corrupt` (true) or `NotADatabase` (false).
    corrupt: bool,
    /// Whether even the cheap check of every open (the catalog) sees it.
    catalog_sees_it: bool,
}

struct Roots {
    page: usize,
    eav: usize,
    ave: usize,
    /// The store's small metadata table (counters, statistics), which every open walks.
    store_meta: usize,
}

fn page_of(bytes: &mut [u8], page: usize, n: usize) -> &mut [u8] {
    &mut bytes[n * page..(n + 1) * page]
}

/// A deterministic byte stream (no dependency on a random crate's version).
fn noise(seed: u64, out: &mut [u8]) {
    let mut x = seed | 1;
    for b in out {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        *b = x as u8;
    }
}

const CASES: &[Case] = &[
    Case {
        name: "empty file",
        damage: |b, _| b.clear(),
        corrupt: false,
        catalog_sees_it: true,
    },
    Case {
        name: "truncated inside the first meta page",
        damage: |b, _| b.truncate(100),
        corrupt: false,
        catalog_sees_it: true,
    },
    Case {
        name: "truncated inside the second meta page",
        damage: |b, r| b.truncate(r.page + 7),
        corrupt: true,
        catalog_sees_it: true,
    },
    Case {
        name: "truncated at the eav root",
        damage: |b, r| b.truncate(r.eav * r.page),
        corrupt: true,
        catalog_sees_it: true,
    },
    Case {
        name: "truncated inside the ave root",
        damage: |b, r| b.truncate(r.ave * r.page + 100),
        corrupt: true,
        catalog_sees_it: true,
    },
    Case {
        name: "text file",
        damage: |b, _| *b = b"name,age\nada,36\n".to_vec(),
        corrupt: false,
        catalog_sees_it: true,
    },
    Case {
        name: "first meta page zeroed",
        damage: |b, r| page_of(b, r.page, 0).fill(0),
        corrupt: true,
        catalog_sees_it: true,
    },
    Case {
        name: "eav root zeroed",
        damage: |b, r| page_of(b, r.page, r.eav).fill(0),
        corrupt: true,
        catalog_sees_it: false,
    },
    Case {
        name: "ave root random bytes",
        damage: |b, r| noise(7, page_of(b, r.page, r.ave)),
        corrupt: true,
        catalog_sees_it: false,
    },
    Case {
        name: "eav root random bytes after its header",
        damage: |b, r| noise(11, &mut page_of(b, r.page, r.eav)[16..]),
        corrupt: true,
        catalog_sees_it: false,
    },
    Case {
        name: "store_meta root random bytes after its header",
        damage: |b, r| noise(3, &mut page_of(b, r.page, r.store_meta)[16..]),
        corrupt: true,
        catalog_sees_it: true,
    },
    Case {
        name: "eav and ave roots swapped",
        damage: |b, r| {
            let (p, e, a) = (r.page, r.eav, r.ave);
            let eav = b[e * p..(e + 1) * p].to_vec();
            let ave = b[a * p..(a + 1) * p].to_vec();
            b[e * p..(e + 1) * p].copy_from_slice(&ave);
            b[a * p..(a + 1) * p].copy_from_slice(&eav);
        },
        corrupt: true,
        catalog_sees_it: false,
    },
];

/// Every file under `dir` with its bytes.
fn snapshot(dir: &Path) -> Vec<(PathBuf, Vec<u8>)> {
    let mut out: Vec<_> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| {
            let p = e.unwrap().path();
            let b = std::fs::read(&p).unwrap_or_default();
            (p, b)
        })
        .collect();
    out.sort();
    out
}

fn everything() -> EnvOptions {
    let mut o = EnvOptions::default();
    o.verify = Verify::Everything;
    o
}

fn db_options(env: EnvOptions) -> DbOptions {
    let mut o = DbOptions::default();
    o.env = env;
    o
}

fn kind(e: &KvError) -> &'static str {
    match e {
        KvError::Corrupt { .. } => "Corrupt",
        KvError::NotADatabase { .. } => "NotADatabase",
        _ => "other",
    }
}

#[test]
fn damaged_copies_are_refused_with_a_typed_error_and_left_as_they_are() {
    let (tmp, db) = sample(Durability::Durable);
    let sound = std::fs::read(data(&db)).unwrap();
    let shape = admin::check_structure(&data(&db), Verify::Everything).unwrap();
    let root = |n: &str| {
        shape
            .tables
            .iter()
            .find(|t| t.name == n)
            .unwrap()
            .root
            .unwrap() as usize
    };
    let roots = Roots {
        page: shape.page_bytes,
        eav: root("eav"),
        ave: root("ave"),
        store_meta: root("store_meta"),
    };
    assert_ne!(roots.eav, roots.ave);
    for case in CASES {
        let dir = tmp.path().join(case.name.replace(' ', "_"));
        std::fs::create_dir(&dir).unwrap();
        let mut bytes = sound.clone();
        (case.damage)(&mut bytes, &roots);
        std::fs::write(data(&dir), &bytes).unwrap();
        let want = if case.corrupt {
            "Corrupt"
        } else {
            "NotADatabase"
        };
        let named = |e: &KvError| {
            let text = e.to_string();
            assert!(
                text.contains(&*data(&dir).to_string_lossy()),
                "{}: {text}",
                case.name
            );
        };

        // The full walk alone, then as `check` opens: read-only, every page.
        let before = snapshot(&dir);
        let e = admin::check_structure(&data(&dir), Verify::Everything).unwrap_err();
        assert_eq!(kind(&e), want, "{}: {e}", case.name);
        named(&e);
        let e = Environment::open_read_only(&dir, everything()).unwrap_err();
        assert_eq!(kind(&e), want, "{}: {e}", case.name);
        let e = Database::open_read_only(&dir, db_options(everything())).unwrap_err();
        assert!(
            e.to_string().contains(&*data(&dir).to_string_lossy()),
            "{}: {e}",
            case.name
        );
        assert_eq!(
            snapshot(&dir),
            before,
            "{}: check changed the directory",
            case.name
        );

        // Every open checks the catalog; an open that verifies everything sees all of it.
        let cheap = admin::check_structure(&data(&dir), Verify::Catalog);
        assert_eq!(
            cheap.is_err(),
            case.catalog_sees_it,
            "{}: {cheap:?}",
            case.name
        );
        if case.catalog_sees_it {
            let e = Environment::open(&dir, EnvOptions::default()).unwrap_err();
            assert_eq!(kind(&e), want, "{}: {e}", case.name);
        }
        let e = Environment::open(&dir, everything()).unwrap_err();
        assert_eq!(kind(&e), want, "{}: {e}", case.name);
        assert_eq!(
            std::fs::read(data(&dir)).unwrap(),
            bytes,
            "{}: open changed the file",
            case.name
        );
    }
}

#[test]
fn a_missing_database_is_refused_and_not_created() {
    let tmp = tempfile::tempdir().unwrap();
    for (name, dir) in [
        ("missing directory", tmp.path().join("nothing")),
        ("directory without a data file", tmp.path().to_path_buf()),
    ] {
        let before = std::fs::read_dir(tmp.path()).unwrap().count();
        let e = Environment::open_read_only(&dir, everything()).unwrap_err();
        assert_eq!(kind(&e), "NotADatabase", "{name}: {e}");
        assert!(
            Database::open_read_only(&dir, DbOptions::default()).is_err(),
            "{name}"
        );
        assert_eq!(
            std::fs::read_dir(tmp.path()).unwrap().count(),
            before,
            "{name}"
        );
        assert!(!data(&dir).exists(), "{name}");
    }
}

#[test]
fn a_read_only_database_refuses_writes() {
    let (_tmp, db) = sample(Durability::Durable);
    std::fs::remove_file(db.join("lock.mdb")).unwrap();
    let before = snapshot(&db);
    let ro = Database::open_read_only(&db, DbOptions::default()).unwrap();
    let n = ro
        .db()
        .unwrap()
        .q("[:find (count ?e) . :where [?e :name]]", &[])
        .unwrap();
    assert_eq!(datalith::edn::to_edn_string(&n), "2399");
    let tx = datalith::TxData::from_edn(&read_one("[{:name \"new\"}]").unwrap()).unwrap();
    assert!(ro.transact(tx).is_err());
    assert!(ro
        .env()
        .table("another", datalith::kv::TableKind::Plain)
        .is_err());
    drop(ro);
    assert_eq!(snapshot(&db), before);
}

#[test]
fn a_file_that_shrinks_while_open_costs_an_error_not_the_process() {
    let count = "[:find (count ?e) . :where [?e :name] [?e :group]]";
    for durability in [Durability::Durable, Durability::WriteMapAsync] {
        let (_d, db) = sample(durability);
        let database = Database::open(&db, DbOptions::with_durability(durability)).unwrap();
        let n = database.db().unwrap().q(count, &[]).unwrap();
        assert_eq!(datalith::edn::to_edn_string(&n), "2398", "{durability:?}");

        // Another program cuts the file to its meta pages and one more.
        let f = std::fs::OpenOptions::new()
            .write(true)
            .open(data(&db))
            .unwrap();
        f.set_len(3 * 4096).unwrap();
        drop(f);
        // The read that meets the missing end fails or reads zeros; the process lives.
        let first = database
            .db()
            .map_err(|e| e.to_string())
            .and_then(|d| d.q(count, &[]).map_err(|e| e.to_string()));
        assert!(
            first
                .as_ref()
                .map_or(true, |n| datalith::edn::to_edn_string(n) != "2398"),
            "{durability:?}: {first:?}"
        );
        // From then on: no snapshot, no commit.
        let e = database.db().unwrap_err().to_string();
        assert!(e.contains("shrank while open"), "{durability:?}: {e}");
        let tx = datalith::TxData::from_edn(&read_one("[{:name \"late\"}]").unwrap()).unwrap();
        let e = database.transact(tx).unwrap_err().to_string();
        assert!(e.contains("shrank while open"), "{durability:?}: {e}");
    }
}

/// The writer of `opening_while_another_process_writes_finds_no_damage`: commits transactions
/// (adds and retractions, so pages are freed and reused) until killed.
#[test]
#[ignore = "the child process of opening_while_another_process_writes_finds_no_damage"]
fn busy_writer_child() {
    let Ok(dir) = std::env::var("DATALITH_BUSY_DIR") else {
        return;
    };
    let db = Database::open(&dir, DbOptions::with_durability(Durability::NoSync)).unwrap();
    let mut i = 0u64;
    loop {
        let mut t = String::from("[");
        for j in 0..50 {
            t.push_str(&format!(
                "{{:name \"w{}\" :group {}}}",
                (i * 50 + j) % 3000,
                i % 97
            ));
        }
        t.push_str(&format!(
            "[:db/retract [:name \"person {:05}\"] :group {}]]",
            i % 2400,
            i % 2400 % 7
        ));
        let _ = db.transact(datalith::TxData::from_edn(&read_one(&t).unwrap()).unwrap());
        if i == 0 {
            println!("READY");
        }
        i += 1;
    }
}

#[test]
fn opening_while_another_process_writes_finds_no_damage() {
    use std::io::{BufRead, BufReader};
    let (_tmp, db) = sample(Durability::NoSync);
    let mut child = std::process::Command::new(std::env::current_exe().unwrap())
        .args(["--exact", "busy_writer_child", "--ignored", "--nocapture"])
        .env("DATALITH_BUSY_DIR", &db)
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
    while let Some(Ok(line)) = lines.next() {
        if line.contains("READY") {
            break;
        }
    }
    let mut result = Ok(());
    for round in 0..12 {
        let opened = Database::open_read_only(&db, db_options(everything()))
            .map_err(|e| format!("round {round}: {e}"))
            .and_then(|d| {
                let report = d.db().unwrap().check().unwrap();
                match report.is_ok() {
                    true => Ok(()),
                    false => Err(format!("round {round}: {:?}", report.problems)),
                }
            });
        if opened.is_err() {
            result = opened;
            break;
        }
    }
    let _ = child.kill();
    let _ = child.wait();
    result.unwrap();
}
