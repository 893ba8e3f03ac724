//! Datalith as a peer of workload Q: an on-disk database, durable (fsync per commit),
//! `nosync` (the write-ahead log without its sync, the seed's condition for Datalevin's write
//! tasks: no fsync at commit) or
//! `writemap-mapasync` (`MDB_WRITEMAP | MDB_MAPASYNC`).
//!
//! Write tasks run each time on a fresh database directory with the schema already installed
//! (untimed); the timed part is the transactions only. `init` is `Database::init_db` (open,
//! schema, bulk loader: the scope of Datalevin's `init-db`) on datoms prepared before the clock
//! starts.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use datalith::codec::{Keyword, Value};
use datalith::edn::{read_one, Edn};
use datalith::kv::Durability;
use datalith::query::PlanStep;
use datalith::raw::{Components, Index};
use datalith::tx::{EntityMap, EntityRef, Tempid, TxData, TxOp, TxValue};
use datalith::{Database, Db, DbOptions};

use super::data::{self, Person};
use super::peer::Peer;
use super::tasks::{Kind, Task};
use super::timing::{measure, Cap, Measured, Plan};
use crate::common::BenchError;

/// The schema of seed 003: typed strings, keyword, longs, and `:follows` (unused by the
/// tasks, declared as in the seed), with `:db/index true` on every person attribute: the
/// equivalent of SQLite's index on every column, which a database keeping AVE entries for
/// declared attributes alone (`datalith::ValueIndex::Declared`, Datomic's choice and
/// Datalith's default) needs for the tasks' lookups by value. A database keeping every datom
/// in AVE (`datalith-all`) ignores the key.
pub const SCHEMA: &str = r#"[
 {:db/ident :name :db/valueType :db.type/string :db/cardinality :db.cardinality/one :db/index true}
 {:db/ident :last-name :db/valueType :db.type/string :db/cardinality :db.cardinality/one :db/index true}
 {:db/ident :sex :db/valueType :db.type/keyword :db/cardinality :db.cardinality/one :db/index true}
 {:db/ident :age :db/valueType :db.type/long :db/cardinality :db.cardinality/one :db/index true}
 {:db/ident :salary :db/valueType :db.type/long :db/cardinality :db.cardinality/one :db/index true}
 {:db/ident :follows :db/valueType :db.type/ref :db/cardinality :db.cardinality/many}]"#;

/// The five attributes of a person, as keywords.
struct Attrs {
    name: Keyword,
    last_name: Keyword,
    sex: Keyword,
    age: Keyword,
    salary: Keyword,
}

impl Attrs {
    fn new() -> Attrs {
        let k = |n: &str| Keyword::new(None, n);
        Attrs {
            name: k("name"),
            last_name: k("last-name"),
            sex: k("sex"),
            age: k("age"),
            salary: k("salary"),
        }
    }

    fn all(&self) -> [&Keyword; 5] {
        [
            &self.name,
            &self.last_name,
            &self.sex,
            &self.age,
            &self.salary,
        ]
    }

    /// A person's five (attribute, value) pairs.
    fn values(&self, p: &Person) -> [(Keyword, Value); 5] {
        [
            (self.name.clone(), Value::string(&p.name)),
            (self.last_name.clone(), Value::string(&p.last_name)),
            (self.sex.clone(), Value::Keyword(Keyword::new(None, &p.sex))),
            (self.age.clone(), Value::Long(p.age)),
            (self.salary.clone(), Value::Long(p.salary)),
        ]
    }
}

fn tempid(p: &Person) -> Tempid {
    Tempid::Named(Arc::from(format!("p{}", p.id).as_str()))
}

/// Datalith with one durability.
pub struct DatalithPeer {
    label: String,
    durability: Durability,
    /// Which datoms its databases keep in AVE (the default, the declared ones;
    /// `datalith-all`: every one).
    value_index: datalith::ValueIndex,
    people: Arc<Vec<Person>>,
    dir: PathBuf,
    attrs: Attrs,
    runs: u64,
    /// The loaded database the read tasks query (made on first use).
    loaded: Option<(Database, PathBuf)>,
}

