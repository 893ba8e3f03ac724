//! Writing answers and errors in the format the client accepts. An error body is the
//! error's EDN map (`{:db/error ..., :cognitect.anomalies/category ..., :message ...}`), in
//! JSON as tagged JSON, with the status its category gives and, when busy, `Retry-After`.

use axum::http::header::{ACCEPT, CONTENT_TYPE, RETRY_AFTER, WWW_AUTHENTICATE};
use axum::http::{HeaderMap, HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};
use datalith::edn::Edn;

use super::stream::{Sending, Streamed};
use crate::error::{codes, status, Result, ServerError};
use crate::format::negotiate::{request_format, response_format};
use crate::format::Format;
use crate::ops::Reply;

/// A header's value as text (a value that is not visible ASCII counts as absent).
pub fn header(headers: &HeaderMap, name: axum::http::HeaderName) -> Option<&str> {
    headers.get(name).and_then(|v| v.to_str().ok())
}

/// The format to answer in: the one `Accept` asks for, else the request body's, else EDN;
/// an `Accept` that admits neither is itself answered, in EDN.
pub fn format_for(headers: &HeaderMap) -> Result<Format> {
    let fallback = request_format(header(headers, CONTENT_TYPE)).unwrap_or(Format::Edn);
    response_format(header(headers, ACCEPT), fallback)
}

/// Answers with `result` in the negotiated format.
pub fn answer(headers: &HeaderMap, result: Result<Edn>) -> Response {
    match format_for(headers) {
        Ok(format) => write(format, result.map(Reply::Value)),
        Err(e) => error(Format::Edn, &e),
    }
}

/// Writes `result` in `format`; a large result, and a query's rows, as they are sent
/// (`stream`).
pub fn write(format: Format, result: Result<Reply>) -> Response {
    let streamed = match result {
        Ok(Reply::Value(value)) => match Streamed::of(format, value) {
            Ok(streamed) => streamed,
            Err(value) => return body(StatusCode::OK, format, &value),
        },
        Ok(Reply::Rows { rows, basis }) => Streamed::rows(format, rows, basis),
        Ok(Reply::Written(bytes, _)) => return ok(format, bytes.into()),
        Ok(Reply::Stream(chunks)) => {
            return ok(format, axum::body::Body::new(Sending::new(chunks)))
        }
        Ok(Reply::Sent) => {
            let e = ServerError::new(
                codes::INTERNAL,
                "an answer already sent was to be sent again".to_string(),
            );
            return error(format, &e);
        }
        Err(e) => return error(format, &e),
    };
    send(format, streamed)
}

/// Sends `streamed`: whole when it ends within its first chunk, else as it is written.
fn send(format: Format, mut streamed: Streamed) -> Response {
    match streamed.whole() {
        // Already ends with its line end.
        Ok(Some(text)) => ok(format, text.into()),
        Ok(None) => ok(format, axum::body::Body::new(streamed)),
        Err(e) => error(format, &e),
    }
}

/// A 200 answer of `body` in `format`.
fn ok(format: Format, body: axum::body::Body) -> Response {
    (StatusCode::OK, [(CONTENT_TYPE, format.media_type())], body).into_response()
}

fn body(status: StatusCode, format: Format, value: &Edn) -> Response {
    let mut bytes = format.write(value);
    // A line of its own, so `curl` leaves the prompt on the next line.
    bytes.extend_from_slice(format.answer_end());
    (status, [(CONTENT_TYPE, format.media_type())], bytes).into_response()
}

/// An error as its body, status and headers.
pub fn error(format: Format, e: &ServerError) -> Response {
    let status = status::of(&e.category);
    let mut response = body(status, format, &e.to_edn());
    let headers = response.headers_mut();
    if let Some(secs) = status::retry_after(&e.category) {
        headers.insert(RETRY_AFTER, HeaderValue::from(secs));
    }
    if status == StatusCode::UNAUTHORIZED {
        headers.insert(
            WWW_AUTHENTICATE,
            HeaderValue::from_static("Bearer realm=\"datalith\""),
        );
    }
    if status.is_server_error() {
        // The operator's side of a failure the client sees; a closed stderr is no reason
        // to fail the request.
        crate::run::log(&format!(
            "{} {}: {}",
            status.as_u16(),
            e.category,
            e.message
        ));
    }
    response
}
