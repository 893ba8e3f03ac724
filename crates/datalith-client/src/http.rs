//! One request to the server: an EDN body out, an EDN answer back, errors as
//! [`ClientError`]. Over `https://` the server's certificate is checked against the roots
//! given ([`crate::ClientBuilder::cacert_pem`]) or, when none are, the public web's roots.

use std::sync::Arc;
use std::time::Duration;

use ureq::tls::{Certificate, ClientCert, RootCerts, TlsConfig};
use ureq::unversioned::resolver::DefaultResolver;
use ureq::unversioned::transport::{Connector, DefaultConnector};

use crate::coalesce::Coalesce;

use datalith::edn::cbor::{read_cbor, read_cbor_map_deferring, write_cbor};
use datalith::edn::{read_one, to_edn_string, Edn};
use datalith::query::ItemSink;

use crate::error::ClientError;

/// The server's address, a token, and a connection pool.
#[derive(Clone)]
pub(crate) struct Http {
    base: String,
    token: Option<String>,
    agent: ureq::Agent,
}

impl Http {
    pub(crate) fn new(
        base: &str,
        token: Option<String>,
        roots: Option<Vec<Certificate<'static>>>,
        client_cert: Option<ClientCert>,
    ) -> Http {
        let mut tls = TlsConfig::builder().client_cert(client_cert);
        if let Some(roots) = roots {
            tls = tls.root_certs(RootCerts::Specific(Arc::new(roots)));
        }
        let config = agent_config().tls_config(tls.build()).build();
        // ureq's own chain (TCP, then TLS), each transport it makes wrapped last.
        let connector = DefaultConnector::new().chain(Coalesce);
        let agent = ureq::Agent::with_parts(config, connector, DefaultResolver::default());
        Http {
            base: base.trim_end_matches('/').to_string(),
            token,
            agent,
        }
    }

    /// `POST path` with `body` (a map of fields) for a read, answered with a map; sent once
    /// more when its connection failed before an answer came ([`Self::again`]).
    pub(crate) fn post(&self, path: &str, body: &Edn) -> Result<Edn, ClientError> {
        let bytes = cbor_of(body);
        self.again(|| {
            self.post_bytes(path, &bytes, None)
                .map(|(answer, _)| answer)
        })
    }

    /// `POST path` with `body` for a write, answered with a map; never sent twice: a write
    /// whose connection failed may have committed (read it back to know).
    pub(crate) fn post_write(&self, path: &str, body: &Edn) -> Result<Edn, ClientError> {
        self.post_bytes(path, &cbor_of(body), None)
            .map(|(answer, _)| answer)
            .map_err(Sent::into_error)
    }

    /// [`Self::post_write`], the answer's value under `key` left unread (see [`Unread`]).
    pub(crate) fn post_write_deferring(
        &self,
        path: &str,
        body: &Edn,
        key: &str,
    ) -> Result<(Edn, Option<Unread>), ClientError> {
        self.post_bytes(path, &cbor_of(body), Some(key))
            .map_err(Sent::into_error)
    }

    /// A read, and once more if its connection failed before an answer came: a pooled
    /// connection the server closed as the request went out (an idle one it closed to make
    /// room, `--max-connections`, or at its keep-alive's end). Reads change nothing, so
    /// sending one twice is safe (RFC 9110's idempotent methods); a timeout is not retried.
    fn again(&self, read: impl Fn() -> Result<Edn, Sent>) -> Result<Edn, ClientError> {
        match read() {
            Ok(answer) => Ok(answer),
            Err(Sent::Lost(_)) => read().map_err(Sent::into_error),
            Err(other) => Err(other.into_error()),
        }
    }

    /// `POST path` with a CBOR body, answered in CBOR: the server writes and the client
    /// reads it at a fraction of EDN text's cost (an entity id is 9 bytes, not 14 digits
    /// read one by one).
    fn post_bytes(
        &self,
        path: &str,
        body: &[u8],
        defer: Option<&str>,
    ) -> Result<(Edn, Option<Unread>), Sent> {
        let mut request = self
            .agent
            .post(format!("{}{path}", self.base))
            .header("Content-Type", CBOR)
            .header("Accept", CBOR);
        if let Some(token) = &self.token {
            request = request.header("Authorization", format!("Bearer {token}"));
        }
        let response = request.send(body).map_err(|e| self.sent(path, e))?;
        self.read_answer_deferring(path, response, defer)
            .map_err(Sent::Failed)
    }

