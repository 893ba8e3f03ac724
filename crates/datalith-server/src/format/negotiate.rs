//! Which format a request body is in (`Content-Type`) and which the response should be in
//! (`Accept`). EDN is the default: a body without `Content-Type` is EDN. A response is in the
//! format `Accept` prefers (by its `q` weights, then its order); with no `Accept`, or one
//! that admits anything (`*/*`, `application/*`), it is in the request body's format, so a
//! client that sends JSON gets JSON back.

use datalith::edn::Edn;

use super::Format;
use crate::error::{codes, Result, ServerError};

/// The format of a request body, from its `Content-Type` (none: EDN).
pub fn request_format(content_type: Option<&str>) -> Result<Format> {
    let Some(ct) = content_type else {
        return Ok(Format::Edn);
    };
    match media_type(ct).as_str() {
        "application/edn" => Ok(Format::Edn),
        "application/json" => Ok(Format::Json),
        "application/cbor" => Ok(Format::Cbor),
        other => Err(ServerError::new(
            codes::UNSUPPORTED_MEDIA_TYPE,
            format!(
                "Content-Type {other:?}: send application/edn, application/json or application/cbor \
                 (curl sends form data unless told: -H 'Content-Type: application/edn')"
            ),
        )),
    }
}

/// A request's body read in the format its `Content-Type` names; `None` for a body with
/// nothing in it. Whether a body is empty is the format's to say: white space is nothing in
/// EDN and JSON, but a byte such as `\n` is a whole value in CBOR (the integer 10). A body
/// of white space under a media type no format has is nothing, as it always was.
pub fn read_body(content_type: Option<&str>, body: &[u8]) -> Result<Option<Edn>> {
    match request_format(content_type) {
        Ok(format) => format.read(body),
        Err(_) if body.iter().all(u8::is_ascii_whitespace) => Ok(None),
        Err(e) => Err(e),
    }
}

/// The format of the response, from `Accept`; `fallback` (the request body's format) when
/// any format will do.
pub fn response_format(accept: Option<&str>, fallback: Format) -> Result<Format> {
    let Some(accept) = accept else {
        return Ok(fallback);
    };
    // (weight, position, format); the best is the heaviest, then the first written.
    let mut best: Option<(u32, usize, Format)> = None;
    for (i, range) in accept.split(',').enumerate() {
        let mut parts = range.split(';');
        let ty = parts.next().unwrap_or("").trim().to_ascii_lowercase();
        let weight = parts
            .filter_map(|p| p.trim().strip_prefix("q="))
            .filter_map(|q| q.trim().parse::<f32>().ok())
            .map(|q| (q.clamp(0.0, 1.0) * 1000.0) as u32)
            .next()
            .unwrap_or(1000);
        let format = match ty.as_str() {
            "application/edn" => Format::Edn,
            "application/json" => Format::Json,
            "application/cbor" => Format::Cbor,
            "*/*" | "application/*" => fallback,
            _ => continue,
        };
        if weight == 0 {
            continue;
        }
        if best.is_none_or(|(w, _, _)| weight > w) {
            best = Some((weight, i, format));
        }
    }
    best.map(|(_, _, f)| f).ok_or_else(|| {
        ServerError::new(
            codes::NOT_ACCEPTABLE,
            format!(
                "Accept {accept:?}: this server answers in application/edn, application/json or \
                 application/cbor"
            ),
        )
    })
}

/// The media type of a header value, lower case, without parameters (`; charset=utf-8`).
fn media_type(header: &str) -> String {
    header
        .split(';')
        .next()
        .unwrap_or("")
        .trim()
        .to_ascii_lowercase()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn request_formats() {
        let cases: &[(Option<&str>, Option<Format>)] = &[
            (None, Some(Format::Edn)),
            (Some("application/edn"), Some(Format::Edn)),
            (Some("application/json; charset=utf-8"), Some(Format::Json)),
            (Some("Application/JSON"), Some(Format::Json)),
            (Some("application/cbor"), Some(Format::Cbor)),
            (Some("application/x-www-form-urlencoded"), None),
            (Some("text/plain"), None),
        ];
        for (ct, want) in cases {
            assert_eq!(request_format(*ct).ok(), *want, "{ct:?}");
        }
    }

    #[test]
    fn empty_bodies_are_the_formats_to_judge() {
        let cases: &[(Option<&str>, &[u8], Option<Option<Edn>>)] = &[
            (None, b"", Some(None)),
            (None, b" \n", Some(None)),
            (Some("application/json"), b"\t", Some(None)),
            (Some("application/cbor"), b"", Some(None)),
            // A newline is the integer 10 in CBOR.
            (Some("application/cbor"), b"\n", Some(Some(Edn::Long(10)))),
            (Some("text/plain"), b"  ", Some(None)),
            (Some("text/plain"), b"{}", None),
        ];
        for (ct, body, want) in cases {
            assert_eq!(read_body(*ct, body).ok(), *want, "{ct:?} {body:?}");
        }
    }

    #[test]
    fn response_formats() {
        use Format::{Edn, Json};
        let cases: &[(Option<&str>, Format, Option<Format>)] = &[
            (None, Edn, Some(Edn)),
            (None, Json, Some(Json)),
            (Some("*/*"), Json, Some(Json)),
            (Some("application/json"), Edn, Some(Json)),
            (Some("application/edn"), Json, Some(Edn)),
            (
                Some("application/edn;q=0.5, application/json"),
                Edn,
                Some(Json),
            ),
            (Some("application/json, application/edn"), Edn, Some(Json)),
            (Some("text/html, application/edn"), Json, Some(Edn)),
            (
                Some("application/cbor, application/edn;q=0.5"),
                Edn,
                Some(Format::Cbor),
            ),
            (Some("application/json;q=0"), Edn, None),
            (Some("text/html"), Edn, None),
        ];
        for (accept, fallback, want) in cases {
            assert_eq!(
                response_format(*accept, *fallback).ok(),
                *want,
                "{accept:?} {fallback:?}"
            );
        }
    }
}
