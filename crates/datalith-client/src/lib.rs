//! A client of `datalith serve`, shaped like the embedded API: a [`Connection`] is a
//! `Database` on the server (`transact`, `db`), a [`RemoteDb`] a `Db` (`q`, `pull`,
//! `pull_many`, `basis_t`), and results are the same [`Edn`](datalith::Edn) values, so a
//! program that reads through `db()` switches with the line that opens its database:
//!
//! ```no_run
//! # fn main() -> Result<(), Box<dyn std::error::Error>> {
//! // let people = datalith::Database::open("people", datalith::DbOptions::default())?;
//! let people = datalith_client::Client::new("http://127.0.0.1:7171").database("people");
//! people.transact(r#"[{:db/id "ann" :person/name "Ann"}]"#)?;
//! let names = people.db()?.q("[:find ?n :where [_ :person/name ?n]]", &[])?;
//! # let _ = names;
//! # Ok(())
//! # }
//! ```
//!
//! [`RemoteDb::q_each`] is `Db::q_each`: a large result's items handed to an
//! `ItemSink` as the answer arrives, which the server writes as its query runs, so neither
//! side holds the whole result.
//!
//! A database's key-value tables are there too, by the embedded API's names:
//! [`Connection::kv_table`] is `Database::kv_table` ([`KvTable`]: `get`, `put`, `delete`,
//! `write`, `range` by `Bound`s and `Direction`, `len`, `count_range`).
//!
//! [`Connection::copy_to`] writes a consistent copy of the served database into a new
//! directory (the admin role): a node that joins a replicated database starts from it.
//!
//! A [`RemoteDb`] is one database value, as a `Db` is: `db()` asks the server to keep the
//! value it answered from for a lease (`lease` below), and every read through it names that
//! value (`:basis-t`), so reads through one `RemoteDb` agree with each other whatever is
//! written meanwhile. Past the lease a read fails with `:datalith.error/basis-unavailable`;
//! take a new `db()`.
//!
//! A read whose connection broke before its answer (a pooled connection the server closed as
//! the request went out) is sent once more; a write never is, since the first may have
//! committed: on such an error, read it back to know.
//!
//! Bodies are CBOR both ways (a streamed answer, `q_each`, comes as EDN text), a request's
//! head and body in one write. A transaction's [`Report`] reads its datoms from the answer
//! only when [`Report::tx_data`] first asks for them. Errors keep the server's category
//! ([`ClientError`]). Over
//! `https://` the server's certificate is verified: against the public web's roots, or the
//! certificates given to [`ClientBuilder::cacert_file`] (a private CA, or the self-signed
//! certificate of `datalith cert`); a server that asks for client certificates
//! (`--tls-client-ca`) is shown the pair given to [`ClientBuilder::client_cert_files`]:
//!
//! ```no_run
//! # fn main() -> Result<(), Box<dyn std::error::Error>> {
//! let client = datalith_client::Client::builder("https://db.example:7171")
//!     .token("s3cret")
//!     .cacert_file("tls/cert.pem")?
//!     .client_cert_files("ann/cert.pem", "ann/key.pem")?
//!     .build();
//! # let _ = client;
//! # Ok(())
//! # }
//! ```

mod coalesce;
mod connection;
mod db;
mod error;
mod http;
mod items;
mod kv;
mod report;

pub use connection::{Client, ClientBuilder, Connection, IntoTxForm};
pub use db::{Pages, RemoteDb};
pub use error::{ClientError, TLS};
pub use kv::{KvEntries, KvTable, KV_PAGE};
pub use report::Report;

/// How long `db()` asks the server to keep a value, in milliseconds (the server's
/// `--max-lease-ms` must allow it; its default is 60 s). Short, because a kept value is an
/// open snapshot on the server (it pins pages, and a growth of the map waits for it): take
/// a `db()` for a unit of work, not for the program's life.
pub const LEASE_MS: u64 = 10_000;
