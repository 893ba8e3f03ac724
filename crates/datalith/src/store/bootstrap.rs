//! The built-in entities every database holds, as Datomic has them: the built-in attributes
//! (`:db/ident`, `:db/valueType`, ..., ids 1..13) with their own `:db/ident`,
//! `:db/valueType`, `:db/cardinality`, `:db/unique` and `:db/doc` datoms, and the *ident
//! entities* that `:db/valueType`, `:db/cardinality` and `:db/unique` refer to
//! (`:db.type/string`, `:db.cardinality/one`, `:db.unique/identity`, ...), each an entity with
//! only its `:db/ident`.
//!
//! They are stored physically, in EAV, AVE and the history index like any datom, so every
//! query, pull and index read sees them with no special case. They are written when a
//! database is first opened for writing (`tx::bootstrap`): in a new database around the
//! transaction log, stamped with the empty database's basis (`TX_PARTITION_START - 1`, so
//! they belong to every state in time); in a legacy one by a logged transaction of their own. Their ids are fixed here, in the attribute partition's reserved range
//! 1..99: the attributes keep 1..22 (13 at first; the excision, full-text and entity-spec
//! ones came later), ids up to 39 are kept for later built-in attributes, the ident entities
//! take 40..63.
//!
//! # Format
//!
//! The meta key [`FORMAT_KEY`] records which built-ins a state holds ([`FORMAT`]). Absent, the
//! state is of the *legacy* format (made before the built-ins were stored): `:db/valueType`,
//! `:db/cardinality` and `:db/unique` hold keywords, not refs, and the built-in entities are
//! not stored. Such a state still loads (`load::load_schema` gives it
//! [`Schema::legacy`](super::schema::Schema::legacy), whose built-in properties are keyword
//! attributes, so a read-only open answers as before); opened for writing it is upgraded
//! first, by one logged transaction: the built-in datoms are asserted, each keyword-valued
//! property datom is replaced by its ref; the format is recorded and the schema version
//! bumped in the same commit.

use super::ids::{AttrId, EntityId};
use super::schema::{builtin, builtin_attrs, Cardinality, Unique};
use crate::codec::{Keyword, Value, ValueType};

/// The store-meta key of the built-ins' format (a u64, see the module doc).
pub const FORMAT_KEY: &[u8] = b"builtins_format";

/// The format this code writes: the built-in attributes and ident entities stored, schema
/// properties as refs. 2: with the full-text properties (`:db.fulltext/stopWords`,
/// `:db.fulltext/stemmer`); a state of format 1 gets them by the same upgrade transaction.
/// 3: `:db/doc` is full-text (as Datomic's), its values indexed by the upgrade. 4: entity
/// specs (`:db/ensure`, `:db.entity/attrs`, `:db.entity/preds`). 5: `:db/tupleAttrs` and
/// `:db/tupleTypes` declare `:db/tupleType :db.type/keyword`, as Datomic's do.
pub const FORMAT: u64 = 5;

/// The store-meta key of the transaction the built-in datoms were written in (a u64):
/// `TX_PARTITION_START - 1` when they were written at the database's genesis, around the log
/// (`load::builtins_at_genesis`); the id of the logged transaction that upgraded a legacy
/// state.
pub const TX_KEY: &[u8] = b"builtins_tx";

