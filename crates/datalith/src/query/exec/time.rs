//! Data patterns read from the history index: a pattern that names the transaction or
//! `added` (`[?e ?a ?v ?tx ?added]`), and any pattern on a database value in time (`as-of`,
//! `since`, `history`). The candidate entities come from the pattern's bound parts (a
//! constant or the rows' values of the entity; else the entities holding the attribute, or its
//! value, now, plus those that ever lost it; else every entity with history), their events
//! from the history index through the database's time filter, and the rows join like an input
//! relation's.

use super::*;
use crate::codec::Value;
use crate::query::error::QueryError;
use crate::query::ir::{AttrTerm, Pattern, Term, TimedPattern};
use crate::query::relation::Relation;
use crate::store::{AttrId, EntityId};

impl<'a> Ctx<'a> {
    /// Whether clause source `src` is a database showing its current state (or no database).
    pub(super) fn is_current(&self, src: usize) -> bool {
        self.dbs
            .get(&self.source_of(src))
            .is_none_or(|d| d.time.is_current())
    }

    /// The estimated rows after a pattern read from the history index.
    pub(super) fn estimate_timed(
        &mut self,
        p: &Pattern,
        rel: &Relation,
        n: u64,
    ) -> Result<u64, QueryError> {
        let bound = |t: &Term| match t {
            Term::Var(v) => rel.binds(*v),
            Term::Const(_) => true,
            Term::Blank => false,
        };
        // History holds more than the state: twice the datoms, as a rough share.
        if bound(&p.e) {
            return Ok(n.max(1).saturating_mul(4));
        }
        Ok(match &p.a {
            AttrTerm::Unknown(_) => 0,
            AttrTerm::Attr(a) => {
                let (datoms, distinct) = self.stats(*a)?;
                let per_value = (datoms / distinct.max(1)).max(1);
                if bound(&p.v) {
                    n.max(1).saturating_mul(per_value).saturating_mul(2)
                } else {
                    n.max(1).saturating_mul(datoms.max(1)).saturating_mul(2)
                }
            }
            _ => u64::MAX / 4,
        })
    }

    /// Runs `t` on the active database through its time filter and joins it with `rel`.
    pub(super) fn timed(
        &mut self,
        t: &TimedPattern,
        rel: Relation,
    ) -> Result<Relation, QueryError> {
        let p = &t.p;
        let schema = self.schema;
        let a = match &p.a {
            AttrTerm::Attr(a) => Some(*a),
            AttrTerm::Unknown(_) => None,
            AttrTerm::Var(_) | AttrTerm::Blank => None,
        };
        let coerce_v = |term: &Term| match (term, a) {
            (Term::Const(v), Some(a)) => Term::Const(coerce(schema, a, v)),
            _ => term.clone(),
        };
        let as_entity = |term: &Term| match term {
            Term::Const(v) => Term::Const(entity_of(v).map_or(v.clone(), Value::Ref)),
            _ => term.clone(),
        };
        let terms = [
            as_entity(&p.e),
            attr_term(&p.a),
            coerce_v(&p.v),
            as_entity(&t.tx),
            t.added.clone(),
        ];
        // Neither the entity nor the attribute known: every entity's whole history would be
        // read, which Datomic refuses ("Insufficient bindings, will cause db scan").
        let e_known = match &p.e {
            Term::Const(_) => true,
            Term::Var(v) => rel.binds(*v),
            Term::Blank => false,
        };
        if !e_known && a.is_none() && !matches!(p.a, AttrTerm::Unknown(_)) {
            let names = |t: &Term| match t {
                Term::Var(v) => Some(self.show().var(*v)),
                _ => None,
            };
            return Err(QueryError::InsufficientBinding {
                vars: [&p.e, &attr_term(&p.a)]
                    .into_iter()
                    .filter_map(names)
                    .collect(),
                clause: self
                    .show()
                    .clause(&crate::query::ir::Clause::Timed(0, t.clone())),
            });
        }
        let mut found = Relation::empty(Vec::new());
        if !matches!(p.a, AttrTerm::Unknown(_)) {
            let entities = self.timed_candidates(p, a, &rel, &terms[2])?;
            let filter = self.time;
            let one = a.is_some_and(|a| schema.get(a).is_some_and(|x| !x.is_many()));
            let mut cursor = self.r.history_cursor()?;
            found.rows.reserve(entities.len());
            for e in entities {
                self.budget.tick()?;
                for d in cursor.timed(&filter, e, a, one)? {
                    let v = cursor.value(e, &d)?;
                    found.rows.push(vec![
                        Value::Ref(e),
                        Value::Ref(d.a as u64),
                        v,
                        Value::Ref(d.tx),
                        Value::Boolean(d.added),
                    ]);
                }
            }
        }
        let matched = match_terms(&found, &terms, &self.budget)?;
        rel.join(&matched, &self.budget)
    }

