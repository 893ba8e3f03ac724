//! The schema: attributes and their properties.
//!
//! An attribute is an entity of the attribute partition; its properties are ordinary datoms
//! (`:db/ident`, `:db/valueType`, ...), stored in EAV and AVE like any other, so schema is
//! queryable data. As in Datomic, `:db/valueType`, `:db/cardinality` and `:db/unique` are ref
//! attributes whose values are ident entities (`:db.type/string`, `:db.cardinality/one`, ...;
//! see `bootstrap`). The built-in attributes below are defined by this code (their ids and
//! properties never change) and stored as entities too (`bootstrap::datoms`), so that queries
//! see them; the `Schema` takes them from here, not from the store.

use rustc_hash::FxHashMap as HashMap;
use std::sync::Arc;

use super::bootstrap::{self, IdentProperty};
use super::ids::AttrId;
use crate::codec::{Keyword, Value, ValueType};
use crate::search::{AnalyzerConfig, Language, StopWords};

/// How many values an entity may have for an attribute.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Cardinality {
    /// One value; asserting another replaces it.
    One,
    /// A set of values.
    Many,
}

/// Uniqueness of an attribute's values across entities.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Unique {
    /// Unique, and a tempid asserting an existing value resolves to that entity (upsert).
    Identity,
    /// Unique; asserting an existing value on another entity is an error.
    Value,
}

/// One attribute.
#[derive(Debug, Clone, PartialEq)]
pub struct Attribute {
    /// Interned id (the attribute entity's id).
    pub id: AttrId,
    /// Its name, e.g. `:person/name`.
    pub ident: Keyword,
    /// Type of its values.
    pub value_type: ValueType,
    /// One or many.
    pub cardinality: Cardinality,
    /// Uniqueness, if any.
    pub unique: Option<Unique>,
    /// Whether the referenced entity is owned (retracted with its owner, pulled in full).
    pub is_component: bool,
    /// Documentation string.
    pub doc: Option<String>,
    /// For a composite tuple: the attributes it is made of.
    pub tuple_attrs: Option<Vec<Keyword>>,
    /// For a homogeneous tuple: the element type.
    pub tuple_type: Option<ValueType>,
    /// For a heterogeneous tuple: the element types.
    pub tuple_types: Option<Vec<ValueType>>,
    /// `:db/noHistory`: the history index keeps only the current datoms' assertions.
    pub no_history: bool,
    /// `:db/index true`: its datoms are in AVE also where the database keeps AVE only for
    /// the attributes that ask for it (`store::value_index`).
    pub indexed: bool,
    /// `:db/fulltext`: its string values are in a full-text index analyzed so
    /// (`:db.fulltext/stopWords`, `:db.fulltext/stemmer`; by default Datomic's analysis).
    pub fulltext: Option<AnalyzerConfig>,
}

impl Attribute {
    /// The type of element `i` of this tuple attribute's values, where the schema fixes it
    /// (`:db/tupleTypes`, `:db/tupleType`; a composite's from its attributes, read through
    /// `type_of`), else `None`.
    pub fn tuple_element_type(
        &self,
        i: usize,
        type_of: impl Fn(&Keyword) -> Option<ValueType>,
    ) -> Option<ValueType> {
        match (&self.tuple_types, self.tuple_type, &self.tuple_attrs) {
            (Some(types), _, _) => types.get(i).copied(),
            (None, Some(t), _) => Some(t),
            (None, None, Some(attrs)) => attrs.get(i).and_then(type_of),
            (None, None, None) => None,
        }
    }

    /// Whether values are entity ids.
    pub fn is_ref(&self) -> bool {
        self.value_type == ValueType::Ref
    }

    /// Whether cardinality is many.
    pub fn is_many(&self) -> bool {
        self.cardinality == Cardinality::Many
    }
}

