//! Categories of the errors only a server has: who may ask, what it may send, how busy it
//! is. The codes are in Datalith's namespace (Datomic's client has no such codes of its own);
//! the anomaly says what the caller can do, and `status` picks the HTTP status.

use datalith::error::{Anomaly, Blame, Category};

const fn caller(code: &'static str, anomaly: Anomaly) -> Category {
    Category::new(code, anomaly, Blame::Caller)
}

/// No bearer token, or one the server does not know (HTTP 401).
pub const UNAUTHORIZED: Category = caller(":datalith.error/unauthorized", Anomaly::Forbidden);
/// A known token whose role does not allow the operation on this database (HTTP 403).
pub const FORBIDDEN: Category = caller(":datalith.error/forbidden", Anomaly::Forbidden);
/// A database name the server does not serve (HTTP 404).
pub const UNKNOWN_DATABASE: Category =
    caller(":datalith.error/unknown-database", Anomaly::NotFound);
/// A database created under a name already served (HTTP 409).
pub const DATABASE_EXISTS: Category = caller(":datalith.error/database-exists", Anomaly::Conflict);
/// A path the API does not have (HTTP 404).
pub const UNKNOWN_ROUTE: Category = caller(":datalith.error/unknown-route", Anomaly::NotFound);
/// A method the path does not take (HTTP 405).
pub const METHOD_NOT_ALLOWED: Category =
    caller(":datalith.error/method-not-allowed", Anomaly::Incorrect);
/// A body that did not arrive within the server's timeout (HTTP 408).
pub const REQUEST_TIMEOUT: Category =
    caller(":datalith.error/request-timeout", Anomaly::Interrupted);
/// A body over the server's limit (HTTP 413).
pub const BODY_TOO_LARGE: Category = caller(":datalith.error/body-too-large", Anomaly::Incorrect);
/// A `Content-Type` other than EDN, JSON or CBOR (HTTP 415).
pub const UNSUPPORTED_MEDIA_TYPE: Category = caller(
    ":datalith.error/unsupported-media-type",
    Anomaly::Unsupported,
);
/// An `Accept` that admits none of EDN, JSON and CBOR (HTTP 406).
pub const NOT_ACCEPTABLE: Category = caller(":datalith.error/not-acceptable", Anomaly::Unsupported);
/// A body that is not JSON, or JSON whose tagged objects are wrong (HTTP 400).
pub const INVALID_JSON: Category = caller(":datalith.error/invalid-json", Anomaly::Incorrect);
/// A body that is not one CBOR value Datalith reads (HTTP 400): the byte it met is in the
/// message.
pub const INVALID_CBOR: Category = caller(":datalith.error/invalid-cbor", Anomaly::Incorrect);
/// Every place to run a request stayed taken for the queue's timeout (HTTP 503, Retry-After).
pub const OVERLOADED: Category = Category::new(
    ":datalith.error/overloaded",
    Anomaly::Busy,
    Blame::Environment,
);
/// A token past its requests a second (HTTP 429, Retry-After).
pub const RATE_LIMITED: Category = caller(":datalith.error/rate-limited", Anomaly::Busy);
/// A request for a database value (`:basis-t`) the server no longer holds, or does not hold
/// yet (HTTP 409): ask again without it, or with the newer basis.
pub const BASIS_UNAVAILABLE: Category =
    caller(":datalith.error/basis-unavailable", Anomaly::Conflict);
/// A request that failed inside the server (a task that panicked) (HTTP 500).
pub const INTERNAL: Category = Category::new(
    ":datalith.error/internal",
    Anomaly::Fault,
    Blame::Environment,
);
/// Plain HTTP sent to a port that speaks TLS (HTTP 400): use `https://`.
pub const TLS_REQUIRED: Category = caller(":datalith.error/tls-required", Anomaly::Incorrect);
/// The transaction log (`--log kafka://...`) did not take a record or give one back within
/// its retry deadline (HTTP 503). A transaction that met it may still be in the log: read it
/// back before sending it again.
pub const LOG_UNAVAILABLE: Category = Category::new(
    ":datalith.error/log-unavailable",
    Anomaly::Unavailable,
    Blame::Environment,
);
/// A transaction the log holds that this node has not applied within the request's time
/// (HTTP 504): it is durable and every node will apply it; read it back by its basis later.
pub const NOT_APPLIED_YET: Category = Category::new(
    ":datalith.error/not-applied-yet",
    Anomaly::Interrupted,
    Blame::Environment,
);
