//! `Db::check`: verifies that the two indexes agree entry for entry and that the per-attribute
//! statistics match the data.
//!
//! Both indexes hold every datom (`eav`: entity -> `attr ++ value`; `ave`: `attr ++ value` ->
//! entity), so they must describe the same set. Checking every entry of one against the other
//! costs a B-tree lookup plus a walk of the key's sorted values; an EAV key holds a handful of
//! values, an AVE key can hold thousands (`[:sex :male]`). So the check is done in the cheap
//! direction for every entry (each AVE entry must be in EAV), and the expensive direction only
//! for attributes whose counts show that EAV has more: if AVE has no entry outside EAV and as
//! many entries as EAV for an attribute, the two sets are equal.

use std::collections::{BTreeMap, HashSet};
use std::ops::Bound;

use crate::db::Db;
use crate::kv::Direction;
use crate::store::ids::{partition_of, Partition};
use crate::store::keys::{self, ATTR_BYTES};
use crate::store::reader::decode_exact;
use crate::store::tables::{meta_key, AttrStats};
use crate::store::{AttrId, EntityId, StoreError};

/// One inconsistency found by [`Db::check`].
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum Inconsistency {
    /// A datom in EAV with no matching AVE entry.
    MissingInAve {
        /// Entity.
        e: EntityId,
        /// Attribute id.
        a: AttrId,
        /// The value, printed as EDN (or as bytes if it does not decode).
        value: String,
    },
    /// An AVE entry with no matching datom in EAV.
    MissingInEav {
        /// Entity.
        e: EntityId,
        /// Attribute id.
        a: AttrId,
        /// The value, printed.
        value: String,
    },
    /// An index entry whose bytes cannot have been written by the store.
    Malformed {
        /// `"eav"` or `"ave"`.
        index: &'static str,
        /// What is wrong, with the first bytes.
        detail: String,
    },
    /// A datom whose attribute id is not in the schema.
    UnknownAttribute {
        /// Entity.
        e: EntityId,
        /// The unknown attribute id.
        a: AttrId,
    },
    /// An id counter at or below an id already in use: the next entity it hands out would
    /// take that id over.
    Counter {
        /// `next_entity`, `next_attr` or `next_tx`.
        counter: &'static str,
        /// The recorded next id.
        recorded: u64,
        /// The highest id with a datom in that partition.
        highest: u64,
    },
    /// Recorded statistics that differ from the data in AVE.
    Stats {
        /// Attribute id.
        a: AttrId,
        /// What the statistics record says.
        recorded: AttrStats,
        /// What the index holds.
        actual: AttrStats,
    },
    /// The value sketch of an attribute without AVE entries misses values it holds
    /// (`store::sketch`): the planner's estimate of its distinct values is then too low.
    Sketch {
        /// Attribute id.
        a: AttrId,
    },
    /// The transaction log disagrees with the indexes, or an entry does not decode.
    TxLog {
        /// What is wrong.
        detail: String,
    },
    /// The history index disagrees with EAV or with the transaction log, or an event does
    /// not parse.
    History {
        /// What is wrong.
        detail: String,
    },
    /// A full-text index that disagrees with itself or with its attribute's values.
    FullText {
        /// What disagrees.
        detail: String,
    },
    /// An attribute's datoms in the wrong place for the database's choice of AVE entries
    /// (`store::value_index`): in AVE and in `attr_entities` both, in the one the schema
    /// does not name, or an entity of a datom missing from `attr_entities`.
    ValueIndex {
        /// What is wrong.
        detail: String,
    },
}

