//! Accepting connections, which `axum::serve` does without limits: here at most
//! `--max-connections` are open at once (past them, the connection idle the longest is asked
//! to close, `open_connections`; when every one runs a request, new ones wait in the
//! kernel's backlog until one ends, so 10,000 idle connections cost no more than the limit), at most
//! `--max-connections-per-address` from one address (past them, closed at once: `address_slots`), a client must
//! send a request's headers within `--header-timeout-ms` (a client sending a byte a second
//! is cut off), and on the stop signal the listener closes, idle connections close, and
//! each connection finishes the request it is serving before it closes. A write that waits
//! `--send-timeout-ms` for a client that takes nothing ends its connection (`send_timeout`).
//! With TLS, the
//! handshake must also end within the header timeout, and plain HTTP gets a 400 (`tls`).

use std::future::Future;
use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::Duration;

use axum::Router;
use hyper_util::rt::{TokioExecutor, TokioIo, TokioTimer};
use hyper_util::server::conn::auto::Builder;
use hyper_util::server::graceful::GracefulConnection;
use hyper_util::service::TowerToHyperService;
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::{watch, Semaphore};

use crate::address_slots::AddressSlots;
use crate::metrics::Metrics;
use crate::open_connections::Activity;
use crate::send_timeout::SendTimeout;
use crate::tls::{self, Tls};

/// How connections are bounded.
#[derive(Debug, Clone, Copy)]
pub struct ConnectionLimits {
    /// Connections open at once.
    pub max_connections: usize,
    /// How long a client may take to send a request's headers (HTTP/1), and to finish a TLS
    /// handshake.
    pub header_timeout: Duration,
    /// Connections one client address may hold (0: no limit).
    pub per_address: usize,
    /// How long a write may wait for the client (`send_timeout`).
    pub send_timeout: Duration,
}

/// Serves `router` on `listener` until `stop` completes, then waits for the open
/// connections to finish their requests.
pub async fn serve(
    listener: TcpListener,
    router: Router,
    limits: ConnectionLimits,
    tls: Option<Tls>,
    metrics: Arc<Metrics>,
    stop: impl Future<Output = ()>,
) {
    let mut builder = Builder::new(TokioExecutor::new());
    builder
        .http1()
        .timer(TokioTimer::new())
        .header_read_timeout(limits.header_timeout);
    builder.http2().timer(TokioTimer::new());
    // Set once: every connection then closes through hyper's graceful shutdown.
    let (stopping, _) = watch::channel(false);
    let places = Arc::new(Semaphore::new(limits.max_connections));
    let per_address = AddressSlots::new(limits.per_address);
    let open = metrics.open_connections.clone();
    tokio::pin!(stop);
    loop {
        let (stream, peer) = tokio::select! {
            accepted = listener.accept() => match accepted {
                Ok(accepted) => accepted,
                Err(e) => {
                    // Out of file descriptors, say: wait a little rather than spin.
                    crate::run::log(&format!("accept: {e}"));
                    tokio::time::sleep(Duration::from_millis(50)).await;
                    continue;
                }
            },
            () = &mut stop => break,
        };
        // An address past its connections: closed now, its place back for others.
        let Some(slot) = per_address.take(peer.ip()) else {
            drop(stream);
            continue;
        };
        // Every place taken: the idlest connection makes room, else this one waits (and,
        // behind it, the others in the kernel's listen queue) until a connection ends.
        let place = match places.clone().try_acquire_owned() {
            Ok(place) => place,
            Err(_) => {
                open.close_idlest();
                tokio::select! {
                    place = places.clone().acquire_owned() => match place {
                        Ok(place) => place,
                        Err(_) => break,
                    },
                    () = &mut stop => break,
                }
            }
        };
        // Small answers are written whole; Nagle's delay would only add latency.
        let _ = stream.set_nodelay(true);
        let (activity, registered) = open.open();
        // The client's address travels with each of its requests (`http::address`), the
        // connection's activity with each request to its tracker (`open_connections`).
        let service = TowerToHyperService::new(
            router
                .clone()
                .layer(axum::middleware::from_fn(crate::open_connections::track))
                .layer(axum::Extension(activity.clone()))
                .layer(axum::Extension(crate::http::address::ClientAddr(peer.ip()))),
        );
        let builder = builder.clone();
        let mut stopping = stopping.subscribe();
        let tls = tls.clone();
        let metrics = metrics.clone();
        let cut_off = metrics.send_timeouts.clone();
        metrics.connections.fetch_add(1, Ordering::Relaxed);
        tokio::spawn(async move {
            match tls {
                None => {
                    let stream = SendTimeout::new(stream, limits.send_timeout, cut_off);
                    let connection = builder.serve_connection(TokioIo::new(stream), service);
                    serve_until_closed(connection.into_owned(), &mut stopping, &activity).await;
                }
                Some(tls) => {
                    if let Some(stream) = handshake(stream, &tls, limits.header_timeout).await {
                        // Around TLS: a stalled client stalls the TLS stream's writes too.
                        let stream = SendTimeout::new(stream, limits.send_timeout, cut_off);
                        let connection = builder.serve_connection(TokioIo::new(stream), service);
                        serve_until_closed(connection.into_owned(), &mut stopping, &activity).await;
                    }
                }
            }
            metrics.connections.fetch_sub(1, Ordering::Relaxed);
            drop(registered);
            drop(slot);
            drop(place);
        });
    }
    drop(listener);
    let _ = stopping.send(true);
    // Every connection holds a place until it ends.
    let _ = places
        .acquire_many(u32::try_from(limits.max_connections).unwrap_or(u32::MAX))
        .await;
}

/// Serves `connection` until it ends by itself (a client that resets, or misses the header
/// timeout), or is asked to close: by the stop, or to make room (then it closes at once when
/// idle, after the request it is answering otherwise).
async fn serve_until_closed<C: GracefulConnection>(
    connection: C,
    stopping: &mut watch::Receiver<bool>,
    activity: &Activity,
) {
    let mut connection = std::pin::pin!(connection);
    tokio::select! {
        _ = connection.as_mut() => return,
        _ = stopping.wait_for(|s| *s) => {}
        () = activity.close.notified() => {}
    }
    connection.as_mut().graceful_shutdown();
    let _ = connection.await;
}

/// The TLS stream of a connection, once its handshake is done within `patience`; `None`
/// when the client spoke plain HTTP (answered with a 400), failed the handshake (a client
/// that does not trust the certificate closes here) or was too slow.
async fn handshake(
    stream: TcpStream,
    tls: &Tls,
    patience: Duration,
) -> Option<tokio_rustls::server::TlsStream<TcpStream>> {
    match tls::first_byte_is_tls(&stream, patience).await {
        Some(true) => {}
        Some(false) => {
            tls::refuse_plain_http(stream).await;
            return None;
        }
        None => return None,
    }
    match tokio::time::timeout(patience, tls.acceptor().accept(stream)).await {
        Ok(Ok(stream)) => Some(stream),
        _ => None,
    }
}
