//! The HTTP status of an error: by its anomaly (what the caller can do), except for the
//! server's own codes whose HTTP meaning is more exact (401, 405, 406, 408, 413, 415, 429).
//!
//! | anomaly | status |
//! |---|---|
//! | incorrect | 400 |
//! | forbidden | 403 (401 for `:datalith.error/unauthorized`) |
//! | not-found | 404 |
//! | conflict | 409 |
//! | fault | 500 |
//! | unsupported | 501 (406, 415 for negotiation) |
//! | unavailable | 503 |
//! | busy | 503, with `Retry-After` (429 for `:datalith.error/rate-limited`) |
//! | interrupted | 504 (a query's timeout, cancellation or memory limit); 408 for a body that did not arrive in time |

use axum::http::StatusCode;
use datalith::error::{Anomaly, Category};

use super::codes;

/// Seconds a client is told to wait before retrying a busy answer.
pub const RETRY_AFTER_SECS: u32 = 1;

/// The status of an error of `category`.
pub fn of(category: &Category) -> StatusCode {
    match *category {
        codes::UNAUTHORIZED => return StatusCode::UNAUTHORIZED,
        codes::METHOD_NOT_ALLOWED => return StatusCode::METHOD_NOT_ALLOWED,
        codes::NOT_ACCEPTABLE => return StatusCode::NOT_ACCEPTABLE,
        codes::BODY_TOO_LARGE => return StatusCode::PAYLOAD_TOO_LARGE,
        codes::REQUEST_TIMEOUT => return StatusCode::REQUEST_TIMEOUT,
        codes::RATE_LIMITED => return StatusCode::TOO_MANY_REQUESTS,
        codes::UNSUPPORTED_MEDIA_TYPE => return StatusCode::UNSUPPORTED_MEDIA_TYPE,
        _ => {}
    }
    match category.anomaly {
        Anomaly::Incorrect => StatusCode::BAD_REQUEST,
        Anomaly::Forbidden => StatusCode::FORBIDDEN,
        Anomaly::NotFound => StatusCode::NOT_FOUND,
        Anomaly::Conflict => StatusCode::CONFLICT,
        Anomaly::Fault => StatusCode::INTERNAL_SERVER_ERROR,
        Anomaly::Unsupported => StatusCode::NOT_IMPLEMENTED,
        Anomaly::Unavailable | Anomaly::Busy => StatusCode::SERVICE_UNAVAILABLE,
        // A request that ran out of its time or memory: a gateway's word for "the work did
        // not finish", not 408, which says the client was slow to send.
        Anomaly::Interrupted => StatusCode::GATEWAY_TIMEOUT,
        // `Anomaly` is non-exhaustive: a new anomaly is the server's to classify.
        _ => StatusCode::INTERNAL_SERVER_ERROR,
    }
}

/// Whether the answer tells the client to retry later (`Retry-After`).
pub fn retry_after(category: &Category) -> Option<u32> {
    (category.anomaly == Anomaly::Busy).then_some(RETRY_AFTER_SECS)
}

#[cfg(test)]
mod tests {
    use super::*;
    use datalith::error as lib;

    #[test]
    fn statuses_follow_anomalies_and_the_servers_own_codes() {
        let cases: &[(Category, u16)] = &[
            (lib::INVALID_EDN, 400),
            (lib::NOT_AN_ENTITY, 400),
            (lib::UNIQUE_CONFLICT, 409),
            (lib::CAS_FAILED, 409),
            (lib::TIMEOUT, 504),
            (lib::RESOURCE_EXHAUSTED, 504),
            (lib::DATABASE_BUSY, 503),
            (lib::IO_FORBIDDEN, 403),
            (lib::IO, 500),
            (lib::CORRUPT, 500),
            (lib::POISONED, 503),
            (codes::UNAUTHORIZED, 401),
            (codes::FORBIDDEN, 403),
            (codes::UNKNOWN_DATABASE, 404),
            (codes::METHOD_NOT_ALLOWED, 405),
            (codes::NOT_ACCEPTABLE, 406),
            (codes::BODY_TOO_LARGE, 413),
            (codes::REQUEST_TIMEOUT, 408),
            (codes::RATE_LIMITED, 429),
            (codes::UNSUPPORTED_MEDIA_TYPE, 415),
            (codes::OVERLOADED, 503),
            (codes::BASIS_UNAVAILABLE, 409),
        ];
        for (category, want) in cases {
            assert_eq!(of(category).as_u16(), *want, "{category}");
        }
        assert_eq!(retry_after(&codes::OVERLOADED), Some(RETRY_AFTER_SECS));
        assert_eq!(retry_after(&lib::DATABASE_BUSY), Some(RETRY_AFTER_SECS));
        assert_eq!(retry_after(&lib::UNIQUE_CONFLICT), None);
    }
}
