//! Below Datalog: entity ids chosen by the caller and datoms read straight from an index.
//!
//! [`Database::fill_db`](crate::Database::fill_db) and
//! [`Database::init_db`](crate::Database::init_db) load `(entity id, attribute, value)`
//! triples with no tempids; their ids must lie in the user partition,
//! `USER_PARTITION_START..TX_PARTITION_START`. [`Db::datoms`](crate::Db::datoms) and its
//! siblings walk an [`Index`] from leading [`Components`].
//!
//! ```
//! use datalith::codec::{Keyword, Value};
//! use datalith::raw::{Components, Index, USER_PARTITION_START};
//! use datalith::{Database, DbOptions};
//!
//! let dir = tempfile::tempdir().unwrap();
//! let db = Database::open(dir.path(), DbOptions::default()).unwrap();
//! db.transact(r#"[{:db/ident :age :db/valueType :db.type/long
//!                  :db/cardinality :db.cardinality/one}]"#).unwrap();
//! let ann = USER_PARTITION_START + 7;
//! let n = db.fill_db(&[(ann, Keyword::parse(":age"), Value::Long(41))]).unwrap();
//! assert_eq!(n, 1);
//!
//! let snap = db.db().unwrap();
//! let found = snap.datoms(Index::Eav, &Components { e: Some(ann), ..Default::default() });
//! let found = found.unwrap();
//! assert_eq!((found.len(), found[0].e, &found[0].v), (1, ann, &Value::Long(41)));
//! ```

pub use crate::api::index::{ComponentKind, Components, Index};
pub use crate::store::ids::{EntityId, TX_PARTITION_START, USER_PARTITION_START};
