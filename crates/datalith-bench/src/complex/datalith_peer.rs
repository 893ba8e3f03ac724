//! Datalith as a peer: the schema the TPC-H tables become, the bulk load (one entity per row,
//! entity ids computed from the keys so refs need no lookup), the database reused across runs,
//! and the queries run through the port's steps.
//!
//! Entity ids: table `t` (its place in [`TABLES`]) owns the ids `USER_PARTITION_START +
//! t * 2^36 + k`, `k` the row's key (region, nation, part, supplier, customer, orders) or its
//! line number in the file (partsupp, lineitem, which have composite keys). A ref's id is
//! then its target's key put in the target's range.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use datalith::codec::number::F64;
use datalith::codec::{Keyword, Value};
use datalith::edn::read_one;
use datalith::query::QueryOptions;
use datalith::{Database, DbOptions, QueryError};

use super::answer::Answer;
use super::generate::{read_rows, tbl_path, GENERATOR};
use super::peer::{Peer, RunError};
use super::queries::Query;
use super::steps;
use super::tables::{days_from_date, Kind, Table, TABLES};
use crate::common::BenchError;

/// Datoms handed to one `fill_db` call: bounds the memory of a load (SF 1 has ~110M datoms;
/// about 100 bytes each while prepared).
const CHUNK_DATOMS: usize = 8_000_000;

/// Bits of a table's id range.
const TABLE_BITS: u32 = 36;

/// Version of the schema and id layout above: a database loaded by another is loaded again.
const LAYOUT: &str = "complex-layout 1";

/// The entity id of key (or row number) `k` of table number `t`.
pub fn entity(t: usize, k: u64) -> u64 {
    datalith::raw::USER_PARTITION_START + ((t as u64) << TABLE_BITS) + k
}

fn table_index(sql: &str) -> usize {
    TABLES
        .iter()
        .position(|t| t.sql == sql)
        .expect("a ref names a table")
}

/// The schema as tx data text.
pub fn schema_edn() -> String {
    let mut s = String::from("[\n");
    for t in &TABLES {
        for c in t.columns {
            // Every column's values in AVE, as before the declared layout became the
            // default: the queries' ranges and lookups by value read it.
            let (ty, unique) = match c.kind {
                Kind::Key => ("long", " :db/unique :db.unique/identity"),
                Kind::Ref(_) => ("ref", ""),
                Kind::Int => ("long", " :db/index true"),
                Kind::Decimal => ("double", " :db/index true"),
                Kind::Date => ("instant", " :db/index true"),
                Kind::Text => ("string", " :db/index true"),
            };
            s.push_str(&format!(
                " {{:db/ident :{}/{} :db/valueType :db.type/{ty} :db/cardinality :db.cardinality/one{unique}}}\n",
                t.ns, c.attr
            ));
        }
    }
    s.push(']');
    s
}

fn err<E: std::fmt::Display>(op: &'static str) -> impl FnOnce(E) -> BenchError {
    BenchError::store("datalith", op)
}

/// The marker of a complete load.
fn marker_text(sf: f64) -> String {
    format!("{GENERATOR} sf {sf} {LAYOUT}\n")
}

/// Datalith loaded with the tables of one scale factor.
pub struct DatalithPeer {
    db: Database,
}

impl DatalithPeer {
    /// Opens the database in `dir` if a complete load of the same data is there, else loads
    /// it from the `.tbl` files of `data`. Returns the peer and the load's seconds (`None`
    /// when reused).
    pub fn open_or_load(
        dir: &Path,
        data: &Path,
        sf: f64,
        log: impl Fn(&str),
    ) -> Result<(DatalithPeer, Option<f64>), BenchError> {
        let marker = dir.join("LOADED");
        if std::fs::read_to_string(&marker).ok().as_deref() == Some(marker_text(sf).as_str()) {
            let db = Database::open(dir.join("db"), DbOptions::default()).map_err(err("open"))?;
            return Ok((DatalithPeer { db }, None));
        }
        let _ = std::fs::remove_dir_all(dir);
        std::fs::create_dir_all(dir).map_err(BenchError::io(dir))?;
        let start = Instant::now();
        let db = Database::open(dir.join("db"), DbOptions::default()).map_err(err("open"))?;
        let schema = read_one(&schema_edn()).map_err(err("schema"))?;
        db.transact(datalith::TxData::from_edn(&schema).map_err(err("schema"))?)
            .map_err(err("schema"))?;
        let mut total = 0u64;
        for (ti, t) in TABLES.iter().enumerate() {
            let t0 = Instant::now();
            let n = load_table(&db, ti, t, &tbl_path(data, t.sql))?;
            total += n;
            log(&format!(
                "datalith: loaded {} ({n} datoms) in {:.1} s",
                t.sql,
                t0.elapsed().as_secs_f64()
            ));
        }
        let secs = start.elapsed().as_secs_f64();
        log(&format!("datalith: {total} datoms in {secs:.1} s"));
        std::fs::write(&marker, marker_text(sf)).map_err(BenchError::io(&marker))?;
        Ok((DatalithPeer { db }, Some(secs)))
    }