impl std::fmt::Display for Inconsistency {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Inconsistency::MissingInAve { e, a, value } => {
                write!(f, "datom [{e} {a} {value}] is in EAV but not in AVE")
            }
            Inconsistency::MissingInEav { e, a, value } => {
                write!(f, "datom [{e} {a} {value}] is in AVE but not in EAV")
            }
            Inconsistency::Malformed { index, detail } => {
                write!(f, "malformed {index} entry: {detail}")
            }
            Inconsistency::UnknownAttribute { e, a } => {
                write!(f, "entity {e} has a datom of attribute id {a}, which is not in the schema")
            }
            Inconsistency::Counter {
                counter,
                recorded,
                highest,
            } => write!(
                f,
                "id counter {counter} is {recorded}, but id {highest} is already in use"
            ),
            Inconsistency::Stats {
                a,
                recorded,
                actual,
            } => write!(
                f,
                "statistics of attribute {a}: recorded {} datoms / {} distinct values, index holds {} / {}",
                recorded.datoms, recorded.distinct, actual.datoms, actual.distinct
            ),
            Inconsistency::Sketch { a } => write!(
                f,
                "the value sketch of attribute {a} misses values the attribute holds"
            ),
            Inconsistency::TxLog { detail } => write!(f, "transaction log: {detail}"),
            Inconsistency::History { detail } => write!(f, "history index: {detail}"),
            Inconsistency::FullText { detail } => write!(f, "full-text index: {detail}"),
            Inconsistency::ValueIndex { detail } => write!(f, "attr_entities: {detail}"),
        }
    }
}

/// What [`Db::check`] found.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct CheckReport {
    /// Entries walked in EAV.
    pub eav_entries: u64,
    /// Entries walked in AVE.
    pub ave_entries: u64,
    /// Attributes with data or statistics.
    pub attributes: u64,
    /// Every inconsistency, in the order found.
    pub problems: Vec<Inconsistency>,
}

impl CheckReport {
    /// Whether the indexes and statistics are consistent.
    pub fn is_ok(&self) -> bool {
        self.problems.is_empty()
    }
}

/// Progress of a check: entries walked so far, of about `total` (both indexes together).
#[derive(Debug, Clone, Copy)]
pub struct CheckProgress {
    /// Entries walked.
    pub done: u64,
    /// Entries to walk (LMDB's entry counts of both indexes).
    pub total: u64,
}

/// Every entry of `table`, in key order.
pub(super) fn every_entry<'t>(
    view: crate::kv::View<'t>,
    table: &crate::kv::Table,
) -> Result<crate::kv::Entries<'t>, crate::kv::KvError> {
    view.range(
        table,
        Bound::Unbounded,
        Bound::Unbounded,
        Direction::Forward,
    )
}

fn printed(vb: &[u8]) -> String {
    match decode_exact(vb) {
        Ok(v) => crate::edn::to_edn_string(&crate::edn::edn_from_value(&v)),
        Err(_) => format!("#bytes {vb:02x?}"),
    }
}

fn malformed(index: &'static str, what: &str, bytes: &[u8]) -> Inconsistency {
    Inconsistency::Malformed {
        index,
        detail: format!(
            "{what}: {} bytes {:02x?}",
            bytes.len(),
            &bytes[..bytes.len().min(24)]
        ),
    }
}

/// Per attribute, its datoms in EAV.
fn counts_eav(counts: &BTreeMap<AttrId, Counts>) -> BTreeMap<AttrId, u64> {
    counts.iter().map(|(a, c)| (*a, c.eav)).collect()
}

/// Per-attribute counts seen while walking.
#[derive(Default)]
struct Counts {
    eav: u64,
    ave: u64,
    ave_not_in_eav: u64,
    distinct: u64,
}

impl Db {
    /// Verifies the indexes and statistics of this snapshot. Inconsistencies are reported,
    /// not returned as errors; an error means the snapshot could not be read at all. Example:
    /// [`crate::admin`].
    pub fn check(&self) -> Result<CheckReport, StoreError> {
        self.check_with_progress(&mut |_| {})
    }

