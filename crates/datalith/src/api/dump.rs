//! `Db::dump`: the schema and every datom as EDN tx data that reloads to the same database.
//!
//! The text is two forms, each one transaction: first the user attributes (maps of their
//! schema datoms), then every user entity as a map whose `:db/id` is a string tempid
//! `"e<old id>"`. Refs to user entities are written as those tempids, so the reloaded
//! database gets fresh ids and the same graph; refs to attributes are written as their
//! idents, and so are refs to the built-in ident entities (`:db/valueType :db.type/string`);
//! the built-in entities themselves are not dumped (every database has them). Transaction
//! entities (`:db/txInstant`, tx metadata) are not dumped: a reload makes its own. Everything
//! sits in one entity transaction because tempids only live within one.

use std::io::Write;
use std::ops::Bound;

use crate::codec::{Value, ValueType};
use crate::db::Db;
use crate::edn::{edn_from_value, to_edn_string};
use crate::kv::Direction;
use crate::store::ids::{partition_of, Partition, ATTR_PARTITION_END, USER_PARTITION_START};
use crate::store::keys;
use crate::store::schema::builtin;
use crate::store::{AttrId, EntityId, StoreError};

/// Why a dump failed.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum DumpError {
    /// Reading the snapshot failed.
    #[error(transparent)]
    Store(#[from] StoreError),
    /// Writing the output failed.
    #[error("writing the dump: {0}")]
    Io(#[from] std::io::Error),
}

impl DumpError {
    /// The error's stable category (see `crate::error`).
    pub fn category(&self) -> crate::error::Category {
        match self {
            DumpError::Store(e) => e.category(),
            DumpError::Io(e) => crate::error::io_category(e),
        }
    }

    /// The error's structured fields (see `crate::error`).
    pub fn fields(&self) -> Vec<crate::error::Field> {
        match self {
            DumpError::Store(e) => e.fields(),
            DumpError::Io(_) => Vec::new(),
        }
    }
}

impl From<crate::kv::KvError> for DumpError {
    fn from(e: crate::kv::KvError) -> Self {
        DumpError::Store(e.into())
    }
}

/// What a dump wrote.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct DumpSummary {
    /// User attributes.
    pub attributes: u64,
    /// User entities.
    pub entities: u64,
    /// Datoms of user entities.
    pub datoms: u64,
}

/// The tempid a dump gives entity `e`.
pub fn dump_tempid(e: EntityId) -> String {
    format!("e{e}")
}

impl Db {
    /// Writes the dump of this snapshot to `out`.
    pub fn dump(&self, out: &mut dyn Write) -> Result<DumpSummary, DumpError> {
        self.dump_with_progress(out, &mut |_| {})
    }

