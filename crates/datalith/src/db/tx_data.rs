//! Transaction data as the user wrote it (stage 1 of a transaction: maps and operations, with
//! tempids, lookup refs and idents not yet resolved): what `transact` and `with` take and
//! transaction functions return.

use std::sync::Arc;

use crate::codec::{Keyword, Value};
use crate::store::ids::EntityId;

/// A temporary id, resolved when the transaction runs.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Tempid {
    /// A string tempid (`"alice"`); shared by every mention in one transaction.
    Named(Arc<str>),
    /// A negative number tempid (`-1`), Datascript style.
    Negative(i64),
    /// The id given to a map without `:db/id` (numbered in order of appearance).
    Anonymous(u32),
    /// The transaction entity itself (`"datomic.tx"` / `:db/current-tx`).
    CurrentTx,
}

impl std::fmt::Display for Tempid {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Tempid::Named(_) => write!(f, "{}", self.to_edn()),
            Tempid::Negative(n) => write!(f, "{n}"),
            Tempid::Anonymous(n) => write!(f, "<map #{n}>"),
            Tempid::CurrentTx => write!(f, "\"datomic.tx\""),
        }
    }
}

/// How tx data names an entity.
#[derive(Debug, Clone, PartialEq)]
pub enum EntityRef {
    /// An existing entity id.
    Id(EntityId),
    /// A temporary id.
    Temp(Tempid),
    /// The entity whose unique attribute has this value, e.g. `[:person/email "a@b.c"]`.
    Lookup(Keyword, Value),
    /// The entity with this `:db/ident`.
    Ident(Keyword),
}

/// A value in tx data: a plain value, or, for reference attributes, an entity.
#[derive(Debug, Clone, PartialEq)]
pub enum TxValue {
    /// A plain value. For a ref attribute a `Long` is an entity id, a `String` a tempid and a
    /// `Keyword` an ident (Datomic's rules).
    Value(Value),
    /// An entity named by reference.
    Entity(EntityRef),
    /// A nested entity map (for a ref attribute).
    Map(Box<EntityMap>),
    /// Several values of a cardinality-many attribute.
    Many(Vec<TxValue>),
}

impl From<Value> for TxValue {
    fn from(v: Value) -> Self {
        TxValue::Value(v)
    }
}

/// An attribute name in a map: `:person/friend` or the reverse form `:person/_friend`.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct AttrName {
    /// The attribute (without the reverse underscore).
    pub attr: Keyword,
    /// Whether the map used the reverse form.
    pub reverse: bool,
}

impl AttrName {
    /// Parses a keyword, recognizing the reverse form `:ns/_name`.
    pub fn parse(k: &Keyword) -> AttrName {
        match k.name().strip_prefix('_') {
            Some(rest) if !rest.is_empty() => AttrName {
                attr: Keyword::new(k.namespace(), rest),
                reverse: true,
            },
            _ => AttrName {
                attr: k.clone(),
                reverse: false,
            },
        }
    }
}

/// An entity map: `{:db/id ... :attr value ...}`.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct EntityMap {
    /// `:db/id`, if given.
    pub id: Option<EntityRef>,
    /// The attributes, in the order written.
    pub attrs: Vec<(AttrName, TxValue)>,
}

impl EntityMap {
    /// An empty map with the given id.
    pub fn with_id(id: EntityRef) -> Self {
        EntityMap {
            id: Some(id),
            attrs: Vec::new(),
        }
    }

    /// Adds an attribute (builder style).
    pub fn set(mut self, attr: Keyword, value: impl Into<TxValue>) -> Self {
        self.attrs.push((AttrName::parse(&attr), value.into()));
        self
    }
}

/// One operation in list form.
#[derive(Debug, Clone, PartialEq)]
pub enum TxOp {
    /// `[:db/add e a v]`
    Add {
        /// The entity.
        e: EntityRef,
        /// The attribute.
        a: Keyword,
        /// The value.
        v: TxValue,
    },
    /// `[:db/retract e a v]`, or `[:db/retract e a]` for every value.
    Retract {
        /// The entity.
        e: EntityRef,
        /// The attribute.
        a: Keyword,
        /// The value.
        v: Option<TxValue>,
    },
    /// `[:db/retractEntity e]`
    RetractEntity {
        /// The entity.
        e: EntityRef,
    },
    /// `[:db/cas e a old new]`: `new` only if the current value is `old` (`None`: absent).
    Cas {
        /// The entity.
        e: EntityRef,
        /// The attribute.
        a: Keyword,
        /// The value expected now.
        old: Option<TxValue>,
        /// The value asserted in its place.
        new: TxValue,
    },
    /// `[:db.fn/call f args...]` or `[f args...]`: a transaction function registered in Rust.
    Call {
        /// The function's name.
        function: Keyword,
        /// The arguments.
        args: Vec<Value>,
    },
}

/// One item of tx data.
#[derive(Debug, Clone, PartialEq)]
pub enum TxItem {
    /// A map form.
    Map(EntityMap),
    /// A list form.
    Op(TxOp),
}

/// The tx data of one transaction.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct TxData {
    /// Items in order.
    pub items: Vec<TxItem>,
    /// The first form of tx data read from EDN that is not tx data, with `items` holding the
    /// forms before it: it fails when the transaction reaches it, after them, since Datomic
    /// reads a transaction's forms in order (an earlier form's failing `:db/cas` or lookup ref
    /// that names nothing is the error then, not the malformed form).
    pub(crate) unread: Option<crate::edn::Edn>,
}

impl TxData {
    /// Tx data from items.
    pub fn new(items: Vec<TxItem>) -> Self {
        TxData {
            items,
            unread: None,
        }
    }

    /// About how many terms the data expands to (a map's entries each one at least, an op
    /// one): the capacity that spares the term list its regrowths.
    pub fn term_estimate(&self) -> usize {
        self.items
            .iter()
            .map(|i| match i {
                TxItem::Map(m) => m.attrs.len(),
                TxItem::Op(_) => 1,
            })
            .sum::<usize>()
            + 1
    }

    /// Adds a map.
    pub fn map(mut self, m: EntityMap) -> Self {
        self.items.push(TxItem::Map(m));
        self
    }

    /// Adds an operation.
    pub fn op(mut self, op: TxOp) -> Self {
        self.items.push(TxItem::Op(op));
        self
    }
}
