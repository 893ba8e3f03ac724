//! Starting and stopping: check the address, read the tokens, open the databases, listen,
//! reload the certificate and the tokens on SIGHUP (`reload`), and on SIGTERM or Ctrl-C stop
//! accepting connections, let the running requests finish, then close the databases (each
//! applies and checkpoints what its log holds, so the next open has nothing to replay).

use std::io::Write;
use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use tokio::sync::Semaphore;

use crate::accept::{self, ConnectionLimits};
use crate::args::ServeArgs;
use crate::auth::Tokens;
use crate::error::{Result, ServerError};
use crate::http::{self, AppState};
use crate::listen;
use crate::ops::QueryLimits;
use crate::reload::{Sources, Swap, TlsFiles, TokenFile};
use crate::served::{self, Served};

/// How long requests still running after the listener closed (their clients gone, their
/// work on blocking threads) may take before the process exits without waiting for them.
const SHUTDOWN_GRACE: Duration = Duration::from_secs(30);

/// A line on standard error for the operator; never fails (a closed stderr must not take a
/// request or the shutdown down with it).
pub fn log(line: &str) {
    let _ = writeln!(std::io::stderr().lock(), "datalith serve: {line}");
}

/// Runs the server until SIGTERM or Ctrl-C. Prints `datalith serve: listening on
/// http://ADDR ...` (`https://` with TLS) on standard output once it accepts connections.
pub fn serve(args: ServeArgs) -> Result<()> {
    if args.max_concurrent == 0
        || args.max_connections == 0
        || args.max_leases == 0
        || args.send_timeout_ms == 0
    {
        return Err(ServerError::invalid(
            "--max-concurrent, --max-connections, --max-leases and --send-timeout-ms must be \
             at least 1 (--max-lease-ms 0 turns leases off)",
        ));
    }
    let connections = ConnectionLimits {
        max_connections: args.max_connections,
        header_timeout: Duration::from_millis(args.header_timeout_ms),
        send_timeout: Duration::from_millis(args.send_timeout_ms),
        per_address: args.max_connections_per_address,
    };
    raise_open_files_limit(args.max_connections);
    let addrs = listen::addresses(&args.listen)?;
    let tls = match (&args.tls_cert, &args.tls_key) {
        (Some(cert), Some(key)) => Some(crate::tls::acceptor(
            cert,
            key,
            args.tls_client_ca.as_deref(),
            args.tls_client_crl.as_deref(),
        )?),
        _ => None,
    };
    listen::check(&addrs, args.insecure, args.tokens.is_some(), tls.is_some())?;
    let mut named: Vec<(String, PathBuf, bool)> = served::names(&args.dirs)?
        .into_iter()
        .map(|(n, p)| (n, p, false))
        .collect();
    if let Some(dir) = &args.create_in {
        for (name, path) in served::found_in(dir)? {
            if let Some((_, other, _)) = named.iter().find(|(n, _, _)| *n == name) {
                return Err(ServerError::invalid(format!(
                    "{} (in --create-in) and {} would both be served as {name:?}",
                    path.display(),
                    other.display()
                )));
            }
            named.push((name, path, true));
        }
    }
    let names: Vec<String> = named.iter().map(|(n, _, _)| n.clone()).collect();
    let tokens = match &args.tokens {
        Some(path) => Some(Arc::new(Swap::new(Tokens::load(
            path,
            &names,
            args.create_in.is_some(),
        )?))),
        None => None,
    };
    // What a SIGHUP reads again: the same files, checked the same way.
    let reloads = Sources {
        tls: match (&tls, &args.tls_cert, &args.tls_key) {
            (Some(tls), Some(cert), Some(key)) => Some(TlsFiles {
                cert: cert.clone(),
                key: key.clone(),
                client_ca: args.tls_client_ca.clone(),
                client_crl: args.tls_client_crl.clone(),
                tls: tls.clone(),
            }),
            _ => None,
        },
        tokens: match (&tokens, &args.tokens) {
            (Some(tokens), Some(path)) => Some(TokenFile {
                path: path.clone(),
                names: names.clone(),
                any_name: args.create_in.is_some(),
                tokens: tokens.clone(),
            }),
            _ => None,
        },
    };
    let auth = match &args.tokens {
        Some(path) => format!("bearer tokens from {}", path.display()),
        None => "no tokens: every request allowed, loopback only".to_string(),
    };
    let log_url = match &args.log {
        None => None,
        Some(text) => {
            let url = crate::replica::LogUrl::parse(text)?;
            if named.len() != 1 || args.create_in.is_some() {
                return Err(ServerError::invalid(
                    "--log serves exactly one database (one DIR, no --create-in): each \
                     replicated database has its own topic",
                ));
            }
            Some(url)
        }
    };
    ignore_sigpipe();
    let mut builder = tokio::runtime::Builder::new_multi_thread();
    if let Some(n) = args.workers {
        builder.worker_threads(usize::from(n));
    }
    let runtime = builder.enable_all().thread_name("datalith-serve").build()?;
    let mut base = datalith::DbOptions::default();
    base.query_memory_limit = args.query_memory_limit;
    base.value_index = args.value_index.into();
    let served = Served::open(
        &named,
        args.create_in.clone(),
        base,
        Duration::from_millis(args.max_lease_ms),
        args.max_leases,
        args.page_cache_bytes,
        log_url.map(|url| (url, runtime.handle().clone())),
    )?;
    let state = Arc::new(AppState {
        served,
        tokens,
        limits: QueryLimits {
            timeout_ms: args.query_timeout_ms,
            memory_limit: args.query_memory_limit,
            threads: args.query_threads.map(usize::from),
        },
        gate: Arc::new(Semaphore::new(args.max_concurrent)),
        places: args.max_concurrent,
        queue_timeout: Duration::from_millis(args.queue_timeout_ms),
        max_body: args.max_body_bytes,
        body_timeout: Duration::from_millis(args.body_timeout_ms),
        metrics: Arc::default(),
        log_requests: args.log_requests,
        token_rate: (args.token_rate > 0).then(|| crate::rate::Rate::per_token(args.token_rate)),
        address_rate: (args.address_rate > 0)
            .then(|| crate::rate::Rate::per_address(args.address_rate)),
        trusted_proxies: args.trusted_proxies.clone(),
        pace: Default::default(),
    });
    let outcome = runtime.block_on(listen_until_signal(
        state.clone(),
        reloads,
        addrs,
        connections,
        tls,
        &names,
        &auth,
    ));
    // The appliers read the log through the runtime: stop them while it still runs.
    state.served.stop_replicas();
    runtime.shutdown_timeout(SHUTDOWN_GRACE);
    match Arc::try_unwrap(state) {
        Ok(state) => {
            // The last handles: each database closes here.
            drop(state);
            log("stopped; databases closed");
        }
        Err(_) => log(
            "stopped with requests still running; databases left to the operating system \
             (the next open replays their logs)",
        ),
    }
    outcome
}