impl DatalithPeer {
    /// A peer whose databases go under `dir`.
    pub fn new(durability: Durability, people: Arc<Vec<Person>>, dir: &Path) -> DatalithPeer {
        let label = match durability {
            Durability::Durable => "datalith".to_string(),
            d => format!("datalith-{}", d.label()),
        };
        DatalithPeer {
            label,
            durability,
            value_index: datalith::ValueIndex::default(),
            people,
            dir: dir.to_path_buf(),
            attrs: Attrs::new(),
            runs: 0,
            loaded: None,
        }
    }

    /// `datalith-all`: durable, every datom in AVE (Datalevin's choice, and Datalith's
    /// default before 2026-12-08).
    pub fn all(people: Arc<Vec<Person>>, dir: &Path) -> DatalithPeer {
        let mut peer = DatalithPeer::new(Durability::Durable, people, dir);
        peer.label = "datalith-all".to_string();
        peer.value_index = datalith::ValueIndex::All;
        peer
    }

    /// Options of this peer's databases.
    fn options(&self) -> DbOptions {
        let mut o = DbOptions::with_durability(self.durability);
        o.value_index = self.value_index;
        o
    }

    fn err<E: std::fmt::Display>(&self, op: &'static str) -> impl FnOnce(E) -> BenchError {
        BenchError::store(&self.label, op)
    }

    /// A fresh, empty directory for one run.
    fn fresh_path(&mut self) -> Result<PathBuf, BenchError> {
        self.runs += 1;
        let path = self.dir.join(format!("{}-{}", self.label, self.runs));
        let _ = std::fs::remove_dir_all(&path);
        std::fs::create_dir_all(&path).map_err(BenchError::io(&path))?;
        Ok(path)
    }

    /// A fresh, empty database with the schema (untimed).
    fn fresh(&mut self) -> Result<(Database, PathBuf), BenchError> {
        let path = self.fresh_path()?;
        let db = Database::open(&path, self.options()).map_err(self.err("open"))?;
        let schema = read_one(SCHEMA).map_err(self.err("schema"))?;
        let data = datalith::TxData::from_edn(&schema).map_err(self.err("schema"))?;
        db.transact(data).map_err(self.err("schema"))?;
        Ok((db, path))
    }

    /// Every person as one entity map with a string tempid.
    fn all_maps(&self) -> TxData {
        let mut data = TxData::default();
        for p in self.people.iter() {
            data = data.map(self.map(p, EntityRef::Temp(tempid(p))));
        }
        data
    }

    fn map(&self, p: &Person, id: EntityRef) -> EntityMap {
        let mut m = EntityMap::with_id(id);
        for (a, v) in self.attrs.values(p) {
            m = m.set(a, v);
        }
        m
    }

    /// A fresh database holding every person, and the entity id of each (file order).
    fn loaded_fresh(&mut self) -> Result<(Database, PathBuf, Vec<u64>), BenchError> {
        let (db, path) = self.fresh()?;
        let report = db.transact(self.all_maps()).map_err(self.err("load"))?;
        let ids = self
            .people
            .iter()
            .map(|p| {
                report
                    .tempid(&format!("p{}", p.id))
                    .ok_or_else(|| BenchError::Store {
                        store: self.label.clone(),
                        op: "load",
                        message: format!("tempid p{} not resolved", p.id),
                    })
            })
            .collect::<Result<Vec<_>, _>>()?;
        Ok((db, path, ids))
    }

    /// Datoms of the five attributes in the database (read from AVE after the task).
    fn datom_count(&self, db: &Database) -> Result<u64, BenchError> {
        let snap = db.db().map_err(self.err("snapshot"))?;
        let mut n = 0;
        for k in self.attrs.all() {
            if let Some(a) = snap.attr(k) {
                let c = Components {
                    a: Some(a.id),
                    ..Components::default()
                };
                n += snap
                    .datoms(Index::Ave, &c)
                    .map_err(self.err("count"))?
                    .len() as u64;
            }
        }
        Ok(n)
    }

    fn finish(&self, db: Database, path: PathBuf) -> Result<u64, BenchError> {
        let n = self.datom_count(&db)?;
        drop(db);
        let _ = std::fs::remove_dir_all(&path);
        Ok(n)
    }