/// Ids of the built-in attributes (fixed: stored databases name them by these ids). Ids up to
/// 99 are reserved for built-in entities: 14..39 for later built-in attributes, 40..63 for the
/// ident entities (`bootstrap::ident`).
pub mod builtin {
    use super::AttrId;
    /// `:db/ident`
    pub const IDENT: AttrId = 1;
    /// `:db/valueType`
    pub const VALUE_TYPE: AttrId = 2;
    /// `:db/cardinality`
    pub const CARDINALITY: AttrId = 3;
    /// `:db/unique`
    pub const UNIQUE: AttrId = 4;
    /// `:db/isComponent`
    pub const IS_COMPONENT: AttrId = 5;
    /// `:db/doc`
    pub const DOC: AttrId = 6;
    /// `:db/txInstant`
    pub const TX_INSTANT: AttrId = 7;
    /// `:db/tupleAttrs`
    pub const TUPLE_ATTRS: AttrId = 8;
    /// `:db/tupleType`
    pub const TUPLE_TYPE: AttrId = 9;
    /// `:db/tupleTypes`
    pub const TUPLE_TYPES: AttrId = 10;
    /// `:db/noHistory`: the attribute's past values are not kept in the history index
    pub const NO_HISTORY: AttrId = 11;
    /// `:db/fulltext`: the attribute's string values are searchable (`search`).
    pub const FULLTEXT: AttrId = 12;
    /// `:db/index`: the attribute's datoms are in AVE (every attribute's are where the
    /// database indexes all values, `store::value_index`)
    pub const INDEX: AttrId = 13;
    /// `:db/excise`: an excision's target (an entity, or an attribute whose values go).
    pub const EXCISE: AttrId = 14;
    /// `:db.excise/attrs`: only these attributes of the target.
    pub const EXCISE_ATTRS: AttrId = 15;
    /// `:db.excise/before`: only datoms of transactions before this instant.
    pub const EXCISE_BEFORE: AttrId = 16;
    /// `:db.excise/beforeT`: only datoms of transactions before this one.
    pub const EXCISE_BEFORE_T: AttrId = 17;
    /// `:db.fulltext/stopWords`: which words a full-text attribute leaves out.
    pub const FULLTEXT_STOP_WORDS: AttrId = 18;
    /// `:db.fulltext/stemmer`: the language a full-text attribute's words are stemmed in.
    pub const FULLTEXT_STEMMER: AttrId = 19;
    /// `:db/ensure`: on an entity, the entity specs (`:db.entity/attrs`) a transaction that
    /// asserts it checks the entity against.
    pub const ENSURE: AttrId = 20;
    /// `:db.entity/attrs`: on an entity spec, the attributes an entity must have.
    pub const ENTITY_ATTRS: AttrId = 21;
    /// `:db.entity/preds`: on an entity spec, predicates (Clojure functions in Datomic).
    pub const ENTITY_PREDS: AttrId = 22;
    /// User attributes are numbered from here.
    pub const FIRST_USER_ATTR: AttrId = 100;
}