async fn listen_until_signal(
    state: Arc<AppState>,
    reloads: Sources,
    addrs: Vec<SocketAddr>,
    connections: ConnectionLimits,
    tls: Option<crate::tls::Tls>,
    names: &[String],
    auth: &str,
) -> Result<()> {
    let listener = bind(&addrs).map_err(|e| {
        let e = ServerError::from(e);
        ServerError {
            message: format!("cannot listen on {addrs:?}: {}", e.message),
            ..e
        }
    })?;
    let local = listener.local_addr()?;
    crate::reload::on_hangup(reloads, state.metrics.clone());
    {
        // The first line tells scripts and tests where to connect: only now are
        // connections accepted.
        let mut out = std::io::stdout().lock();
        let _ = writeln!(
            out,
            "datalith serve: listening on {}://{local} (databases: {}; {auth})",
            if tls.is_some() { "https" } else { "http" },
            names.join(", ")
        );
        let _ = out.flush();
    }
    // Ended leases let their values go within a second, also when no request comes.
    let weak = Arc::downgrade(&state);
    tokio::spawn(async move {
        let mut tick = tokio::time::interval(Duration::from_secs(1));
        loop {
            tick.tick().await;
            match weak.upgrade() {
                Some(state) => state.served.sweep_leases(),
                None => break,
            }
        }
    });
    let metrics = state.metrics.clone();
    accept::serve(
        listener,
        http::router(state),
        connections,
        tls,
        metrics,
        shutdown_signal(),
    )
    .await;
    Ok(())
}

