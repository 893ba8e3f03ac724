//! The certificate chain and private key, from PEM files, as a rustls server configuration
//! that offers HTTP/2 and HTTP/1.1 by ALPN. Every failure names the file and what was wrong
//! with it, at start, before anything listens.

use std::path::Path;
use std::sync::Arc;

use datalith::edn::Edn;
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, CertificateRevocationListDer, PrivateKeyDer};
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
/// `client_ca`, every client presents a certificate that chains to one in that file (PEM),
/// and with `client_crl` too, one that none of the revocation lists in that file (PEM)
/// revokes.
pub fn acceptor(
    cert: &Path,
    key: &Path,
    client_ca: Option<&Path>,
    client_crl: Option<&Path>,
) -> Result<Tls> {
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
            let mut verifier =
                WebPkiClientVerifier::builder_with_provider(Arc::new(roots), provider);
            if let Some(crl) = client_crl {
                // The client's own certificate is checked (its chain's CAs are the ones the
                // server was told to trust), and a certificate whose issuer has no list in
                // the file is refused: its status is unknown, and a list is asked for
                // precisely so that none gets in unchecked.
                verifier = verifier
                    .with_crls(revocation_lists(crl)?)
                    .only_check_end_entity_revocation();
            }
            let verifier = verifier.build().map_err(|e| {
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

fn revocation_lists(path: &Path) -> Result<Vec<CertificateRevocationListDer<'static>>> {
    let pem = read(path, "--tls-client-crl")?;
    let lists = CertificateRevocationListDer::pem_slice_iter(&pem)
        .collect::<std::result::Result<Vec<_>, _>>()
        .map_err(|e| bad_file(path, &format!("not PEM ({e})")))?;
    if lists.is_empty() {
        return Err(bad_file(
            path,
            "no revocation list in it (a PEM file with -----BEGIN X509 CRL-----)",
        ));
    }
    Ok(lists)
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
        // A CA of its own, and a revocation list it signs (revoking nothing).
        let ca_key = rcgen::KeyPair::generate().unwrap();
        let mut ca = rcgen::CertificateParams::new(Vec::<String>::new()).unwrap();
        ca.is_ca = rcgen::IsCa::Ca(rcgen::BasicConstraints::Unconstrained);
        ca.key_usages = vec![
            rcgen::KeyUsagePurpose::KeyCertSign,
            rcgen::KeyUsagePurpose::CrlSign,
        ];
        let ca_cert = ca.self_signed(&ca_key).unwrap();
        let crl = rcgen::CertificateRevocationListParams {
            this_update: rcgen::date_time_ymd(2026, 1, 1),
            next_update: rcgen::date_time_ymd(2036, 1, 1),
            crl_number: rcgen::SerialNumber::from(1u64),
            issuing_distribution_point: None,
            revoked_certs: Vec::new(),
            key_identifier_method: rcgen::KeyIdMethod::Sha256,
        }
        .signed_by(&rcgen::Issuer::new(ca, &ca_key))
        .unwrap();
        let files = [
            ("ca.pem", ca_cert.pem()),
            ("crl.pem", crl.pem().unwrap()),
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
            ("cert.pem", "key.pem", Some("ca.pem"), None),
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
        let in_dir = |name: &str| dir.path().join(name);
        for (cert, key, ca, want) in cases {
            let ca = ca.map(in_dir);
            let got = acceptor(&in_dir(cert), &in_dir(key), ca.as_deref(), None);
            match (got, want) {
                (Ok(_), None) => {}
                (Err(e), Some(words)) => {
                    assert!(e.message.contains(words), "{cert} {key}: {}", e.message)
                }
                (Ok(_), Some(words)) => panic!("{cert} {key}: accepted, wanted {words}"),
                (Err(e), None) => panic!("{cert} {key}: {}", e.message),
            }
        }
        // Revocation lists (`--tls-client-crl`), with the CA's certificate as the client CA.
        let crls: &[(&str, Option<&str>)] = &[
            // the list's file, the error's words (None: accepted)
            ("crl.pem", None),
            ("empty.pem", Some("no revocation list")),
            ("cert.pem", Some("no revocation list")),
            ("missing.pem", Some("--tls-client-crl")),
        ];
        for (crl, want) in crls {
            let got = acceptor(
                &in_dir("cert.pem"),
                &in_dir("key.pem"),
                Some(&in_dir("ca.pem")),
                Some(&in_dir(crl)),
            );
            match (got, want) {
                (Ok(_), None) => {}
                (Err(e), Some(words)) => assert!(e.message.contains(words), "{crl}: {}", e.message),
                (Ok(_), Some(words)) => panic!("{crl}: accepted, wanted {words}"),
                (Err(e), None) => panic!("{crl}: {}", e.message),
            }
        }
    }
}