/// The built-in attributes, as this code defines them (and stores them, `bootstrap::datoms`).
pub(crate) fn builtin_attrs() -> Vec<Attribute> {
    use builtin::*;
    let mk = |id, name: &str, value_type, unique, doc: &str| Attribute {
        id,
        ident: Keyword::new(Some("db"), name),
        value_type,
        cardinality: Cardinality::One,
        unique,
        is_component: false,
        doc: Some(doc.to_string()),
        tuple_attrs: None,
        tuple_type: None,
        tuple_types: None,
        no_history: false,
        indexed: false,
        fulltext: None,
    };
    use ValueType::{Boolean, Instant, Ref, Tuple};
    vec![
        mk(
            IDENT,
            "ident",
            ValueType::Keyword,
            Some(Unique::Identity),
            "Attribute used to uniquely name an entity.",
        ),
        mk(
            VALUE_TYPE,
            "valueType",
            Ref,
            None,
            "Property of an attribute: the type of its values, one of the :db.type/... entities.",
        ),
        mk(
            CARDINALITY,
            "cardinality",
            Ref,
            None,
            "Property of an attribute: :db.cardinality/one for single-valued attributes, \
             :db.cardinality/many for many-valued ones.",
        ),
        mk(
            UNIQUE,
            "unique",
            Ref,
            None,
            "Property of an attribute: with :db.unique/value its values are unique to one \
             entity; with :db.unique/identity too, and a tempid asserting an existing value \
             resolves to that entity (upsert).",
        ),
        mk(
            IS_COMPONENT,
            "isComponent",
            Boolean,
            None,
            "Property of a ref attribute: if true, the referenced entity is a component of the \
             referencing one (retracted with it, pulled with it).",
        ),
        // Full-text, as Datomic's: `(fulltext $ :db/doc "...")` searches the docs.
        Attribute {
            fulltext: Some(AnalyzerConfig {
                stop_words: StopWords::Classic,
                stemmer: None,
            }),
            ..mk(
                DOC,
                "doc",
                ValueType::String,
                None,
                "Documentation string for an entity.",
            )
        },
        mk(
            TX_INSTANT,
            "txInstant",
            Instant,
            None,
            "The instant of a transaction, recorded with every transaction.",
        ),
        // The two tuple-valued properties are tuples of keywords, as Datomic declares them.
        Attribute {
            tuple_type: Some(ValueType::Keyword),
            ..mk(
                TUPLE_ATTRS,
                "tupleAttrs",
                Tuple,
                None,
                "Property of a composite tuple attribute: the attributes (keywords) whose \
                 values it is made of.",
            )
        },
        mk(
            TUPLE_TYPE,
            "tupleType",
            ValueType::Keyword,
            None,
            "Property of a homogeneous tuple attribute: the type of its elements.",
        ),
        Attribute {
            tuple_type: Some(ValueType::Keyword),
            ..mk(
                TUPLE_TYPES,
                "tupleTypes",
                Tuple,
                None,
                "Property of a heterogeneous tuple attribute: the type of each element, in \
                 order.",
            )
        },
        mk(
            NO_HISTORY,
            "noHistory",
            Boolean,
            None,
            "Property of an attribute: if true, its past values are not kept.",
        ),
        mk(
            FULLTEXT,
            "fulltext",
            Boolean,
            None,
            "Property of a string attribute: if true, its values are in a full-text index, \
             searched with the fulltext query function.",
        ),
        mk(
            INDEX,
            "index",
            Boolean,
            None,
            "Property of an attribute, accepted for Datomic compatibility (every attribute is \
             indexed in AVE).",
        ),
        mk(
            EXCISE,
            "excise",
            Ref,
            None,
            "Attribute of an excision: the entity whose datoms, or the attribute whose values, \
             are removed for good (current state, history and log).",
        ),
        Attribute {
            ident: Keyword::new(Some("db.excise"), "attrs"),
            cardinality: Cardinality::Many,
            ..mk(
                EXCISE_ATTRS,
                "",
                Ref,
                None,
                "Attribute of an excision: only these attributes of its target are excised.",
            )
        },
        Attribute {
            ident: Keyword::new(Some("db.excise"), "before"),
            ..mk(
                EXCISE_BEFORE,
                "",
                Instant,
                None,
                "Attribute of an excision: only datoms of transactions before this instant.",
            )
        },
        Attribute {
            ident: Keyword::new(Some("db.excise"), "beforeT"),
            ..mk(
                EXCISE_BEFORE_T,
                "",
                ValueType::Long,
                None,
                "Attribute of an excision: only datoms of transactions before this one.",
            )
        },
        Attribute {
            ident: Keyword::new(Some("db.fulltext"), "stopWords"),
            ..mk(
                FULLTEXT_STOP_WORDS,
                "",
                ValueType::Keyword,
                None,
                "Property of a full-text attribute: the words left out of its index, \
                 :classic (Lucene's 33 English stop words, the default, as Datomic), :none, or \
                 a language's list (:english, :german, ...).",
            )
        },
        Attribute {
            ident: Keyword::new(Some("db.fulltext"), "stemmer"),
            ..mk(
                FULLTEXT_STEMMER,
                "",
                ValueType::Keyword,
                None,
                "Property of a full-text attribute: the language its words are reduced to their \
                 stems in (Snowball: :english, :german, ...); none by default, as Datomic.",
            )
        },
        Attribute {
            cardinality: Cardinality::Many,
            ..mk(
                ENSURE,
                "ensure",
                Ref,
                None,
                "Attribute of an entity: the entity specs a transaction asserting it checks the \
                 entity against (each spec's :db.entity/attrs must all be present).",
            )
        },
        Attribute {
            ident: Keyword::new(Some("db.entity"), "attrs"),
            cardinality: Cardinality::Many,
            ..mk(
                ENTITY_ATTRS,
                "",
                ValueType::Keyword,
                None,
                "Property of an entity spec: the attributes an entity checked against it must \
                 have.",
            )
        },
        Attribute {
            ident: Keyword::new(Some("db.entity"), "preds"),
            cardinality: Cardinality::Many,
            ..mk(
                ENTITY_PREDS,
                "",
                ValueType::Symbol,
                None,
                "Property of an entity spec: predicates on the entity (Clojure functions in \
                 Datomic; a spec with any is refused when checked, as Datalith runs no Clojure).",
            )
        },
    ]
}

