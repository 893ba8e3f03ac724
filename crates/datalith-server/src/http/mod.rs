//! The HTTP face: the routes ([`router`]) and their handlers (`handlers`), the rate per
//! client address every request but `/health` meets first (`address`), what every
//! database request goes through (`pipeline`: `body`, `cancel`, `in_place`, `access_log`), and how
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
//! | `GET /db/NAME/kv-tables`; `POST /db/NAME/kv-get`, `kv-put`, `kv-delete`, `kv-write`, `kv-range`, `kv-count` | the key-value tables (`ops::kv`) |

mod access_log;
pub mod address;
mod admin;
mod body;
mod cancel;
mod copy;
mod handlers;
mod in_place;
mod outlet;
mod pipeline;
mod respond;
mod stream;

use std::sync::Arc;
use std::time::Duration;

use axum::routing::{delete, get, post, MethodRouter};
use axum::Router;
use tokio::sync::Semaphore;

use crate::auth::Tokens;
use crate::metrics::Metrics;
use crate::ops::QueryLimits;
use crate::reload::Swap;
use crate::served::Served;

use handlers::{
    datoms, dbs, health, index_range, kv_count, kv_delete, kv_get, kv_put, kv_range, kv_tables,
    kv_write, metrics, pull, pull_many, q, stat, transact, tx_range, unknown_route, wrong_method,
};

/// What every request shares.
pub struct AppState {
    /// The databases.
    pub served: Served,
    /// The token file's grants (`None`: no authentication), replaced whole by a reload.
    pub tokens: Option<Arc<Swap<Tokens>>>,
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
    pub token_rate: Option<crate::rate::Rate>,
    /// Requests a second per client address (`None`: unlimited).
    pub address_rate: Option<crate::rate::Rate>,
    /// Proxies whose `X-Forwarded-For` names the client (`--trusted-proxy`).
    pub trusted_proxies: Vec<std::net::IpAddr>,
    /// How long each query text took last (which queries run in place first).
    pub pace: in_place::Pace,
}

impl AppState {
    /// Whether the request asking holds the only place taken (`--max-concurrent`): no
    /// other request is running.
    pub fn runs_alone(&self) -> bool {
        self.places - self.gate.available_permits() <= 1
    }
}

/// The state as handlers share it.
pub type Shared = Arc<AppState>;

/// Every route, as (method, path): the router is built from this table, and the OpenAPI
/// file (`openapi.yaml`) and the README's examples are checked against it (`routes_tests`).
pub const ROUTES: &[(&str, &str)] = &[
    ("GET", "/health"),
    ("GET", "/dbs"),
    ("POST", "/dbs"),
    ("DELETE", "/db/{name}"),
    ("GET", "/metrics"),
    ("POST", "/db/{name}/q"),
    ("POST", "/db/{name}/transact"),
    ("POST", "/db/{name}/pull"),
    ("POST", "/db/{name}/pull-many"),
    ("POST", "/db/{name}/datoms"),
    ("POST", "/db/{name}/index-range"),
    ("POST", "/db/{name}/tx-range"),
    ("GET", "/db/{name}/stat"),
    ("GET", "/db/{name}/copy"),
    ("GET", "/db/{name}/kv-tables"),
    ("POST", "/db/{name}/kv-get"),
    ("POST", "/db/{name}/kv-put"),
    ("POST", "/db/{name}/kv-delete"),
    ("POST", "/db/{name}/kv-write"),
    ("POST", "/db/{name}/kv-range"),
    ("POST", "/db/{name}/kv-count"),
];

/// The handler of one route of [`ROUTES`].
fn handler(method: &str, path: &str) -> MethodRouter<Shared> {
    match (method, path) {
        ("GET", "/health") => get(health),
        ("GET", "/dbs") => get(dbs),
        ("POST", "/dbs") => post(admin::create),
        ("DELETE", "/db/{name}") => delete(admin::delete),
        ("GET", "/metrics") => get(metrics),
        ("POST", "/db/{name}/q") => post(q),
        ("POST", "/db/{name}/transact") => post(transact),
        ("POST", "/db/{name}/pull") => post(pull),
        ("POST", "/db/{name}/pull-many") => post(pull_many),
        ("POST", "/db/{name}/datoms") => post(datoms),
        ("POST", "/db/{name}/index-range") => post(index_range),
        ("POST", "/db/{name}/tx-range") => post(tx_range),
        ("GET", "/db/{name}/stat") => get(stat),
        ("GET", "/db/{name}/copy") => get(copy::copy),
        ("GET", "/db/{name}/kv-tables") => get(kv_tables),
        ("POST", "/db/{name}/kv-get") => post(kv_get),
        ("POST", "/db/{name}/kv-put") => post(kv_put),
        ("POST", "/db/{name}/kv-delete") => post(kv_delete),
        ("POST", "/db/{name}/kv-write") => post(kv_write),
        ("POST", "/db/{name}/kv-range") => post(kv_range),
        ("POST", "/db/{name}/kv-count") => post(kv_count),
        // The table is a constant: a row without a handler fails every test that builds the
        // router, before anything ships.
        _ => unreachable!("no handler for {method} {path}"),
    }
}

/// The routes.
pub fn router(state: Shared) -> Router {
    let mut paths: Vec<(&str, MethodRouter<Shared>)> = Vec::new();
    for (method, path) in ROUTES {
        let route = handler(method, path);
        match paths.iter_mut().find(|(p, _)| p == path) {
            Some((_, methods)) => *methods = std::mem::take(methods).merge(route),
            None => paths.push((path, route)),
        }
    }
    let mut router = Router::new();
    for (path, methods) in paths {
        router = router.route(path, methods.fallback(wrong_method));
    }
    router
        .fallback(unknown_route)
        .layer(axum::middleware::from_fn_with_state(
            state.clone(),
            address::limit,
        ))
        .with_state(state)
}

#[cfg(test)]
mod routes_tests;
