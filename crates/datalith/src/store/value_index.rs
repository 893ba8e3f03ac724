//! Which datoms have an AVE entry: a database's choice, made when it is created and kept in
//! `store_meta` (see ARCHITECTURE.md, "Which index entries a datom has").
//!
//! - [`ValueIndex::All`] (Datalevin's choice, and every database made before the choice
//!   existed): every datom is in EAV and AVE.
//! - [`ValueIndex::Declared`] (Datomic's choice): a datom is in AVE when its attribute is
//!   `:db/index true`, `:db/unique`, a ref (AVE answers reverse navigation, Datomic's VAET)
//!   or a built-in. Any other attribute's datoms are in EAV, and its entities in the
//!   `attr_entities` table instead of AVE: the attribute's scans walk those entities in id
//!   order and read their values from EAV, and a lookup by value walks them too (Datomic
//!   answers such a clause from AEVT, also a scan).
//!
//! A value in AVE costs a write where the key falls: for random values (a UUID's text), a
//! page of its own, so nearly every insert dirties a page, and the checkpoint writes it.
//! An entity added to `attr_entities` lands at the end of its attribute's list (new entities
//! have the highest ids), so a page takes hundreds before it is written.
//!
//! # Byte layout
//!
//! | table | kind | key | value(s) |
//! |---|---|---|---|
//! | `attr_entities` | fixed-width list (8) | attribute id (u32 BE) | entity ids (u64 BE) that held a value of it since the entry was made, sorted |
//! | `store_meta` | plain | `value_index` | `declared` (absent: every attribute in AVE) |
//!
//! An entity stays in its attribute's list when it loses the attribute's last value: a
//! transaction's log entry alone cannot tell whether a retraction left the entity without
//! values (the derivation that rebuilds index writes from it knows no state), so readers
//! skip entities that hold no value. `Db::check` reports an attribute whose datoms are both in
//! AVE and in `attr_entities`, and any datom of such an attribute missing from the list.

use super::ids::AttrId;
use super::schema::{Attribute, Schema};
use crate::codec::ValueType;

/// Which attributes' datoms have an AVE entry.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum ValueIndex {
    /// Every attribute's (Datalevin's choice; every database made before the choice existed,
    /// and before 2026-12-08 the default).
    All,
    /// Those of attributes that are `:db/index`, `:db/unique`, refs or built-ins (Datomic's;
    /// the default for a new database).
    #[default]
    Declared,
}

/// The `store_meta` key that records a database's choice.
pub const META_KEY: &[u8] = b"value_index";
/// Its value for [`ValueIndex::Declared`].
pub const DECLARED: &[u8] = b"declared";

impl ValueIndex {
    /// The choice a `store_meta` value records (`None`: the key is absent), or `None` for
    /// bytes that name none.
    pub fn from_meta(stored: Option<&[u8]>) -> Option<ValueIndex> {
        match stored {
            None => Some(ValueIndex::All),
            Some(DECLARED) => Some(ValueIndex::Declared),
            Some(_) => None,
        }
    }

    /// Whether `attr`'s datoms have AVE entries.
    pub fn in_ave(self, attr: &Attribute) -> bool {
        match self {
            ValueIndex::All => true,
            ValueIndex::Declared => {
                attr.indexed
                    || attr.unique.is_some()
                    || attr.value_type == ValueType::Ref
                    || Schema::is_builtin(attr.id)
            }
        }
    }

    /// [`Self::in_ave`] of attribute `a` in `schema` (an attribute it does not know: in AVE,
    /// as the built-ins' bootstrap writes before the schema holds them).
    pub fn in_ave_of(self, schema: &Schema, a: AttrId) -> bool {
        self == ValueIndex::All || schema.get(a).is_none_or(|attr| self.in_ave(attr))
    }
}

/// A transaction log datom's flag byte (`tx::log`): bit 0 set for an assertion, bit 1 set
/// when its attribute's datoms have no AVE entries (then its entity is listed in
/// `attr_entities`), so that the index writes rebuilt from the entry alone put it where the
/// transaction did. `None` for any other byte.
pub fn log_flags(byte: u8) -> Option<(bool, bool)> {
    (byte <= 3).then_some((byte & 1 == 1, byte & 2 == 0))
}

/// The flag byte of a datom asserted (`added`) or retracted, in AVE or not.
pub fn log_flag_byte(added: bool, in_ave: bool) -> u8 {
    u8::from(added) | (u8::from(!in_ave) << 1)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::codec::Keyword;
    use crate::store::schema::{Cardinality, Unique};

    fn attr(id: AttrId, value_type: ValueType, unique: Option<Unique>, indexed: bool) -> Attribute {
        Attribute {
            id,
            ident: Keyword::new(Some("t"), "a"),
            value_type,
            cardinality: Cardinality::One,
            unique,
            is_component: false,
            doc: None,
            tuple_attrs: None,
            tuple_type: None,
            tuple_types: None,
            no_history: false,
            indexed,
            fulltext: None,
        }
    }

    #[test]
    fn which_attributes_are_in_ave() {
        let user = crate::store::schema::builtin::FIRST_USER_ATTR;
        // (attribute, in AVE with every value indexed, in AVE with the declared ones)
        let table = [
            (attr(user, ValueType::String, None, false), true, false),
            (attr(user, ValueType::String, None, true), true, true),
            (
                attr(user, ValueType::Long, Some(Unique::Identity), false),
                true,
                true,
            ),
            (
                attr(user, ValueType::Long, Some(Unique::Value), false),
                true,
                true,
            ),
            (attr(user, ValueType::Ref, None, false), true, true),
            (attr(1, ValueType::String, None, false), true, true),
        ];
        for (a, all, declared) in table {
            assert_eq!(ValueIndex::All.in_ave(&a), all, "{a:?}");
            assert_eq!(ValueIndex::Declared.in_ave(&a), declared, "{a:?}");
        }
        assert_eq!(ValueIndex::from_meta(None), Some(ValueIndex::All));
        assert_eq!(
            ValueIndex::from_meta(Some(b"declared")),
            Some(ValueIndex::Declared)
        );
        assert_eq!(ValueIndex::from_meta(Some(b"other")), None);
    }

    #[test]
    fn log_flags_round_trip_and_refuse_other_bytes() {
        for added in [false, true] {
            for in_ave in [false, true] {
                assert_eq!(
                    log_flags(log_flag_byte(added, in_ave)),
                    Some((added, in_ave))
                );
            }
        }
        // Entries written before the second bit existed: 0 and 1, in AVE.
        assert_eq!(log_flags(0), Some((false, true)));
        assert_eq!(log_flags(1), Some((true, true)));
        for b in 4..=255 {
            assert_eq!(log_flags(b), None, "{b}");
        }
    }
}
