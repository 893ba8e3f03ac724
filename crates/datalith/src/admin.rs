//! Tools for operators and their programs: the consistency check, the dump that reloads to the
//! same database, compacted copies, and the data file inspected without LMDB.
//!
//! The entry points are methods of the handles ([`Db::check`](crate::Db::check),
//! [`Db::dump`](crate::Db::dump),
//! [`Environment::copy_compacted`](crate::kv::Environment::copy_compacted)); this module
//! names the types they return and the file-level checks a program runs before it opens a
//! file. Nothing here writes the database.
//!
//! ```
//! use datalith::{admin, Database, DbOptions};
//!
//! let dir = tempfile::tempdir().unwrap();
//! let db = Database::open(dir.path(), DbOptions::default()).unwrap();
//! db.transact(r#"[{:db/ident :name :db/valueType :db.type/string
//!                  :db/cardinality :db.cardinality/one}]"#).unwrap();
//! db.transact(r#"[{:name "Ann"}]"#).unwrap();
//!
//! // The two indexes agree and the statistics match.
//! let report: admin::CheckReport = db.db().unwrap().check().unwrap();
//! assert!(report.is_ok(), "{:?}", report.problems);
//!
//! // A compacted copy opens as a database with the same data.
//! let copy = tempfile::tempdir().unwrap();
//! let target = copy.path().join("copy");
//! db.env().copy_compacted(&target).unwrap();
//! let data = target.join(admin::DATA_FILE);
//! admin::check_header(&data).unwrap();
//! let shape = admin::check_structure(&data, datalith::kv::Verify::Everything).unwrap();
//! assert!(shape.pages_in_use > 0);
//! let copied = Database::open(&target, DbOptions::default()).unwrap();
//! let names = copied.db().unwrap().q("[:find ?n :where [_ :name ?n]]", &[]).unwrap();
//! assert_eq!(names.to_string(), r#"#{["Ann"]}"#);
//!
//! // The dump is tx data: one form for the schema, one for the entities.
//! let mut text = Vec::new();
//! let summary: admin::DumpSummary = db.db().unwrap().dump(&mut text).unwrap();
//! assert_eq!(summary.entities, 1);
//! assert!(String::from_utf8(text).unwrap().contains(r#":name "Ann""#));
//! ```

pub use crate::api::check::{CheckProgress, CheckReport, Inconsistency};
pub use crate::api::dump::{DumpError, DumpSummary};
pub use crate::kv::file::{check_header, check_structure, DATA_FILE};
pub use crate::kv::wal::{check_log, LogCheck};
