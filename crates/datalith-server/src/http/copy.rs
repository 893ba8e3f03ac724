//! `GET /db/NAME/copy`: a consistent, compacted copy of a database's data file, for the admin
//! role, streamed while LMDB writes it: how a node joins a replicated database from another
//! node over the network (`datalith copy --connect URL NAME DIR`), and a backup a program can
//! take without the server's file system.
//!
//! The copy is LMDB's compacting copy (`Environment::copy_compacted_to`: one read
//! transaction, every commit acknowledged before the request included) written into a pipe on
//! a blocking thread; another blocking thread reads the pipe into the answer's chunks. The
//! answer is chunked and has no length known in advance: a copy that fails midway (a full
//! pipe the client stopped reading, an I/O error) ends the connection without the last
//! chunk, so a client never takes a cut copy for a whole one. A client that goes away closes
//! the pipe's reading end, and LMDB's next write fails (`EPIPE`: the server ignores
//! `SIGPIPE`), which ends the copy and its read transaction.

use std::io::Read;
use std::pin::Pin;
use std::task::{Context, Poll};

use axum::body::{Body, Bytes};
use axum::extract::{Path, State};
use axum::http::header::CONTENT_TYPE;
use axum::http::{HeaderMap, StatusCode};
use axum::response::Response;
use http_body::Frame;
use tokio::sync::mpsc;

use super::{pipeline, respond, Shared};
use crate::auth::{Access, Role};
use crate::error::{codes, Result, ServerError};

/// Bytes read from the pipe per chunk of the answer.
const CHUNK_BYTES: usize = 256 * 1024;

/// Chunks read ahead of the client: the copy's memory in the server is at most this many
/// chunks plus the pipe's buffer.
const CHUNKS_AHEAD: usize = 4;

/// The media type of the answer: LMDB's data file as it lies on disk.
pub const COPY_MEDIA_TYPE: &str = "application/octet-stream";

/// `GET /db/NAME/copy`.
pub async fn copy(
    State(state): State<Shared>,
    Path(name): Path<String>,
    headers: HeaderMap,
) -> Response {
    let started = std::time::Instant::now();
    let access = pipeline::authenticate(&state, &headers);
    let token = match &access {
        Ok(Access::Token { name, .. }) => Some(name.clone()),
        _ => None,
    };
    let response = match start(&state, &name, access).await {
        Ok(body) => {
            let mut response = Response::new(Body::new(body));
            *response.status_mut() = StatusCode::OK;
            response.headers_mut().insert(
                CONTENT_TYPE,
                axum::http::HeaderValue::from_static(COPY_MEDIA_TYPE),
            );
            response
        }
        Err(e) => respond::answer(&headers, Err(e)),
    };
    let (status, took) = (response.status().as_u16(), started.elapsed());
    state.metrics.record("copy", status, took);
    if state.log_requests {
        // Logged when the copy starts streaming: its length is the client's to wait for.
        super::access_log::line("copy", &name, status, took, token.as_deref());
    }
    response
}

/// Checks the request and starts the copy; the body streams what it writes.
async fn start(state: &Shared, name: &str, access: Result<Access>) -> Result<CopyBody> {
    let access = access?;
    let source = pipeline::find(state, name)?;
    access.require(name, Role::Admin)?;
    // A copy reads the whole database: it takes one of the places to run, for its length.
    let place = pipeline::admit(state).await?;
    let (mut from_pipe, into_pipe) = pipe()
        .map_err(|e| ServerError::new(codes::INTERNAL, format!("no pipe for the copy: {e}")))?;
    let (chunks, body) = mpsc::channel(CHUNKS_AHEAD);
    // The writing side: its sender outlives the reading side's, so the body ends only once
    // the copy's outcome is known (an error then reaches the body as an error, not an end).
    let outcome = chunks.clone();
    tokio::task::spawn_blocking(move || {
        let _place = place;
        let copied = source.database.env().copy_compacted_to(&into_pipe);
        drop(into_pipe);
        if let Err(e) = copied {
            let _ =
                outcome.blocking_send(Err(std::io::Error::other(format!("the copy failed: {e}"))));
        }
    });
    tokio::task::spawn_blocking(move || loop {
        // A pipe gives at most its buffer (64 KiB) a read: each chunk is filled before it goes.
        let mut chunk = vec![0u8; CHUNK_BYTES];
        let mut filled = 0;
        let ended = loop {
            match from_pipe.read(&mut chunk[filled..]) {
                Ok(0) => break Ok(true),
                Ok(n) => {
                    filled += n;
                    if filled == CHUNK_BYTES {
                        break Ok(false);
                    }
                }
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                Err(e) => break Err(e),
            }
        };
        chunk.truncate(filled);
        // The client went away: dropping the pipe's reading end stops LMDB's writes.
        if !chunk.is_empty() && chunks.blocking_send(Ok(Bytes::from(chunk))).is_err() {
            break;
        }
        match ended {
            Ok(false) => {}
            Ok(true) => break,
            Err(e) => {
                let _ = chunks.blocking_send(Err(e));
                break;
            }
        }
    });
    Ok(CopyBody { chunks: body })
}

/// A pipe, (its reading end, its writing end), closed on exec.
fn pipe() -> std::io::Result<(std::fs::File, std::fs::File)> {
    use std::os::fd::FromRawFd;
    let mut fds = [0 as libc::c_int; 2];
    // SAFETY: `pipe2` writes two new descriptors into `fds` when it succeeds.
    if unsafe { libc::pipe2(fds.as_mut_ptr(), libc::O_CLOEXEC) } != 0 {
        return Err(std::io::Error::last_os_error());
    }
    // SAFETY: both descriptors are new and owned by nothing else; each `File` closes its own.
    Ok(unsafe {
        (
            std::fs::File::from_raw_fd(fds[0]),
            std::fs::File::from_raw_fd(fds[1]),
        )
    })
}

/// The answer's body: the pipe's bytes as they come, an error ending it early.
struct CopyBody {
    chunks: mpsc::Receiver<std::io::Result<Bytes>>,
}

impl http_body::Body for CopyBody {
    type Data = Bytes;
    type Error = std::io::Error;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<std::result::Result<Frame<Bytes>, std::io::Error>>> {
        self.chunks
            .poll_recv(cx)
            .map(|chunk| chunk.map(|c| c.map(Frame::data)))
    }
}
