//! Identifiers: entity ids (u64) and attribute ids (u32), and how they are allocated.

/// An entity id. User entities, attribute entities and transaction entities share one space,
/// split into partitions so an id tells what it names.
pub type EntityId = u64;

/// An interned attribute id (the attribute entity's id fits: attributes live in the first
/// partition).
pub type AttrId = u32;

/// Attribute entities (built-in and user schema) are numbered from 1 below this bound.
pub const ATTR_PARTITION_END: EntityId = 1 << 20;

/// User entities are numbered from here up to `TX_PARTITION_START`.
pub const USER_PARTITION_START: EntityId = ATTR_PARTITION_END;

/// Transaction entities (`:db/txInstant` and tx metadata) are numbered from here (Datascript's
/// `tx0` plays the same role), so `[?tx :db/txInstant]` never collides with user data.
pub const TX_PARTITION_START: EntityId = 1 << 44;

/// Which partition an id falls in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Partition {
    /// Schema attributes.
    Attributes,
    /// User data.
    User,
    /// Transactions.
    Transactions,
}

/// The partition of `e`.
pub fn partition_of(e: EntityId) -> Partition {
    if e < ATTR_PARTITION_END {
        Partition::Attributes
    } else if e < TX_PARTITION_START {
        Partition::User
    } else {
        Partition::Transactions
    }
}
