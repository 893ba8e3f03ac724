//! Errors as data: every error of the crate has a stable [`Category`] that programs can match,
//! besides its message for people.
//!
//! A category is three things:
//! - a code, a keyword in Datomic's style (`:db.error/unique-conflict`). Where Datomic raises
//!   the same error, the code is Datomic's own (checked against the Datomic peer's `ex-data`);
//!   where Datomic has none (it throws a plain exception, or has no such error), the code is in
//!   the `:datalith.error/...` namespace, so a program can tell the two apart.
//! - an [`Anomaly`], the Cognitect anomaly category (`:cognitect.anomalies/conflict`) that says
//!   what the caller can do about it: fix the request, retry, or give up.
//! - a [`Blame`]: the caller's input, the environment (disk, permissions, lifecycle), or
//!   corrupt stored data. The three are kept apart because they need different people: the
//!   author of the request, the operator, the backup.
//!
//! Every error enum (`QueryError`, `TxError`, `StoreError`, `KvError`, `CodecError`,
//! `SchemaError`, `DumpError`) has `category()` (an exhaustive match, so a new variant without
//! a category does not compile) and `fields()` (the structured data of the variant, Datomic's
//! `ex-data` keys where Datomic has them: `:entity`, `:attribute`, `:value`, ...). [`Error`]
//! wraps them all, and [`Error::to_edn`] makes the one EDN map the command prints:
//! `{:db/error :db.error/unique-conflict, :cognitect.anomalies/category
//! :cognitect.anomalies/conflict, :message "...", :attribute :person/email, ...}`.
//!
//! Adding a variant: give it a category in its enum's `category()` (reuse a constant below
//! when Datomic or an existing error means the same thing; otherwise add a constant here, with
//! a `:datalith.error/...` code unless Datomic's peer raises exactly that code), add its fields
//! to `fields()` when it has any, print every value in its message as EDN (never `{:?}`), and
//! add a row to `tests/error_categories.rs`.

use std::fmt;

use crate::codec::Keyword;
use crate::edn::{read_one, Edn};

/// The Cognitect anomaly categories: what kind of failure, and so what the caller can do.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Anomaly {
    /// The request is wrong: fix it, do not retry it as is.
    Incorrect,
    /// What the request names does not exist.
    NotFound,
    /// The request conflicts with the current state (a unique value held, a failed `:db/cas`).
    Conflict,
    /// The callee cannot serve now (closed, poisoned, full): retry after the operator acts.
    Unavailable,
    /// The request was stopped (timeout, cancellation).
    Interrupted,
    /// The callee failed (an I/O error, corrupt data, a bug).
    Fault,
    /// The callee is busy: retry later.
    Busy,
    /// The caller is not allowed (file permissions).
    Forbidden,
    /// The request asks for something this build does not do (a foreign or newer file).
    Unsupported,
}

impl Anomaly {
    /// The keyword text, e.g. `:cognitect.anomalies/conflict`.
    pub fn code(self) -> &'static str {
        match self {
            Anomaly::Incorrect => ":cognitect.anomalies/incorrect",
            Anomaly::NotFound => ":cognitect.anomalies/not-found",
            Anomaly::Conflict => ":cognitect.anomalies/conflict",
            Anomaly::Unavailable => ":cognitect.anomalies/unavailable",
            Anomaly::Interrupted => ":cognitect.anomalies/interrupted",
            Anomaly::Fault => ":cognitect.anomalies/fault",
            Anomaly::Busy => ":cognitect.anomalies/busy",
            Anomaly::Forbidden => ":cognitect.anomalies/forbidden",
            Anomaly::Unsupported => ":cognitect.anomalies/unsupported",
        }
    }

    /// The anomaly as a keyword.
    pub fn keyword(self) -> Keyword {
        Keyword::parse(self.code())
    }
}

impl fmt::Display for Anomaly {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.code())
    }
}

/// Who must act on an error.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Blame {
    /// The request (query, tx data, arguments) is at fault.
    Caller,
    /// The machine or the database's lifecycle: I/O, permissions, space, a closed or poisoned
    /// environment, a file of another program or version.
    Environment,
    /// Stored bytes that this store cannot have written.
    Corruption,
}