/// A problem with an attribute definition.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum SchemaError {
    /// A property has a value this schema does not know.
    #[error("attribute {ident}: {property} cannot be {value}")]
    BadProperty {
        /// The ident, as EDN.
        ident: String,
        /// The attribute property (such as `:db/valueType`).
        property: &'static str,
        /// The value, as EDN.
        value: String,
    },
    /// A required property is missing.
    #[error("attribute {ident}: missing {property}")]
    Missing {
        /// The ident, as EDN.
        ident: String,
        /// The attribute property (such as `:db/valueType`).
        property: &'static str,
    },
}

impl SchemaError {
    /// The error's stable category (see `crate::error`): a stored attribute definition that
    /// does not load is corrupt data (a transaction's schema change is checked before commit).
    pub fn category(&self) -> crate::error::Category {
        match self {
            SchemaError::BadProperty { .. } | SchemaError::Missing { .. } => {
                crate::error::INVALID_SCHEMA
            }
        }
    }

    /// The error's structured fields (see `crate::error`).
    pub fn fields(&self) -> Vec<crate::error::Field> {
        use crate::error::{edn_text_field, keyword_field};
        match self {
            SchemaError::BadProperty {
                ident,
                property,
                value,
            } => vec![
                keyword_field("entity", ident),
                keyword_field("attribute", property),
                edn_text_field("value", value),
            ],
            SchemaError::Missing { ident, property } => vec![
                keyword_field("entity", ident),
                keyword_field("attribute", property),
            ],
        }
    }
}

/// The whole schema of a database at one point in time. Immutable; a schema change makes a
/// new one (readers keep theirs).
#[derive(Debug, Clone)]
pub struct Schema {
    by_id: HashMap<AttrId, Arc<Attribute>>,
    by_ident: HashMap<Keyword, AttrId>,
    /// Idents attributes had before a rename, which still name them while no entity holds
    /// them (Datomic: a renamed attribute's old ident keeps resolving, so code written
    /// against it goes on working). Never an ident `by_ident` holds.
    aliases: HashMap<Keyword, AttrId>,
    /// The composite tuple attributes (`:db/tupleAttrs`), in id order: every transaction asks
    /// for them (`DatomBuilder::update_composites`), and collecting and sorting every attribute
    /// for that was ~3% of the committer's samples in W async at batch 1.
    composites: Vec<AttrId>,
    /// Bumped by every schema change; caches of parsed/planned queries key on it.
    pub version: u64,
}

