//! Reloading on SIGHUP (`systemctl reload`): the TLS certificate, key and client CA and the
//! token file are read again, as at start. What reads cleanly replaces what new connections
//! (the certificate) and new requests (the tokens) use; connections already open keep the
//! handshake they made. What does not read cleanly is logged, and the server keeps what it
//! had: a renewal gone wrong never stops it or leaves it without a certificate.

use std::path::PathBuf;
use std::sync::atomic::Ordering;
use std::sync::{Arc, RwLock};

use crate::auth::Tokens;
use crate::error::Result;
use crate::metrics::Metrics;
use crate::run::log;
use crate::tls::Tls;

/// A value that readers take a handle to and a reload replaces whole.
pub struct Swap<T>(RwLock<Arc<T>>);

impl<T> Swap<T> {
    /// Holds `value`.
    pub fn new(value: T) -> Swap<T> {
        Swap(RwLock::new(Arc::new(value)))
    }

    /// The value now (a reload after this does not change it).
    pub fn get(&self) -> Arc<T> {
        self.0.read().unwrap_or_else(|p| p.into_inner()).clone()
    }

    /// Replaces the value for later readers.
    pub fn set(&self, value: T) {
        *self.0.write().unwrap_or_else(|p| p.into_inner()) = Arc::new(value);
    }
}

/// The certificate files a reload reads again.
pub struct TlsFiles {
    /// `--tls-cert`.
    pub cert: PathBuf,
    /// `--tls-key`.
    pub key: PathBuf,
    /// `--tls-client-ca`.
    pub client_ca: Option<PathBuf>,
    /// `--tls-client-crl`.
    pub client_crl: Option<PathBuf>,
    /// What the listener uses.
    pub tls: Tls,
}

/// The token file a reload reads again, with what it is checked against at start.
pub struct TokenFile {
    /// `--tokens`.
    pub path: PathBuf,
    /// The databases served at start.
    pub names: Vec<String>,
    /// Whether databases may be created (`--create-in`): then any valid name may be granted.
    pub any_name: bool,
    /// What requests are authenticated with.
    pub tokens: Arc<Swap<Tokens>>,
}

/// Everything a SIGHUP reloads.
pub struct Sources {
    /// With TLS.
    pub tls: Option<TlsFiles>,
    /// With tokens.
    pub tokens: Option<TokenFile>,
}

impl Sources {
    /// Reads every source again; each that reads cleanly replaces the one in use. Returns,
    /// per source, whether it was replaced and a line for the operator (what was reloaded, or
    /// why it was not).
    pub fn reload(&self) -> Vec<(bool, String)> {
        let mut lines = Vec::new();
        if let Some(f) = &self.tls {
            let fresh = crate::tls::acceptor(
                &f.cert,
                &f.key,
                f.client_ca.as_deref(),
                f.client_crl.as_deref(),
            );
            let what = format!("TLS certificate from {}", f.cert.display());
            lines.push(outcome(fresh.map(|t| f.tls.replace(t)), &what));
        }
        if let Some(f) = &self.tokens {
            let fresh = Tokens::load(&f.path, &f.names, f.any_name);
            let what = format!("tokens from {}", f.path.display());
            lines.push(outcome(fresh.map(|t| f.tokens.set(t)), &what));
        }
        lines
    }
}

/// `what`: the source, as in "the TLS certificate from FILE" without "the".
fn outcome(result: Result<()>, what: &str) -> (bool, String) {
    match result {
        Ok(()) => (true, format!("reloaded the {what}")),
        Err(e) => (
            false,
            format!("kept the previous {what}: the reload failed: {}", e.message),
        ),
    }
}

/// Takes SIGHUP over from its default (ending the process), to reload `sources` at each one
/// until the runtime stops. Called before the server says it listens, so that a SIGHUP
/// from then on reloads and never ends it.
pub fn on_hangup(sources: Sources, metrics: Arc<Metrics>) {
    use tokio::signal::unix::{signal, SignalKind};
    match signal(SignalKind::hangup()) {
        Ok(hangups) => {
            tokio::spawn(reload_at_each(hangups, sources, metrics));
        }
        Err(e) => log(&format!("no reloading on SIGHUP: {e}")),
    }
}

async fn reload_at_each(
    mut hangups: tokio::signal::unix::Signal,
    sources: Sources,
    metrics: Arc<Metrics>,
) {
    while hangups.recv().await.is_some() {
        let outcomes = sources.reload();
        if outcomes.is_empty() {
            log("SIGHUP: nothing to reload (no --tls-cert, no --tokens)");
        }
        // The files are small; reading them on a worker thread is shorter than a hand-off.
        for (replaced, line) in outcomes {
            let counter = match replaced {
                true => &metrics.reloads,
                false => &metrics.reload_failures,
            };
            counter.fetch_add(1, Ordering::Relaxed);
            log(&line);
        }
    }
}
