//! The operations a client can ask of one database, as plain functions from a request map
//! to a result map (no HTTP here: `http` calls them on a blocking thread).
//!
//! Every read names the database value it answered from: `:basis-t`, the id of the last
//! transaction in it ([`datalith::Db::basis_t`]); a read may ask for that value to be kept
//! (`:lease-ms`), and later reads may name it ([`leases`]). The key-value tables beside the
//! store (`kv`) are no part of a Datalog value: their reads name none.

mod basis;
mod datoms;
mod explain;
mod index_range;
mod kv;
pub mod leases;
pub mod pages;
mod pull;
mod q;
pub mod request;
mod source;
mod stat;
mod transact;
mod tx_range;

use std::sync::atomic::AtomicBool;
use std::sync::Arc;

use datalith::edn::Edn;
use datalith::query::{ItemSink, ResultRows};

use crate::auth::Role;
use crate::error::{codes, Result, ServerError};
pub use request::Request;
pub use source::Source;

/// The limits the server puts on every query.
#[derive(Debug, Clone, Copy)]
pub struct QueryLimits {
    /// A query's timeout when the request names none, and the most it may name.
    pub timeout_ms: u64,
    /// The most memory a query may hold (`None`: the library's default).
    pub memory_limit: Option<u64>,
    /// The most threads a query may run on (`None`: the library's default).
    pub threads: Option<usize>,
}

/// The other databases a query may name among its inputs (`#datalith/db "films"`), as
/// the request's token may read them.
pub trait Databases {
    /// The database served as `name`, if the request may read it.
    fn source(&self, name: &str) -> Result<Arc<Source>>;
}

/// What an operation runs with besides its request.
pub struct Context<'a> {
    /// The database's name, as served.
    pub name: &'a str,
    /// The server's query limits.
    pub limits: QueryLimits,
    /// Set when the client has gone: a running query stops.
    pub cancel: &'a AtomicBool,
    /// The other databases, for queries that name them.
    pub databases: &'a dyn Databases,
    /// Asked by a query at each look of its budget: whether to stop now (a query run in
    /// place on a worker thread whose time there is up; `http::in_place`).
    pub stop_early: Option<&'a (dyn Fn() -> bool + Sync)>,
    /// Where a query's large answer may go while the query still runs (on a blocking
    /// thread; `None` in place and outside HTTP).
    pub outlet: Option<&'a dyn Outlet>,
    /// The answer's format (an answer written as text by its operation: a transaction's
    /// report).
    pub format: crate::format::Format,
}

/// Where an answer goes while its operation still runs (`http::outlet`): a query hands its
/// result's items to it as the engine makes them (`datalith::Db::q_each`), the answer's text
/// is written as they come, and once it outgrows its first chunk the answer is sent (the
/// status and that chunk) and the rest follows a chunk at a time, so neither the rows nor
/// their text are ever whole in the server's memory.
pub trait Outlet: Sync {
    /// The answer `{:result ITEMS, :basis-t BASIS}` of a query, to be written.
    fn answer(&self, basis: u64) -> Box<dyn AnswerOut + '_>;
    /// Whether the query should stop: its client went away (before the answer was sent, or
    /// while it was being sent).
    fn gone(&self) -> bool;
}

/// An answer being written by a running query ([`Outlet::answer`]).
pub trait AnswerOut: ItemSink {
    /// Ends the answer once the query has ended (`ended`): the reply, which is the whole
    /// answer when none of it was sent yet, or [`Reply::Sent`] (an error then ends the sent
    /// answer, cutting its connection short).
    fn end(self: Box<Self>, ended: Result<()>) -> Result<Reply>;
}

/// An answer sent as it is written ([`Reply::Stream`]): its first chunk, and the others as
/// the query writes them, the last one marked so; an error ends it.
#[derive(Debug)]
pub struct Chunks {
    /// The first chunk (the status went out with it).
    pub first: Vec<u8>,
    /// The next chunks: `(bytes, last)`.
    pub rest: tokio::sync::mpsc::Receiver<Result<(Vec<u8>, bool)>>,
    /// Set once the answer is no longer sent (finished, or its client gone): the query
    /// writing it stops.
    pub gone: Arc<AtomicBool>,
}

/// An operation of the API.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Op {
    /// `POST /db/NAME/q`.
    Q,
    /// `POST /db/NAME/transact`.
    Transact,
    /// `POST /db/NAME/pull`.
    Pull,
    /// `POST /db/NAME/pull-many`.
    PullMany,
    /// `POST /db/NAME/datoms`.
    Datoms,
    /// `POST /db/NAME/index-range`.
    IndexRange,
    /// `POST /db/NAME/tx-range`.
    TxRange,
    /// `GET /db/NAME/stat`.
    Stat,
    /// `GET /db/NAME/kv-tables`.
    KvTables,
    /// `POST /db/NAME/kv-get`.
    KvGet,
    /// `POST /db/NAME/kv-put`.
    KvPut,
    /// `POST /db/NAME/kv-delete`.
    KvDelete,
    /// `POST /db/NAME/kv-write`.
    KvWrite,
    /// `POST /db/NAME/kv-range`.
    KvRange,
    /// `POST /db/NAME/kv-count`.
    KvCount,
}

