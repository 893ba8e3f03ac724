//! Transactions, as a pipeline of typed stages:
//!
//! 1. [`data`]: tx data as written (maps, list forms, tempids, lookup refs, idents);
//! 2. [`terms`]: terms with tempids (maps flattened, attributes and value types checked);
//! 3. [`resolve`]: terms with ids (lookup refs, idents, upserts, fresh ids);
//! 4. [`datoms`]: the net datoms, computed on an in-memory overlay;
//! 5. [`write`]: index writes and statistics, staged for the committer.
//!
//! [`run`] strings stages 2-4 together; [`request`] is the committer's unit of work.

pub mod av;
pub mod batch;
pub mod bulk;
pub mod data;
pub mod datoms;
pub mod edn;
pub mod error;
pub mod log;
pub mod print;
pub mod report;
pub mod request;
pub mod resolve;
pub mod run;
pub mod schema_change;
mod show;
pub mod terms;
pub mod write;

pub use data::{AttrName, EntityMap, EntityRef, Tempid, TxData, TxItem, TxOp, TxValue};
pub use error::TxError;
pub use report::TxReport;
pub use run::TxFunction;
