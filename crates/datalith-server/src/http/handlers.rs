//! The handlers: the database operations, each through the pipeline, and the few routes
//! that are not an operation on a database.

use axum::body::Body;
use axum::extract::{Path, State};
use axum::http::HeaderMap;
use axum::response::Response;
use datalith::edn::Edn;

use super::{pipeline, respond, Shared};
use crate::error::{codes, ServerError};
use crate::ops::Op;

/// A handler per operation: each takes the database's name from the path and goes through
/// the pipeline.
macro_rules! operation {
    ($name:ident, $op:expr) => {
        pub async fn $name(
            State(state): State<Shared>,
            Path(db): Path<String>,
            headers: HeaderMap,
            body: Body,
        ) -> Response {
            pipeline::run(state, $op, db, headers, body).await
        }
    };
}

operation!(q, Op::Q);
operation!(transact, Op::Transact);
operation!(pull, Op::Pull);
operation!(pull_many, Op::PullMany);
operation!(datoms, Op::Datoms);
operation!(index_range, Op::IndexRange);
operation!(tx_range, Op::TxRange);
operation!(stat, Op::Stat);
operation!(kv_tables, Op::KvTables);
operation!(kv_get, Op::KvGet);
operation!(kv_put, Op::KvPut);
operation!(kv_delete, Op::KvDelete);
operation!(kv_write, Op::KvWrite);
operation!(kv_range, Op::KvRange);
operation!(kv_count, Op::KvCount);

/// `GET /health`: needs no token, so that probes and load balancers need no secret.
pub async fn health(State(state): State<Shared>, headers: HeaderMap) -> Response {
    let body = Edn::Map(vec![
        (Edn::kw(":status"), Edn::kw(":ok")),
        (
            Edn::kw(":databases"),
            Edn::Long(state.served.names().len() as i64),
        ),
    ]);
    respond::answer(&headers, Ok(body))
}

/// `GET /dbs`: the databases the token may read (all without tokens).
pub async fn dbs(State(state): State<Shared>, headers: HeaderMap) -> Response {
    let listed = pipeline::authenticate(&state, &headers).map(|access| {
        let names = state
            .served
            .names()
            .into_iter()
            .filter(|n| access.role_on(n).is_some())
            .map(Edn::String)
            .collect();
        Edn::Map(vec![(Edn::kw(":databases"), Edn::Vector(names))])
    });
    respond::answer(&headers, listed)
}

/// `GET /metrics`: any known token, since the numbers name databases and their sizes.
pub async fn metrics(State(state): State<Shared>, headers: HeaderMap) -> Response {
    use axum::response::IntoResponse;
    match pipeline::authenticate(&state, &headers) {
        Ok(_) => {
            let running = state.places - state.gate.available_permits();
            let text = state.metrics.render(&state.served, running);
            (
                [(
                    axum::http::header::CONTENT_TYPE,
                    "text/plain; version=0.0.4",
                )],
                text,
            )
                .into_response()
        }
        Err(e) => respond::answer(&headers, Err(e)),
    }
}

/// A known path with another method: an error body like every other, not axum's empty 405.
pub async fn wrong_method(headers: HeaderMap) -> Response {
    let e = ServerError::new(
        codes::METHOD_NOT_ALLOWED,
        "this path takes another method: GET /health, /dbs, /metrics, /db/NAME/stat, \
         /db/NAME/copy and /db/NAME/kv-tables; POST /dbs and the other operations; DELETE /db/NAME",
    );
    respond::answer(&headers, Err(e))
}

/// Any other path: an error body like every other, not axum's empty 404.
pub async fn unknown_route(uri: axum::http::Uri, headers: HeaderMap) -> Response {
    let e = ServerError::new(
        codes::UNKNOWN_ROUTE,
        format!(
            "no such path {:?}: /health, /dbs, \
             /db/NAME/{{q,transact,pull,pull-many,datoms,index-range,tx-range,stat}}, \
             /db/NAME/{{kv-tables,kv-get,kv-put,kv-delete,kv-write,kv-range,kv-count}}",
            uri.path()
        ),
    );
    respond::answer(&headers, Err(e))
}