    /// The plan Datalith chose for each step of `query` (for `PORTS.md` and `explain.md`).
    fn plans(&self, query: &Query) -> Result<String, String> {
        let port = steps::parse(&query.datalog)?;
        let db = self.db.db().map_err(|e| e.to_string())?;
        let mut out = String::new();
        steps::run(&port, |text, inputs| {
            let (result, plan) = db.explain(text, inputs).map_err(|e| e.to_string())?;
            out.push_str(&format!("```\n{}\n```\n\n", text.trim()));
            for (i, s) in plan.steps.iter().enumerate() {
                out.push_str(&format!("{}. {s}\n", i + 1));
            }
            out.push_str(&format!("\nrows: {}\n\n", plan.rows));
            Ok::<_, String>(result)
        })?;
        Ok(out)
    }
}

/// One table's datoms, bulk-loaded in chunks; returns how many.
fn load_table(db: &Database, ti: usize, t: &Table, path: &Path) -> Result<u64, BenchError> {
    let attrs: Vec<Keyword> = t
        .columns
        .iter()
        .map(|c| Keyword::new(Some(t.ns), c.attr))
        .collect();
    let key_col = t.columns.iter().position(|c| c.kind == Kind::Key);
    let targets: Vec<Option<usize>> = t
        .columns
        .iter()
        .map(|c| match c.kind {
            Kind::Ref(to) => Some(table_index(to)),
            _ => None,
        })
        .collect();
    let mut datoms: Vec<(u64, Keyword, Value)> = Vec::with_capacity(CHUNK_DATOMS);
    let mut total = 0u64;
    let mut line = 0u64;
    let flush = |datoms: &mut Vec<(u64, Keyword, Value)>, total: &mut u64| {
        *total += db
            .fill_db(datoms)
            .map_err(BenchError::store("datalith", "fill_db"))?;
        datoms.clear();
        Ok::<_, BenchError>(())
    };
    let bad = |what: String| BenchError::Store {
        store: "datalith".into(),
        op: "load",
        message: format!("{}: {what}", path.display()),
    };
    read_rows(path, |fields| {
        line += 1;
        if fields.len() != t.columns.len() {
            return Err(bad(format!(
                "line {line}: {} fields, expected {}",
                fields.len(),
                t.columns.len()
            )));
        }
        let int = |s: &str| {
            s.parse::<i64>()
                .map_err(|_| bad(format!("line {line}: {s} is not an integer")))
        };
        let e = match key_col {
            Some(k) => entity(ti, int(fields[k])? as u64),
            None => entity(ti, line),
        };
        for (j, c) in t.columns.iter().enumerate() {
            let f = fields[j];
            let v = match c.kind {
                Kind::Key | Kind::Int => Value::Long(int(f)?),
                Kind::Ref(_) => Value::Ref(entity(targets[j].unwrap_or(0), int(f)? as u64)),
                Kind::Decimal => {
                    let x: f64 = f
                        .parse()
                        .map_err(|_| bad(format!("line {line}: {f} is not a number")))?;
                    Value::Double(F64::new(x).ok_or_else(|| bad(format!("line {line}: NaN")))?)
                }
                Kind::Date => Value::Instant(
                    days_from_date(f).ok_or_else(|| bad(format!("line {line}: {f} is no date")))?
                        * 86_400_000,
                ),
                Kind::Text => Value::string(f),
            };
            datoms.push((e, attrs[j].clone(), v));
        }
        if datoms.len() >= CHUNK_DATOMS {
            flush(&mut datoms, &mut total)?;
        }
        Ok(())
    })?;
    flush(&mut datoms, &mut total)?;
    Ok(total)
}

impl Peer for DatalithPeer {
    fn run(&mut self, query: &Query, limit: Duration) -> Result<Answer, RunError> {
        let port = steps::parse(&query.datalog).map_err(RunError::Failed)?;
        let db = self.db.db().map_err(|e| RunError::Failed(e.to_string()))?;
        let deadline = Instant::now() + limit;
        let result = steps::run(&port, |text, inputs| {
            let left = deadline.saturating_duration_since(Instant::now());
            if left.is_zero() {
                return Err(RunError::Timeout);
            }
            let opts = QueryOptions::default().timeout_ms(left.as_millis().max(1) as u64);
            db.q_with(text, inputs, &opts)
                .map(|o| o.result)
                .map_err(|e| match e {
                    QueryError::Timeout { .. } => RunError::Timeout,
                    e => RunError::Failed(e.to_string()),
                })
        })?;
        Ok(Answer::from_edn(&result))
    }

    fn explain(&self, query: &Query) -> Option<Result<String, String>> {
        Some(self.plans(query))
    }
}

/// The directory of the database for the data in `data` (beside the `.tbl` files).
pub fn dir_for(data: &Path) -> PathBuf {
    data.join("datalith")
}
