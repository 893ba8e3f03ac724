//! Child side of the in-process bulk-load conditions: build the data, time the load, reopen
//! and count.

use std::path::Path;
use std::time::Instant;

use datalith::codec::{Keyword, Value};
use datalith::edn::read_one;
use datalith::kv::Durability;
use datalith::raw::USER_PARTITION_START;
use datalith::raw::{Components, Index};
use datalith::store::EntityId;
use datalith::{Database, DbOptions};
use rusqlite::{params, Connection};

use super::result::InitResult;
use super::{warmup_dir, InitCondition, WARMUP};
use crate::common::rusage::Usage;
use crate::common::BenchError;
use crate::write::condition::Record;
use crate::write::workload::Values;

/// Workload W's schema: `:k` long, unique identity; `:v` string.
const SCHEMA: &str = r#"[
 {:db/ident :k :db/valueType :db.type/long :db/cardinality :db.cardinality/one
  :db/unique :db.unique/identity}
 {:db/ident :v :db/valueType :db.type/string :db/cardinality :db.cardinality/one}]"#;

const DL: &str = "datalith-init";
const SQL: &str = "sqlite-init";

/// Loads `n` entities (values from `seed`) into the empty directory `dir`.
pub fn run(c: InitCondition, dir: &Path, n: u64, seed: u64) -> Result<InitResult, BenchError> {
    let warm = warmup_dir(dir);
    let _ = std::fs::remove_dir_all(&warm);
    match c {
        InitCondition::Datalith => {
            Datalith::prepare(WARMUP.min(n), seed ^ 1).load(&warm)?;
        }
        _ => {
            Sqlite::prepare(WARMUP.min(n), seed ^ 1).load(&warm)?;
        }
    }
    let _ = std::fs::remove_dir_all(&warm);

    let mut r = InitResult::new(c, n);
    let p0 = Instant::now();
    let records = Values::new(seed).batch(0, n);
    let last = records.last().cloned();
    let (seconds, usage) = match c {
        InitCondition::Datalith => {
            let data = Datalith::prepare_from(&records);
            drop(records);
            r.items = data.datoms.len() as u64;
            r.prep_seconds = p0.elapsed().as_secs_f64();
            let (u0, t0) = (Usage::now(), Instant::now());
            data.load(dir)?;
            (t0.elapsed().as_secs_f64(), Usage::now().since(u0))
        }
        _ => {
            let data = Sqlite { rows: records };
            r.items = data.rows.len() as u64;
            r.prep_seconds = p0.elapsed().as_secs_f64();
            let (u0, t0) = (Usage::now(), Instant::now());
            data.load(dir)?;
            (t0.elapsed().as_secs_f64(), Usage::now().since(u0))
        }
    };
    r.seconds = seconds;
    r.user_s = usage.user_s;
    r.sys_s = usage.sys_s;
    r.peak_rss_mb = usage.peak_rss_mb;
    let check = match c {
        InitCondition::Datalith => Datalith::check(dir, n, last.as_ref())?,
        _ => Sqlite::check(dir, n, last.as_ref())?,
    };
    r.count = Some(check.count);
    r.count_ok = check.problem.is_none();
    if let Some(p) = check.problem {
        r.error = Some(format!("COUNT CHECK FAILED: {p}"));
        r.check = Some(p);
    }
    Ok(r)
}

/// What the reopened database holds.
struct Check {
    count: u64,
    problem: Option<String>,
}

struct Datalith {
    datoms: Vec<(EntityId, Keyword, Value)>,
}

fn kw(s: &str) -> Keyword {
    Keyword::parse(s)
}

impl Datalith {
    fn prepare(n: u64, seed: u64) -> Datalith {
        Datalith::prepare_from(&Values::new(seed).batch(0, n))
    }

    /// Entity `i` (0-based) gets the id `USER_PARTITION_START + i`.
    fn prepare_from(records: &[Record]) -> Datalith {
        let (k, v) = (kw(":k"), kw(":v"));
        let mut datoms = Vec::with_capacity(2 * records.len());
        for (i, r) in records.iter().enumerate() {
            let e = USER_PARTITION_START + i as u64;
            datoms.push((e, k.clone(), Value::Long(r.key as i64)));
            datoms.push((e, v.clone(), Value::string(&r.value)));
        }
        Datalith { datoms }
    }

    fn load(&self, dir: &Path) -> Result<(), BenchError> {
        let schema = read_one(SCHEMA).map_err(BenchError::store(DL, "schema"))?;
        let schema =
            datalith::TxData::from_edn(&schema).map_err(BenchError::store(DL, "schema"))?;
        let db = Database::init_db(
            dir,
            DbOptions::with_durability(Durability::Durable),
            schema,
            &self.datoms,
        )
        .map_err(BenchError::store(DL, "init_db"))?;
        // Dropping joins the committer: the database is closed when the clock stops.
        drop(db);
        Ok(())
    }