    /// `POST path` with `body` for a query whose answer is `{:result ITEMS, :basis-t B}`,
    /// ITEMS a set or a vector: each item handed to `sink` as its text arrives, so the
    /// answer is never whole in memory. An error answer is the error; an answer that breaks
    /// off, or does not read, is a transport error; a sink's error stops the reading (the
    /// connection is dropped) and is the call's error.
    pub(crate) fn post_each(
        &self,
        path: &str,
        body: &Edn,
        sink: &mut dyn ItemSink,
    ) -> Result<(), ClientError> {
        let mut request = self
            .agent
            .post(format!("{}{path}", self.base))
            .header("Content-Type", "application/edn")
            .header("Accept", "application/edn")
            .config()
            .timeout_recv_body(None)
            .build();
        if let Some(token) = &self.token {
            request = request.header("Authorization", format!("Bearer {token}"));
        }
        let mut response = request
            .send(to_edn_string(body))
            .map_err(|e| self.failed(path, e))?;
        if response.status().as_u16() != 200 {
            return self.read_answer(path, response).map(|_| ());
        }
        let reader = response.body_mut().with_config().limit(u64::MAX).reader();
        crate::items::hand_on(reader, sink).map_err(|e| match e {
            crate::items::Failed::Sink(e) => ClientError::of_query(&e),
            crate::items::Failed::Answer(message) => {
                ClientError::transport(format!("{}{path}: {message}", self.base))
            }
        })
    }

    /// `GET path` (a read), answered with a map.
    pub(crate) fn get(&self, path: &str) -> Result<Edn, ClientError> {
        self.again(|| self.get_once(path))
    }

    fn get_once(&self, path: &str) -> Result<Edn, Sent> {
        let mut request = self
            .agent
            .get(format!("{}{path}", self.base))
            .header("Accept", CBOR);
        if let Some(token) = &self.token {
            request = request.header("Authorization", format!("Bearer {token}"));
        }
        let response = request.call().map_err(|e| self.sent(path, e))?;
        self.read_answer(path, response).map_err(Sent::Failed)
    }

    /// `GET path`, its answer's body (of any length, in no time bound: a database copy)
    /// written to `out`; an error answer's EDN as the error. Returns the bytes written. A
    /// body the server could not finish (its connection ended before the chunked body's
    /// end) is an error, never a short success.
    pub(crate) fn get_to(
        &self,
        path: &str,
        out: &mut impl std::io::Write,
    ) -> Result<u64, ClientError> {
        let mut request = self
            .agent
            .get(format!("{}{path}", self.base))
            .header("Accept", "application/octet-stream, application/edn")
            .config()
            .timeout_recv_body(None)
            .build();
        if let Some(token) = &self.token {
            request = request.header("Authorization", format!("Bearer {token}"));
        }
        let mut response = request.call().map_err(|e| self.failed(path, e))?;
        if response.status().as_u16() != 200 {
            return self.read_answer(path, response).map(|_| 0);
        }
        let broken = |e: std::io::Error| {
            ClientError::transport(format!("{}{path}: the answer broke off: {e}", self.base))
        };
        std::io::copy(&mut response.body_mut().as_reader(), out).map_err(broken)
    }

    /// The answer's value (CBOR, or EDN as the server writes an error it meets before
    /// reading the request's `Accept`), or the error it carries.
    fn read_answer(
        &self,
        path: &str,
        response: ureq::http::Response<ureq::Body>,
    ) -> Result<Edn, ClientError> {
        self.read_answer_deferring(path, response, None)
            .map(|(answer, _)| answer)
    }

    /// [`Self::read_answer`], but a successful CBOR answer's value under the key `defer` is
    /// left unread, its bytes kept ([`Unread`]).
    fn read_answer_deferring(
        &self,
        path: &str,
        mut response: ureq::http::Response<ureq::Body>,
        defer: Option<&str>,
    ) -> Result<(Edn, Option<Unread>), ClientError> {
        let status = response.status().as_u16();
        let is_cbor = response
            .headers()
            .get("content-type")
            .and_then(|v| v.to_str().ok())
            .is_some_and(|t| t.starts_with(CBOR));
        let bytes = response
            .body_mut()
            .read_to_vec()
            .map_err(|e| ClientError::transport(format!("{}{path}: {e}", self.base)))?;
        let not_read = |e: String| {
            ClientError::transport(format!(
                "{}{path}: an answer that does not read ({e})",
                self.base
            ))
        };
        if let (Some(key), true, 200) = (defer, is_cbor, status) {
            let (answer, range) =
                read_cbor_map_deferring(&bytes, key).map_err(|e| not_read(e.to_string()))?;
            return Ok((answer, range.map(|range| Unread { bytes, range })));
        }
        let answer = match is_cbor {
            true => read_cbor(&bytes).map_err(|e| not_read(e.to_string()))?,
            false => std::str::from_utf8(&bytes)
                .map_err(|e| not_read(e.to_string()))
                .and_then(|text| read_one(text).map_err(|e| not_read(e.to_string())))?,
        };
        match status {
            200 => Ok((answer, None)),
            _ => Err(ClientError::from_answer(status, answer)),
        }
    }
}