/// The stable category of an error. Compare with the constants of this module.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Category {
    /// The error's keyword text, e.g. `:db.error/unique-conflict`.
    pub code: &'static str,
    /// The anomaly category.
    pub anomaly: Anomaly,
    /// Who must act.
    pub blame: Blame,
}

impl Category {
    /// A category.
    pub const fn new(code: &'static str, anomaly: Anomaly, blame: Blame) -> Category {
        Category {
            code,
            anomaly,
            blame,
        }
    }

    /// The code as a keyword.
    pub fn keyword(&self) -> Keyword {
        Keyword::parse(self.code)
    }

    /// Whether the caller's request is at fault.
    pub fn is_user_error(&self) -> bool {
        self.blame == Blame::Caller
    }
}

impl fmt::Display for Category {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.code)
    }
}

const fn caller(code: &'static str, anomaly: Anomaly) -> Category {
    Category::new(code, anomaly, Blame::Caller)
}

const fn environment(code: &'static str, anomaly: Anomaly) -> Category {
    Category::new(code, anomaly, Blame::Environment)
}

const fn corruption(code: &'static str) -> Category {
    Category::new(code, Anomaly::Fault, Blame::Corruption)
}

// Datomic's own codes (as its peer raises them, with its anomaly).

/// A tempid used only as a value, never as an entity of the transaction.
pub const TEMPID_NOT_AN_ENTITY: Category =
    caller(":db.error/tempid-not-an-entity", Anomaly::Incorrect);
/// A nested map under a reference that is not a component and names no unique attribute.
pub const INVALID_NESTED_ENTITY: Category =
    caller(":db.error/invalid-nested-entity", Anomaly::Incorrect);
/// A file that is not an LMDB data file at all (empty, too short, no LMDB magic).
pub const NOT_A_DATABASE: Category =
    environment(":datalith.error/not-a-database", Anomaly::Unsupported);
/// A write that needed the map to grow while a snapshot stayed open past the growth's
/// patience: retry once long-held database values are closed.
pub const SNAPSHOT_BLOCKS_GROWTH: Category =
    environment(":datalith.error/snapshot-blocks-growth", Anomaly::Busy);
/// Another process holds the database for writing (its log) and did not let it go within the
/// busy timeout, as SQLite's `SQLITE_BUSY`: retry later, or share the database through one
/// process (`datalith serve`); readers in any process are never refused.
pub const DATABASE_BUSY: Category = environment(":datalith.error/busy", Anomaly::Busy);
/// nil given as an attribute's value.
pub const NIL_VALUE: Category = caller(":db.error/nil-value", Anomaly::Incorrect);
/// `:db/cas` without an entity (nil) or without a new value.
pub const INVALID_CAS: Category = caller(":db.error/invalid-cas", Anomaly::Incorrect);
/// `:db/cas` on a cardinality-many attribute.
pub const INVALID_CAS_MANY: Category = caller(":db.error/invalid-cas-many", Anomaly::Incorrect);
/// A unique value already held by another entity, or one tempid upserted to two entities.
pub const UNIQUE_CONFLICT: Category = caller(":db.error/unique-conflict", Anomaly::Conflict);
/// A `:db/cas` whose expected value is not the current one.
pub const CAS_FAILED: Category = caller(":db.error/cas-failed", Anomaly::Conflict);
/// A `:db/txInstant` earlier than the last transaction's: time never goes back.
pub const PAST_TX_INSTANT: Category = caller(":db.error/past-tx-instant", Anomaly::Incorrect);
/// An entity reference (ident, lookup ref, attribute name) that resolves to nothing.
pub const NOT_AN_ENTITY: Category = caller(":db.error/not-an-entity", Anomaly::Incorrect);
/// A value whose type does not match its attribute's `:db/valueType`.
pub const WRONG_TYPE_FOR_ATTRIBUTE: Category =
    caller(":db.error/wrong-type-for-attribute", Anomaly::Incorrect);
/// A lookup ref on an attribute that is not `:db/unique`.
pub const LOOKUP_REF_ATTR_NOT_UNIQUE: Category =
    caller(":db.error/lookup-ref-attr-not-unique", Anomaly::Incorrect);