/// Connections the kernel holds before the server accepts them. A burst of clients
/// connecting at once, and connections waiting past `--max-connections`, wait there; past it
/// their SYNs are dropped and the clients wait a second or more to try again. tokio's default
/// is 128; the kernel caps this at `net.core.somaxconn`.
const LISTEN_BACKLOG: u32 = 4096;

/// A listener on the first of `addrs` that binds.
fn bind(addrs: &[SocketAddr]) -> std::io::Result<tokio::net::TcpListener> {
    let mut failed = None;
    for addr in addrs {
        let socket = match addr {
            SocketAddr::V4(_) => tokio::net::TcpSocket::new_v4()?,
            SocketAddr::V6(_) => tokio::net::TcpSocket::new_v6()?,
        };
        // A restarted server binds at once, without waiting out the old connections.
        socket.set_reuseaddr(true)?;
        match socket
            .bind(*addr)
            .and_then(|()| socket.listen(LISTEN_BACKLOG))
        {
            Ok(listener) => return Ok(listener),
            Err(e) => failed = Some(e),
        }
    }
    Err(failed.unwrap_or_else(|| std::io::Error::other("no address to listen on")))
}

/// SIGTERM (service managers) or SIGINT (Ctrl-C).
async fn shutdown_signal() {
    use tokio::signal::unix::{signal, SignalKind};
    let term = async {
        match signal(SignalKind::terminate()) {
            Ok(mut s) => {
                s.recv().await;
            }
            Err(_) => std::future::pending::<()>().await,
        }
    };
    tokio::select! {
        _ = tokio::signal::ctrl_c() => {}
        _ = term => {}
    }
    log("stopping: no new connections; finishing the running requests");
}

/// The `datalith` command restores SIGPIPE's default action (a filter ends quietly on a
/// closed pipe); a server must not die because a client closed its connection mid-answer.
fn ignore_sigpipe() {
    // SAFETY: setting a signal's disposition, before the runtime's threads start.
    unsafe {
        libc::signal(libc::SIGPIPE, libc::SIG_IGN);
    }
}

/// Raises the soft limit on open files to the hard one: each connection is a file, and the
/// usual soft limit (1024) would fail accepts well before `--max-connections`. Says so when
/// even the hard limit is below what the connections and the databases need.
fn raise_open_files_limit(max_connections: usize) {
    let mut limit = libc::rlimit {
        rlim_cur: 0,
        rlim_max: 0,
    };
    // SAFETY: getrlimit and setrlimit on this process, with a valid struct.
    let ok = unsafe {
        libc::getrlimit(libc::RLIMIT_NOFILE, &mut limit) == 0 && {
            limit.rlim_cur = limit.rlim_max;
            libc::setrlimit(libc::RLIMIT_NOFILE, &limit) == 0
        }
    };
    // The databases, the log and the runtime need some files besides the connections.
    let needed = max_connections.saturating_add(64) as libc::rlim_t;
    if ok && limit.rlim_cur < needed {
        log(&format!(
            "open files are limited to {} (ulimit -n): fewer than --max-connections {} needs; \
             accepts will fail past it",
            limit.rlim_cur, max_connections
        ));
    }
}
