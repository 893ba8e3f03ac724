//! The datom: one fact.

use super::ids::{AttrId, EntityId};
use crate::codec::Value;

/// `[e a v tx added]`: entity `e` has (or, if `!added`, no longer has) value `v` for
/// attribute `a`, as of transaction `tx`.
#[derive(Debug, Clone, PartialEq)]
pub struct Datom {
    /// Entity.
    pub e: EntityId,
    /// Attribute.
    pub a: AttrId,
    /// Value.
    pub v: Value,
    /// The transaction that asserted or retracted it.
    pub tx: EntityId,
    /// Assertion (true) or retraction (false).
    pub added: bool,
}
