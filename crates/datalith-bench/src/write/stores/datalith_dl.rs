//! Datalith's Datalog API: schema `:k` long `:db.unique/identity`, `:v` string; each record is
//! the upsert `{:k key :v uuid}`; `transact` (sync) or `transact_with_callback` (async). Reads
//! go through a Datalog query (the level Datalevin's harness reads at) or, for the raw-index
//! row, AVE then EAV.

use datalith::codec::{Keyword, Value};
use datalith::edn::Edn;
use datalith::kv::Durability;
use datalith::store::AttrId;
use datalith::tx::{AttrName, EntityMap, TxData, TxItem, TxValue};
use datalith::{Database, DbOptions};
use std::path::Path;

use crate::common::BenchError;
use crate::write::condition::{Condition, Done, Record};

const STORE: &str = "datalith-datalog";

/// The mixed phase's read as Datalog: the text Datalevin's harness runs
/// (`bench/peers/datalevin/mixed.clj`).
const READ_QUERY: &str = "[:find ?v . :in $ ?k :where [?e :k ?k] [?e :v ?v]]";

pub struct DatalithDl {
    db: Database,
    k: Keyword,
    v: Keyword,
    ids: Option<(AttrId, AttrId)>,
    asynchronous: bool,
}

fn kw(s: &str) -> Keyword {
    Keyword::parse(s)
}

fn key_value(v: &str) -> TxValue {
    TxValue::Value(Value::Keyword(kw(v)))
}

fn attr(ident: &str, ty: &str, unique: bool) -> EntityMap {
    let m = EntityMap::default()
        .set(kw(":db/ident"), key_value(ident))
        .set(kw(":db/valueType"), key_value(ty))
        .set(kw(":db/cardinality"), key_value(":db.cardinality/one"));
    if unique {
        m.set(kw(":db/unique"), key_value(":db.unique/identity"))
    } else {
        m
    }
}

impl DatalithDl {
    pub fn open(
        dir: &Path,
        durability: Durability,
        value_index: datalith::ValueIndex,
        asynchronous: bool,
    ) -> Result<Self, BenchError> {
        let mut options = DbOptions::with_durability(durability);
        options.value_index = value_index;
        options.env.initial_map_bytes = super::DATALITH_MAP_BYTES;
        let db = Database::open(dir, options).map_err(BenchError::store(STORE, "open"))?;
        db.transact(
            TxData::default()
                .map(attr(":k", ":db.type/long", true))
                .map(attr(":v", ":db.type/string", false)),
        )
        .map_err(BenchError::store(STORE, "schema"))?;
        Ok(DatalithDl {
            db,
            k: kw(":k"),
            v: kw(":v"),
            ids: None,
            asynchronous,
        })
    }

    /// The records as maps `{:k key :v value}`, each vector built at its final size (as a
    /// caller who writes in bulk would; grown push by push, it was ~2% of the caller's time
    /// at batch 1000).
    fn data(&self, records: Vec<Record>) -> TxData {
        let (k, v) = (AttrName::parse(&self.k), AttrName::parse(&self.v));
        let items = records
            .into_iter()
            .map(|r| {
                TxItem::Map(EntityMap {
                    id: None,
                    attrs: vec![
                        (k.clone(), TxValue::Value(Value::Long(r.key as i64))),
                        (v.clone(), TxValue::Value(Value::string(&r.value))),
                    ],
                })
            })
            .collect();
        TxData::new(items)
    }

    /// The raw read: the entity of `key` in AVE, then its `:v` in EAV.
    fn read_index(&mut self, key: u64) -> Result<Option<String>, BenchError> {
        let snapshot = self.db.db().map_err(BenchError::store(STORE, "db"))?;
        let (k, v) = self.attr_ids(&snapshot)?;
        let r = snapshot.reader();
        let Some(e) = r
            .first_entity_with(k, &Value::Long(key as i64))
            .map_err(BenchError::store(STORE, "lookup"))?
        else {
            return Ok(None);
        };
        let values = r.values(e, v).map_err(BenchError::store(STORE, "values"))?;
        Ok(values.into_iter().find_map(|x| match x {
            Value::String(s) => Some(s.to_string()),
            _ => None,
        }))
    }

    fn attr_ids(&mut self, snapshot: &datalith::Db) -> Result<(AttrId, AttrId), BenchError> {
        if let Some(ids) = self.ids {
            return Ok(ids);
        }
        let id = |k: &Keyword| {
            snapshot
                .attr(k)
                .map(|a| a.id)
                .ok_or_else(|| BenchError::Store {
                    store: STORE.into(),
                    op: "schema",
                    message: format!("attribute {} missing", k.to_symbol_text()),
                })
        };
        let ids = (id(&self.k)?, id(&self.v)?);
        self.ids = Some(ids);
        Ok(ids)
    }
}

impl Condition for DatalithDl {
    fn write_batch(&mut self, records: Vec<Record>, done: Done) -> Result<(), BenchError> {
        let data = self.data(records);
        if self.asynchronous {
            self.db.transact_with_callback(data, move |r| {
                done(r.map(|_| ()).map_err(|e| e.to_string()))
            });
            return Ok(());
        }
        let result = self.db.transact(data).map(|_| ());
        done(result.as_ref().map(|_| ()).map_err(|e| e.to_string()));
        result.map_err(BenchError::store(STORE, "transact"))
    }

    fn read(&mut self, key: u64) -> Result<Option<String>, BenchError> {
        let snapshot = self.db.db().map_err(BenchError::store(STORE, "db"))?;
        let found = snapshot
            .q(READ_QUERY, &[Edn::Long(key as i64)])
            .map_err(BenchError::store(STORE, "query"))?;
        Ok(match found {
            Edn::String(s) => Some(s),
            _ => None,
        })
    }

    fn read_raw(&mut self, key: u64) -> Option<Result<Option<String>, BenchError>> {
        Some(self.read_index(key))
    }

    fn count(&mut self) -> Result<u64, BenchError> {
        let snapshot = self.db.db().map_err(BenchError::store(STORE, "db"))?;
        let (k, _) = self.attr_ids(&snapshot)?;
        let stats = snapshot
            .reader()
            .stats(k)
            .map_err(BenchError::store(STORE, "stats"))?;
        Ok(stats.datoms)
    }

    fn counters(&self) -> Option<serde_json::Value> {
        let c = self.db.env().commit_counters();
        Some(serde_json::json!({
            "commits": c.batches,
            "requests": c.requests,
            "largest_batch": c.largest_batch,
            "direct_commits": c.direct_batches,
            "map_growths": c.map_growths,
            "log_records": c.log_records,
            "log_records_derived": c.log_records_derived,
            "log_bytes": c.log_bytes,
        }))
    }
}