    fn run_write(&mut self, task: &Task, plan: Plan) -> Result<Measured, BenchError> {
        let label = self.label.clone();
        let me = std::cell::RefCell::new(self);
        let what = format!("{label} {}", task.name);
        match task.name {
            // init's timer includes opening the database and installing the schema (as
            // Datalevin's `init-db` and Datascript's `init_db` do), then the bulk loader.
            "init" => measure(
                plan,
                &what,
                || {
                    let mut m = me.borrow_mut();
                    let path = m.fresh_path()?;
                    // Datalevin's init-db: datoms with their entity ids, prepared before the
                    // clock starts.
                    let mut datoms = Vec::new();
                    for p in m.people.iter() {
                        let e = datalith::raw::USER_PARTITION_START + p.id;
                        for (a, v) in m.attrs.values(p) {
                            datoms.push((e, a, v));
                        }
                    }
                    let schema = read_one(SCHEMA).map_err(m.err("schema"))?;
                    let schema = datalith::TxData::from_edn(&schema).map_err(m.err("schema"))?;
                    Ok((path, schema, datoms, m.options()))
                },
                |(path, schema, datoms, options)| {
                    let db = Database::init_db(&path, options, schema, &datoms)
                        .map_err(BenchError::store(&label, "init"))?;
                    Ok((db, path))
                },
                |(db, path)| me.borrow().finish(db, path),
            ),
            "add-1" => measure(
                plan,
                &what,
                || {
                    let mut m = me.borrow_mut();
                    let (db, path) = m.fresh()?;
                    let rows: Vec<[(Keyword, Value); 5]> =
                        m.people.iter().map(|p| m.attrs.values(p)).collect();
                    Ok((db, path, rows))
                },
                |(db, path, rows)| {
                    let cap = Cap::start(plan.cap_secs);
                    let total = rows.len();
                    let fail = |e: datalith::tx::TxError| BenchError::Store {
                        store: label.clone(),
                        op: "add-1",
                        message: e.to_string(),
                    };
                    for (i, row) in rows.into_iter().enumerate() {
                        cap.check(&label, i * 5, total * 5)?;
                        let mut e: Option<u64> = None;
                        for (a, v) in row {
                            let target = match e {
                                Some(id) => EntityRef::Id(id),
                                None => EntityRef::Temp(Tempid::Named(Arc::from("p"))),
                            };
                            let report = db
                                .transact(TxData::default().op(TxOp::Add {
                                    e: target,
                                    a,
                                    v: TxValue::Value(v),
                                }))
                                .map_err(fail)?;
                            if e.is_none() {
                                e = report.tempid("p");
                            }
                        }
                    }
                    Ok((db, path))
                },
                |(db, path)| me.borrow().finish(db, path),
            ),
            "add-5" => measure(
                plan,
                &what,
                || {
                    let mut m = me.borrow_mut();
                    let (db, path) = m.fresh()?;
                    let txs: Vec<TxData> = m
                        .people
                        .iter()
                        .map(|p| TxData::default().map(m.map(p, EntityRef::Temp(tempid(p)))))
                        .collect();
                    Ok((db, path, txs))
                },
                |(db, path, txs)| {
                    let cap = Cap::start(plan.cap_secs);
                    let total = txs.len();
                    for (i, tx) in txs.into_iter().enumerate() {
                        cap.check(&label, i, total)?;
                        db.transact(tx)
                            .map_err(BenchError::store(&label, "add-5"))?;
                    }
                    Ok((db, path))
                },
                |(db, path)| me.borrow().finish(db, path),
            ),
            "add-all" => measure(
                plan,
                &what,
                || {
                    let mut m = me.borrow_mut();
                    let (db, path) = m.fresh()?;
                    let data = m.all_maps();
                    Ok((db, path, data))
                },
                |(db, path, data)| {
                    db.transact(data)
                        .map_err(BenchError::store(&label, "add-all"))?;
                    Ok((db, path))
                },
                |(db, path)| me.borrow().finish(db, path),
            ),
            "retract-5" => measure(
                plan,
                &what,
                || {
                    let mut m = me.borrow_mut();
                    let (db, path, ids) = m.loaded_fresh()?;
                    let order: Vec<u64> = data::retract_order(&m.people)
                        .into_iter()
                        .map(|i| ids[i])
                        .collect();
                    Ok((db, path, order))
                },
                |(db, path, order)| {
                    let cap = Cap::start(plan.cap_secs);
                    let total = order.len();
                    for (i, e) in order.into_iter().enumerate() {
                        cap.check(&label, i, total)?;
                        db.transact(TxData::default().op(TxOp::RetractEntity {
                            e: EntityRef::Id(e),
                        }))
                        .map_err(BenchError::store(&label, "retract-5"))?;
                    }
                    Ok((db, path))
                },
                |(db, path)| me.borrow().finish(db, path),
            ),
            other => Err(BenchError::Arg {
                arg: "--tasks",
                message: format!("{other} is not a write task"),
            }),
        }
    }

