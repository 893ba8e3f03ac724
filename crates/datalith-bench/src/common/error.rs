//! The benchmark's errors: which store or file failed, and how.

use std::path::PathBuf;

/// Everything that can stop a benchmark run.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum BenchError {
    /// A store under test (Datalith or a peer) failed an operation.
    #[error("{store}: {op} failed: {message}")]
    Store {
        store: String,
        op: &'static str,
        message: String,
    },
    /// A file or directory could not be read or written.
    #[error("{path}: {source}")]
    Io {
        path: PathBuf,
        source: std::io::Error,
    },
    /// A command-line argument makes no sense.
    #[error("argument {arg}: {message}")]
    Arg { arg: &'static str, message: String },
    /// A child process (our own per-condition runner or a peer harness) misbehaved.
    #[error("child {what}: {message}")]
    Child { what: String, message: String },
    /// A plot could not be drawn.
    #[error("plot {path}: {message}")]
    Plot { path: PathBuf, message: String },
    /// A JSON line could not be encoded or decoded.
    #[error("json: {0}")]
    Json(#[from] serde_json::Error),
}

impl BenchError {
    /// A closure turning any displayable error of `store` during `op` into a [`BenchError`].
    pub fn store<E: std::fmt::Display>(
        store: &str,
        op: &'static str,
    ) -> impl FnOnce(E) -> BenchError {
        let store = store.to_string();
        move |e| BenchError::Store {
            store,
            op,
            message: e.to_string(),
        }
    }

    /// A closure turning an I/O error on `path` into a [`BenchError`].
    pub fn io(path: &std::path::Path) -> impl FnOnce(std::io::Error) -> BenchError + '_ {
        move |source| BenchError::Io {
            path: path.to_path_buf(),
            source,
        }
    }
}