/// A lookup ref that is not `[attribute value]`.
pub const INVALID_LOOKUP_REF: Category = caller(":db.error/invalid-lookup-ref", Anomaly::Incorrect);
/// Two values of a cardinality-one attribute of one entity in one transaction.
pub const DATOMS_CONFLICT: Category = caller(":db.error/datoms-conflict", Anomaly::Incorrect);
/// An entity that lacks an attribute an entity spec it is checked against (`:db/ensure`)
/// requires.
pub const ENTITY_ATTR: Category = caller(":db.error/entity-attr", Anomaly::Incorrect);
/// An entity spec with predicates (`:db.entity/preds`): Clojure functions, which Datalith
/// cannot run.
pub const ENTITY_PRED_UNSUPPORTED: Category = caller(
    ":datalith.error/entity-pred-unsupported",
    Anomaly::Unsupported,
);
/// An entity id that cannot name an entity.
pub const INVALID_ENTITY_ID: Category = caller(":db.error/invalid-entity-id", Anomaly::Incorrect);
/// A list form whose first element is no known operation or transaction function.
pub const NOT_A_DATA_FUNCTION: Category =
    caller(":db.error/not-a-data-function", Anomaly::Incorrect);
/// Tx data that is not a list of maps and list forms (Datomic: `:db.error/not-transaction-data`).
pub const NOT_TRANSACTION_DATA: Category =
    caller(":db.error/not-transaction-data", Anomaly::Incorrect);
/// An excision that would remove schema (Datalith's own: Datomic's peer takes any target).
pub const INVALID_EXCISION: Category =
    caller(":datalith.error/invalid-excision", Anomaly::Incorrect);
/// A change of an existing attribute that the data or the rules forbid.
pub const INVALID_ALTER_ATTRIBUTE: Category =
    caller(":db.error/invalid-alter-attribute", Anomaly::Incorrect);
/// A variable a clause needs bound is not bound when the clause runs.
pub const INSUFFICIENT_BINDING: Category =
    caller(":db.error/insufficient-binding", Anomaly::Incorrect);
/// A `:find` variable that no clause binds.
pub const UNBOUND_QUERY_VARIABLES: Category =
    caller(":db.error/unbound-query-variables", Anomaly::Incorrect);
/// An `or` whose branches join on no variable (`(or-join [] ...)`, or an `or` whose
/// branches use none).
pub const OR_BINDING_EMPTY: Category = caller(":db.error/or-binding-empty", Anomaly::Incorrect);
/// An unknown aggregate in `:find`.
pub const INVALID_AGGREGATE: Category = caller(":db.error/invalid-aggregate", Anomaly::Incorrect);
/// A pull pattern that specifies one attribute twice.
pub const PULL_DUPLICATE_ATTRIBUTE: Category =
    caller(":pull/duplicate-attribute", Anomaly::Incorrect);
/// Something in attribute position that is not an attribute (the first element of a lookup
/// ref written as a reverse attribute's value, say).
pub const NOT_AN_ATTRIBUTE: Category = caller(":db.error/not-an-attribute", Anomaly::Incorrect);
/// A string where a keyword is required (the first element of a lookup ref).
pub const NOT_A_KEYWORD: Category = caller(":db.error/not-a-keyword", Anomaly::Incorrect);
/// A new attribute without a required property (`:db/valueType`, `:db/cardinality`), or a
/// schema property given a keyword that names none of its values (`:db.type/nonsense`).
pub const INVALID_INSTALL_ATTRIBUTE: Category =
    caller(":db.error/invalid-install-attribute", Anomaly::Incorrect);
/// A tuple value that its attribute's `:db/tupleTypes` or `:db/tupleType` does not admit
/// (arity, element types).
pub const INVALID_TUPLE_VALUE: Category =
    caller(":db.error/invalid-tuple-value", Anomaly::Incorrect);
/// Fewer inputs than the query's `:in` names.
pub const TOO_FEW_INPUTS: Category = caller(":db.error/too-few-inputs", Anomaly::Incorrect);
/// A clause reads a data source that `:in` does not name.
pub const INVALID_DATA_SOURCE: Category =
    caller(":db.error/invalid-data-source", Anomaly::Incorrect);
/// A pull pattern's recursion limit that is not a positive number or `...`.
pub const INVALID_RECUR_LIMIT: Category =
    caller(":db.error/invalid-recur-limit", Anomaly::Incorrect);

// Datalith's codes: Datomic throws a plain exception (no code) or has no such error.

