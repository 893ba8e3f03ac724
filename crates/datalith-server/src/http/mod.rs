//! The HTTP face: the routes ([`router`]), what every database request goes through
//! (`pipeline`), and how answers and errors are written (`respond`).
//!
//! | route | |
//! |---|---|
//! | `GET /health` | `{:status :ok}`, without a token (for load balancers and probes) |
//! | `GET /dbs` | the databases the token may read |
//! | `GET /metrics` | Prometheus text (`metrics`); any known token |
//! | `POST /db/NAME/q`, `transact`, `pull`, `pull-many`, `datoms`, `index-range`, `tx-range` | the operations (`ops`) |
//! | `GET /db/NAME/stat` | statistics |

mod access_log;
mod body;
mod cancel;
mod pipeline;
mod respond;

use std::sync::Arc;
use std::time::Duration;

use axum::body::Body;
use axum::extract::{Path, State};
use axum::http::HeaderMap;
use axum::response::Response;
use axum::routing::{get, post};
use axum::Router;
use datalith::edn::Edn;
use tokio::sync::Semaphore;

use crate::auth::Tokens;
use crate::error::{codes, ServerError};
use crate::metrics::Metrics;
use crate::ops::{Op, QueryLimits};
use crate::served::Served;

/// What every request shares.
pub struct AppState {
    /// The databases.
    pub served: Served,
    /// The token file's grants (`None`: no authentication).
    pub tokens: Option<Tokens>,
    /// Query limits.
    pub limits: QueryLimits,
    /// The places to run a request (`--max-concurrent`).
    pub gate: Arc<Semaphore>,
    /// How many places there are.
    pub places: usize,
    /// How long a request waits for a place.
    pub queue_timeout: Duration,
    /// The largest body.
    pub max_body: usize,
    /// How long a body may take to arrive.
    pub body_timeout: Duration,
    /// Counters for `/metrics`.
    pub metrics: Arc<Metrics>,
    /// Whether each request is logged (one EDN map a line on standard error).
    pub log_requests: bool,
    /// Requests a second per token (`None`: unlimited).
    pub token_rate: Option<crate::rate::TokenRate>,
}

type Shared = Arc<AppState>;

/// The routes.
pub fn router(state: Shared) -> Router {
    Router::new()
        .route("/health", get(health).fallback(wrong_method))
        .route("/dbs", get(dbs).fallback(wrong_method))
        .route("/metrics", get(metrics).fallback(wrong_method))
        .route("/db/{name}/q", post(q).fallback(wrong_method))
        .route("/db/{name}/transact", post(transact).fallback(wrong_method))
        .route("/db/{name}/pull", post(pull).fallback(wrong_method))
        .route(
            "/db/{name}/pull-many",
            post(pull_many).fallback(wrong_method),
        )
        .route("/db/{name}/datoms", post(datoms).fallback(wrong_method))
        .route(
            "/db/{name}/index-range",
            post(index_range).fallback(wrong_method),
        )
        .route("/db/{name}/tx-range", post(tx_range).fallback(wrong_method))
        .route("/db/{name}/stat", get(stat).fallback(wrong_method))
        .fallback(unknown_route)
        .with_state(state)
}

macro_rules! operation {
    ($name:ident, $op:expr) => {
        async fn $name(
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

async fn health(State(state): State<Shared>, headers: HeaderMap) -> Response {
    let body = Edn::Map(vec![
        (Edn::kw(":status"), Edn::kw(":ok")),
        (
            Edn::kw(":databases"),
            Edn::Long(state.served.names().len() as i64),
        ),
    ]);
    respond::answer(&headers, Ok(body))
}

async fn dbs(State(state): State<Shared>, headers: HeaderMap) -> Response {
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

async fn metrics(State(state): State<Shared>, headers: HeaderMap) -> Response {
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

async fn wrong_method(headers: HeaderMap) -> Response {
    let e = ServerError::new(
        codes::METHOD_NOT_ALLOWED,
        "this path takes another method: GET /health, /dbs, /metrics and /db/NAME/stat; \
         POST the other operations",
    );
    respond::answer(&headers, Err(e))
}

async fn unknown_route(uri: axum::http::Uri, headers: HeaderMap) -> Response {
    let e = ServerError::new(
        codes::UNKNOWN_ROUTE,
        format!(
            "no such path {:?}: /health, /dbs, \
             /db/NAME/{{q,transact,pull,pull-many,datoms,index-range,tx-range,stat}}",
            uri.path()
        ),
    );
    respond::answer(&headers, Err(e))
}
