//! One request to the server: an EDN body out, an EDN answer back, errors as
//! [`ClientError`]. Over `https://` the server's certificate is checked against the roots
//! given ([`crate::ClientBuilder::cacert_pem`]) or, when none are, the public web's roots.

use std::sync::Arc;
use std::time::Duration;

use ureq::tls::{Certificate, RootCerts, TlsConfig};

use datalith::edn::{read_one, to_edn_string, Edn};

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
    ) -> Http {
        let mut tls = TlsConfig::builder();
        if let Some(roots) = roots {
            tls = tls.root_certs(RootCerts::Specific(Arc::new(roots)));
        }
        let agent = agent_config().tls_config(tls.build()).build().into();
        Http {
            base: base.trim_end_matches('/').to_string(),
            token,
            agent,
        }
    }

    /// `POST path` with `body` (a map of fields), answered with a map.
    pub(crate) fn post(&self, path: &str, body: &Edn) -> Result<Edn, ClientError> {
        let mut request = self
            .agent
            .post(format!("{}{path}", self.base))
            .header("Content-Type", "application/edn")
            .header("Accept", "application/edn");
        if let Some(token) = &self.token {
            request = request.header("Authorization", format!("Bearer {token}"));
        }
        let response = request
            .send(to_edn_string(body))
            .map_err(|e| self.failed(path, e))?;
        self.read_answer(path, response)
    }

    /// `GET path`, answered with a map.
    pub(crate) fn get(&self, path: &str) -> Result<Edn, ClientError> {
        let mut request = self
            .agent
            .get(format!("{}{path}", self.base))
            .header("Accept", "application/edn");
        if let Some(token) = &self.token {
            request = request.header("Authorization", format!("Bearer {token}"));
        }
        let response = request.call().map_err(|e| self.failed(path, e))?;
        self.read_answer(path, response)
    }

    /// The answer's EDN, or the error it carries.
    fn read_answer(
        &self,
        path: &str,
        mut response: ureq::http::Response<ureq::Body>,
    ) -> Result<Edn, ClientError> {
        let status = response.status().as_u16();
        let text = response
            .body_mut()
            .read_to_string()
            .map_err(|e| ClientError::transport(format!("{}{path}: {e}", self.base)))?;
        let answer = read_one(&text).map_err(|e| {
            ClientError::transport(format!(
                "{}{path}: an answer that is not EDN ({e})",
                self.base
            ))
        })?;
        match status {
            200 => Ok(answer),
            _ => Err(ClientError::from_answer(status, answer)),
        }
    }
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

impl Http {
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