/// A value of an answer not read yet: the answer's bytes (CBOR) and where the value lies in
/// them, checked to be one whole item ([`read_cbor_map_deferring`]).
#[derive(Debug, Clone)]
pub(crate) struct Unread {
    bytes: Vec<u8>,
    range: std::ops::Range<usize>,
}

impl Unread {
    /// The value, read now.
    pub(crate) fn read(&self) -> Result<Edn, String> {
        read_cbor(&self.bytes[self.range.clone()]).map_err(|e| e.to_string())
    }
}

/// The media type of the bodies [`Http::post`] sends and reads.
const CBOR: &str = "application/cbor";

/// `value` as CBOR.
fn cbor_of(value: &Edn) -> Vec<u8> {
    let mut out = Vec::new();
    write_cbor(value, &mut out);
    out
}

/// The agent's settings but TLS. Each phase of a request has its own bound (connecting,
/// sending, the answer's head, its body: [`PHASE_TIMEOUT`] each) rather than one deadline for
/// the whole call: ureq's whole-call deadline (`timeout_global`, `timeout_per_call`) cost
/// ~45 us a request here (a q answered in 115 us took 160), more than the server's own work
/// on a small query.
fn agent_config() -> ureq::config::ConfigBuilder<ureq::typestate::AgentScope> {
    let phase = Some(PHASE_TIMEOUT);
    ureq::Agent::config_builder()
        // Error answers carry the error's category: read them, not ureq's status error.
        .http_status_as_error(false)
        .timeout_connect(Some(CONNECT_TIMEOUT))
        .timeout_send_request(phase)
        .timeout_send_body(phase)
        .timeout_recv_response(phase)
        .timeout_recv_body(phase)
}

/// The longest a connection may take to open.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(30);
/// The longest each later phase of a request may take (the answer's head waits for the
/// server's work: its query timeout is 30 s unless raised).
const PHASE_TIMEOUT: Duration = Duration::from_secs(300);

/// How a request that got no answer failed.
enum Sent {
    /// The connection broke (reset, or closed before the answer's head): a read may be sent
    /// again.
    Lost(ClientError),
    /// Anything else: a timeout, TLS, a refused connection, an answer that does not read.
    Failed(ClientError),
}

impl Sent {
    fn into_error(self) -> ClientError {
        match self {
            Sent::Lost(e) | Sent::Failed(e) => e,
        }
    }
}

impl Http {
    /// [`Self::failed`], told apart by whether the connection broke under the request.
    fn sent(&self, path: &str, e: ureq::Error) -> Sent {
        use std::io::ErrorKind::{BrokenPipe, ConnectionAborted, ConnectionReset, UnexpectedEof};
        let lost = matches!(&e, ureq::Error::Io(io)
            if matches!(io.kind(), ConnectionReset | ConnectionAborted | BrokenPipe | UnexpectedEof));
        let e = self.failed(path, e);
        match lost {
            true => Sent::Lost(e),
            false => Sent::Failed(e),
        }
    }

    /// A request that got no answer, saying why in the terms of the fix when the cause is
    /// TLS.
    fn failed(&self, path: &str, e: ureq::Error) -> ClientError {
        let url = format!("{}{path}", self.base);
        // ureq passes rustls's error itself, or inside the I/O error of the handshake.
        let tls = match &e {
            ureq::Error::Rustls(why) => Some(why.clone()),
            ureq::Error::Io(io) => io
                .get_ref()
                .and_then(|inner| inner.downcast_ref::<rustls::Error>())
                .cloned(),
            _ => None,
        };
        match tls {
            Some(why @ rustls::Error::InvalidCertificate(_)) => ClientError::tls(format!(
                "{url}: the server's certificate is not trusted ({why}): give the \
                 certificate that signed it (ClientBuilder::cacert_file; datalith --cacert \
                 FILE)"
            )),
            Some(why) => ClientError::tls(format!(
                "{url}: the TLS handshake failed ({why}): does the server speak TLS on this \
                 port? (http:// for one that does not)"
            )),
            None => ClientError::transport(format!("{url}: {e}")),
        }
    }
}

/// Whether `k` is the keyword written `key` (`:name` or `:ns/name`), compared as text
/// rather than by making the keyword.
fn is_key(k: &Edn, key: &str) -> bool {
    let Edn::Keyword(k) = k else {
        return false;
    };
    let text = key.strip_prefix(':').unwrap_or(key);
    match k.namespace() {
        None => k.name() == text,
        Some(ns) => text
            .strip_prefix(ns)
            .and_then(|rest| rest.strip_prefix('/'))
            .is_some_and(|name| name == k.name()),
    }
}

