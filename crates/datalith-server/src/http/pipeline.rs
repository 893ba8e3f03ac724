//! What every database request goes through, in order: the answer's format, the token, the
//! database, the role, the body (`body`), a place to run (`--max-concurrent`, waiting at most
//! `--queue-timeout-ms`), then the operation on a blocking thread (the library's calls
//! block: a query computes, a transaction waits for its group's sync; a transaction on the
//! worker thread itself, `runs_in_place`; a query expected to be short there first, for at
//! most a budget, `in_place`), holding its place until it ends even if the client has gone
//! (whose query the cancel guard stops). On a blocking thread the reply comes when the
//! operation ends, or earlier, when a query's answer outgrows its first chunk and is sent
//! while the query goes on writing it (`outlet`).

use std::sync::Arc;
use std::time::Instant;

use axum::body::Body;
use axum::http::header::{AUTHORIZATION, CONTENT_TYPE};
use axum::http::HeaderMap;
use axum::response::Response;
use datalith::edn::Edn;
use tokio::sync::OwnedSemaphorePermit;

use super::cancel::CancelOnDrop;
use super::in_place::{self, InPlace};
use super::outlet::RequestOutlet;
use super::respond::{self, header};
use super::AppState;
use crate::auth::Access;
use crate::error::{codes, Result, ServerError};
use crate::format::negotiate::read_body;
use crate::format::Format;
use crate::ops::{Context, Databases, Op, Reply, Request, Source};

/// Runs `op` on database `db` for the request, and answers.
pub async fn run(
    state: Arc<AppState>,
    op: Op,
    db: String,
    headers: HeaderMap,
    body: Body,
) -> Response {
    let start = Instant::now();
    let mut token = None;
    let response = match respond::format_for(&headers) {
        Ok(format) => {
            let outcome = attempt(&state, op, &db, &headers, body, format, &mut token).await;
            respond::write(format, outcome)
        }
        Err(e) => respond::error(crate::format::Format::Edn, &e),
    };
    let took = start.elapsed();
    let status = response.status().as_u16();
    state.metrics.record(op.name(), status, took);
    if state.log_requests {
        super::access_log::line(op.name(), &db, status, took, token.as_deref());
    }
    response
}

/// Who the request is, by its `Authorization` header.
pub fn authenticate(state: &AppState, headers: &HeaderMap) -> Result<Access> {
    match &state.tokens {
        None => Ok(Access::Open),
        Some(tokens) => tokens.get().authenticate(header(headers, AUTHORIZATION)),
    }
}

async fn attempt(
    state: &Arc<AppState>,
    op: Op,
    name: &str,
    headers: &HeaderMap,
    body: Body,
    format: Format,
    token: &mut Option<String>,
) -> Result<Reply> {
    let access = authenticate(state, headers)?;
    if let Access::Token { name, .. } = &access {
        *token = Some(name.clone());
        if let Some(rate) = &state.token_rate {
            rate.take(name)?;
        }
    }
    let source = find(state, name)?;
    // A replica's transaction waits on the runtime (`Handle::block_on`), which only a
    // thread handed off with `block_in_place` may do.
    let local = source.replica.is_none();
    access.require(name, op.role())?;
    let body = super::body::read(state, body).await?;
    let form = read_body(header(headers, CONTENT_TYPE), &body)?;
    let request = Request::new(form, op.fields())?;
    let place = admit(state).await?;
    let guard = CancelOnDrop::new();
    let cancel = guard.flag();
    let limits = state.limits;
    let name = name.to_string();
    let others = Readable {
        state: state.clone(),
        access,
    };
    let started = Instant::now();
    let pace_key = (op == Op::Q).then(|| query_key(&request)).flatten();
    if let Some(key) = pace_key
        .filter(|k| state.pace.expects_short(*k))
        .filter(|_| shares_its_worker(state))
    {
        let run = InPlace::start();
        let over = || run.over();
        let cx = Context {
            name: &name,
            limits,
            cancel: &cancel,
            databases: &others,
            stop_early: Some(&over),
            outlet: None,
            format,
        };
        let outcome = op.run(&source, &request, &cx);
        // Stopped for its time in place: run again on a blocking thread, below.
        if !(outcome.is_err() && run.moved()) {
            state.pace.note(key, started.elapsed());
            return outcome;
        }
    }
    // The work holds its place until it ends: for an answer sent while it is written, until
    // its last chunk (`outlet`).
    let work = move |outlet: Option<&RequestOutlet>| {
        let _place = place;
        let cx = Context {
            name: &name,
            limits,
            cancel: &cancel,
            databases: &others,
            stop_early: None,
            outlet: outlet.map(|o| o as &dyn crate::ops::Outlet),
            format,
        };
        op.run(&source, &request, &cx)
    };
    let failed = |e: &dyn std::fmt::Display| {
        Err(ServerError::new(
            codes::INTERNAL,
            format!("the {} request failed inside the server: {e}", op.name()),
        ))
    };
    let outcome = if runs_in_place(op) {
        match local && state.runs_alone() {
            // Nothing else runs: the other workers are free for what comes.
            true => work(None),
            false => tokio::task::block_in_place(|| work(None)),
        }
    } else {
        // The reply comes when the work ends, or earlier: when its answer outgrows a chunk.
        let (outlet, reply) = RequestOutlet::new(format, guard.flag());
        let _detached = tokio::task::spawn_blocking(move || {
            let outcome = work(Some(&outlet));
            outlet.reply(outcome);
        });
        // Without a reply the work panicked (its outlet dropped unsent).
        reply.await.unwrap_or_else(|e| failed(&e))
    };
    drop(guard);
    // An answer still being written took as long as its first chunk, not its run.
    if let (Some(key), false) = (pace_key, matches!(outcome, Ok(Reply::Stream(_)))) {
        state.pace.note(key, started.elapsed());
    }
    outcome
}

