//! The certificate chain and private key, from PEM files, as a rustls server configuration
//! that offers HTTP/2 and HTTP/1.1 by ALPN. Every failure names the file and what was wrong
//! with it, at start, before anything listens.

use std::path::Path;
use std::sync::Arc;

use datalith::edn::Edn;
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, PrivateKeyDer};
use rustls::server::WebPkiClientVerifier;
use rustls::ServerConfig;
use tokio_rustls::TlsAcceptor;

use crate::error::{Result, ServerError};
use crate::reload::Swap;

/// What the server accepts TLS connections with: shared by every connection, replaced
/// whole by a reload (`reload`).
#[derive(Clone)]
pub struct Tls {
    acceptor: Arc<Swap<TlsAcceptor>>,
}

impl Tls {
    /// The handshake a new connection makes.
    pub fn acceptor(&self) -> Arc<TlsAcceptor> {
        self.acceptor.get()
    }

    /// New connections make `fresh`'s handshake from now on.
    pub fn replace(&self, fresh: Tls) {
        self.acceptor.set((*fresh.acceptor()).clone());
    }
}

/// The acceptor for the certificate chain in `cert` and the key in `key` (PEM); with
/// `client_ca`, every client presents a certificate that chains to one in that file (PEM).
pub fn acceptor(cert: &Path, key: &Path, client_ca: Option<&Path>) -> Result<Tls> {
    let chain = certificates(cert, "--tls-cert")?;
    let key = private_key(key)?;
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let builder = ServerConfig::builder_with_provider(provider.clone())
        .with_safe_default_protocol_versions()
        .map_err(|e| ServerError::invalid(format!("TLS: {e}")))?;
    let builder = match client_ca {
        None => builder.with_no_client_auth(),
        Some(path) => {
            let mut roots = rustls::RootCertStore::empty();
            for c in certificates(path, "--tls-client-ca")? {
                roots
                    .add(c)
                    .map_err(|e| bad_file(path, &format!("not a certificate to trust ({e})")))?;
            }
            let verifier = WebPkiClientVerifier::builder_with_provider(Arc::new(roots), provider)
                .build()
                .map_err(|e| {
                    bad_file(
                        path,
                        &format!("no client certificate can chain to it ({e})"),
                    )
                })?;
            builder.with_client_cert_verifier(verifier)
        }
    };
    let mut config = builder.with_single_cert(chain, key).map_err(|e| {
        bad_file(
            cert,
            &format!("its certificate and the key do not go together ({e})"),
        )
    })?;
    // HTTP/2 first: a client that speaks both gets multiplexing.
    config.alpn_protocols = vec![b"h2".to_vec(), b"http/1.1".to_vec()];
    Ok(Tls {
        acceptor: Arc::new(Swap::new(TlsAcceptor::from(Arc::new(config)))),
    })
}

fn certificates(path: &Path, option: &str) -> Result<Vec<CertificateDer<'static>>> {
    let pem = read(path, option)?;
    let chain = CertificateDer::pem_slice_iter(&pem)
        .collect::<std::result::Result<Vec<_>, _>>()
        .map_err(|e| bad_file(path, &format!("not PEM ({e})")))?;
    if chain.is_empty() {
        return Err(bad_file(
            path,
            "no certificate in it (a PEM file with -----BEGIN CERTIFICATE-----; \
             `datalith cert` makes one to try)",
        ));
    }
    Ok(chain)
}

fn private_key(path: &Path) -> Result<PrivateKeyDer<'static>> {
    let pem = read(path, "--tls-key")?;
    PrivateKeyDer::from_pem_slice(&pem).map_err(|e| {
        bad_file(
            path,
            &format!(
                "no private key in it ({e}; a PEM file with -----BEGIN PRIVATE KEY-----, \
                 RSA or EC)"
            ),
        )
    })
}

fn read(path: &Path, option: &str) -> Result<Vec<u8>> {
    std::fs::read(path).map_err(|e| {
        let e = ServerError::from(e);
        ServerError {
            message: format!("{option} {}: {}", path.display(), e.message),
            ..e
        }
        .with("path", Edn::String(path.display().to_string()))
    })
}

fn bad_file(path: &Path, why: &str) -> ServerError {
    ServerError::invalid(format!("{}: {why}", path.display()))
        .with("path", Edn::String(path.display().to_string()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn files_that_are_not_a_certificate_and_key_are_refused_by_name() {
        let dir = tempfile::tempdir().unwrap();
        let pair = rcgen::generate_simple_self_signed(vec!["localhost".to_string()]).unwrap();
        let other = rcgen::generate_simple_self_signed(vec!["localhost".to_string()]).unwrap();
        let files = [
            ("cert.pem", pair.cert.pem()),
            ("key.pem", pair.signing_key.serialize_pem()),
            ("other-key.pem", other.signing_key.serialize_pem()),
            ("empty.pem", String::new()),
            (
                "garbage.pem",
                "-----BEGIN CERTIFICATE-----\nnot base64!\n".into(),
            ),
        ];
        for (name, text) in &files {
            std::fs::write(dir.path().join(name), text).unwrap();
        }
        let cases: &[(&str, &str, Option<&str>, Option<&str>)] = &[
            // cert, key, client CA, the error's words (None: accepted)
            ("cert.pem", "key.pem", None, None),
            (
                "cert.pem",
                "other-key.pem",
                None,
                Some("do not go together"),
            ),
            ("empty.pem", "key.pem", None, Some("no certificate")),
            ("garbage.pem", "key.pem", None, Some("not PEM")),
            ("cert.pem", "cert.pem", None, Some("no private key")),
            ("missing.pem", "key.pem", None, Some("--tls-cert")),
            ("cert.pem", "missing.pem", None, Some("--tls-key")),
            ("cert.pem", "key.pem", Some("cert.pem"), None),
            (
                "cert.pem",
                "key.pem",
                Some("empty.pem"),
                Some("no certificate"),
            ),
            ("cert.pem", "key.pem", Some("garbage.pem"), Some("not PEM")),
            (
                "cert.pem",
                "key.pem",
                Some("missing.pem"),
                Some("--tls-client-ca"),
            ),
        ];
        for (cert, key, ca, want) in cases {
            let ca = ca.map(|c| dir.path().join(c));
            let got = acceptor(&dir.path().join(cert), &dir.path().join(key), ca.as_deref());
            match (got, want) {
                (Ok(_), None) => {}
                (Err(e), Some(words)) => {
                    assert!(e.message.contains(words), "{cert} {key}: {}", e.message)
                }
                (Ok(_), Some(words)) => panic!("{cert} {key}: accepted, wanted {words}"),
                (Err(e), None) => panic!("{cert} {key}: {}", e.message),
            }
        }
    }
}