    /// The loaded database of the read tasks.
    fn reading(&mut self) -> Result<Db, BenchError> {
        if self.loaded.is_none() {
            let (db, path, _) = self.loaded_fresh()?;
            self.loaded = Some((db, path));
        }
        match &self.loaded {
            Some((db, _)) => db.db().map_err(self.err("snapshot")),
            None => unreachable!("loaded just above"),
        }
    }

    fn run_read(&mut self, task: &Task, plan: Plan) -> Result<Measured, BenchError> {
        let snap = self.reading()?;
        let label = self.label.clone();
        let what = format!("{label} {}", task.name);
        let inputs = inputs(task, &label)?;
        match task.query {
            Some(text) => measure(
                plan,
                &what,
                || Ok(()),
                |()| {
                    snap.q(text, &inputs)
                        .map_err(BenchError::store(&label, "query"))
                },
                |edn| Ok(result_len(&edn)),
            ),
            None => {
                let name = self.attrs.name.clone();
                let last = self.attrs.last_name.clone();
                let (Some(a_name), Some(a_last)) = (snap.attr(&name), snap.attr(&last)) else {
                    return Err(BenchError::Store {
                        store: label,
                        op: "lookup-raw",
                        message: "schema lacks :name or :last-name".into(),
                    });
                };
                let (a_name, a_last) = (a_name.id, a_last.id);
                let ivan = Value::string("Ivan");
                measure(
                    plan,
                    &what,
                    || Ok(()),
                    |()| lookup_raw(&snap, a_name, a_last, &ivan, &label),
                    |v| Ok(v.len() as u64),
                )
            }
        }
    }

    /// The executed plan of a read task (estimated and actual sizes per step).
    pub fn explain(&mut self, task: &Task) -> Result<Vec<PlanStep>, BenchError> {
        let Some(text) = task.query else {
            return Ok(Vec::new());
        };
        let snap = self.reading()?;
        let inputs = inputs(task, &self.label)?;
        let (_, plan) = snap.explain(text, &inputs).map_err(self.err("explain"))?;
        Ok(plan.steps)
    }
}

impl Drop for DatalithPeer {
    fn drop(&mut self) {
        if let Some((db, path)) = self.loaded.take() {
            drop(db);
            let _ = std::fs::remove_dir_all(path);
        }
    }
}

/// The raw lookup of seed 001 at the lowest public level: the AVE list of `:name` = value,
/// then each entity's `:last-name` from EAV (`IndexReader::entities_with`, then
/// `values_of_each`, which reads the entities' EAV lists in ascending order through one
/// cursor). The `Db::datoms` route (AVE, then EAV with entity and attribute) gives the same
/// datoms but decodes each entity's every attribute before filtering.
fn lookup_raw(
    snap: &Db,
    a_name: u32,
    a_last: u32,
    v: &Value,
    label: &str,
) -> Result<Vec<Value>, BenchError> {
    let r = snap.reader();
    let es = r
        .entities_with(a_name, v)
        .map_err(BenchError::store(label, "entities_with"))?;
    let mut out = Vec::with_capacity(es.len());
    r.values_of_each(&es, a_last, &mut out)
        .map_err(BenchError::store(label, "values_of_each"))?;
    Ok(out)
}

fn inputs(task: &Task, label: &str) -> Result<Vec<Edn>, BenchError> {
    task.input
        .map(|i| read_one(i).map_err(BenchError::store(label, "input")))
        .into_iter()
        .collect()
}

/// Rows of a query result (a set or vector of tuples, or one value).
pub fn result_len(e: &Edn) -> u64 {
    match e {
        Edn::Set(v) | Edn::Vector(v) | Edn::List(v) => v.len() as u64,
        Edn::Nil => 0,
        _ => 1,
    }
}

impl Peer for DatalithPeer {
    fn runs(&self, task: &Task) -> bool {
        task.kind == Kind::Write || self.durability == Durability::Durable
    }

    fn run(&mut self, task: &Task, plan: Plan) -> Result<Measured, BenchError> {
        match task.kind {
            Kind::Write => self.run_write(task, plan),
            Kind::Read => self.run_read(task, plan),
        }
    }
}