/// Whether a short query may hold the worker that read it: always when the runtime has
/// other workers for the rest; with one worker, only while no other request runs (under load
/// its queries then go to the blocking threads, which use every core, instead of queueing on
/// the one thread that reads every request).
fn shares_its_worker(state: &AppState) -> bool {
    let one_worker =
        tokio::runtime::Handle::try_current().is_ok_and(|h| h.metrics().num_workers() == 1);
    !one_worker || state.runs_alone()
}

/// The key of the request's query text in [`Pace`](super::in_place::Pace).
fn query_key(request: &Request) -> Option<u64> {
    match request.get("query")? {
        Edn::String(text) => Some(in_place::key(text)),
        form => Some(in_place::key(&datalith::edn::to_edn_string(form))),
    }
}

/// Whether `op` runs on the worker thread that read its request instead of on a blocking
/// thread. A transaction: it cannot be stopped once queued, so no cancel is lost, and most
/// of its time is the wait for its group's sync, which the library spends committing on the
/// calling thread when no other commit runs; a blocking thread put two wake-ups on the path
/// of every write (W at batch 100 over loopback: see the crate's README). While other
/// requests run, the worker's other tasks are handed to another thread for the call
/// (`block_in_place`, a wake-up and the core's hand-back); a transaction on a local
/// database (no `--log`) that runs alone blocks its worker outright, the other workers
/// being free (the README: 6% less a call alone; under 200 clients, holding the worker
/// whatever ran cost the reads 10 ms p50). A query stays on a blocking thread, where a
/// client that goes away stops it.
fn runs_in_place(op: Op) -> bool {
    op == Op::Transact
        && tokio::runtime::Handle::try_current()
            .is_ok_and(|h| h.runtime_flavor() == tokio::runtime::RuntimeFlavor::MultiThread)
}

/// The databases a request may read, for queries that name others than their path's.
struct Readable {
    state: Arc<AppState>,
    access: Access,
}

impl Databases for Readable {
    fn source(&self, name: &str) -> Result<Arc<Source>> {
        let source = find(&self.state, name)?;
        self.access.require(name, crate::auth::Role::Read)?;
        Ok(source)
    }
}

/// The database served as `name`, or `:datalith.error/unknown-database`.
pub(super) fn find(state: &AppState, name: &str) -> Result<Arc<Source>> {
    state
        .served
        .get(name)
        .ok_or_else(|| crate::served::unknown_database(name))
}

/// A place to run, or `:datalith.error/overloaded` once the queue's timeout has passed.
pub(super) async fn admit(state: &AppState) -> Result<OwnedSemaphorePermit> {
    let wait = tokio::time::timeout(state.queue_timeout, state.gate.clone().acquire_owned());
    match wait.await {
        Ok(Ok(place)) => Ok(place),
        // The gate is never closed while the server runs.
        Ok(Err(_)) | Err(_) => Err(ServerError::new(
            codes::OVERLOADED,
            format!(
                "all {} places to run a request stayed taken for {} ms; retry later",
                state.places,
                state.queue_timeout.as_millis()
            ),
        )),
    }
}
