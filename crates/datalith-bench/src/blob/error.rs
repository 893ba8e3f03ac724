//! Errors of the blob benchmark: which store, file or child failed, and how.

use std::path::PathBuf;

/// Everything that can stop a blob benchmark run.
#[derive(Debug)]
#[non_exhaustive]
pub enum BlobError {
    /// A store under test failed an operation.
    Store {
        store: String,
        op: &'static str,
        message: String,
    },
    /// A file could not be read or written.
    Io {
        path: PathBuf,
        source: std::io::Error,
    },
    /// A command-line argument makes no sense.
    Arg { arg: &'static str, message: String },
    /// A child process misbehaved (did not start, died, printed no result).
    Child { what: String, message: String },
    /// The data read back after a run is not what was written.
    Verify { store: String, message: String },
}

impl std::fmt::Display for BlobError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            BlobError::Store { store, op, message } => write!(f, "{store}: {op} failed: {message}"),
            BlobError::Io { path, source } => write!(f, "{}: {source}", path.display()),
            BlobError::Arg { arg, message } => write!(f, "argument {arg}: {message}"),
            BlobError::Child { what, message } => write!(f, "child {what}: {message}"),
            BlobError::Verify { store, message } => {
                write!(f, "{store}: verification failed: {message}")
            }
        }
    }
}

impl std::error::Error for BlobError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            BlobError::Io { source, .. } => Some(source),
            _ => None,
        }
    }
}

impl BlobError {
    /// A closure turning any displayable error of `store` during `op` into a [`BlobError`].
    pub fn store<E: std::fmt::Display>(store: &str, op: &'static str) -> impl FnOnce(E) -> Self {
        let store = store.to_string();
        move |e| BlobError::Store {
            store,
            op,
            message: e.to_string(),
        }
    }

    /// A closure turning an I/O error on `path` into a [`BlobError`].
    pub fn io(path: &std::path::Path) -> impl FnOnce(std::io::Error) -> Self + '_ {
        move |source| BlobError::Io {
            path: path.to_path_buf(),
            source,
        }
    }
}