impl Default for Schema {
    /// The built-in attributes alone, as this code defines them.
    fn default() -> Self {
        Schema::with_builtins(builtin_attrs())
    }
}

impl Schema {
    fn with_builtins(builtins: Vec<Attribute>) -> Schema {
        let mut s = Schema {
            by_id: HashMap::default(),
            by_ident: HashMap::default(),
            aliases: HashMap::default(),
            composites: Vec::new(),
            version: 0,
        };
        for a in builtins {
            s.insert(a);
        }
        s
    }

    /// The built-in attributes of a state of the legacy format (`bootstrap`: made before
    /// the built-in entities were stored): `:db/valueType`, `:db/cardinality` and `:db/unique`
    /// hold keywords there, so they are keyword attributes in its schema.
    pub fn legacy() -> Schema {
        let builtins = builtin_attrs()
            .into_iter()
            .map(|mut a| {
                if super::bootstrap::IdentProperty::of_attr(a.id).is_some() {
                    a.value_type = ValueType::Keyword;
                }
                a
            })
            .collect();
        Schema::with_builtins(builtins)
    }

    /// Whether this is the schema of a legacy-format state (see [`Schema::legacy`]).
    pub fn is_legacy(&self) -> bool {
        self.get(builtin::VALUE_TYPE)
            .is_some_and(|a| a.value_type == ValueType::Keyword)
    }

    /// This schema with the built-in attributes of the current format, one version on: the
    /// schema of a legacy state once upgraded (its user attributes mean the same).
    pub fn upgraded(&self) -> Schema {
        let mut next = self.clone();
        for a in builtin_attrs() {
            next.insert(a);
        }
        next.version += 1;
        next
    }

    /// Adds or replaces an attribute.
    pub fn insert(&mut self, attr: Attribute) {
        if let Some(old) = self.by_id.get(&attr.id) {
            if old.ident != attr.ident {
                self.by_ident.remove(&old.ident);
                // Renamed: the old ident goes on naming it.
                self.aliases.insert(old.ident.clone(), attr.id);
            }
        }
        self.aliases.remove(&attr.ident);
        self.by_ident.insert(attr.ident.clone(), attr.id);
        let at = self.composites.binary_search(&attr.id);
        match (attr.tuple_attrs.is_some(), at) {
            (true, Err(i)) => self.composites.insert(i, attr.id),
            (false, Ok(i)) => {
                self.composites.remove(i);
            }
            _ => {}
        }
        self.by_id.insert(attr.id, Arc::new(attr));
    }

    /// The composite tuple attributes (`:db/tupleAttrs`), in id order.
    pub fn composite_attributes(&self) -> impl Iterator<Item = &Arc<Attribute>> + '_ {
        self.composites.iter().filter_map(|id| self.by_id.get(id))
    }

    /// The attribute with id `id`.
    pub fn get(&self, id: AttrId) -> Option<&Arc<Attribute>> {
        self.by_id.get(&id)
    }

    /// The attribute named `ident`, now or before a rename (see [`Schema::alias`]).
    pub fn by_ident(&self, ident: &Keyword) -> Option<&Arc<Attribute>> {
        self.by_ident
            .get(ident)
            .or_else(|| self.aliases.get(ident))
            .and_then(|id| self.by_id.get(id))
    }

    /// Records that `old`, an ident attribute `id` had before a rename and that no entity
    /// holds now, still names it (`store::load` finds them in the history of `:db/ident`).
    pub fn alias(&mut self, old: Keyword, id: AttrId) {
        debug_assert!(self.by_id.contains_key(&id), "an alias names an attribute");
        if !self.by_ident.contains_key(&old) {
            self.aliases.insert(old, id);
        }
    }

    /// Forgets the old ident `ident` (an entity holds it now); whether it was one.
    pub fn forget_alias(&mut self, ident: &Keyword) -> bool {
        self.aliases.remove(ident).is_some()
    }

    /// Whether `ident` is an old ident of a renamed attribute.
    pub fn is_alias(&self, ident: &Keyword) -> bool {
        self.aliases.contains_key(ident)
    }

    /// Every attribute, built-in ones included, in id order.
    pub fn attributes(&self) -> Vec<Arc<Attribute>> {
        let mut v: Vec<_> = self.by_id.values().cloned().collect();
        v.sort_by_key(|a| a.id);
        v
    }

    /// User attributes only, in id order.
    pub fn user_attributes(&self) -> Vec<Arc<Attribute>> {
        self.attributes()
            .into_iter()
            .filter(|a| a.id >= builtin::FIRST_USER_ATTR)
            .collect()
    }

    /// Whether `id` is a built-in entity (a built-in attribute or ident entity).
    pub fn is_builtin(id: AttrId) -> bool {
        id < builtin::FIRST_USER_ATTR
    }
}

