//! Reading a request body: at most `--max-body-bytes` (413), and within `--body-timeout-ms`
//! (408), so that a client sending its body a byte a second cannot hold a connection and a
//! task for long. The body is read before the request takes a place to run, so a slow one
//! never holds a place.

use std::time::Duration;

use axum::body::{Body, Bytes};

use super::AppState;
use crate::error::{codes, Result, ServerError};

/// The whole body of a request.
pub async fn read(state: &AppState, body: Body) -> Result<Bytes> {
    let read = axum::body::to_bytes(body, state.max_body);
    match tokio::time::timeout(state.body_timeout, read).await {
        Ok(Ok(bytes)) => Ok(bytes),
        Ok(Err(e)) if over_the_limit(&e) => Err(ServerError::new(
            codes::BODY_TOO_LARGE,
            format!(
                "the body is over this server's limit of {} bytes (--max-body-bytes)",
                state.max_body
            ),
        )),
        Ok(Err(e)) => Err(ServerError::invalid(format!("body: {e}"))),
        Err(_) => Err(ServerError::new(
            codes::REQUEST_TIMEOUT,
            format!(
                "the body did not arrive within {} ms (--body-timeout-ms)",
                millis(state.body_timeout)
            ),
        )),
    }
}

fn millis(d: Duration) -> u128 {
    d.as_millis()
}

/// Whether the error, or one it wraps, is the body limit's.
fn over_the_limit(e: &(dyn std::error::Error + 'static)) -> bool {
    let mut at = Some(e);
    while let Some(e) = at {
        if e.is::<http_body_util::LengthLimitError>() {
            return true;
        }
        at = e.source();
    }
    false
}
