//! Starting and stopping a `datalith serve` process.

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdout, Command, ExitStatus, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

/// A running server: its process, address and directory.
pub struct Server {
    child: Option<Child>,
    /// `http://127.0.0.1:PORT` (`https://` with TLS).
    pub base: String,
    /// Where its databases (and its stderr, `stderr.txt`) live.
    pub dir: PathBuf,
    _stdout: BufReader<ChildStdout>,
    _temp: Option<tempfile::TempDir>,
}

/// Starts `datalith serve` on databases `dbs` (directories under a new temporary directory)
/// with `extra` arguments; returns once it listens.
pub fn start(dbs: &[&str], extra: &[&str]) -> Server {
    start_with_env(dbs, extra, &[])
}

/// [`start`] with variables `env` set in the server's environment.
pub fn start_with_env(dbs: &[&str], extra: &[&str], env: &[(&str, &str)]) -> Server {
    let temp = tempfile::tempdir().unwrap();
    let dir = temp.path().to_path_buf();
    let mut s = start_in_env(&dir, dbs, extra, env).expect("the server starts");
    s._temp = Some(temp);
    s
}

/// Starts a server on databases under `dir`; the error is its stderr when it exits instead.
pub fn start_in(dir: &Path, dbs: &[&str], extra: &[&str]) -> Result<Server, String> {
    start_in_env(dir, dbs, extra, &[])
}

pub fn start_in_env(
    dir: &Path,
    dbs: &[&str],
    extra: &[&str],
    env: &[(&str, &str)],
) -> Result<Server, String> {
    let stderr = std::fs::File::create(dir.join("stderr.txt")).unwrap();
    let mut child = Command::new(env!("CARGO_BIN_EXE_datalith"))
        .envs(env.iter().copied())
        .arg("serve")
        .args(dbs.iter().map(|d| dir.join(d)))
        .args(["--listen", "127.0.0.1:0"])
        .args(extra)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::from(stderr))
        .spawn()
        .unwrap();
    let mut stdout = BufReader::new(child.stdout.take().unwrap());
    // The first line names the address, once the server accepts connections; read it on a
    // thread so that a server that never prints cannot hang the test.
    let (tx, rx) = mpsc::channel();
    let reader = std::thread::spawn(move || {
        let mut line = String::new();
        let _ = stdout.read_line(&mut line);
        let _ = tx.send(line);
        stdout
    });
    let line = rx.recv_timeout(Duration::from_secs(30)).unwrap_or_default();
    let stdout = reader.join().unwrap();
    let Some(rest) = line.split("listening on ").nth(1) else {
        let _ = child.wait();
        return Err(std::fs::read_to_string(dir.join("stderr.txt")).unwrap_or_default());
    };
    let base = rest.split_whitespace().next().unwrap().to_string();
    Ok(Server {
        child: Some(child),
        base,
        dir: dir.to_path_buf(),
        _stdout: stdout,
        _temp: None,
    })
}

impl Server {
    /// The URL of `path`.
    pub fn url(&self, path: &str) -> String {
        format!("{}{path}", self.base)
    }

    /// `host:port`, for raw connections.
    pub fn addr(&self) -> String {
        let base = self.base.trim_start_matches("https://");
        base.trim_start_matches("http://").to_string()
    }

    /// The server's process id.
    pub fn pid(&self) -> u32 {
        self.child.as_ref().map_or(0, |c| c.id())
    }

    /// Sends SIGTERM.
    pub fn terminate(&self) {
        if let Some(child) = &self.child {
            // SAFETY: a signal to our own child process.
            unsafe {
                libc::kill(child.id() as i32, libc::SIGTERM);
            }
        }
    }

    /// Sends SIGTERM and waits for the exit; returns the status and what it wrote on stderr.
    pub fn stop(mut self) -> (ExitStatus, String) {
        self.terminate();
        let status = wait(self.child.as_mut().unwrap(), Duration::from_secs(30));
        self.child = None;
        let stderr = std::fs::read_to_string(self.dir.join("stderr.txt")).unwrap_or_default();
        (status, stderr)
    }
}

fn wait(child: &mut Child, patience: Duration) -> ExitStatus {
    let start = Instant::now();
    loop {
        if let Some(status) = child.try_wait().unwrap() {
            return status;
        }
        if start.elapsed() > patience {
            let _ = child.kill();
            panic!("the server did not stop within {patience:?} of SIGTERM");
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        if let Some(mut child) = self.child.take() {
            let _ = child.kill();
            let _ = child.wait();
        }
    }
}
