//! Datalith as a peer of workload H: the data file loaded into an on-disk, durable database
//! (one transaction per line, each with its `:db/txInstant`), then each row on it. The load
//! is untimed and made once per run; every pass reads the same database.

use std::path::{Path, PathBuf};
use std::time::Instant;

use datalith::codec::{Keyword, Value};
use datalith::edn::{read_one, Edn};
use datalith::kv::Durability;
use datalith::tx::{EntityMap, EntityRef, Tempid, TxOp, TxValue};
use datalith::{Database, Db, DbOptions, Input, TxData};

use super::api;
use super::data::{Answer, Spec, Tx};
use super::rows::{self, Basis, Kind, Query, Row};
use super::timing::{measure, Measured, Plan};
use crate::common::BenchError;

/// The peer's label.
pub const LABEL: &str = "datalith";

/// The loaded database and what the rows need to know about it.
pub struct DatalithPeer {
    database: Database,
    path: PathBuf,
    /// The entity id of each data transaction, in order.
    txs: Vec<u64>,
    spec: Spec,
    value_attr: u32,
    history_e: u64,
    lookup: Edn,
    /// Seconds the load took (informational).
    pub load_secs: f64,
}

fn err<E: std::fmt::Display>(op: &'static str) -> impl FnOnce(E) -> BenchError {
    BenchError::store(LABEL, op)
}

/// `[:db/add "datomic.tx" :db/txInstant instant]`.
fn instant_op(ms: i64) -> TxOp {
    TxOp::Add {
        e: EntityRef::Temp(Tempid::CurrentTx),
        a: Keyword::new(Some("db"), "txInstant"),
        v: TxValue::Value(Value::Instant(ms)),
    }
}

impl DatalithPeer {
    /// A fresh durable database under `dir` holding the schema and every transaction of the
    /// data file.
    pub fn load(dir: &Path, spec: &Spec, txs: &[Tx]) -> Result<DatalithPeer, BenchError> {
        let path = dir.join(LABEL);
        let _ = std::fs::remove_dir_all(&path);
        std::fs::create_dir_all(&path).map_err(BenchError::io(&path))?;
        let t0 = Instant::now();
        let database = Database::open(&path, DbOptions::with_durability(Durability::Durable))
            .map_err(err("open"))?;
        if !database.keeps_tx_log() {
            return Err(BenchError::Store {
                store: LABEL.into(),
                op: "open",
                message: "the database keeps no transaction log".into(),
            });
        }
        let schema = read_one(&spec.schema).map_err(err("schema"))?;
        let schema = TxData::from_edn(&schema)
            .map_err(err("schema"))?
            .op(instant_op(spec.schema_instant));
        database.transact(schema).map_err(err("schema"))?;
        let (id_k, value_k) = (
            Keyword::new(Some("item"), "id"),
            Keyword::new(Some("item"), "value"),
        );
        let mut tx_ids = Vec::with_capacity(txs.len());
        for tx in txs {
            let mut data = TxData::default();
            for &(id, v) in &tx.items {
                // No :db/id: the unique :item/id upserts (Datomic's maps do the same).
                data = data.map(
                    EntityMap::default()
                        .set(id_k.clone(), Value::Long(id))
                        .set(value_k.clone(), Value::Long(v)),
                );
            }
            let report = database
                .transact(data.op(instant_op(tx.instant)))
                .map_err(err("load"))?;
            tx_ids.push(report.tx);
        }
        let load_secs = t0.elapsed().as_secs_f64();
        let snap = database.db().map_err(err("snapshot"))?;
        let value_attr = snap
            .attr(&value_k)
            .ok_or_else(|| BenchError::Store {
                store: LABEL.into(),
                op: "load",
                message: "no :item/value after the schema".into(),
            })?
            .id;
        let found = snap
            .q(
                "[:find ?e . :in $ ?id :where [?e :item/id ?id]]",
                &[Edn::Long(spec.history_id)],
            )
            .map_err(err("history entity"))?;
        let history_e = match found {
            Edn::Long(e) => e as u64,
            other => {
                return Err(BenchError::Store {
                    store: LABEL.into(),
                    op: "history entity",
                    message: format!("no entity with :item/id {}: {other}", spec.history_id),
                })
            }
        };
        Ok(DatalithPeer {
            database,
            path,
            txs: tx_ids,
            spec: spec.clone(),
            value_attr,
            history_e,
            lookup: Edn::Vector(spec.lookup_ids.iter().map(|&i| Edn::Long(i)).collect()),
            load_secs,
        })
    }

    /// The entity id of the last data transaction of checkpoint `percent`.
    fn tx_after(&self, percent: u8) -> Result<u64, BenchError> {
        self.spec
            .after(percent)
            .and_then(|k| self.txs.get(k as usize - 1).copied())
            .ok_or_else(|| BenchError::Arg {
                arg: "--rows",
                message: format!("no checkpoint at {percent}%"),
            })
    }

    /// The log bounds of every data transaction: `[first, last + 1)`.
    fn log_bounds(&self) -> Result<(u64, u64), BenchError> {
        match (self.txs.first(), self.txs.last()) {
            (Some(&a), Some(&b)) => Ok((a, b + 1)),
            _ => Err(BenchError::Store {
                store: LABEL.into(),
                op: "log",
                message: "no data transactions".into(),
            }),
        }
    }