/// Builds an attribute from the property datoms of its entity (`(attr id, value)` pairs).
pub fn attribute_from_datoms(
    id: AttrId,
    props: &[(AttrId, Value)],
) -> Result<Option<Attribute>, SchemaError> {
    use builtin::*;
    let find = |a: AttrId| props.iter().find(|(pa, _)| *pa == a).map(|(_, v)| v);
    let Some(Value::Keyword(ident)) = find(IDENT) else {
        // An attribute entity without an ident has been retracted: not an attribute.
        return Ok(None);
    };
    let name = ident.to_string();
    let bad = |property, v: &Value| SchemaError::BadProperty {
        ident: name.clone(),
        property,
        value: bootstrap::value_text(v),
    };
    // Each property is a ref to an ident entity; a legacy-format state holds the ident's
    // keyword instead (see `bootstrap`).
    let named = |v: &Value| match v {
        Value::Ref(e) => Some(*e),
        Value::Keyword(k) => IdentProperty::ALL.into_iter().find_map(|p| p.entity(k)),
        _ => None,
    };
    let value_type = match find(VALUE_TYPE) {
        Some(v) => named(v)
            .and_then(bootstrap::value_type_of)
            .ok_or_else(|| bad(":db/valueType", v))?,
        None => {
            return Err(SchemaError::Missing {
                ident: name,
                property: ":db/valueType",
            })
        }
    };
    let cardinality = match find(CARDINALITY) {
        Some(v) => named(v)
            .and_then(bootstrap::cardinality_of)
            .ok_or_else(|| bad(":db/cardinality", v))?,
        None => Cardinality::One,
    };
    let unique = match find(UNIQUE) {
        Some(v) => Some(
            named(v)
                .and_then(bootstrap::unique_of)
                .ok_or_else(|| bad(":db/unique", v))?,
        ),
        None => None,
    };
    let is_component = matches!(find(IS_COMPONENT), Some(Value::Boolean(true)));
    let no_history = matches!(find(NO_HISTORY), Some(Value::Boolean(true)));
    let indexed = matches!(find(INDEX), Some(Value::Boolean(true)));
    let fulltext = match find(FULLTEXT) {
        Some(Value::Boolean(true)) => {
            let language = |property, v: &Value| match v {
                Value::Keyword(k) if k.namespace().is_none() => {
                    Language::from_name(k.name()).ok_or_else(|| bad(property, v))
                }
                _ => Err(bad(property, v)),
            };
            let stop_words = match find(FULLTEXT_STOP_WORDS) {
                None => StopWords::Classic,
                Some(Value::Keyword(k)) if k.namespace().is_none() && k.name() == "classic" => {
                    StopWords::Classic
                }
                Some(Value::Keyword(k)) if k.namespace().is_none() && k.name() == "none" => {
                    StopWords::None
                }
                Some(v) => StopWords::Language(language(":db.fulltext/stopWords", v)?),
            };
            let stemmer = find(FULLTEXT_STEMMER)
                .map(|v| language(":db.fulltext/stemmer", v))
                .transpose()?;
            Some(AnalyzerConfig {
                stop_words,
                stemmer,
            })
        }
        _ => None,
    };
    let doc = match find(DOC) {
        Some(Value::String(s)) => Some(s.to_string()),
        _ => None,
    };
    let keyword_list = |v: &Value, property| -> Result<Vec<Keyword>, SchemaError> {
        match v {
            Value::Tuple(items) => items
                .iter()
                .map(|i| match i {
                    Some(Value::Keyword(k)) => Ok(k.clone()),
                    _ => Err(bad(property, v)),
                })
                .collect(),
            _ => Err(bad(property, v)),
        }
    };
    let tuple_attrs = find(TUPLE_ATTRS)
        .map(|v| keyword_list(v, ":db/tupleAttrs"))
        .transpose()?;
    let tuple_type = match find(TUPLE_TYPE) {
        Some(Value::Keyword(k)) => Some(
            ValueType::from_ident(k)
                .ok_or_else(|| bad(":db/tupleType", &Value::Keyword(k.clone())))?,
        ),
        Some(v) => return Err(bad(":db/tupleType", v)),
        None => None,
    };
    let tuple_types = match find(TUPLE_TYPES) {
        Some(v) => Some(
            keyword_list(v, ":db/tupleTypes")?
                .iter()
                .map(|k| ValueType::from_ident(k).ok_or_else(|| bad(":db/tupleTypes", v)))
                .collect::<Result<Vec<_>, _>>()?,
        ),
        None => None,
    };
    Ok(Some(Attribute {
        id,
        ident: ident.clone(),
        value_type,
        cardinality,
        unique,
        is_component,
        doc,
        tuple_attrs,
        tuple_type,
        tuple_types,
        no_history,
        indexed,
        fulltext,
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn attr(id: AttrId, name: &str, composite: bool) -> Attribute {
        Attribute {
            id,
            ident: Keyword::new(Some("t"), name),
            value_type: if composite {
                ValueType::Tuple
            } else {
                ValueType::Long
            },
            cardinality: Cardinality::One,
            unique: None,
            is_component: false,
            doc: None,
            tuple_attrs: composite.then(|| vec![Keyword::new(Some("t"), "a")]),
            tuple_type: None,
            tuple_types: None,
            no_history: false,
            indexed: false,
            fulltext: None,
        }
    }

    /// Steps of inserts (id, name, composite?), and the composite attributes after them: the
    /// kept list always equals a filter over every attribute.
    #[test]
    fn the_composite_list_follows_every_insert_and_replacement() {
        let table: &[(&str, &[(AttrId, &str, bool)], &[AttrId])] = &[
            ("none", &[], &[]),
            ("plain only", &[(100, "a", false)], &[]),
            ("one", &[(100, "a", false), (101, "ab", true)], &[101]),
            (
                "in id order whatever the insert order",
                &[(105, "x", true), (101, "y", true), (103, "z", true)],
                &[101, 103, 105],
            ),
            (
                "a replacement that stops being composite",
                &[(101, "ab", true), (101, "ab", false)],
                &[],
            ),
            (
                "a replacement that becomes composite, once",
                &[(101, "ab", false), (101, "ab", true), (101, "ab2", true)],
                &[101],
            ),
        ];
        for (name, inserts, want) in table {
            let mut s = Schema::default();
            for (id, n, c) in inserts.iter() {
                s.insert(attr(*id, n, *c));
            }
            let kept: Vec<AttrId> = s.composite_attributes().map(|a| a.id).collect();
            let filtered: Vec<AttrId> = s
                .attributes()
                .iter()
                .filter(|a| a.tuple_attrs.is_some())
                .map(|a| a.id)
                .collect();
            assert_eq!(kept, *want, "{name}");
            assert_eq!(kept, filtered, "{name}");
        }
    }
}
