//! Bulk load (`init_db` / `fill_db`): datoms with known entity ids written straight into the
//! indexes, skipping the transaction pipeline (no tempids, upserts, cardinality or uniqueness
//! checks: the caller vouches for the data).
//!
//! - [`prepare`]: on the caller's threads, in parallel chunks: attributes and types checked,
//!   values encoded into one byte arena per chunk, EAV and AVE entries sorted, chunks merged.
//! - `request`: one committer request per chunk of the sorted runs (each chunk's keys come
//!   after the previous chunk's): a key past the end of its table is appended (LMDB `APPEND`,
//!   then `APPEND_DUP` for its further values: no search, full pages); existing keys are found
//!   with one seek each time the sorted stream passes one, not one lookup per datom; the rest
//!   is written through one cursor per run. Datom counts are counted in the same pass, new
//!   distinct values by the tallies of their AVE writes (as LMDB takes them). A chunk's group
//!   is logged and left to the LMDB writer like a transaction's, or, too large for that,
//!   written into LMDB at once and checkpointed instead of logged.

mod prepare;
mod request;

pub use prepare::prepare;
pub use request::FillRequest;
