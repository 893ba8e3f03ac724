//! What a committed transaction reports.

use std::collections::HashMap;

use super::data::Tempid;
use crate::store::ids::EntityId;
use crate::store::Datom;

/// The result of a transaction: its entity, its datoms and how its tempids resolved. Each
/// request of a group commit gets its own report.
#[derive(Debug, Clone)]
pub struct TxReport {
    /// The transaction entity id.
    pub tx: EntityId,
    /// The datoms it asserted and retracted (net change).
    pub tx_data: Vec<Datom>,
    /// Tempid resolution (anonymous map tempids and the tx tempid left out).
    pub tempids: HashMap<Tempid, EntityId>,
}

impl TxReport {
    /// The id a string tempid resolved to.
    pub fn tempid(&self, name: &str) -> Option<EntityId> {
        self.tempids.get(&Tempid::Named(name.into())).copied()
    }

    /// The id a negative-number tempid resolved to.
    pub fn tempid_neg(&self, n: i64) -> Option<EntityId> {
        self.tempids.get(&Tempid::Negative(n)).copied()
    }
}