    /// The entities whose events may match `p` (a superset; the rows are matched after).
    fn timed_candidates(
        &mut self,
        p: &Pattern,
        a: Option<AttrId>,
        rel: &Relation,
        value: &Term,
    ) -> Result<Vec<EntityId>, QueryError> {
        let column = |v: &usize| -> Vec<Value> {
            let c = rel.col(*v).expect("bound");
            rel.rows.iter().map(|row| row[c].clone()).collect()
        };
        let mut out: Vec<EntityId> = match &p.e {
            Term::Const(v) => entity_of(v).into_iter().collect(),
            Term::Var(v) if rel.binds(*v) => column(v).iter().filter_map(entity_of).collect(),
            _ => {
                let current = self.time.is_current();
                let Some(a) = a else {
                    return Ok(self.r.history_entities()?);
                };
                let values: Option<Vec<Value>> = match value {
                    Term::Const(v) => Some(vec![v.clone()]),
                    Term::Var(v) if rel.binds(*v) => Some(
                        column(v)
                            .iter()
                            .map(|x| coerce(self.schema, a, x))
                            .collect(),
                    ),
                    _ => None,
                };
                self.hold_listed(a)?;
                let mut out = Vec::new();
                match values {
                    Some(mut values) => {
                        values.sort_unstable();
                        values.dedup();
                        // One cursor for every value (an attribute without AVE entries is
                        // read once for all of them).
                        let mut cursor = self.r.value_cursor()?;
                        for v in &values {
                            self.budget.tick()?;
                            cursor.entities_into(a, v, &mut out)?;
                        }
                    }
                    None => self.r.scan_attr(
                        a,
                        std::ops::Bound::Unbounded,
                        std::ops::Bound::Unbounded,
                        crate::kv::Direction::Forward,
                        |_, e| {
                            out.push(e);
                            Ok(true)
                        },
                    )?,
                }
                // A view in time also shows entities that held the attribute once.
                if !current {
                    out.extend(self.r.entities_that_lost(a)?);
                }
                out
            }
        };
        out.sort_unstable();
        out.dedup();
        Ok(out)
    }
}

