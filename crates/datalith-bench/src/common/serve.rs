//! The real `datalith serve`, started on loopback for the `--remote` peers of `query` and
//! `write`: the `datalith` binary (`$DATALITH_BIN`, or the `datalith` beside this
//! executable, which `cargo build --release -p datalith-cli -p datalith-bench` puts there) in
//! its own process, on `127.0.0.1:0`, serving one database directory; its URL is read from
//! the line it prints once it accepts connections. Dropping the [`Server`] stops it with
//! SIGTERM (running requests finish, the database closes) and waits for it.

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};

use crate::common::BenchError;

/// What the server is called in errors.
const WHAT: &str = "datalith serve";

/// Where the `datalith` binary is: `$DATALITH_BIN`, else beside this executable.
pub fn binary() -> Result<PathBuf, String> {
    if let Some(p) = std::env::var_os("DATALITH_BIN") {
        let p = PathBuf::from(p);
        return if p.is_file() {
            Ok(p)
        } else {
            Err(format!("DATALITH_BIN={} is not a file", p.display()))
        };
    }
    let exe = std::env::current_exe().map_err(|e| e.to_string())?;
    let p = exe.with_file_name("datalith");
    if p.is_file() {
        Ok(p)
    } else {
        Err(format!(
            "no datalith binary at {} (cargo build --release -p datalith-cli, or set \
             DATALITH_BIN)",
            p.display()
        ))
    }
}

/// Starts `command` (its output piped, its errors inherited) and reads the first line it
/// prints, which must be `... listening on ADDRESS ...`; returns the child and ADDRESS. A child
/// that says anything else is killed, and the error carries what it said.
pub fn spawn_listening(command: &mut Command, what: &str) -> Result<(Child, String), BenchError> {
    let error = |message: String| BenchError::Child {
        what: what.into(),
        message,
    };
    let mut child = command
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .spawn()
        .map_err(|e| error(format!("starting {command:?}: {e}")))?;
    let mut line = String::new();
    let read = child
        .stdout
        .take()
        .map(|out| BufReader::new(out).read_line(&mut line));
    let address = line
        .split("listening on ")
        .nth(1)
        .and_then(|r| r.split_whitespace().next())
        .map(str::to_string);
    match (read, address) {
        (Some(Ok(_)), Some(address)) => Ok((child, address)),
        _ => {
            let _ = child.kill();
            let status = child.wait().ok();
            Err(error(format!(
                "{command:?} did not start (exit {status:?}): {line:?}"
            )))
        }
    }
}

/// A running `datalith serve DIR`.
pub struct Server {
    child: Child,
    /// `http://127.0.0.1:PORT`.
    pub url: String,
    /// The database's name on the server (the directory's name).
    pub name: String,
}

impl Server {
    /// Starts `datalith serve DIR --listen 127.0.0.1:0` (DIR created if missing) and waits
    /// until it listens.
    pub fn start(dir: &Path) -> Result<Server, BenchError> {
        let bin = binary().map_err(|message| BenchError::Child {
            what: WHAT.into(),
            message,
        })?;
        let name = dir
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .ok_or_else(|| BenchError::Child {
                what: WHAT.into(),
                message: format!("{} has no name", dir.display()),
            })?;
        let mut command = Command::new(&bin);
        command
            .arg("serve")
            .arg(dir)
            .args(["--listen", "127.0.0.1:0"]);
        let (child, url) = spawn_listening(&mut command, WHAT)?;
        Ok(Server { child, url, name })
    }

    /// The served database, through the Rust client.
    pub fn connection(&self) -> datalith_client::Connection {
        datalith_client::Client::new(&self.url).database(&self.name)
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        // SAFETY: a signal to our own child process, which has not been waited for yet.
        unsafe {
            libc::kill(self.child.id() as i32, libc::SIGTERM);
        }
        let _ = self.child.wait();
    }
}
