//! `datalith serve`: Datalith databases over HTTP, so that programs in other processes, other
//! languages and on other machines can share one writer (a database has one writing process:
//! see `ARCHITECTURE.md`, "Many processes").
//!
//! The API, its EDN and JSON bodies and its errors are described in this crate's `README.md`.
//! The pieces, from the outside in:
//!
//! | module | what |
//! |---|---|
//! | [`args`] | the command line of `datalith serve` |
//! | `listen` | which addresses may be listened on (loopback unless told otherwise) |
//! | [`auth`] | bearer tokens from a file, hashed, compared in constant time; roles per database |
//! | `rate` | requests a second per token |
//! | `served` | the served databases, each opened for writing once |
//! | `replica` | a database whose transaction log is a Kafka topic (`--log`), applied on every node |
//! | `accept` | connections: a limit, a header timeout, TLS, graceful shutdown |
//! | `address_slots` | connections per client address |
//! | `open_connections` | what each connection is doing; the idlest closed to make room |
//! | `send_timeout` | a connection's writes waiting at most `--send-timeout-ms` for the client |
//! | `tls` | the certificate and key (rustls), and plain HTTP sent to a TLS port |
//! | [`cert`] | `datalith cert`: a self-signed certificate and key to try TLS with |
//! | `http` | the routes, and the pipeline every request goes through |
//! | [`format`] | content negotiation, reading request bodies, writing responses |
//! | [`json`] | JSON that carries every EDN type (tagged objects), both ways |
//! | [`ops`] | the operations (`q`, `transact`, `pull`, ...) on a database, free of HTTP |
//! | [`error`] | the server's errors: categories, and the HTTP status of each |
//! | `metrics` | the counters `/metrics` shows |
//! | `run` | the runtime, listening, graceful shutdown |
//! | `reload` | the certificate and the tokens read again on SIGHUP |

#![warn(missing_docs)]

mod accept;
mod address_slots;
pub mod args;
pub mod auth;
pub mod cert;
pub mod error;
pub mod format;
mod http;
pub mod json;
mod listen;
mod metrics;
mod open_connections;
pub mod ops;
mod rate;
mod reload;
pub mod replica;
mod run;
mod send_timeout;
mod served;
mod tls;

pub use args::ServeArgs;
pub use cert::CertArgs;
pub use error::ServerError;
pub use run::serve;
