//! The HTTP face: the routes ([`router`]) and their handlers (`handlers`), what every
//! database request goes through (`pipeline`: `body`, `cancel`, `access_log`), and how
//! answers and errors are written (`respond`; large results a chunk at a time: `stream`).
//!
//! | route | |
//! |---|---|
//! | `GET /health` | `{:status :ok}`, without a token (for load balancers and probes) |
//! | `GET /dbs` | the databases the token may read |
//! | `POST /dbs`, `DELETE /db/NAME` | create and delete databases (`admin`, `--create-in`) |
//! | `GET /metrics` | Prometheus text (`metrics`); any known token |
//! | `POST /db/NAME/q`, `transact`, `pull`, `pull-many`, `datoms`, `index-range`, `tx-range` | the operations (`ops`) |
//! | `GET /db/NAME/stat` | statistics |

mod access_log;
mod admin;
mod body;
mod cancel;
mod handlers;
mod pipeline;
mod respond;
mod stream;

use std::sync::Arc;
use std::time::Duration;

use axum::routing::{delete, get, post};
use axum::Router;
use tokio::sync::Semaphore;

use crate::auth::Tokens;
use crate::metrics::Metrics;
use crate::ops::QueryLimits;
use crate::served::Served;

use handlers::{
    datoms, dbs, health, index_range, metrics, pull, pull_many, q, stat, transact, tx_range,
    unknown_route, wrong_method,
};

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

/// The state as handlers share it.
pub type Shared = Arc<AppState>;

/// The routes.
pub fn router(state: Shared) -> Router {
    Router::new()
        .route("/health", get(health).fallback(wrong_method))
        .route("/dbs", get(dbs).post(admin::create).fallback(wrong_method))
        .route("/db/{name}", delete(admin::delete).fallback(wrong_method))
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