    fn check(dir: &Path, n: u64, last: Option<&Record>) -> Result<Check, BenchError> {
        let db = Database::open(dir, DbOptions::with_durability(Durability::Durable))
            .map_err(BenchError::store(DL, "reopen"))?;
        let snap = db.db().map_err(BenchError::store(DL, "db"))?;
        let id = |s: &str| {
            snap.attr(&kw(s))
                .map(|a| a.id)
                .ok_or_else(|| BenchError::Store {
                    store: DL.into(),
                    op: "check",
                    message: format!("attribute {s} missing after the load"),
                })
        };
        let (k, v) = (id(":k")?, id(":v")?);
        let walk = |a| {
            snap.datoms(
                Index::Ave,
                &Components {
                    a: Some(a),
                    ..Components::default()
                },
            )
            .map(|d| d.len() as u64)
            .map_err(BenchError::store(DL, "count"))
        };
        let stat = |a| {
            snap.count_datoms(
                Index::Ave,
                &Components {
                    a: Some(a),
                    ..Components::default()
                },
            )
            .map_err(BenchError::store(DL, "stats"))
        };
        let (nk, nv, sk, sv) = (walk(k)?, walk(v)?, stat(k)?, stat(v)?);
        let mut problem = None;
        if (nk, nv, sk, sv) != (n, n, n, n) {
            problem = Some(format!(
                "expected {n} datoms of :k and :v; AVE walk found {nk} and {nv}, statistics say \
                 {sk} and {sv}"
            ));
        } else if let Some(rec) = last {
            let e = snap
                .reader()
                .first_entity_with(k, &Value::Long(rec.key as i64))
                .map_err(BenchError::store(DL, "lookup"))?;
            let got = match e {
                Some(e) => snap
                    .datoms(
                        Index::Eav,
                        &Components {
                            e: Some(e),
                            a: Some(v),
                            ..Components::default()
                        },
                    )
                    .map_err(BenchError::store(DL, "lookup"))?
                    .into_iter()
                    .map(|d| d.v)
                    .collect(),
                None => Vec::new(),
            };
            if got != vec![Value::string(&rec.value)] {
                problem = Some(format!(
                    "key {} should hold {:?}, found {got:?}",
                    rec.key, rec.value
                ));
            }
        }
        Ok(Check { count: nk, problem })
    }
}

struct Sqlite {
    rows: Vec<Record>,
}

impl Sqlite {
    fn prepare(n: u64, seed: u64) -> Sqlite {
        Sqlite {
            rows: Values::new(seed).batch(0, n),
        }
    }

    fn load(&self, dir: &Path) -> Result<(), BenchError> {
        std::fs::create_dir_all(dir).map_err(BenchError::io(dir))?;
        let fail = BenchError::store;
        let mut conn = Connection::open(dir.join("bench.sqlite")).map_err(fail(SQL, "open"))?;
        let _: String = conn
            .query_row("PRAGMA journal_mode=wal", [], |r| r.get(0))
            .map_err(fail(SQL, "journal_mode"))?;
        conn.execute_batch(
            "PRAGMA synchronous=FULL;
             CREATE TABLE kv (k INTEGER PRIMARY KEY, v TEXT);",
        )
        .map_err(fail(SQL, "setup"))?;
        let tx = conn.transaction().map_err(fail(SQL, "begin"))?;
        {
            let mut st = tx
                .prepare("INSERT INTO kv (k, v) VALUES (?1, ?2)")
                .map_err(fail(SQL, "prepare"))?;
            for r in &self.rows {
                st.execute(params![r.key as i64, r.value])
                    .map_err(fail(SQL, "insert"))?;
            }
        }
        tx.commit().map_err(fail(SQL, "commit"))?;
        conn.close().map_err(|(_, e)| fail(SQL, "close")(e))?;
        Ok(())
    }

    fn check(dir: &Path, n: u64, last: Option<&Record>) -> Result<Check, BenchError> {
        let fail = BenchError::store;
        let conn = Connection::open(dir.join("bench.sqlite")).map_err(fail(SQL, "reopen"))?;
        let count: i64 = conn
            .query_row("SELECT count(*) FROM kv", [], |r| r.get(0))
            .map_err(fail(SQL, "count"))?;
        let count = count as u64;
        let mut problem = (count != n).then(|| format!("expected {n} rows, found {count}"));
        if let (None, Some(rec)) = (&problem, last) {
            let v: Option<String> = conn
                .query_row("SELECT v FROM kv WHERE k = ?1", [rec.key as i64], |r| {
                    r.get(0)
                })
                .ok();
            if v.as_deref() != Some(rec.value.as_str()) {
                problem = Some(format!(
                    "key {} should hold {:?}, found {v:?}",
                    rec.key, rec.value
                ));
            }
        }
        Ok(Check { count, problem })
    }
}
