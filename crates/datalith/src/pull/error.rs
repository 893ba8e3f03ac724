//! Errors of pull patterns.

use crate::error::{self, keyword_field, Category, Field};

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
}

impl PullError {
    /// The error's stable category (see `crate::error`).
    pub fn category(&self) -> Category {
        match self {
            PullError::DuplicateAttribute { .. } => error::PULL_DUPLICATE_ATTRIBUTE,
        }
    }

    /// The error's structured fields (see `crate::error`).
    pub fn fields(&self) -> Vec<Field> {
        match self {
            PullError::DuplicateAttribute { attr } => vec![keyword_field("attribute", attr)],
        }
    }
}