    /// [`Db::dump`], calling `progress` with the datoms written so far every few thousand.
    pub fn dump_with_progress(
        &self,
        out: &mut dyn Write,
        progress: &mut dyn FnMut(u64),
    ) -> Result<DumpSummary, DumpError> {
        let mut summary = DumpSummary::default();
        let r = self.reader();
        let schema = self.schema();
        let ident = |a: AttrId| {
            schema
                .get(a)
                .map_or_else(|| format!(":db.unknown/attr-{a}"), |x| x.ident.to_string())
        };

        writeln!(
            out,
            ";; Datalith dump: schema, then entities (tempids \"e<id>\")"
        )?;
        writeln!(out, "[")?;
        let mut last: Option<EntityId> = None;
        let mut line = String::new();
        r.scan_entities(
            builtin::FIRST_USER_ATTR as EntityId,
            ATTR_PARTITION_END,
            |e, a, vb| {
                if last != Some(e) {
                    flush_map(&mut line, out)?;
                    line.push('{');
                    last = Some(e);
                    summary.attributes += 1;
                } else {
                    line.push(' ');
                }
                let v = r.decode_value(a, vb)?;
                line.push_str(&ident(a));
                line.push(' ');
                line.push_str(&value_text(
                    self,
                    &v,
                    schema.get(a).is_some_and(|x| x.is_ref()),
                ));
                Ok(true)
            },
        )?;
        flush_map(&mut line, out)?;
        writeln!(out, "]")?;

        writeln!(out, "[")?;
        let mut current: Option<EntityId> = None;
        let mut values: Vec<(AttrId, Value)> = Vec::new();
        let mut failure: Option<std::io::Error> = None;
        let mut emit = |e: EntityId, values: &mut Vec<(AttrId, Value)>| -> std::io::Result<()> {
            if values.is_empty() {
                return Ok(());
            }
            let text = entity_text(self, e, values);
            values.clear();
            writeln!(out, "{text}")
        };
        for entry in r.view.range(
            &r.t.eav,
            Bound::Included(&keys::eav_key(USER_PARTITION_START)[..]),
            Bound::Excluded(&keys::eav_key(crate::store::ids::TX_PARTITION_START)[..]),
            Direction::Forward,
        )? {
            let (k, raw) = entry?;
            let e = keys::read_entity(k).ok_or_else(|| StoreError::Corrupt {
                detail: format!("EAV key of {} bytes", k.len()),
            })?;
            let (a, vb) = keys::split_attr(raw).ok_or_else(|| StoreError::Corrupt {
                detail: format!("EAV value of {} bytes", raw.len()),
            })?;
            if current != Some(e) {
                if let Some(prev) = current {
                    if let Err(x) = emit(prev, &mut values) {
                        failure = Some(x);
                        break;
                    }
                }
                current = Some(e);
                summary.entities += 1;
            }
            values.push((a, r.decode_value(a, vb)?));
            summary.datoms += 1;
            if summary.datoms % 4096 == 0 {
                progress(summary.datoms);
            }
        }
        if let Some(x) = failure {
            return Err(x.into());
        }
        if let Some(prev) = current {
            emit(prev, &mut values)?;
        }
        writeln!(out, "]")?;
        progress(summary.datoms);
        Ok(summary)
    }
}

fn flush_map(line: &mut String, out: &mut dyn Write) -> Result<(), StoreError> {
    if !line.is_empty() {
        line.push('}');
        writeln!(out, " {line}").map_err(|e| StoreError::Kv(e.into()))?;
        line.clear();
    }
    Ok(())
}

/// One entity as a map; cardinality-many values as a set, and tuple values of a
/// cardinality-many attribute as separate `:db/add` operations (a set of vectors would read
/// as one tuple).
fn entity_text(db: &Db, e: EntityId, values: &[(AttrId, Value)]) -> String {
    let schema = db.schema();
    let id = to_edn_string(&crate::edn::Edn::String(dump_tempid(e)));
    let mut map = format!(" {{:db/id {id}");
    let mut ops = String::new();
    let mut i = 0;
    while i < values.len() {
        let a = values[i].0;
        let mut j = i;
        while j < values.len() && values[j].0 == a {
            j += 1;
        }
        let attr = schema.get(a);
        let name = attr.map_or_else(|| format!(":db.unknown/attr-{a}"), |x| x.ident.to_string());
        let printed: Vec<String> = values[i..j]
            .iter()
            .map(|(_, v)| value_text(db, v, attr.is_some_and(|x| x.is_ref())))
            .collect();
        let many = attr.is_some_and(|x| x.is_many());
        let tuple = attr.is_some_and(|x| x.value_type == ValueType::Tuple);
        if many && tuple {
            for p in printed {
                ops.push_str(&format!(" [:db/add {id} {name} {p}]\n"));
            }
        } else if many {
            map.push_str(&format!(" {name} #{{{}}}", printed.join(" ")));
        } else {
            for p in printed {
                map.push_str(&format!(" {name} {p}"));
            }
        }
        i = j;
    }
    map.push('}');
    if ops.is_empty() {
        map
    } else {
        format!("{map}\n{}", ops.trim_end_matches('\n'))
    }
}