/// Query text that is not EDN or not a query (Datomic: a plain `IllegalArgumentException`).
pub const INVALID_QUERY: Category = caller(":datalith.error/invalid-query", Anomaly::Incorrect);
/// An unknown query function or predicate (Datomic: a compiler exception).
pub const UNKNOWN_FUNCTION: Category =
    caller(":datalith.error/unknown-function", Anomaly::Incorrect);
/// A query function given arguments it cannot take (Datomic: the function's own exception).
pub const INVALID_ARGUMENTS: Category =
    caller(":datalith.error/invalid-arguments", Anomaly::Incorrect);
/// A rule the query calls but the rules do not define.
pub const UNKNOWN_RULE: Category = caller(":datalith.error/unknown-rule", Anomaly::Incorrect);
/// Query inputs that do not match `:in` (Datomic: `:db.error/too-few-inputs` for one case,
/// plain exceptions for the others).
pub const INVALID_INPUT: Category = caller(":datalith.error/invalid-input", Anomaly::Incorrect);
/// A query that ran past its `:timeout` (Datomic: a `TimeoutException`).
pub const TIMEOUT: Category = caller(":datalith.error/timeout", Anomaly::Interrupted);
/// A query cancelled by its caller.
pub const CANCELLED: Category = caller(":datalith.error/cancelled", Anomaly::Interrupted);
/// A query that needed more memory than its limit (`:memory-limit`, the database's, or the
/// default share of physical memory) and was stopped.
pub const RESOURCE_EXHAUSTED: Category =
    caller(":datalith.error/resource-exhausted", Anomaly::Interrupted);
/// A transaction function that failed.
pub const FUNCTION_FAILED: Category = caller(":datalith.error/function-failed", Anomaly::Incorrect);
/// A report's `db_before`/`db_after` asked for after its snapshot was released.
pub const SNAPSHOT_RELEASED: Category =
    caller(":datalith.error/snapshot-released", Anomaly::NotFound);
/// A full-text search query that does not parse (an unclosed quote, a lone `*`), or one that
/// asks for too much (a prefix matching more terms than `limits::MAX_PREFIX_TERMS`).
pub const INVALID_SEARCH_QUERY: Category =
    caller(":datalith.error/invalid-search-query", Anomaly::Incorrect);
/// Text that is not valid EDN.
pub const INVALID_EDN: Category = caller(":datalith.error/invalid-edn", Anomaly::Incorrect);
/// Arguments of a call (or of the command) that are wrong.
pub const INVALID_ARGUMENT: Category =
    caller(":datalith.error/invalid-argument", Anomaly::Incorrect);
/// A key or value outside the KV engine's limits.
pub const LIMIT_EXCEEDED: Category = caller(":datalith.error/limit-exceeded", Anomaly::Incorrect);
/// An insert whose key is already present.
pub const KEY_EXISTS: Category = caller(":datalith.error/key-exists", Anomaly::Conflict);
/// A table that does not exist.
pub const NO_SUCH_TABLE: Category = caller(":datalith.error/no-such-table", Anomaly::NotFound);
/// A table used as the wrong kind, or a name that cannot be a table's.
pub const INVALID_TABLE: Category = caller(":datalith.error/invalid-table", Anomaly::Incorrect);
/// A stored value read back as another type than it was written as.
pub const WRONG_VALUE_TYPE: Category =
    caller(":datalith.error/wrong-value-type", Anomaly::Incorrect);
/// The entity id space ran out.
pub const IDS_EXHAUSTED: Category = environment(":datalith.error/ids-exhausted", Anomaly::Fault);
/// The environment refuses writes after an earlier failed commit; reopen it.
pub const POISONED: Category = environment(":datalith.error/poisoned", Anomaly::Unavailable);
/// The environment has been closed.
pub const CLOSED: Category = environment(":datalith.error/closed", Anomaly::Unavailable);
/// Internal to the committer (the request is rerun); no caller receives it.
pub const PENDING_WRITES: Category = environment(":datalith.error/pending-writes", Anomaly::Busy);
/// The map cannot grow any further (the database is full).
pub const DATABASE_FULL: Category =
    environment(":datalith.error/database-full", Anomaly::Unavailable);
