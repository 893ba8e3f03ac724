//! Pull: a tree of attribute values rooted at an entity, shaped by a pattern (Datomic's pull
//! grammar: wildcard, attributes, reverse `:_attr`, nested maps, `:limit`, `:default`, `:as`,
//! recursion `...` and depth, component expansion).

mod cache;
mod eid;
mod error;
mod eval;
mod pattern;

pub use cache::PullCache;
pub use eid::Eid;
pub use error::PullError;
pub use eval::{pull, pull_many};
pub(crate) use eval::{pull_nothing, refuse_history};
pub use pattern::{parse_pattern, AttrSpec, PullPattern, Recursion};
