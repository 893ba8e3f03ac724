//! Requests, and what a test checks of the replies.

use std::io::{Read, Write};
use std::time::Duration;

use datalith::edn::{read_one, to_edn_string, Edn};

/// A reply.
#[derive(Debug)]
pub struct Reply {
    pub status: u16,
    pub content_type: String,
    pub retry_after: Option<String>,
    pub www_authenticate: Option<String>,
    /// The body as text (lossy for a CBOR body: see `bytes`).
    pub body: String,
    pub bytes: Vec<u8>,
}

impl Reply {
    /// The body as EDN, read from EDN, tagged JSON or CBOR by its content type.
    pub fn edn(&self) -> Edn {
        if self.content_type.starts_with("application/cbor") {
            datalith::edn::cbor::read_cbor(&self.bytes)
                .unwrap_or_else(|e| panic!("not CBOR ({e}): {:?}", self.bytes))
        } else if self.content_type.starts_with("application/json") {
            datalith_server::json::from_json_slice(self.body.as_bytes())
                .unwrap_or_else(|e| panic!("not tagged JSON ({e}): {}", self.body))
        } else {
            assert!(
                self.content_type.starts_with("application/edn"),
                "content type {:?}: {}",
                self.content_type,
                self.body
            );
            read_one(&self.body).unwrap_or_else(|e| panic!("not EDN ({e}): {}", self.body))
        }
    }
}

fn agent(patience: Duration) -> ureq::Agent {
    ureq::Agent::config_builder()
        .http_status_as_error(false)
        .timeout_global(Some(patience))
        .build()
        .into()
}

/// Sends a request; `headers` as given (a `Content-Type` among them for a body).
pub fn send(method: &str, url: &str, headers: &[(&str, &str)], body: Option<&str>) -> Reply {
    try_send(Duration::from_secs(60), method, url, headers, body)
        .unwrap_or_else(|e| panic!("{method} {url}: {e}"))
}

/// Sends a request, giving up (and closing the connection) after `patience`.
pub fn try_send(
    patience: Duration,
    method: &str,
    url: &str,
    headers: &[(&str, &str)],
    body: Option<&str>,
) -> Result<Reply, ureq::Error> {
    try_send_bytes(patience, method, url, headers, body.map(str::as_bytes))
}

/// [`try_send`] with a body of any bytes.
pub fn try_send_bytes(
    patience: Duration,
    method: &str,
    url: &str,
    headers: &[(&str, &str)],
    body: Option<&[u8]>,
) -> Result<Reply, ureq::Error> {
    let agent = agent(patience);
    let result = match method {
        "GET" | "DELETE" => {
            let mut r = match method {
                "GET" => agent.get(url),
                _ => agent.delete(url),
            };
            for (k, v) in headers {
                r = r.header(*k, *v);
            }
            r.call()
        }
        _ => {
            let mut r = match method {
                "POST" => agent.post(url),
                _ => agent.put(url),
            };
            for (k, v) in headers {
                r = r.header(*k, *v);
            }
            match body {
                Some(b) => r.send(b),
                None => r.send_empty(),
            }
        }
    };
    let mut response = result?;
    let header = |name: &str| {
        response
            .headers()
            .get(name)
            .and_then(|v| v.to_str().ok())
            .map(str::to_string)
    };
    let content_type = header("content-type").unwrap_or_default();
    let retry_after = header("retry-after");
    let www_authenticate = header("www-authenticate");
    let status = response.status().as_u16();
    let bytes = response.body_mut().read_to_vec()?;
    Ok(Reply {
        status,
        content_type,
        retry_after,
        www_authenticate,
        body: String::from_utf8_lossy(&bytes).into_owned(),
        bytes,
    })
}

/// Sends `request` as written on a new connection and returns the status and the raw
/// response; for what a client library would not send (no `Content-Type`, a lying length).
pub fn raw(addr: &str, request: impl AsRef<[u8]>) -> (u16, String) {
    let mut stream = std::net::TcpStream::connect(addr).unwrap();
    stream
        .set_read_timeout(Some(Duration::from_secs(30)))
        .unwrap();
    stream.write_all(request.as_ref()).unwrap();
    let mut bytes = Vec::new();
    let _ = stream.read_to_end(&mut bytes);
    let out = String::from_utf8_lossy(&bytes).to_string();
    let status = out
        .split_whitespace()
        .nth(1)
        .and_then(|s| s.parse().ok())
        .unwrap_or(0);
    (status, out)
}

/// The body format of a table row.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Fmt {
    /// `application/edn` both ways.
    Edn,
    /// `application/json` both ways.
    Json,
    /// `application/cbor` both ways: the row's body, written in EDN (or JSON, `from_json`),
    /// sent as CBOR; its `raw:` expectations are not checked.
    Cbor { from_json: bool },
}

