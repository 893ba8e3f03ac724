//! Transaction errors. Every user error names the offending datom or form; a failed
//! transaction changes nothing.

use crate::error::{
    self, edn_text_field, entity_field, keyword_field, text_field, Category, Field,
};
use crate::kv::KvError;
use crate::store::StoreError;

/// Why a transaction failed.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum TxError {
    /// A report's `db_before`/`db_after` asked for after its snapshot was let go (too many
    /// later group commits, or the map grew), or of a report made without one.
    #[error("this report's database values are no longer available (its snapshot was released)")]
    SnapshotReleased,
    /// An attribute that is not in the schema.
    #[error("unknown attribute {attr} in {form}")]
    UnknownAttribute {
        /// The attribute, as EDN.
        attr: String,
        /// The offending form, as EDN.
        form: String,
    },
    /// A value whose type does not match its attribute.
    #[error("wrong value type for {attr}: expected {expected}, got {got} in {form}")]
    WrongType {
        /// The attribute, as EDN.
        attr: String,
        /// What was expected, as EDN.
        expected: String,
        /// What was given instead, as EDN.
        got: String,
        /// The offending form, as EDN.
        form: String,
    },
    /// A value no datom can hold: a ratio, regular expression, set or map (query values
    /// only; Datomic has no such value types). `value` is its EDN text.
    #[error("{value} cannot be stored in {attr}: ratios, regular expressions, sets and maps are query values only, in {form}")]
    NotStorable {
        /// The attribute, as EDN.
        attr: String,
        /// The value, as EDN.
        value: String,
        /// The offending form, as EDN.
        form: String,
    },
    /// A lookup ref that names no entity.
    #[error("lookup ref [{attr} {value}] names no entity")]
    LookupNotFound {
        /// The attribute, as EDN.
        attr: String,
        /// The value, as EDN.
        value: String,
    },
    /// A lookup ref on an attribute that is not unique.
    #[error("lookup ref attribute {attr} is not :db/unique")]
    LookupNotUnique {
        /// The attribute, as EDN.
        attr: String,
    },
    /// An ident that names no entity.
    #[error("no entity has :db/ident {ident}")]
    IdentNotFound {
        /// The ident, as EDN.
        ident: String,
    },
    /// A unique value that another entity already has.
    #[error("unique conflict: {attr} {value} is already held by entity {existing}, cannot assert it on {entity}")]
    UniqueConflict {
        /// The attribute, as EDN.
        attr: String,
        /// The value, as EDN.
        value: String,
        /// The entity that holds the value already.
        existing: u64,
        /// The entity id.
        entity: u64,
    },
    /// A tempid that upserts to two different entities.
    #[error("tempid {tempid} resolves to both {first} and {second}")]
    TempidConflict {
        /// The tempid, as EDN.
        tempid: String,
        /// The first entity id.
        first: u64,
        /// The second entity id.
        second: u64,
    },
    /// One unique value asserted on two entities in one transaction (Datomic's
    /// `:db.error/datoms-conflict`; a holder from before the transaction is `UniqueConflict`).
    #[error("conflicting datoms: {attr} {value} asserted on both {first} and {second} in one transaction")]
    UniqueValueTwice {
        /// The attribute, as EDN.
        attr: String,
        /// The value, as EDN.
        value: String,
        /// The first entity id.
        first: u64,
        /// The second entity id.
        second: u64,
    },
    /// nil given as an attribute's value (Datomic's `:db.error/nil-value`): retract instead.
    #[error("nil is not a value (retract the attribute instead) in {form}")]
    NilValue {
        /// The offending form, as EDN.
        form: String,
    },
    /// `:db/cas` on a cardinality-many attribute (Datomic's `:db.error/invalid-cas-many`).
    #[error(":db/cas needs a cardinality-one attribute; {attr} is cardinality-many, in {form}")]
    CasOnCardinalityMany {
        /// The attribute, as EDN.
        attr: String,
        /// The offending form, as EDN.
        form: String,
    },
    /// Two different values asserted for a cardinality-one attribute in one transaction.
    #[error("conflicting datoms: {attr} of entity {entity} asserted as both {first} and {second}")]
    DatomConflict {
        /// The entity id.
        entity: u64,
        /// The attribute, as EDN.
        attr: String,
        /// The first of the two, as EDN.
        first: String,
        /// The second of the two, as EDN.
        second: String,
    },
    /// Two different values of a cardinality-one attribute retracted from one entity in one
    /// transaction, by `:db/retract` or `:db/retractEntity`, whether held or not (Datomic's
    /// `:db.error/datoms-conflict`: it judges retractions as it judges assertions).
    #[error(
        "conflicting datoms: {attr} of entity {entity} retracted as both {first} and {second}"
    )]
    DatomConflictRetractions {
        /// The entity id.
        entity: u64,
        /// The attribute, as EDN.
        attr: String,
        /// The first of the two, as EDN.
        first: String,
        /// The second of the two, as EDN.
        second: String,
    },
    /// One datom both asserted and retracted in one transaction (Datomic's
    /// `:db.error/datoms-conflict`).
    #[error("conflicting datoms: [{entity} {attr} {value}] is both asserted and retracted in one transaction")]
    DatomConflictAssertRetract {
        /// The entity id.
        entity: u64,
        /// The attribute, as EDN.
        attr: String,
        /// The value, as EDN.
        value: String,
    },
    /// A nested map under a reference that is not a component, with neither `:db/id` nor a
    /// `:db.unique/identity` attribute: nothing but that reference would name the new
    /// entity (Datomic's `:db.error/invalid-nested-entity`).
    #[error("nested entity {entity} under {attr} is not a component and has no :db/id or :db.unique/identity attribute, in {form}")]
    InvalidNestedEntity {
        /// The attribute, as EDN.
        attr: String,
        /// The entity as written, as EDN.
        entity: String,
        /// The offending form, as EDN.
        form: String,
    },
    /// Something in entity position that names no entity: a map, a double, a boolean, nil,
    /// a set (also as a reverse attribute's value, which Datomic reads in entity position:
    /// `:db.error/not-an-entity`). `entity` and `form` are EDN.
    #[error("cannot resolve entity {entity}: an entity is named by an id, tempid, ident or lookup ref, in {form}")]
    UnresolvableEntity {
        /// The entity as written, as EDN.
        entity: String,
        /// The offending form, as EDN.
        form: String,
    },
    /// A lookup ref whose first element is not an attribute (a vector of lookup refs given
    /// as one reverse attribute's value, say; Datomic's `:db.error/not-an-attribute`).
    #[error("{value} is not an attribute, in lookup ref {lookup} of {form}")]
    NotAnAttribute {
        /// The value, as EDN.
        value: String,
        /// The lookup ref, as EDN.
        lookup: String,
        /// The offending form, as EDN.
        form: String,
    },
    /// A lookup ref whose first element is a string (Datomic's `:db.error/not-a-keyword`).
    #[error("{value} is not a keyword, in lookup ref {lookup} of {form}")]
    NotAKeyword {
        /// The value, as EDN.
        value: String,
        /// The lookup ref, as EDN.
        lookup: String,
        /// The offending form, as EDN.
        form: String,
    },
    /// `:db/retractEntity` of a tempid, which names no entity that exists (Datomic's
    /// `:db.error/not-a-keyword`: it reads the tempid as an ident that is not a keyword).
    #[error("cannot retract entity {tempid}: a tempid names no existing entity ({form})")]
    RetractEntityTempid {
        /// The tempid, as EDN.
        tempid: String,
        /// The offending form, as EDN.
        form: String,
    },
    /// An operation that reads an existing entity's values (`:db/cas`, `:db/retract`
    /// without a value) on a string tempid, which names none (Datomic's
    /// `:db.error/not-a-keyword`, as for `:db/retractEntity`).
    #[error("{op} reads an existing entity, and the tempid {tempid} names none ({form})")]
    TempidNamesNothing {
        /// The operation (`:db/cas`, `:db/retract`).
        op: &'static str,
        /// The tempid, as EDN.
        tempid: String,
        /// The offending form, as EDN.
        form: String,
    },
    /// An entity checked against an entity spec (`:db/ensure`) lacks attributes the spec's
    /// `:db.entity/attrs` require (Datomic's `:db.error/entity-attr`).
    #[error("entity {entity} misses {} of spec {spec}", missing.join(", "))]
    EntityAttrsMissing {
        /// The entity id.
        entity: u64,
        /// The spec, by its ident (or id).
        spec: String,
        /// The required attributes it lacks, as EDN.
        missing: Vec<String>,
    },
    /// An entity spec with `:db.entity/preds`: Clojure functions in Datomic, which Datalith
    /// cannot run, so the spec cannot be checked.
    #[error(
        "entity spec {spec} has :db.entity/preds (Clojure functions), which Datalith cannot run"
    )]
    EntityPredsUnsupported {
        /// The spec, by its ident (or id).
        spec: String,
    },
    /// A string given for a keyword attribute without the leading colon that makes it one
    /// (Datomic reads `":dev"` as `:dev`, and refuses `"dev"`: `:db.error/not-a-keyword`).
    #[error(
        "{value} is no keyword for {attr}: a string there needs a leading : (\":name\"), in {form}"
    )]
    KeywordStringWithoutColon {
        /// The attribute, as EDN.
        attr: String,
        /// The string, as EDN.
        value: String,
        /// The offending form, as EDN.
        form: String,
    },
    /// An attribute position holding something other than a keyword (Datomic's
    /// `:db.error/not-a-keyword`).
    #[error("{value} is not an attribute keyword, in {form}")]
    AttributeNotKeyword {
        /// What was there, as EDN.
        value: String,
        /// The offending form, as EDN.
        form: String,
    },
    /// A lookup ref whose value is nil: it names no entity (Datomic's
    /// `:db.error/not-an-entity`).
    #[error("lookup ref {lookup} has no value (nil), so it names no entity, in {form}")]
    LookupRefNil {
        /// The lookup ref, as EDN.
        lookup: String,
        /// The offending form, as EDN.
        form: String,
    },
    /// A list in entity position that is not `[attribute value]` (Datomic's
    /// `:db.error/invalid-lookup-ref`).
    #[error("invalid lookup ref {lookup}: a lookup ref is [attribute value], in {form}")]
    InvalidLookupRef {
        /// The lookup ref, as EDN.
        lookup: String,
        /// The offending form, as EDN.
        form: String,
    },
    /// A new attribute without a property every attribute needs (Datomic's
    /// `:db.error/invalid-install-attribute`); `property` is `:db/valueType` or
    /// `:db/cardinality`.
    #[error("cannot install attribute {attr}: {property} is missing")]
    InvalidInstallAttribute {
        /// The attribute, as EDN.
        attr: String,
        /// The attribute property (such as `:db/valueType`).
        property: String,
    },
    /// An attribute whose properties do not go together (Datomic's
    /// `:db.error/invalid-install-attribute`): `:db/isComponent` on a value type other than
    /// ref (`:db.error/components-must-be-refs`), a tuple attribute without exactly one of
    /// `:db/tupleAttrs`, `:db/tupleTypes` and `:db/tupleType` (`:db.error/invalid-tuple-kind`),
    /// or one of those on an attribute that is not a tuple.
    #[error("cannot install attribute {attr}: {problem}")]
    InvalidAttributeProperties {
        /// The attribute, as EDN.
        attr: String,
        /// What does not go together.
        problem: String,
    },
    /// A schema property whose values are ident entities (`:db/valueType`,
    /// `:db/cardinality`, `:db/unique`) given a keyword that names none of them, such as
    /// `:db/valueType :db.type/nonsense`.
    #[error("{value} is not a {property} value (one of {expected}), in {form}")]
    InvalidSchemaValue {
        /// The property, e.g. `:db/valueType`.
        property: String,
        /// Whether the keyword names an entity at all (of the wrong kind: Datomic's
        /// `:db.error/invalid-install-attribute`) or none (`:db.error/not-an-entity`).
        names_entity: bool,
        /// The value, as EDN.
        value: String,
        /// The idents the property admits, comma-separated.
        expected: String,
        /// The offending form, as EDN.
        form: String,
    },
    /// A tuple value its attribute's `:db/tupleTypes` or `:db/tupleType` does not admit
    /// (arity, element types; Datomic's `:db.error/invalid-tuple-value`).
    #[error("invalid tuple value {value} for {attr}: {reason}, in {form}")]
    InvalidTupleValue {
        /// The attribute, as EDN.
        attr: String,
        /// The value, as EDN.
        value: String,
        /// Why, in words.
        reason: String,
        /// The offending form, as EDN.
        form: String,
    },
    /// A tempid used only in value position: no datom is asserted about it, so it would name
    /// an empty entity (Datomic's `:db.error/tempid-not-an-entity`).
    #[error("tempid {tempid} is used only as a value in the transaction")]
    TempidOnlyValue {
        /// The tempid, as EDN.
        tempid: String,
    },
    /// A `:db/cas` whose expected value is not the current one.
    #[error(":db/cas failed on entity {entity} {attr}: expected {expected}, found {found}")]
    CasFailed {
        /// The entity id.
        entity: u64,
        /// The attribute, as EDN.
        attr: String,
        /// What was expected, as EDN.
        expected: String,
        /// What was found instead, as EDN.
        found: String,
    },
    /// A `:db/cas` on a lookup ref that names no entity, expecting a value: the entity has
    /// none (Datomic's compare fails the same way).
    #[error(
        ":db/cas failed on {entity}, which names no entity: {attr} expected {expected}, found nil"
    )]
    CasOnNothing {
        /// The lookup ref, as EDN.
        entity: String,
        /// The attribute, as EDN.
        attr: String,
        /// What was expected, as EDN.
        expected: String,
    },
    /// A `:db/txInstant` earlier than the last transaction's (Datomic's rule: a database's
    /// time never goes back, so `as-of` an instant names one state).
    #[error("time conflict: :db/txInstant {} is older than the last transaction's, {}", crate::tx::print::value_text(&crate::codec::Value::Instant(*.instant)), crate::tx::print::value_text(&crate::codec::Value::Instant(*.last)))]
    PastTxInstant {
        /// The instant given (ms since the epoch).
        instant: i64,
        /// The last transaction's instant.
        last: i64,
    },
    /// Tx data given as text that is not EDN.
    #[error("tx data is not EDN: {}:{}: {}", .0.line, .0.column, .0.message)]
    Edn(#[from] crate::edn::ReadError),
    /// A `:db/cas` whose entity or new value is nil (Datomic's `:db.error/invalid-cas`).
    #[error(":db/cas needs an entity, an attribute and a new value, in {form}")]
    InvalidCas {
        /// The offending form, as EDN.
        form: String,
    },
    /// Malformed tx data.
    #[error("malformed tx data: {detail} in {form}")]
    Malformed {
        /// What is wrong, in words.
        detail: String,
        /// The offending form, as EDN.
        form: String,
    },
    /// An entity id that does not exist where one is required (e.g. a ref value).
    #[error("entity {entity} does not exist ({form})")]
    NoSuchEntity {
        /// The entity id.
        entity: u64,
        /// The offending form, as EDN.
        form: String,
    },
    /// A schema change the existing data or the rules forbid.
    #[error("schema change refused for {attr}: {reason}")]
    SchemaChange {
        /// The attribute, as EDN.
        attr: String,
        /// Why, in words.
        reason: String,
    },
    /// An excision that would remove schema: a built-in entity as its target, or datoms of
    /// a built-in attribute other than `:db/doc` (an ident, an attribute's definition, a
    /// transaction's instant).
    #[error("excision of {target} refused: {reason}")]
    InvalidExcision {
        /// The target (an ident when it has one, else its id).
        target: String,
        /// Why, in words.
        reason: String,
    },
    /// An unknown transaction function.
    #[error("unknown transaction function {function}")]
    UnknownFunction {
        /// The function's name.
        function: String,
    },
    /// A transaction function failed.
    #[error("transaction function {function} failed: {message}")]
    FunctionFailed {
        /// The function's name.
        function: String,
        /// What the function said, in words.
        message: String,
    },
    /// An entity id space ran out (more than 2^44 entities).
    #[error("entity ids exhausted")]
    IdsExhausted,
    /// The store failed while reading or writing.
    #[error(transparent)]
    Store(#[from] StoreError),
    /// A full-text index could not be written (a damaged index).
    #[error(transparent)]
    Search(crate::search::SearchError),
}

impl From<KvError> for TxError {
    fn from(e: KvError) -> Self {
        TxError::Store(StoreError::Kv(e))
    }
}

impl TxError {
    /// Whether this is two datoms of the transaction that cannot both hold (Datomic's
    /// `:db.error/datoms-conflict`, found after every lookup and `:db/cas`).
    pub(crate) fn is_conflict(&self) -> bool {
        matches!(
            self,
            TxError::DatomConflict { .. }
                | TxError::DatomConflictRetractions { .. }
                | TxError::DatomConflictAssertRetract { .. }
                | TxError::UniqueValueTwice { .. }
        )
    }

    /// Whether the caller's tx data is at fault (as opposed to the environment).
    pub fn is_user_error(&self) -> bool {
        self.category().is_user_error()
    }

    /// The error's stable category (see `crate::error`).
    pub fn category(&self) -> Category {
        match self {
            TxError::SnapshotReleased => error::SNAPSHOT_RELEASED,
            // Datomic: "Unable to resolve entity: :nope" for an unknown attribute too.
            TxError::UnknownAttribute { .. } => error::NOT_AN_ENTITY,
            TxError::WrongType { .. } | TxError::NotStorable { .. } => {
                error::WRONG_TYPE_FOR_ATTRIBUTE
            }
            TxError::LookupNotFound { .. } => error::NOT_AN_ENTITY,
            TxError::LookupNotUnique { .. } => error::LOOKUP_REF_ATTR_NOT_UNIQUE,
            TxError::IdentNotFound { .. } => error::NOT_AN_ENTITY,
            TxError::UniqueConflict { .. } => error::UNIQUE_CONFLICT,
            // Datomic reports a tempid upserted to two entities as a unique conflict.
            TxError::TempidConflict { .. } => error::UNIQUE_CONFLICT,
            TxError::DatomConflict { .. }
            | TxError::DatomConflictRetractions { .. }
            | TxError::DatomConflictAssertRetract { .. }
            | TxError::UniqueValueTwice { .. } => error::DATOMS_CONFLICT,
            TxError::NilValue { .. } => error::NIL_VALUE,
            TxError::CasOnCardinalityMany { .. } => error::INVALID_CAS_MANY,
            TxError::InvalidNestedEntity { .. } => error::INVALID_NESTED_ENTITY,
            TxError::TempidOnlyValue { .. } => error::TEMPID_NOT_AN_ENTITY,
            TxError::UnresolvableEntity { .. } => error::NOT_AN_ENTITY,
            TxError::NotAnAttribute { .. } => error::NOT_AN_ATTRIBUTE,
            TxError::NotAKeyword { .. }
            | TxError::RetractEntityTempid { .. }
            | TxError::TempidNamesNothing { .. }
            | TxError::AttributeNotKeyword { .. }
            | TxError::KeywordStringWithoutColon { .. } => error::NOT_A_KEYWORD,
            TxError::LookupRefNil { .. } => error::NOT_AN_ENTITY,
            TxError::EntityAttrsMissing { .. } => error::ENTITY_ATTR,
            TxError::EntityPredsUnsupported { .. } => error::ENTITY_PRED_UNSUPPORTED,
            TxError::InvalidLookupRef { .. } => error::INVALID_LOOKUP_REF,
            TxError::InvalidInstallAttribute { .. }
            | TxError::InvalidAttributeProperties { .. } => error::INVALID_INSTALL_ATTRIBUTE,
            // Datomic reads the keyword as an ident entity: none has it, or one of another kind.
            TxError::InvalidSchemaValue {
                names_entity: false,
                ..
            } => error::NOT_AN_ENTITY,
            TxError::InvalidSchemaValue { .. } => error::INVALID_INSTALL_ATTRIBUTE,
            TxError::InvalidTupleValue { .. } => error::INVALID_TUPLE_VALUE,
            TxError::CasFailed { .. } | TxError::CasOnNothing { .. } => error::CAS_FAILED,
            TxError::PastTxInstant { .. } => error::PAST_TX_INSTANT,
            TxError::Malformed { .. } => error::NOT_TRANSACTION_DATA,
            TxError::InvalidCas { .. } => error::INVALID_CAS,
            TxError::Edn(_) => error::INVALID_EDN,
            TxError::NoSuchEntity { .. } => error::INVALID_ENTITY_ID,
            TxError::SchemaChange { .. } => error::INVALID_ALTER_ATTRIBUTE,
            TxError::InvalidExcision { .. } => error::INVALID_EXCISION,
            TxError::UnknownFunction { .. } => error::NOT_A_DATA_FUNCTION,
            TxError::FunctionFailed { .. } => error::FUNCTION_FAILED,
            TxError::IdsExhausted => error::IDS_EXHAUSTED,
            TxError::Store(e) => e.category(),
            TxError::Search(e) => e.category(),
        }
    }

    /// The error's structured fields (see `crate::error`); keys are Datomic's `ex-data` keys
    /// where it has them (`:entity`, `:e`, `:a`, `:v-old`, `:v`).
    pub fn fields(&self) -> Vec<Field> {
        match self {
            TxError::UnknownAttribute { attr, form } => {
                vec![keyword_field("entity", attr), edn_text_field("datom", form)]
            }
            TxError::WrongType {
                attr,
                expected,
                got,
                form,
            } => vec![
                keyword_field("attribute", attr),
                keyword_field("expected", expected),
                edn_text_field("value", got),
                edn_text_field("datom", form),
            ],
            TxError::LookupNotFound { attr, value } => {
                vec![edn_text_field("entity", &format!("[{attr} {value}]"))]
            }
            TxError::LookupNotUnique { attr } => vec![keyword_field("attribute", attr)],
            TxError::IdentNotFound { ident } => vec![keyword_field("entity", ident)],
            TxError::UniqueConflict {
                attr,
                value,
                existing,
                entity,
            } => vec![
                keyword_field("attribute", attr),
                edn_text_field("value", value),
                entity_field("held-by", *existing),
                entity_field("asserted-for", *entity),
            ],
            TxError::TempidConflict {
                tempid,
                first,
                second,
            } => vec![
                edn_text_field("tempid", tempid),
                entity_field("first", *first),
                entity_field("second", *second),
            ],
            TxError::DatomConflict {
                entity,
                attr,
                first,
                second,
            }
            | TxError::DatomConflictRetractions {
                entity,
                attr,
                first,
                second,
            } => vec![
                entity_field("entity", *entity),
                keyword_field("attribute", attr),
                edn_text_field("first", first),
                edn_text_field("second", second),
            ],
            TxError::CasFailed {
                entity,
                attr,
                expected,
                found,
            } => vec![
                entity_field("e", *entity),
                keyword_field("a", attr),
                edn_text_field("v-old", expected),
                edn_text_field("v", found),
            ],
            TxError::CasOnNothing {
                entity,
                attr,
                expected,
            } => vec![
                edn_text_field("e", entity),
                keyword_field("a", attr),
                edn_text_field("v-old", expected),
            ],
            TxError::PastTxInstant { instant, last } => vec![
                ("instant", crate::edn::Edn::Inst(*instant)),
                ("basis-instant", crate::edn::Edn::Inst(*last)),
            ],
            TxError::Edn(e) => vec![
                ("line", crate::edn::Edn::Long(e.line as i64)),
                ("column", crate::edn::Edn::Long(e.column as i64)),
            ],
            TxError::Malformed { detail, form } => {
                vec![text_field("detail", detail), edn_text_field("form", form)]
            }
            TxError::InvalidCas { form } => vec![edn_text_field("form", form)],
            TxError::NoSuchEntity { entity, form } => vec![
                entity_field("entity", *entity),
                edn_text_field("datom", form),
            ],
            TxError::SchemaChange { attr, reason } => vec![
                keyword_field("attribute", attr),
                text_field("reason", reason),
            ],
            TxError::InvalidExcision { target, reason } => vec![
                keyword_field("entity", target),
                text_field("reason", reason),
            ],
            TxError::UnknownFunction { function } | TxError::FunctionFailed { function, .. } => {
                vec![keyword_field("function", function)]
            }
            TxError::UnresolvableEntity { entity, form } => vec![
                edn_text_field("entity", entity),
                edn_text_field("form", form),
            ],
            TxError::NotAnAttribute {
                value,
                lookup,
                form,
            }
            | TxError::NotAKeyword {
                value,
                lookup,
                form,
            } => vec![
                edn_text_field("value", value),
                edn_text_field("lookup-ref", lookup),
                edn_text_field("form", form),
            ],
            TxError::EntityAttrsMissing {
                entity,
                spec,
                missing,
            } => vec![
                ("entity", crate::edn::Edn::Long(*entity as i64)),
                keyword_field("spec", spec),
                edn_text_field("missing", &format!("[{}]", missing.join(" "))),
            ],
            TxError::EntityPredsUnsupported { spec } => vec![keyword_field("spec", spec)],
            TxError::KeywordStringWithoutColon { attr, value, form } => vec![
                edn_text_field("attribute", attr),
                edn_text_field("value", value),
                edn_text_field("form", form),
            ],
            TxError::AttributeNotKeyword { value, form } => {
                vec![edn_text_field("value", value), edn_text_field("form", form)]
            }
            TxError::TempidNamesNothing { op, tempid, form } => vec![
                edn_text_field("op", op),
                edn_text_field("tempid", tempid),
                edn_text_field("form", form),
            ],
            TxError::RetractEntityTempid { tempid, form } => vec![
                edn_text_field("tempid", tempid),
                edn_text_field("form", form),
            ],
            TxError::LookupRefNil { lookup, form } | TxError::InvalidLookupRef { lookup, form } => {
                vec![
                    edn_text_field("lookup-ref", lookup),
                    edn_text_field("form", form),
                ]
            }
            TxError::InvalidInstallAttribute { attr, property } => vec![
                keyword_field("entity", attr),
                keyword_field("attribute", property),
            ],
            TxError::InvalidAttributeProperties { attr, problem } => vec![
                keyword_field("entity", attr),
                text_field("problem", problem),
            ],
            TxError::InvalidSchemaValue {
                property,
                value,
                expected,
                form,
                ..
            } => vec![
                keyword_field("attribute", property),
                edn_text_field("value", value),
                text_field("expected", expected),
                edn_text_field("form", form),
            ],
            TxError::InvalidTupleValue {
                attr,
                value,
                reason,
                form,
            } => vec![
                keyword_field("attribute", attr),
                edn_text_field("value", value),
                text_field("reason", reason),
                edn_text_field("form", form),
            ],
            TxError::Store(e) => e.fields(),
            TxError::Search(e) => e.fields(),
            _ => Vec::new(),
        }
    }
}
