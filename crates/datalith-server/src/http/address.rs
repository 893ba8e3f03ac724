//! The rate per client address (`--address-rate`), before anything else is read of a
//! request: a client over it gets 429 `:datalith.error/rate-limited` whatever its token.
//! `/health` is not counted, so that probes never see 429. The address is the TCP peer's:
//! behind a proxy every client shares the proxy's (use `--token-rate` there).

use std::net::IpAddr;

use axum::extract::{Request, State};
use axum::middleware::Next;
use axum::response::Response;

use super::{respond, Shared};

/// The address of the client a request came from, put on each request by the accept loop.
#[derive(Debug, Clone, Copy)]
pub struct ClientAddr(pub IpAddr);

/// Refuses the request when its address is past its rate; otherwise passes it on.
pub async fn limit(State(state): State<Shared>, request: Request, next: Next) -> Response {
    if let (Some(rate), Some(ClientAddr(ip))) = (
        &state.address_rate,
        request.extensions().get::<ClientAddr>(),
    ) {
        if request.uri().path() != "/health" {
            if let Err(e) = rate.take(&ip.to_string()) {
                return respond::answer(request.headers(), Err(e));
            }
        }
    }
    next.run(request).await
}