/// One row: a request and what its reply must have.
#[derive(Clone, Copy)]
pub struct Row {
    pub method: &'static str,
    pub path: &'static str,
    pub fmt: Fmt,
    /// Extra headers (`Authorization`, `Accept`, `Content-Type` overriding the format's).
    pub headers: &'static [(&'static str, &'static str)],
    pub body: &'static str,
    pub status: u16,
    /// Each must occur in the body read as EDN and printed (so one expectation serves EDN
    /// and JSON rows alike), or, written `raw:...`, in the body as sent.
    pub want: &'static [&'static str],
}

/// An EDN row with headers (the tables of tokens and roles).
pub const fn edn_row(
    method: &'static str,
    path: &'static str,
    headers: &'static [(&'static str, &'static str)],
    body: &'static str,
    status: u16,
    want: &'static [&'static str],
) -> Row {
    Row {
        method,
        path,
        fmt: Fmt::Edn,
        headers,
        body,
        status,
        want,
    }
}

/// The rows of a table that a CBOR client sends alike, as CBOR rows: each whose body reads
/// in its format and whose headers leave the format to the row (the others test reading
/// EDN or JSON, or headers, and write nothing).
pub fn as_cbor(rows: &[Row]) -> Vec<Row> {
    rows.iter()
        .filter(|r| {
            !r.headers.iter().any(|(k, _)| {
                k.eq_ignore_ascii_case("content-type") || k.eq_ignore_ascii_case("accept")
            })
        })
        .filter_map(|r| {
            let from_json = match r.fmt {
                Fmt::Edn => false,
                Fmt::Json => true,
                Fmt::Cbor { .. } => return Some(*r),
            };
            let reads = r.body.is_empty()
                || match from_json {
                    true => datalith_server::json::from_json_slice(r.body.as_bytes()).is_ok(),
                    false => read_one(r.body).is_ok(),
                };
            reads.then_some(Row {
                fmt: Fmt::Cbor { from_json },
                ..*r
            })
        })
        .collect()
}

/// Runs the rows in order against `server`; every failure is listed, then the test fails.
pub fn run_table(server: &crate::server::Server, rows: &[Row]) {
    let mut failures = Vec::new();
    for (i, row) in rows.iter().enumerate() {
        let media = match row.fmt {
            Fmt::Edn => "application/edn",
            Fmt::Json => "application/json",
            Fmt::Cbor { .. } => "application/cbor",
        };
        let mut headers: Vec<(&str, &str)> = row.headers.to_vec();
        let has =
            |name: &str, hs: &[(&str, &str)]| hs.iter().any(|(k, _)| k.eq_ignore_ascii_case(name));
        if !has("content-type", &headers) && !row.body.is_empty() {
            headers.push(("Content-Type", media));
        }
        if !has("accept", &headers) {
            headers.push(("Accept", media));
        }
        let body = match row.fmt {
            Fmt::Cbor { from_json } if !row.body.is_empty() => {
                let value = match from_json {
                    true => datalith_server::json::from_json_slice(row.body.as_bytes()).unwrap(),
                    false => read_one(row.body).unwrap(),
                };
                let mut bytes = Vec::new();
                datalith::edn::cbor::write_cbor(&value, &mut bytes);
                Some(bytes)
            }
            _ => (!row.body.is_empty()).then(|| row.body.as_bytes().to_vec()),
        };
        let reply = try_send_bytes(
            Duration::from_secs(60),
            row.method,
            &server.url(row.path),
            &headers,
            body.as_deref(),
        )
        .unwrap_or_else(|e| panic!("{} {}: {e}", row.method, row.path));
        let what = format!("row {} {} {} {}", i + 1, row.method, row.path, row.body);
        if reply.status != row.status {
            failures.push(format!(
                "{what}\n  status {} (want {}): {}",
                reply.status, row.status, reply.body
            ));
            continue;
        }
        let printed = match reply.content_type.as_str() {
            t if t.starts_with("application/") => to_edn_string(&reply.edn()),
            _ => reply.body.clone(),
        };
        for want in row.want {
            let (hay, needle) = match want.strip_prefix("raw:") {
                Some(_) if matches!(row.fmt, Fmt::Cbor { .. }) => continue,
                Some(n) => (&reply.body, n),
                None => (&printed, *want),
            };
            if !hay.contains(needle) {
                failures.push(format!("{what}\n  lacks {want:?}: {}", reply.body));
            }
        }
    }
    assert!(
        failures.is_empty(),
        "{} failures:\n{}",
        failures.len(),
        failures.join("\n")
    );
}