/// The value under `key` in the map `m`, moved out of it (a large result is not copied).
pub(crate) fn take_field(m: Edn, key: &str) -> Option<Edn> {
    let [v] = take_fields(m, [key]);
    v
}

/// The values under `keys` in the map `m`, each moved out of it (`None` where absent).
pub(crate) fn take_fields<const N: usize>(m: Edn, keys: [&str; N]) -> [Option<Edn>; N] {
    let mut out = [const { None }; N];
    if let Edn::Map(pairs) = m {
        for (k, v) in pairs {
            if let Some(i) = keys.iter().position(|key| is_key(&k, key)) {
                out[i] = Some(v);
            }
        }
    }
    out
}

/// The value under `key` in the map `m`.
pub(crate) fn field(m: &Edn, key: &str) -> Option<Edn> {
    match m {
        Edn::Map(pairs) => pairs
            .iter()
            .find(|(k, _)| is_key(k, key))
            .map(|(_, v)| v.clone()),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::{Read, Write};
    use std::net::{TcpListener, TcpStream};

    /// Reads one request (its head and a `Content-Length` body) from `stream`.
    fn read_request(stream: &mut TcpStream) {
        let mut got = Vec::new();
        let mut buf = [0u8; 4096];
        loop {
            let n = stream.read(&mut buf).unwrap();
            assert!(n > 0, "the client closed");
            got.extend_from_slice(&buf[..n]);
            let text = String::from_utf8_lossy(&got);
            if let Some(head) = text.find("\r\n\r\n") {
                let length = text[..head]
                    .lines()
                    .find_map(|l| {
                        l.to_ascii_lowercase()
                            .strip_prefix("content-length:")
                            .map(|v| v.trim().parse::<usize>().unwrap())
                    })
                    .unwrap_or(0);
                if got.len() >= head + 4 + length {
                    return;
                }
            }
        }
    }

    /// A server whose first connection reads a request and closes without an answer, and
    /// whose next ones answer `{:result 1}`; answers how many requests it read in all.
    fn closing_once() -> (String, std::thread::JoinHandle<usize>) {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let base = format!("http://{}", listener.local_addr().unwrap());
        listener.set_nonblocking(true).unwrap();
        let server = std::thread::spawn(move || {
            let mut requests = 0;
            let start = std::time::Instant::now();
            while start.elapsed() < Duration::from_secs(1) {
                let Ok((mut stream, _)) = listener.accept() else {
                    std::thread::sleep(Duration::from_millis(10));
                    continue;
                };
                stream.set_nonblocking(false).unwrap();
                read_request(&mut stream);
                requests += 1;
                if requests == 1 {
                    // Gone as the request arrived: no answer.
                    continue;
                }
                let body = "{:result 1}";
                let answer = format!(
                    "HTTP/1.1 200 OK\r\nContent-Type: application/edn\r\nContent-Length: {}\r\n\r\n{body}",
                    body.len()
                );
                stream.write_all(answer.as_bytes()).unwrap();
            }
            requests
        });
        (base, server)
    }

    #[test]
    fn a_read_is_sent_again_when_its_connection_broke_and_a_write_is_not() {
        let body = Edn::Map(vec![(
            Edn::kw(":query"),
            Edn::String("[:find ?x . :in ?x]".into()),
        )]);
        // A read: sent again on a new connection, answered.
        let (base, server) = closing_once();
        let http = Http::new(&base, None, None, None);
        let answer = http
            .post("/db/x/q", &body)
            .expect("answered the second time");
        assert_eq!(field(&answer, ":result"), Some(Edn::Long(1)));
        assert_eq!(server.join().unwrap(), 2);
        // A write: the broken connection is the caller's error; nothing is sent again.
        let (base, server) = closing_once();
        let http = Http::new(&base, None, None, None);
        let e = http.post_write("/db/x/transact", &body).unwrap_err();
        assert!(e.to_string().contains("/db/x/transact"), "{e}");
        assert_eq!(server.join().unwrap(), 1);
    }

    #[test]
    fn every_phase_is_bounded_without_a_whole_call_deadline() {
        let config = agent_config().build();
        let t = config.timeouts();
        assert_eq!((t.global, t.per_call), (None, None));
        assert_eq!(t.connect, Some(CONNECT_TIMEOUT));
        for phase in [t.send_request, t.send_body, t.recv_response, t.recv_body] {
            assert_eq!(phase, Some(PHASE_TIMEOUT));
        }
    }
}
