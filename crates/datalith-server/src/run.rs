//! Starting and stopping: check the address, read the tokens, open the databases, listen,
//! and on SIGTERM or Ctrl-C stop accepting connections, let the running requests finish,
//! then close the databases (each applies and checkpoints what its log holds, so the next
//! open has nothing to replay).

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
    if args.max_concurrent == 0 || args.max_connections == 0 {
        return Err(ServerError::invalid(
            "--max-concurrent and --max-connections must be at least 1",
        ));
    }
    let connections = ConnectionLimits {
        max_connections: args.max_connections,
        header_timeout: Duration::from_millis(args.header_timeout_ms),
    };
    let addrs = listen::addresses(&args.listen)?;
    let tls = match (&args.tls_cert, &args.tls_key) {
        (Some(cert), Some(key)) => Some(crate::tls::acceptor(cert, key)?),
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
        Some(path) => Some(Tokens::load(path, &names, args.create_in.is_some())?),
        None => None,
    };
    let auth = match &args.tokens {
        Some(path) => format!("bearer tokens from {}", path.display()),
        None => "no tokens: every request allowed, loopback only".to_string(),
    };
    let served = Served::open(
        &named,
        args.create_in.clone(),
        args.query_memory_limit,
        Duration::from_millis(args.max_lease_ms),
    )?;
    ignore_sigpipe();
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .thread_name("datalith-serve")
        .build()?;
    let state = Arc::new(AppState {
        served,
        tokens,
        limits: QueryLimits {
            timeout_ms: args.query_timeout_ms,
            memory_limit: args.query_memory_limit,
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
    });
    let outcome = runtime.block_on(listen_until_signal(
        state.clone(),
        addrs,
        connections,
        tls,
        &names,
        &auth,
    ));
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
    addrs: Vec<SocketAddr>,
    connections: ConnectionLimits,
    tls: Option<crate::tls::Tls>,
    names: &[String],
    auth: &str,
) -> Result<()> {
    let listener = tokio::net::TcpListener::bind(&addrs[..])
        .await
        .map_err(|e| {
            let e = ServerError::from(e);
            ServerError {
                message: format!("cannot listen on {addrs:?}: {}", e.message),
                ..e
            }
        })?;
    let local = listener.local_addr()?;
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