    /// [`Db::check`], calling `progress` every few thousand entries.
    pub fn check_with_progress(
        &self,
        progress: &mut dyn FnMut(CheckProgress),
    ) -> Result<CheckReport, StoreError> {
        let r = self.reader();
        let view = r.view;
        let t = r.t;
        let total = view.len(&t.eav)? + view.len(&t.ave)?;
        let mut done = 0u64;
        let mut tick = |done: u64| {
            if done % 4096 == 0 {
                progress(CheckProgress { done, total });
            }
        };
        let mut report = CheckReport::default();
        let mut counts: BTreeMap<AttrId, Counts> = BTreeMap::new();
        // The highest entity with a datom, per partition (attributes, users, transactions).
        let mut highest = [None::<EntityId>; 3];
        let schema = self.schema();

        // EAV: decodable, known attributes, counted per attribute.
        for entry in every_entry(view, &t.eav)? {
            let (k, raw) = entry?;
            done += 1;
            tick(done);
            report.eav_entries += 1;
            let Some(e) = keys::read_entity(k) else {
                report
                    .problems
                    .push(malformed("eav", "key is not an entity id", k));
                continue;
            };
            let part = match partition_of(e) {
                Partition::Attributes => 0,
                Partition::User => 1,
                Partition::Transactions => 2,
            };
            highest[part] = highest[part].max(Some(e));
            let Some((a, vb)) = keys::split_attr(raw) else {
                report
                    .problems
                    .push(malformed("eav", "value too short", raw));
                continue;
            };
            if let Err(err) = r.decode_value(a, vb) {
                report.problems.push(Inconsistency::Malformed {
                    index: "eav",
                    detail: format!("entity {e} attribute {a}: {err}"),
                });
            }
            if schema.get(a).is_none() {
                report
                    .problems
                    .push(Inconsistency::UnknownAttribute { e, a });
            }
            counts.entry(a).or_default().eav += 1;
        }

        // AVE: every entry must be in EAV; distinct keys counted per attribute.
        let mut last_key: Option<&[u8]> = None;
        let mut vbuf = Vec::with_capacity(64);
        for entry in every_entry(view, &t.ave)? {
            let (k, ev) = entry?;
            done += 1;
            tick(done);
            report.ave_entries += 1;
            let Some((a, vb)) = keys::split_attr(k) else {
                report.problems.push(malformed("ave", "key too short", k));
                continue;
            };
            let Some(e) = keys::read_entity(ev) else {
                report
                    .problems
                    .push(malformed("ave", "value is not an entity id", ev));
                continue;
            };
            let c = counts.entry(a).or_default();
            c.ave += 1;
            if last_key != Some(k) {
                c.distinct += 1;
                last_key = Some(k);
            }
            vbuf.clear();
            vbuf.extend_from_slice(k);
            if !view.list_contains(&t.eav, &keys::eav_key(e), &vbuf)? {
                c.ave_not_in_eav += 1;
                report.problems.push(Inconsistency::MissingInEav {
                    e,
                    a,
                    value: printed(vb),
                });
            }
        }
        progress(CheckProgress { done, total });

        // Attributes listed in `attr_entities` instead of AVE, checked apart.
        let listed = super::check_listed::check_listed(
            &r,
            schema,
            &counts_eav(&counts),
            &mut report.problems,
        )?;

        // EAV entries missing from AVE, only for attributes whose counts say some are.
        for (&a, c) in &counts {
            if listed.contains(&a) || c.eav <= c.ave - c.ave_not_in_eav {
                continue;
            }
            let mut in_ave: HashSet<(EntityId, &[u8])> = HashSet::new();
            let prefix = a.to_be_bytes();
            for entry in view.prefix(&t.ave, &prefix, Direction::Forward)? {
                let (k, ev) = entry?;
                if let Some(e) = keys::read_entity(ev) {
                    in_ave.insert((e, &k[ATTR_BYTES..]));
                }
            }
            for entry in every_entry(view, &t.eav)? {
                let (k, raw) = entry?;
                let (Some(e), Some((ea, vb))) = (keys::read_entity(k), keys::split_attr(raw))
                else {
                    continue;
                };
                if ea == a && !in_ave.contains(&(e, vb)) {
                    report.problems.push(Inconsistency::MissingInAve {
                        e,
                        a,
                        value: printed(vb),
                    });
                }
            }
        }

        // Id counters: each above every id in use in its partition.
        let (next_entity, next_attr, next_tx) =
            crate::tx::run::read_counters(&r).map_err(|e| StoreError::Corrupt {
                detail: e.to_string(),
            })?;
        for (counter, recorded, highest) in [
            ("next_attr", next_attr, highest[0]),
            ("next_entity", next_entity, highest[1]),
            ("next_tx", next_tx, highest[2]),
        ] {
            if let Some(highest) = highest.filter(|&h| h >= recorded) {
                report.problems.push(Inconsistency::Counter {
                    counter,
                    recorded,
                    highest,
                });
            }
        }

        // Statistics: every record, and every attribute with data, against AVE.
        let mut recorded: BTreeMap<AttrId, AttrStats> = BTreeMap::new();
        for entry in view.prefix(&t.meta, meta_key::STATS_PREFIX, Direction::Forward)? {
            let (k, v) = entry?;
            let id = k[meta_key::STATS_PREFIX.len()..]
                .try_into()
                .ok()
                .map(AttrId::from_be_bytes);
            match (id, AttrStats::from_bytes(v)) {
                (Some(a), Some(s)) => {
                    recorded.insert(a, s);
                }
                _ => report
                    .problems
                    .push(malformed("store_meta", "statistics record", v)),
            }
        }
        // The distinct values LMDB counted (`kv::tally`), and those the overlay (transactions
        // LMDB does not hold yet, or speculative ones) creates or empties.
        let mut unheld: BTreeMap<AttrId, i64> = BTreeMap::new();
        view.overlay_key_balance(&t.ave, &[], |key, d| {
            if let Some((a, _)) = keys::split_attr(key) {
                *unheld.entry(a).or_default() += d;
            }
        })?;
        let mut attrs: Vec<AttrId> = counts
            .keys()
            .chain(recorded.keys())
            .chain(unheld.keys())
            .copied()
            .collect();
        attrs.sort_unstable();
        attrs.dedup();
        report.attributes = attrs.len() as u64;
        for a in attrs {
            let mut rec = recorded.get(&a).copied().unwrap_or_default();
            let tallied = r.distinct_tally(a)? + unheld.get(&a).copied().unwrap_or(0);
            rec.distinct = (rec.distinct as i64 + tallied).max(0) as u64;
            let mut actual = counts.get(&a).map_or(AttrStats::default(), |c| AttrStats {
                datoms: c.ave,
                distinct: c.distinct,
            });
            if listed.contains(&a) {
                // Its datoms are counted in EAV; its distinct values are estimated, from a
                // sketch `check_listed` verified.
                actual.datoms = counts.get(&a).map_or(0, |c| c.eav);
                actual.distinct = rec.distinct;
            }
            if rec != actual {
                report.problems.push(Inconsistency::Stats {
                    a,
                    recorded: rec,
                    actual,
                });
            }
        }
        super::check_log::check_tx_log(&r, &mut report.problems)?;
        super::check_history::check_history(&r, schema, &mut report.problems)?;
        super::check_fulltext::check_fulltext(&r, schema, &mut report.problems)?;
        Ok(report)
    }
}