/// Ids of the built-in ident entities.
pub mod ident {
    use super::EntityId;
    /// `:db.type/boolean`
    pub const TYPE_BOOLEAN: EntityId = 40;
    /// `:db.type/long`
    pub const TYPE_LONG: EntityId = 41;
    /// `:db.type/bigint`
    pub const TYPE_BIGINT: EntityId = 42;
    /// `:db.type/float`
    pub const TYPE_FLOAT: EntityId = 43;
    /// `:db.type/double`
    pub const TYPE_DOUBLE: EntityId = 44;
    /// `:db.type/bigdec`
    pub const TYPE_BIGDEC: EntityId = 45;
    /// `:db.type/instant`
    pub const TYPE_INSTANT: EntityId = 46;
    /// `:db.type/uuid`
    pub const TYPE_UUID: EntityId = 47;
    /// `:db.type/string`
    pub const TYPE_STRING: EntityId = 48;
    /// `:db.type/keyword`
    pub const TYPE_KEYWORD: EntityId = 49;
    /// `:db.type/symbol`
    pub const TYPE_SYMBOL: EntityId = 50;
    /// `:db.type/ref`
    pub const TYPE_REF: EntityId = 51;
    /// `:db.type/bytes`
    pub const TYPE_BYTES: EntityId = 52;
    /// `:db.type/tuple`
    pub const TYPE_TUPLE: EntityId = 53;
    /// `:db.cardinality/one`
    pub const CARDINALITY_ONE: EntityId = 60;
    /// `:db.cardinality/many`
    pub const CARDINALITY_MANY: EntityId = 61;
    /// `:db.unique/identity`
    pub const UNIQUE_IDENTITY: EntityId = 62;
    /// `:db.unique/value`
    pub const UNIQUE_VALUE: EntityId = 63;
}

/// Each value type's ident entity.
const VALUE_TYPES: [(ValueType, EntityId); 14] = [
    (ValueType::Boolean, ident::TYPE_BOOLEAN),
    (ValueType::Long, ident::TYPE_LONG),
    (ValueType::BigInt, ident::TYPE_BIGINT),
    (ValueType::Float, ident::TYPE_FLOAT),
    (ValueType::Double, ident::TYPE_DOUBLE),
    (ValueType::BigDec, ident::TYPE_BIGDEC),
    (ValueType::Instant, ident::TYPE_INSTANT),
    (ValueType::Uuid, ident::TYPE_UUID),
    (ValueType::String, ident::TYPE_STRING),
    (ValueType::Keyword, ident::TYPE_KEYWORD),
    (ValueType::Symbol, ident::TYPE_SYMBOL),
    (ValueType::Ref, ident::TYPE_REF),
    (ValueType::Bytes, ident::TYPE_BYTES),
    (ValueType::Tuple, ident::TYPE_TUPLE),
];

/// The other ident entities, with their idents.
const OTHER_IDENTS: [(EntityId, &str); 4] = [
    (ident::CARDINALITY_ONE, ":db.cardinality/one"),
    (ident::CARDINALITY_MANY, ":db.cardinality/many"),
    (ident::UNIQUE_IDENTITY, ":db.unique/identity"),
    (ident::UNIQUE_VALUE, ":db.unique/value"),
];

/// The ident entity of value type `t`.
pub fn value_type_entity(t: ValueType) -> EntityId {
    VALUE_TYPES
        .iter()
        .find(|(x, _)| *x == t)
        .map(|(_, e)| *e)
        .expect("every value type has its ident entity")
}

/// The value type whose ident entity is `e`.
pub fn value_type_of(e: EntityId) -> Option<ValueType> {
    VALUE_TYPES.iter().find(|(_, x)| *x == e).map(|(t, _)| *t)
}

/// The ident entity of cardinality `c`.
pub fn cardinality_entity(c: Cardinality) -> EntityId {
    match c {
        Cardinality::One => ident::CARDINALITY_ONE,
        Cardinality::Many => ident::CARDINALITY_MANY,
    }
}

/// The cardinality whose ident entity is `e`.
pub fn cardinality_of(e: EntityId) -> Option<Cardinality> {
    match e {
        ident::CARDINALITY_ONE => Some(Cardinality::One),
        ident::CARDINALITY_MANY => Some(Cardinality::Many),
        _ => None,
    }
}

/// The ident entity of uniqueness `u`.
pub fn unique_entity(u: Unique) -> EntityId {
    match u {
        Unique::Identity => ident::UNIQUE_IDENTITY,
        Unique::Value => ident::UNIQUE_VALUE,
    }
}

/// The uniqueness whose ident entity is `e`.
pub fn unique_of(e: EntityId) -> Option<Unique> {
    match e {
        ident::UNIQUE_IDENTITY => Some(Unique::Identity),
        ident::UNIQUE_VALUE => Some(Unique::Value),
        _ => None,
    }
}