fn value_text(db: &Db, v: &Value, is_ref: bool) -> String {
    match (is_ref, v) {
        (true, Value::Ref(t)) => match partition_of(*t) {
            Partition::User => to_edn_string(&crate::edn::Edn::String(dump_tempid(*t))),
            // An attribute or a built-in ident entity (`:db.type/string`): by its ident.
            Partition::Attributes => db
                .schema()
                .get(*t as AttrId)
                .map(|x| x.ident.clone())
                .or_else(|| crate::store::bootstrap::ident_of(*t))
                .map_or_else(|| t.to_string(), |k| k.to_string()),
            Partition::Transactions => t.to_string(),
        },
        _ => to_edn_string(&edn_from_value(v)),
    }
}

#[cfg(test)]
mod tests {
    use crate::edn::read_all;
    use crate::tx::edn::tx_data_from_edn;
    use crate::{Database, DbOptions};

    fn load(db: &Database, text: &str) {
        for form in read_all(text).unwrap() {
            db.transact(tx_data_from_edn(&form).unwrap()).unwrap();
        }
    }

    const QUERIES: &[&str] = &[
        "[:find ?n ?t :where [?e :name ?n] [?e :tag ?t]]",
        "[:find ?n ?fn :where [?e :name ?n] [?e :friend ?f] [?f :name ?fn]]",
        "[:find ?n ?cn :where [?e :name ?n] [?e :child ?c] [?c :name ?cn]]",
        "[:find ?n ?t :where [?e :name ?n] [?e :pt ?t]]",
        "[:find ?d . :where [?a :db/ident :name] [?a :db/doc ?d]]",
        "[:find (count ?e) . :where [?e :name]]",
    ];

    #[test]
    fn a_dump_reloads_to_the_same_data() {
        let dir = tempfile::tempdir().unwrap();
        let db = Database::open(dir.path(), DbOptions::default()).unwrap();
        load(
            &db,
            r#"[{:db/ident :name :db/valueType :db.type/string :db/cardinality :db.cardinality/one :db/unique :db.unique/identity :db/doc "a \"name\""}
                {:db/ident :tag :db/valueType :db.type/keyword :db/cardinality :db.cardinality/many}
                {:db/ident :friend :db/valueType :db.type/ref :db/cardinality :db.cardinality/many}
                {:db/ident :child :db/valueType :db.type/ref :db/cardinality :db.cardinality/one :db/isComponent true}
                {:db/ident :pt :db/valueType :db.type/tuple :db/cardinality :db.cardinality/one :db/tupleTypes [:db.type/long :db.type/string]}]
               [{:db/id "a" :name "Ann" :tag [:x :y] :friend "b" :child {:name "Kid"}}
                {:db/id "b" :name "Bob" :friend "a" :pt [1 "p"]}]"#,
        );
        let mut text = Vec::new();
        let summary = db.db().unwrap().dump(&mut text).unwrap();
        assert_eq!((summary.attributes, summary.entities), (5, 3));
        let text = String::from_utf8(text).unwrap();

        let dir2 = tempfile::tempdir().unwrap();
        let db2 = Database::open(dir2.path(), DbOptions::default()).unwrap();
        load(&db2, &text);
        for q in QUERIES {
            let a = db.db().unwrap().q(q, &[]).unwrap();
            let b = db2.db().unwrap().q(q, &[]).unwrap();
            assert_eq!(a, b, "{q}");
            assert_ne!(a, crate::edn::Edn::Set(vec![]), "{q}");
        }
        let mut again = Vec::new();
        db2.db().unwrap().dump(&mut again).unwrap();
        assert_eq!(
            read_all(&text).unwrap().len(),
            read_all(&String::from_utf8(again).unwrap()).unwrap().len()
        );
    }
}