#[cfg(test)]
mod tests {
    use crate::edn::read_one;
    use crate::kv::KvOp;
    use crate::tx::edn::tx_data_from_edn;
    use crate::{Database, DbOptions};

    use super::Inconsistency;

    /// Every datom in AVE too (these tests damage AVE entries).
    fn sample() -> (tempfile::TempDir, Database) {
        let dir = tempfile::tempdir().unwrap();
        let options = DbOptions {
            value_index: crate::ValueIndex::All,
            ..DbOptions::default()
        };
        let db = Database::open(dir.path(), options).unwrap();
        for tx in [
            "[{:db/ident :name :db/valueType :db.type/string :db/cardinality :db.cardinality/one}
              {:db/ident :tag :db/valueType :db.type/keyword :db/cardinality :db.cardinality/many}]",
            r#"[{:name "a" :tag [:x :y]} {:name "b" :tag :x} {:name "a"}]"#,
        ] {
            db.transact(tx_data_from_edn(&read_one(tx).unwrap()).unwrap())
                .unwrap();
        }
        (dir, db)
    }

    #[test]
    fn a_fresh_database_is_consistent() {
        let (_d, db) = sample();
        let report = db.db().unwrap().check().unwrap();
        assert!(report.is_ok(), "{:?}", report.problems);
        assert_eq!(report.eav_entries, report.ave_entries);
    }

    #[test]
    fn a_deleted_ave_entry_is_found() {
        let (_d, db) = sample();
        let snap = db.db().unwrap();
        let a = snap.attr(&crate::codec::Keyword::parse(":tag")).unwrap().id;
        let e = snap.q("[:find ?e . :where [?e :name \"b\"]]", &[]).unwrap();
        let crate::edn::Edn::Long(e) = e else {
            panic!("{e:?}")
        };
        drop(snap);
        let mut key = Vec::new();
        crate::store::reader::attr_value_bytes(
            a,
            &crate::codec::Value::Keyword(crate::codec::Keyword::parse(":x")),
            &mut key,
        );
        let ave = db.env().table("ave", crate::kv::TableKind::List).unwrap();
        db.env()
            .transact_kv(vec![KvOp::list_remove(&ave, key, (e as u64).to_be_bytes())])
            .unwrap();
        let report = db.db().unwrap().check().unwrap();
        assert!(
            report.problems.iter().any(|p| matches!(p,
                Inconsistency::MissingInAve { e: pe, a: pa, value } if *pe == e as u64 && *pa == a && value == ":x")),
            "{:?}",
            report.problems
        );
        assert!(report
            .problems
            .iter()
            .any(|p| matches!(p, Inconsistency::Stats { a: pa, .. } if *pa == a)));
    }

    #[test]
    fn an_id_counter_at_or_below_an_id_in_use_is_found() {
        use crate::store::tables::meta_key;
        // counter, value written over it (relative to the highest id in use), reported?
        let cases: [(&[u8], &str, i64, bool); 5] = [
            (meta_key::NEXT_ENTITY, "next_entity", 0, true),
            (meta_key::NEXT_ENTITY, "next_entity", 1, false),
            (meta_key::NEXT_TX, "next_tx", -5, true),
            (meta_key::NEXT_ATTR, "next_attr", 0, true),
            (meta_key::NEXT_ATTR, "next_attr", 1, false),
        ];
        for (key, name, offset, reported) in cases {
            let (_d, db) = sample();
            let snap = db.db().unwrap();
            let highest_of = |q: &str| match snap.q(q, &[]).unwrap() {
                crate::edn::Edn::Long(n) => n,
                other => panic!("{other:?}"),
            };
            let highest = match name {
                "next_entity" => highest_of("[:find (max ?e) . :where [?e :name]]"),
                "next_tx" => highest_of("[:find (max ?t) . :where [?t :db/txInstant]]"),
                _ => highest_of("[:find (max ?a) . :where [?a :db/ident :tag]]"),
            };
            drop(snap);
            let value = (highest + offset) as u64;
            let meta = db
                .env()
                .table("store_meta", crate::kv::TableKind::Plain)
                .unwrap();
            db.env()
                .transact_kv(vec![KvOp::put(&meta, key.to_vec(), value.to_be_bytes())])
                .unwrap();
            let problems = db.db().unwrap().check().unwrap().problems;
            let found = problems
                .iter()
                .any(|p| matches!(p, Inconsistency::Counter { counter, .. } if *counter == name));
            assert_eq!(found, reported, "{name} {offset}: {problems:?}");
        }
    }

    #[test]
    fn a_deleted_eav_entry_is_found() {
        let (_d, db) = sample();
        let snap = db.db().unwrap();
        let a = snap
            .attr(&crate::codec::Keyword::parse(":name"))
            .unwrap()
            .id;
        let e = snap.q("[:find ?e . :where [?e :name \"b\"]]", &[]).unwrap();
        let crate::edn::Edn::Long(e) = e else {
            panic!("{e:?}")
        };
        drop(snap);
        let mut v = Vec::new();
        crate::store::reader::attr_value_bytes(a, &crate::codec::Value::String("b".into()), &mut v);
        let eav = db.env().table("eav", crate::kv::TableKind::List).unwrap();
        db.env()
            .transact_kv(vec![KvOp::list_remove(&eav, (e as u64).to_be_bytes(), v)])
            .unwrap();
        let report = db.db().unwrap().check().unwrap();
        assert_eq!(
            report.problems,
            vec![
                Inconsistency::MissingInEav {
                    e: e as u64,
                    a,
                    value: "\"b\"".into()
                },
                // The transaction log still asserts it.
                Inconsistency::TxLog {
                    detail: format!(
                        "the log leaves entity {e} with a datom of attribute {a} that EAV lacks"
                    )
                },
                // And so does the history index.
                Inconsistency::History {
                    detail: format!(
                        "the events of entity {e} replay to 2 datoms, EAV holds 1 (or different ones)"
                    )
                }
            ]
        );
    }
}
