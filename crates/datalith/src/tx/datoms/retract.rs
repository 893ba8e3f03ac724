//! Retractions and `:db/cas` on the datom builder: a retraction written in the transaction
//! (which conflicts with an assertion of the same datom), the retractions a cardinality-one
//! assertion or `:db/retractEntity` implies (the entity's datoms, its components, and the
//! references to it), and a compare-and-swap (an assertion guarded by the current value).

use std::sync::Arc;

use super::super::av::av;
use super::super::error::TxError;
use super::DatomBuilder;
use crate::codec::Value;
use crate::store::ids::{AttrId, EntityId};
use crate::store::schema::Attribute;

impl DatomBuilder<'_> {
    /// A retraction written in the transaction: it conflicts with an assertion of the same
    /// datom in the transaction, even of one the database does not hold (Datomic's rule).
    pub(super) fn retract_term(&mut self, e: EntityId, a: AttrId, v: Value) -> Result<(), TxError> {
        let b = av(a, &v);
        let s = self.seen(e, a, &b)?;
        let now = self.is_now(s);
        let i = self.record(s, e, a, v, b, false, now);
        let en = &mut self.entries[i as usize];
        en.retracted = true;
        if en.asserted {
            return Err(self.assert_retract_conflict(i));
        }
        self.retracted_one(i)
    }

    pub(super) fn retract(&mut self, e: EntityId, a: AttrId, v: Value) -> Result<(), TxError> {
        let b = av(a, &v);
        let s = self.seen(e, a, &b)?;
        if self.is_now(s) {
            self.record(s, e, a, v, b, false, true);
        }
        Ok(())
    }

    pub(super) fn retract_entity(&mut self, e: EntityId) -> Result<(), TxError> {
        if !self.retracted_entities.insert(e) {
            return Ok(());
        }
        let target = Value::Ref(e);
        // Its datoms (and its components, recursively) and the references to it in the
        // database before the transaction: Datomic expands `:db/retractEntity` against that
        // database, as every transaction function, so what this transaction asserts on the
        // entity or about it stays, before or after this form alike.
        let own: Vec<(AttrId, Value)> = if self.fresh.contains(e) {
            Vec::new()
        } else {
            self.r.entity(e)?
        };
        for (a, v) in own {
            let component = self
                .schema
                .get(a)
                .is_some_and(|x| x.is_component && x.is_ref());
            let b = av(a, &v);
            let s = self.seen(e, a, &b)?;
            if !self.is_now(s) {
                continue;
            }
            let i = self.record(s, e, a, v.clone(), b, false, true);
            self.retracted_from_db(i)?;
            self.retracted_one(i)?;
            if let (true, Value::Ref(child)) = (component, &v) {
                self.retract_entity(*child)?;
            }
        }
        // References to it, through every ref attribute's AVE entries.
        let ref_attrs: Vec<AttrId> = self
            .schema
            .attributes()
            .iter()
            .filter(|x| x.is_ref())
            .map(|x| x.id)
            .collect();
        for a in ref_attrs {
            for holder in self.r.entities_with(a, &target)? {
                let b = av(a, &target);
                let s = self.seen(holder, a, &b)?;
                if self.is_now(s) {
                    let i = self.record(s, holder, a, target.clone(), b, false, true);
                    self.retracted_from_db(i)?;
                    self.retracted_one(i)?;
                }
            }
        }
        Ok(())
    }

    pub(super) fn cas(
        &mut self,
        e: EntityId,
        attr: &Arc<Attribute>,
        old: Option<Value>,
        new: Result<Value, TxError>,
    ) -> Result<(), TxError> {
        // Compared with the database before the transaction, as Datomic runs every
        // transaction function (`:db/cas` too) against it: two equal cas operations in one
        // transaction both hold, and a cas does not see the transaction's own assertions.
        let current: Vec<Value> = match self.fresh.contains(e) {
            true => Vec::new(),
            false => self.r.values(e, attr.id)?,
        };
        let ok = match &old {
            None => current.is_empty(),
            Some(o) => current.len() == 1 && current[0] == *o,
        };
        if !ok {
            return Err(TxError::CasFailed {
                entity: e,
                attr: attr.ident.to_string(),
                // nil (EDN's absence) where there is no value.
                expected: old.map_or_else(|| "nil".into(), |o| o.to_string()),
                found: current
                    .first()
                    .map_or_else(|| "nil".into(), Value::to_string),
            });
        }
        self.assert(e, attr, new?)
    }
}
