//! Errors of pull patterns.

use crate::edn::Edn;
use crate::error::{self, entity_field, keyword_field, Category, Field};

/// Why a pull pattern is refused.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum PullError {
    /// One attribute (as written: `:ns/_name` for a reverse one) specified twice in one
    /// pattern, whatever the options (Datomic's `:pull/duplicate-attribute`): the result map
    /// would have the key twice. `:db/id` may repeat.
    #[error("Multiple specifications for {attr}")]
    DuplicateAttribute {
        /// The attribute, as EDN.
        attr: String,
    },
    /// A map spec's value that is no recursion limit nor pattern (`{:a/ref 0}`, `{:a/ref
    /// :b/name}`): Datomic reads a value that is not a pattern as a recursion limit, which
    /// must be a positive number or `...`.
    #[error("invalid recursion limit {limit} for {attr}: a limit is a positive number or ...")]
    InvalidRecurLimit {
        /// The attribute of the spec, as EDN.
        attr: String,
        /// The value given, as EDN.
        limit: String,
    },
    /// The pattern followed references through more entities, one inside another, than a
    /// pulled value may nest (`limits::MAX_PULL_DEPTH`): `...` or a large depth on a long
    /// chain. Datomic's peer fails such a pull with a `StackOverflowError` (it pulled 300
    /// levels and failed at 400, on its default stack).
    #[error("pull nested deeper than {limit} entities (entity {entity} is below that)")]
    TooDeep {
        /// The first entity past the limit.
        entity: u64,
        /// The limit.
        limit: u32,
    },
}

impl PullError {
    /// The error's stable category (see `crate::error`).
    pub fn category(&self) -> Category {
        match self {
            PullError::DuplicateAttribute { .. } => error::PULL_DUPLICATE_ATTRIBUTE,
            PullError::TooDeep { .. } => error::LIMIT_EXCEEDED,
            PullError::InvalidRecurLimit { .. } => error::INVALID_RECUR_LIMIT,
        }
    }

    /// The error's structured fields (see `crate::error`).
    pub fn fields(&self) -> Vec<Field> {
        match self {
            PullError::DuplicateAttribute { attr } => vec![keyword_field("attribute", attr)],
            PullError::InvalidRecurLimit { attr, limit } => vec![
                keyword_field("attribute", attr),
                crate::error::edn_text_field("limit", limit),
            ],
            PullError::TooDeep { entity, limit } => vec![
                entity_field("entity", *entity),
                ("limit", Edn::Long(i64::from(*limit))),
            ],
        }
    }
}
