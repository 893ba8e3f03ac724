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
        let mut found = Relation::empty(Vec::new());
        if !matches!(p.a, AttrTerm::Unknown(_)) {
            let entities = self.timed_candidates(p, a, &rel, &terms[2])?;
            let filter = self.time;
            let r = self.r;
            for e in entities {
                self.budget.tick()?;
                for d in r.timed_datoms(&filter, e, a)? {
                    let v = r.event_value(e, &d)?;
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
                let mut out = Vec::new();
                match values {
                    Some(mut values) => {
                        values.sort_unstable();
                        values.dedup();
                        for v in &values {
                            self.budget.tick()?;
                            out.extend(self.r.entities_with(a, v)?);
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