/// A commit failed; the environment is poisoned.
pub const COMMIT_FAILED: Category = environment(":datalith.error/commit-failed", Anomaly::Fault);
/// An LMDB file that Datalith did not make.
pub const FOREIGN_FILE: Category =
    environment(":datalith.error/foreign-file", Anomaly::Unsupported);
/// A file made by a newer, incompatible Datalith.
pub const UNSUPPORTED_FORMAT: Category =
    environment(":datalith.error/unsupported-format", Anomaly::Unsupported);
/// An I/O error (by its kind: permission, space, interruption, other).
pub const IO: Category = environment(":datalith.error/io", Anomaly::Fault);
/// An I/O error: permission denied (EACCES, EPERM, a read-only file system). A code of its
/// own: the fix (file modes, the user running the program) differs from other I/O errors.
pub const IO_FORBIDDEN: Category =
    environment(":datalith.error/permission-denied", Anomaly::Forbidden);
/// An I/O error: a file or directory is missing.
pub const IO_NOT_FOUND: Category = environment(":datalith.error/io", Anomaly::NotFound);
/// An I/O error: no space left.
pub const IO_UNAVAILABLE: Category = environment(":datalith.error/io", Anomaly::Unavailable);
/// An I/O error: the call was interrupted.
pub const IO_INTERRUPTED: Category = environment(":datalith.error/io", Anomaly::Interrupted);
/// Any other LMDB error.
pub const STORAGE: Category = environment(":datalith.error/storage", Anomaly::Fault);
/// Stored bytes this store cannot have written (an index entry, a value encoding, the file).
pub const CORRUPT: Category = corruption(":datalith.error/corrupt");
/// A stored attribute definition that cannot be loaded.
pub const INVALID_SCHEMA: Category = corruption(":datalith.error/invalid-schema");

/// The category of an I/O error, by its kind.
pub fn io_category(e: &std::io::Error) -> Category {
    use std::io::ErrorKind as K;
    match e.kind() {
        K::PermissionDenied | K::ReadOnlyFilesystem => IO_FORBIDDEN,
        K::NotFound => IO_NOT_FOUND,
        K::StorageFull | K::QuotaExceeded | K::FileTooLarge => IO_UNAVAILABLE,
        K::Interrupted | K::TimedOut => IO_INTERRUPTED,
        _ => IO,
    }
}

/// A structured field of an error: a keyword key and an EDN value.
pub type Field = (&'static str, Edn);

/// A field whose value is EDN text (how the error variants keep printed values): read back,
/// so the map carries the value itself; text that does not read stays a string.
pub fn edn_text_field(key: &'static str, text: &str) -> Field {
    (
        key,
        read_one(text).unwrap_or_else(|_| Edn::String(text.to_string())),
    )
}

/// A field holding a keyword given as text (`:person/name`), or the text when it is none.
pub fn keyword_field(key: &'static str, text: &str) -> Field {
    let value = match text.strip_prefix(':') {
        Some(rest) if !rest.is_empty() && !rest.contains(char::is_whitespace) => {
            Edn::Keyword(Keyword::parse(text))
        }
        _ => Edn::String(text.to_string()),
    };
    (key, value)
}

/// A field holding an entity id.
pub fn entity_field(key: &'static str, e: u64) -> Field {
    (key, Edn::Long(e as i64))
}

/// A field holding plain text.
pub fn text_field(key: &'static str, text: &str) -> Field {
    (key, Edn::String(text.to_string()))
}

/// The EDN map of an error: `{:db/error code, :cognitect.anomalies/category anomaly, :message
/// text, ...fields}`. Datomic's `ex-data` has the first two keys (and the message under
/// `:cognitect.anomalies/message`); the command prints this map.
pub fn error_map(category: Category, message: &str, fields: Vec<Field>) -> Edn {
    let mut pairs = vec![
        (Edn::kw(":db/error"), Edn::Keyword(category.keyword())),
        (
            Edn::kw(":cognitect.anomalies/category"),
            Edn::Keyword(category.anomaly.keyword()),
        ),
        (Edn::kw(":message"), Edn::String(message.to_string())),
    ];
    pairs.extend(
        fields
            .into_iter()
            .map(|(k, v)| (Edn::Keyword(Keyword::parse(k)), v)),
    );
    Edn::Map(pairs)
}

mod crate_error;

pub use crate_error::Error;