impl<'a> Ctx<'a> {
    /// `(tx-ids ?log start end)`: the transaction ids from `start` (inclusive) to `end`
    /// (exclusive), each a transaction id or an instant (either may be left out: open);
    /// `(tx-data ?log ?tx)`: the
    /// datoms of transaction `tx`, each `[e a v tx added]` (Datomic's log functions).
    pub(super) fn log_fn(&self, name: &str, args: &[Value]) -> Result<Value, QueryError> {
        let bad = |m: String| QueryError::BadArguments {
            name: name.to_string(),
            message: m,
        };
        let Some(r) = self.log else {
            return Err(bad(
                "its first argument must be a log given as an input (Input::Log)".into(),
            ));
        };
        let is_log = |v: &Value| matches!(v, Value::Keyword(k) if k.to_string() == crate::query::run::LOG_MARKER);
        let Some(log_table) = &r.t.tx_log else {
            return Err(bad("this database keeps no transaction log".into()));
        };
        match (name, args) {
            ("tx-ids", [log, rest @ ..]) if is_log(log) && rest.len() <= 2 => {
                let start = rest
                    .first()
                    .map(|v| self.log_point(&r, v, name))
                    .transpose()?;
                let end = rest
                    .get(1)
                    .map(|v| self.log_point(&r, v, name))
                    .transpose()?;
                let lo = start.flatten().unwrap_or(0).to_be_bytes();
                let hi = end.flatten().map(u64::to_be_bytes);
                let mut out = Vec::new();
                for entry in r.view.range(
                    log_table,
                    std::ops::Bound::Included(&lo[..]),
                    hi.as_ref().map_or(std::ops::Bound::Unbounded, |h| {
                        std::ops::Bound::Excluded(&h[..])
                    }),
                    crate::kv::Direction::Forward,
                )? {
                    self.budget.tick()?;
                    let (k, _) = entry?;
                    let tx = crate::store::keys::read_entity(k).ok_or_else(|| {
                        QueryError::Store(crate::store::StoreError::Corrupt {
                            detail: "a transaction log key is not 8 bytes".into(),
                        })
                    })?;
                    out.push(Some(Value::Ref(tx)));
                }
                Ok(Value::Tuple(out))
            }
            ("tx-data", [log, tx]) if is_log(log) => {
                let Some(tx) = entity_of(tx) else {
                    return Err(bad(format!(
                        "{} is not a transaction id",
                        crate::edn::to_edn_string(&crate::edn::edn_from_value(tx))
                    )));
                };
                let Some(bytes) = r.view.get(log_table, &tx.to_be_bytes())? else {
                    return Ok(Value::Tuple(Vec::new()));
                };
                let entry = crate::tx::log::decode_entry(tx, bytes)?;
                let datoms = entry
                    .datoms
                    .into_iter()
                    .map(|d| {
                        Some(Value::Tuple(vec![
                            Some(Value::Ref(d.e)),
                            Some(Value::Ref(d.a as u64)),
                            Some(d.v),
                            Some(Value::Ref(d.tx)),
                            Some(Value::Boolean(d.added)),
                        ]))
                    })
                    .collect::<Vec<_>>();
                Ok(Value::Tuple(datoms))
            }
            _ => Err(bad(format!(
                "takes a log and {}",
                if name == "tx-ids" {
                    "a start and an end (transaction ids, instants or nil)"
                } else {
                    "a transaction id"
                }
            ))),
        }
    }

    /// A `tx-ids` bound as a transaction id: an id as it is, an instant as the first
    /// transaction at or after it.
    fn log_point(
        &self,
        r: &crate::store::reader::IndexReader<'_>,
        v: &Value,
        name: &str,
    ) -> Result<Option<EntityId>, QueryError> {
        Ok(match v {
            // `nil`, written as an open end.
            Value::Keyword(k) if k.to_string() == crate::query::parse::OPEN_LOG_BOUND => None,
            Value::Instant(ms) => {
                let mut found = None;
                r.scan_attr(
                    crate::store::schema::builtin::TX_INSTANT,
                    std::ops::Bound::Included(&Value::Instant(*ms)),
                    std::ops::Bound::Unbounded,
                    crate::kv::Direction::Forward,
                    |_, e| {
                        found = Some(e);
                        Ok(false)
                    },
                )?;
                Some(found.unwrap_or(EntityId::MAX))
            }
            other => Some(entity_of(other).ok_or_else(|| QueryError::BadArguments {
                name: name.to_string(),
                message: format!(
                    "{} is neither a transaction id nor an instant",
                    crate::edn::to_edn_string(&crate::edn::edn_from_value(other))
                ),
            })?),
        })
    }
}
