//! Bulk load (`init_db` / `fill_db`): datoms with known entity ids written straight into the
//! indexes, skipping the transaction pipeline (no tempids, upserts, cardinality or uniqueness
//! checks: the caller vouches for the data).
//!
//! - [`prepare`]: on the caller's threads, in parallel chunks: attributes and types checked,
//!   values encoded into one byte arena per chunk, EAV and AVE entries sorted, chunks merged.
//! - [`request`]: the committer request: entries past the end of a table are appended
//!   (LMDB `APPEND` / `APPEND_DUP`: no search, full pages) and need no existence check; the
//!   others are added normally. Statistics are counted in the same pass.

mod prepare;
mod request;

pub use prepare::{prepare, Prepared};
pub use request::FillRequest;