    /// Measures `row`.
    pub fn run(&self, row: &Row, plan: Plan) -> Result<Measured, BenchError> {
        let what = format!("{LABEL} {}", row.name);
        let snap = self.database.db().map_err(err("snapshot"))?;
        let text = rows::text(row.kind);
        match row.kind {
            Kind::Query(basis, q) => {
                let text = text.unwrap_or_default();
                let inputs = match q {
                    Query::Agg => Vec::new(),
                    Query::Lookup => vec![self.lookup.clone()],
                };
                let read = |db: &Db| -> Result<Answer, BenchError> {
                    let got = db.q(text, &inputs).map_err(err("query"))?;
                    match q {
                        Query::Agg => aggregate_pair(&got, true),
                        Query::Lookup => column_sum(&got, 1),
                    }
                };
                match basis {
                    Basis::Current => measure(plan, &what, || read(&snap)),
                    Basis::AsOf(p) => {
                        let tx = self.tx_after(p)?;
                        // The as-of value is made inside the timed call, as a user's
                        // `(d/q q (d/as-of db t))`.
                        measure(plan, &what, || {
                            read(&api::as_of(&snap, tx).map_err(err("as-of"))?)
                        })
                    }
                }
            }
            Kind::EntityHistory => {
                let text = text.unwrap_or_default();
                let e = [Edn::Long(self.history_e as i64)];
                measure(plan, &what, || {
                    let h = api::history(&snap);
                    column_sum(&h.q(text, &e).map_err(err("query"))?, 0)
                })
            }
            Kind::TxRange => {
                let (t1, t2) = self.log_bounds()?;
                measure(plan, &what, || self.tx_range(t1, t2))
            }
            Kind::TxDataQ => {
                let text = text.unwrap_or_default();
                let (t1, t2) = self.log_bounds()?;
                let long = |x: u64| Input::Value(Edn::Long(x as i64));
                measure(plan, &what, || {
                    let inputs = [
                        Input::Db(snap.clone()),
                        api::log(&snap),
                        long(t1),
                        long(t2),
                        long(self.value_attr as u64),
                    ];
                    aggregate_pair(&datalith::q(text, &inputs).map_err(err("query"))?, false)
                })
            }
        }
    }

    /// Every `:item/value` datom of the log entries `t1 <= tx < t2`, counted and summed.
    fn tx_range(&self, t1: u64, t2: u64) -> Result<Answer, BenchError> {
        let (mut count, mut checksum) = (0u64, 0i64);
        for entry in self
            .database
            .tx_range(Some(t1), Some(t2))
            .map_err(err("tx_range"))?
        {
            for d in entry.map_err(err("tx_range"))?.datoms {
                if d.a == self.value_attr {
                    count += 1;
                    if let Value::Long(v) = d.v {
                        checksum += v;
                    }
                }
            }
        }
        Ok(Answer { count, checksum })
    }
}

impl Drop for DatalithPeer {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.path);
    }
}

/// The tuples of a query result (a set or vector of tuples).
fn tuples(e: &Edn) -> Result<Vec<&[Edn]>, BenchError> {
    let bad = || BenchError::Store {
        store: LABEL.into(),
        op: "result",
        message: format!("not a relation: {e}"),
    };
    match e {
        Edn::Set(v) | Edn::Vector(v) | Edn::List(v) => v
            .iter()
            .map(|t| match t {
                Edn::Vector(x) | Edn::List(x) => Ok(x.as_slice()),
                _ => Err(bad()),
            })
            .collect(),
        _ => Err(bad()),
    }
}

fn long(e: &Edn) -> Result<i64, BenchError> {
    match e {
        Edn::Long(x) => Ok(*x),
        other => Err(BenchError::Store {
            store: LABEL.into(),
            op: "result",
            message: format!("not a long: {other}"),
        }),
    }
}

/// The answer of a one-tuple aggregate: `[sum count]` (`sum_first`) or `[count sum]`; no
/// tuple is 0 and 0.
pub fn aggregate_pair(e: &Edn, sum_first: bool) -> Result<Answer, BenchError> {
    let ts = tuples(e)?;
    let Some(t) = ts.first() else {
        return Ok(Answer {
            count: 0,
            checksum: 0,
        });
    };
    let (s, c) = match (t.first(), t.get(1)) {
        (Some(a), Some(b)) if sum_first => (long(a)?, long(b)?),
        (Some(a), Some(b)) => (long(b)?, long(a)?),
        _ => (-1, -1),
    };
    if ts.len() != 1 || c < 0 {
        return Err(BenchError::Store {
            store: LABEL.into(),
            op: "result",
            message: format!("not one [sum count] tuple: {e}"),
        });
    }
    Ok(Answer {
        count: c as u64,
        checksum: s,
    })
}

/// The answer of a relation: its tuples, and the sum of column `col`.
pub fn column_sum(e: &Edn, col: usize) -> Result<Answer, BenchError> {
    let ts = tuples(e)?;
    let mut checksum = 0;
    for t in &ts {
        checksum += long(t.get(col).unwrap_or(&Edn::Nil))?;
    }
    Ok(Answer {
        count: ts.len() as u64,
        checksum,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn answers_of_results() {
        let e = |t: &str| read_one(t).unwrap();
        let a = |count, checksum| Answer { count, checksum };
        assert_eq!(aggregate_pair(&e("[[30 4]]"), true).unwrap(), a(4, 30));
        assert_eq!(aggregate_pair(&e("#{[4 30]}"), false).unwrap(), a(4, 30));
        assert_eq!(aggregate_pair(&e("[]"), true).unwrap(), a(0, 0));
        assert!(aggregate_pair(&e("[[1 2] [3 4]]"), true).is_err());
        assert!(aggregate_pair(&e("7"), true).is_err());
        assert_eq!(column_sum(&e("#{[1 10] [2 20]}"), 1).unwrap(), a(2, 30));
        assert_eq!(
            column_sum(&e("#{[5 100 true] [6 100 false]}"), 0).unwrap(),
            a(2, 11)
        );
        assert!(column_sum(&e("#{[1 :x]}"), 1).is_err());
    }
}