/// Whether `k` is the ident of a built-in entity (an attribute, a value type, a cardinality,
/// ...). Walks the built-in datoms: for error messages, not for hot paths.
pub fn is_builtin_ident(k: &Keyword) -> bool {
    datoms()
        .into_iter()
        .any(|(_, a, v)| a == builtin::IDENT && matches!(&v, Value::Keyword(x) if x == k))
}

/// The ident of built-in entity `e` (a built-in attribute or an ident entity).
pub fn ident_of(e: EntityId) -> Option<Keyword> {
    if let Some(t) = value_type_of(e) {
        return Some(Keyword::parse(t.ident()));
    }
    if let Some((_, k)) = OTHER_IDENTS.iter().find(|(x, _)| *x == e) {
        return Some(Keyword::parse(k));
    }
    builtin_attrs()
        .into_iter()
        .find(|a| a.id as EntityId == e)
        .map(|a| a.ident)
}

/// The property attributes whose values are ident entities: which ident entities each
/// admits, and how to name them in an error.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum IdentProperty {
    /// `:db/valueType`: a `:db.type/...` entity.
    ValueType,
    /// `:db/cardinality`: `:db.cardinality/one` or `:db.cardinality/many`.
    Cardinality,
    /// `:db/unique`: `:db.unique/identity` or `:db.unique/value`.
    Unique,
}

impl IdentProperty {
    /// Every such property.
    pub const ALL: [IdentProperty; 3] = [
        IdentProperty::ValueType,
        IdentProperty::Cardinality,
        IdentProperty::Unique,
    ];

    /// The property's attribute.
    pub fn attr(self) -> AttrId {
        match self {
            IdentProperty::ValueType => builtin::VALUE_TYPE,
            IdentProperty::Cardinality => builtin::CARDINALITY,
            IdentProperty::Unique => builtin::UNIQUE,
        }
    }

    /// The property attribute `a` is, if it is one.
    pub fn of_attr(a: AttrId) -> Option<IdentProperty> {
        match a {
            builtin::VALUE_TYPE => Some(IdentProperty::ValueType),
            builtin::CARDINALITY => Some(IdentProperty::Cardinality),
            builtin::UNIQUE => Some(IdentProperty::Unique),
            _ => None,
        }
    }

    /// The property's ident, e.g. `:db/valueType`.
    pub fn name(self) -> &'static str {
        match self {
            IdentProperty::ValueType => ":db/valueType",
            IdentProperty::Cardinality => ":db/cardinality",
            IdentProperty::Unique => ":db/unique",
        }
    }

    /// The ident entities it admits, in id order.
    pub fn entities(self) -> Vec<EntityId> {
        match self {
            IdentProperty::ValueType => VALUE_TYPES.iter().map(|(_, e)| *e).collect(),
            IdentProperty::Cardinality => vec![ident::CARDINALITY_ONE, ident::CARDINALITY_MANY],
            IdentProperty::Unique => vec![ident::UNIQUE_IDENTITY, ident::UNIQUE_VALUE],
        }
    }

    /// The ident entity named `k` that this property admits.
    pub fn entity(self, k: &Keyword) -> Option<EntityId> {
        self.entities()
            .into_iter()
            .find(|e| ident_of(*e).as_ref() == Some(k))
    }

    /// The idents it admits, for an error message: `:db.cardinality/one, :db.cardinality/many`.
    pub fn expected(self) -> String {
        self.entities()
            .into_iter()
            .filter_map(ident_of)
            .map(|k| k.to_string())
            .collect::<Vec<_>>()
            .join(", ")
    }
}

/// `v` as EDN text, a ref to a built-in entity shown as its ident.
pub fn value_text(v: &Value) -> String {
    match v {
        Value::Ref(e) => ident_of(*e).map_or_else(|| e.to_string(), |k| k.to_string()),
        other => other.to_string(),
    }
}

/// The value a legacy-format datom of property `a` becomes: a keyword naming an ident entity
/// the property admits becomes a ref to it. `None` for anything else (left as it is).
pub fn upgraded_value(a: AttrId, v: &Value) -> Option<Value> {
    match (IdentProperty::of_attr(a), v) {
        (Some(p), Value::Keyword(k)) => p.entity(k).map(Value::Ref),
        _ => None,
    }
}