impl Op {
    /// The operation's name, as in its path.
    pub fn name(self) -> &'static str {
        match self {
            Op::Q => "q",
            Op::Transact => "transact",
            Op::Pull => "pull",
            Op::PullMany => "pull-many",
            Op::Datoms => "datoms",
            Op::IndexRange => "index-range",
            Op::TxRange => "tx-range",
            Op::Stat => "stat",
            Op::KvTables => "kv-tables",
            Op::KvGet => "kv-get",
            Op::KvPut => "kv-put",
            Op::KvDelete => "kv-delete",
            Op::KvWrite => "kv-write",
            Op::KvRange => "kv-range",
            Op::KvCount => "kv-count",
        }
    }

    /// The role it needs.
    pub fn role(self) -> Role {
        match self {
            Op::Transact | Op::KvPut | Op::KvDelete | Op::KvWrite => Role::Write,
            Op::Q
            | Op::Pull
            | Op::PullMany
            | Op::Datoms
            | Op::IndexRange
            | Op::TxRange
            | Op::Stat
            | Op::KvTables
            | Op::KvGet
            | Op::KvRange
            | Op::KvCount => Role::Read,
        }
    }

    /// The fields its request map may have.
    pub fn fields(self) -> &'static [&'static str] {
        match self {
            Op::Q => q::FIELDS,
            Op::Transact => transact::FIELDS,
            Op::Pull => pull::FIELDS,
            Op::PullMany => pull::MANY_FIELDS,
            Op::Datoms => datoms::FIELDS,
            Op::IndexRange => index_range::FIELDS,
            Op::TxRange => tx_range::FIELDS,
            Op::Stat | Op::KvTables => &[],
            Op::KvGet => kv::GET_FIELDS,
            Op::KvPut => kv::PUT_FIELDS,
            Op::KvDelete => kv::DELETE_FIELDS,
            Op::KvWrite => kv::WRITE_FIELDS,
            Op::KvRange => kv::RANGE_FIELDS,
            Op::KvCount => kv::COUNT_FIELDS,
        }
    }

    /// Runs the operation on `source`.
    pub fn run(self, source: &Source, request: &Request, cx: &Context<'_>) -> Result<Reply> {
        let value = match self {
            Op::Q => return q::run(source, request, cx),
            Op::Transact => return transact::run(source, request, cx.format),
            Op::Pull => pull::one(source, request),
            Op::PullMany => pull::many(source, request),
            Op::Datoms => datoms::run(source, request),
            Op::IndexRange => index_range::run(source, request),
            Op::TxRange => tx_range::run(&source.database, request),
            Op::Stat => stat::run(source, cx.name),
            Op::KvTables => kv::tables(source),
            Op::KvGet => kv::get(source, request),
            Op::KvPut => kv::put(source, request),
            Op::KvDelete => kv::delete(source, request),
            Op::KvWrite => kv::write(source, request),
            Op::KvRange => kv::range(source, request),
            Op::KvCount => kv::count(source, request),
        };
        value.map(Reply::Value)
    }
}

/// What an operation answers.
#[derive(Debug)]
pub enum Reply {
    /// A value: the answer map.
    Value(Edn),
    /// A query's result still as the engine's rows, made into EDN as they are written:
    /// `{:result ROWS, :basis-t BASIS}` (`datalith::Db::q_rows`).
    Rows {
        /// The result's items to come.
        rows: ResultRows,
        /// The database value they come from.
        basis: u64,
    },
    /// The whole answer, written in the request's format (a query's answer written from its
    /// items as they were made, which ended within its first chunk; a transaction's report).
    Written(Vec<u8>, crate::format::Format),
    /// An answer whose first chunk went out while the query still ran ([`Outlet`]).
    Stream(Chunks),
    /// The answer was sent as a [`Reply::Stream`] already: nothing more to reply.
    Sent,
}

impl Reply {
    /// The answer as one value (a query's rows made into its result).
    pub fn into_edn(self) -> Result<Edn> {
        match self {
            Reply::Value(v) => Ok(v),
            Reply::Rows { rows, basis } => {
                Ok(answer(rows.into_edn().map_err(ServerError::from)?, basis))
            }
            Reply::Written(bytes, format) => format
                .read(&bytes)?
                .ok_or_else(|| ServerError::new(codes::INTERNAL, "an empty answer".to_string())),
            Reply::Stream(_) | Reply::Sent => Err(ServerError::new(
                codes::INTERNAL,
                "an answer sent as it was written is no value".to_string(),
            )),
        }
    }
}

/// `{:result result, :basis-t basis}`: how every read answers.
fn answer(result: Edn, basis: u64) -> Edn {
    Edn::Map(vec![
        (Edn::kw(":result"), result),
        (Edn::kw(":basis-t"), Edn::Long(basis as i64)),
    ])
}

#[cfg(test)]
mod tests;