/// The built-in datoms `(entity, attribute, value)` a database of [`FORMAT`] holds, in entity
/// then attribute order.
pub fn datoms() -> Vec<(EntityId, AttrId, Value)> {
    let mut out = Vec::new();
    for a in builtin_attrs() {
        let e = a.id as EntityId;
        out.push((e, builtin::IDENT, Value::Keyword(a.ident.clone())));
        out.push((
            e,
            builtin::VALUE_TYPE,
            Value::Ref(value_type_entity(a.value_type)),
        ));
        out.push((
            e,
            builtin::CARDINALITY,
            Value::Ref(cardinality_entity(a.cardinality)),
        ));
        if let Some(u) = a.unique {
            out.push((e, builtin::UNIQUE, Value::Ref(unique_entity(u))));
        }
        if let Some(doc) = &a.doc {
            out.push((e, builtin::DOC, Value::string(doc)));
        }
        if let Some(t) = a.tuple_type {
            out.push((
                e,
                builtin::TUPLE_TYPE,
                Value::Keyword(Keyword::parse(t.ident())),
            ));
        }
    }
    let mut idents: Vec<(EntityId, Keyword)> = VALUE_TYPES
        .iter()
        .map(|(t, e)| (*e, Keyword::parse(t.ident())))
        .chain(OTHER_IDENTS.iter().map(|(e, k)| (*e, Keyword::parse(k))))
        .collect();
    idents.sort_by_key(|(e, _)| *e);
    for (e, k) in idents {
        out.push((e, builtin::IDENT, Value::Keyword(k)));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::ids::ATTR_PARTITION_END;

    #[test]
    fn ids_are_distinct_reserved_and_name_what_they_say() {
        let datoms = datoms();
        let mut entities: Vec<EntityId> = datoms.iter().map(|d| d.0).collect();
        entities.dedup();
        let mut sorted = entities.clone();
        sorted.sort_unstable();
        sorted.dedup();
        assert_eq!(entities, sorted, "entity order, no entity twice");
        for e in &entities {
            assert!(*e >= 1 && *e < builtin::FIRST_USER_ATTR as EntityId);
            assert!(*e < ATTR_PARTITION_END);
            let ident = datoms
                .iter()
                .find(|d| d.0 == *e && d.1 == builtin::IDENT)
                .map(|d| d.2.clone());
            assert_eq!(ident, ident_of(*e).map(Value::Keyword), "entity {e}");
        }
        // Idents are unique across the built-ins.
        let mut idents: Vec<String> = entities
            .iter()
            .filter_map(|e| ident_of(*e))
            .map(|k| k.to_string())
            .collect();
        let n = idents.len();
        idents.sort();
        idents.dedup();
        assert_eq!(idents.len(), n);
    }

    #[test]
    fn every_property_value_round_trips_through_its_entity() {
        for t in ValueType::ALL {
            assert_eq!(value_type_of(value_type_entity(t)), Some(t));
            let k = Keyword::parse(t.ident());
            assert_eq!(
                IdentProperty::ValueType.entity(&k),
                Some(value_type_entity(t))
            );
            assert_eq!(
                upgraded_value(builtin::VALUE_TYPE, &Value::Keyword(k)),
                Some(Value::Ref(value_type_entity(t)))
            );
        }
        for c in [Cardinality::One, Cardinality::Many] {
            assert_eq!(cardinality_of(cardinality_entity(c)), Some(c));
        }
        for u in [Unique::Identity, Unique::Value] {
            assert_eq!(unique_of(unique_entity(u)), Some(u));
        }
        // A keyword of another property's kind is no value of this one.
        let one = Keyword::parse(":db.cardinality/one");
        assert_eq!(IdentProperty::ValueType.entity(&one), None);
        assert_eq!(
            IdentProperty::Cardinality.entity(&one),
            Some(ident::CARDINALITY_ONE)
        );
        assert_eq!(
            upgraded_value(builtin::DOC, &Value::Keyword(one.clone())),
            None
        );
        assert_eq!(
            value_text(&Value::Ref(ident::TYPE_STRING)),
            ":db.type/string"
        );
        assert_eq!(value_text(&Value::Ref(1)), ":db/ident");
        assert_eq!(value_text(&Value::Ref(99)), "99");
    }
}
