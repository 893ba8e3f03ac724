//! Datalevin's server for the `datalevin-remote` peers of `query --remote` and `write
//! --remote`. The bench does not build or ship it: it runs one that was prepared outside the
//! repository, found through `$DATALEVIN_SERVER_DIR` (`bench/peers/README.md`, "Datalevin's
//! server", says what the one measured here is). The contract of that directory:
//!
//! - `start-server.sh PORT ROOT` starts the server in the foreground, listening on
//!   `127.0.0.1:PORT` with its databases under `ROOT` and the default user
//!   `datalevin:datalevin`, passes `$PEERS_JVM_OPTS` (the peers' fixed heap) to its JVM, and
//!   prints one line starting with `SERVER READY` once it accepts connections;
//! - it runs with Datalevin's query result cache off, as the harnesses turn it off for
//!   embedded Datalevin, and says so on that line (`query-cache off`);
//! - SIGTERM stops it.
//!
//! [`DatalevinServer`] starts it in its own process group on a free port and a fresh `ROOT`,
//! waits for the line (at most [`READY_TIMEOUT`]), and when dropped stops the group with
//! SIGTERM, then SIGKILL after [`GRACE`], and deletes `ROOT`.

use std::fs::File;
use std::io::{BufRead, BufReader, Write};
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

/// The variable naming the prepared server's directory.
pub const ENV: &str = "DATALEVIN_SERVER_DIR";
/// The script that directory must hold.
pub const SCRIPT: &str = "start-server.sh";
/// The line the server prints once it listens.
pub const READY: &str = "SERVER READY";
/// What the ready line must also say (the query result cache is off in the server).
pub const CACHE_OFF: &str = "query-cache off";
/// How long the server may take to print its ready line (a JVM start and Datalevin's loading,
/// ~20 s on this machine's 2 cores when busy).
pub const READY_TIMEOUT: Duration = Duration::from_secs(180);
/// How long SIGTERM has to stop the server before SIGKILL.
pub const GRACE: Duration = Duration::from_secs(15);
/// The server's default user and password, in the URIs of its databases.
const USER: &str = "datalevin:datalevin";

/// The prepared server's start script: `Err(why)` (the peer is skipped with it) when
/// `$DATALEVIN_SERVER_DIR` is unset or lacks an executable `start-server.sh`.
pub fn locate() -> Result<PathBuf, String> {
    locate_in(std::env::var_os(ENV).map(PathBuf::from))
}

fn locate_in(dir: Option<PathBuf>) -> Result<PathBuf, String> {
    let Some(dir) = dir else {
        return Err(format!(
            "no Datalevin server: {ENV} is not set (a directory with `{SCRIPT} PORT ROOT`, \
             prepared outside this repository: bench/peers/README.md, \"Datalevin's server\")"
        ));
    };
    let script = dir.join(SCRIPT);
    let executable = std::fs::metadata(&script).is_ok_and(|m| {
        use std::os::unix::fs::PermissionsExt;
        m.is_file() && m.permissions().mode() & 0o111 != 0
    });
    if executable {
        Ok(script)
    } else {
        Err(format!(
            "no Datalevin server: {ENV}={} has no executable {SCRIPT} (bench/peers/README.md, \
             \"Datalevin's server\")",
            dir.display()
        ))
    }
}

/// A free TCP port on 127.0.0.1 (bound, read, released: the server binds it just after).
fn free_port() -> std::io::Result<u16> {
    Ok(std::net::TcpListener::bind("127.0.0.1:0")?
        .local_addr()?
        .port())
}

/// A running Datalevin server.
pub struct DatalevinServer {
    child: Child,
    root: PathBuf,
    port: u16,
}

impl DatalevinServer {
    /// Starts `script` on a free port of 127.0.0.1 with the fresh, empty directory `root`
    /// (deleted first if present), its output into `log`, the JVM heap `heap` (`--heap`), and
    /// waits for its ready line. `Err` says what went wrong; the server is stopped then.
    pub fn start(script: &Path, root: &Path, heap: &str, log: &Path) -> Result<Self, String> {
        Self::start_within(script, root, heap, log, READY_TIMEOUT)
    }

    fn start_within(
        script: &Path,
        root: &Path,
        heap: &str,
        log: &Path,
        timeout: Duration,
    ) -> Result<Self, String> {
        let _ = std::fs::remove_dir_all(root);
        std::fs::create_dir_all(root).map_err(|e| format!("{}: {e}", root.display()))?;
        let port = free_port().map_err(|e| format!("no free port on 127.0.0.1: {e}"))?;
        let out = File::create(log).map_err(|e| format!("{}: {e}", log.display()))?;
        let err = out
            .try_clone()
            .map_err(|e| format!("{}: {e}", log.display()))?;
        let mut cmd = Command::new(script);
        cmd.arg(port.to_string())
            .arg(root)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::from(err))
            // Its own process group, so stopping it reaches a JVM the script did not `exec`.
            .process_group(0);
        crate::common::jvm::set_heap(&mut cmd, heap);
        let mut child = cmd
            .spawn()
            .map_err(|e| format!("cannot start {}: {e}", script.display()))?;
        let stdout = child.stdout.take();
        let server = DatalevinServer {
            child,
            root: root.to_path_buf(),
            port,
        };
        // Every stdout line goes to the log; the first ready line (or the end) to us.
        let (tx, rx) = mpsc::channel::<Option<String>>();
        std::thread::spawn(move || {
            let mut out = out;
            let mut told = false;
            if let Some(stdout) = stdout {
                for line in BufReader::new(stdout).lines() {
                    let Ok(line) = line else { break };
                    let _ = writeln!(out, "{line}");
                    if !told && line.starts_with(READY) {
                        told = true;
                        let _ = tx.send(Some(line));
                    }
                }
            }
            if !told {
                let _ = tx.send(None);
            }
        });
        let start = Instant::now();
        let line = match rx.recv_timeout(timeout) {
            Ok(Some(line)) => line,
            Ok(None) | Err(mpsc::RecvTimeoutError::Disconnected) => {
                drop(server);
                return Err(format!(
                    "{} {port} {} ended without printing `{READY}`: {}",
                    script.display(),
                    root.display(),
                    crate::common::child::tail(log, 3).replace('\n', " / ")
                ));
            }
            Err(mpsc::RecvTimeoutError::Timeout) => {
                drop(server);
                return Err(format!(
                    "{} {port} {} printed no `{READY}` within {timeout:?} (log {})",
                    script.display(),
                    root.display(),
                    log.display()
                ));
            }
        };
        if !line.contains(CACHE_OFF) {
            drop(server);
            return Err(format!(
                "the Datalevin server of {} does not say `{CACHE_OFF}` (its query result cache \
                 must be off, as for embedded Datalevin: bench/peers/README.md, \"Datalevin's \
                 server\"); it said: {line}",
                script.display()
            ));
        }
        eprintln!(
            "datalevin server ready on 127.0.0.1:{port} after {:.1} s",
            start.elapsed().as_secs_f64()
        );
        Ok(server)
    }

    /// `dtlv://USER:PASSWORD@127.0.0.1:PORT`: the server, for the harnesses' SERVER argument.
    pub fn uri(&self) -> String {
        format!("dtlv://{USER}@127.0.0.1:{}", self.port)
    }

    /// The URI of the database `name` of this server.
    pub fn db_uri(&self, name: &str) -> String {
        format!("{}/{name}", self.uri())
    }
}

impl Drop for DatalevinServer {
    fn drop(&mut self) {
        let group = -(self.child.id() as libc::pid_t);
        // SAFETY: signals to the process group of our own child, which has not been reaped
        // (it is reaped below, after the last signal), so its id is not reused.
        unsafe { libc::kill(group, libc::SIGTERM) };
        let deadline = Instant::now() + GRACE;
        loop {
            match self.child.try_wait() {
                Ok(Some(_)) | Err(_) => break,
                Ok(None) if Instant::now() >= deadline => {
                    // SAFETY: as above; the child is still unreaped.
                    unsafe { libc::kill(group, libc::SIGKILL) };
                    let _ = self.child.wait();
                    break;
                }
                Ok(None) => std::thread::sleep(Duration::from_millis(50)),
            }
        }
        // Whatever else of the group is left (a JVM the script started and did not `exec`).
        // SAFETY: the group id is our child's pid; the group is ours.
        unsafe { libc::kill(group, libc::SIGKILL) };
        let _ = std::fs::remove_dir_all(&self.root);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn script(dir: &Path, body: &str) -> PathBuf {
        use std::os::unix::fs::PermissionsExt;
        let p = dir.join(SCRIPT);
        std::fs::write(&p, format!("#!/usr/bin/env bash\n{body}\n")).unwrap();
        std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o755)).unwrap();
        p
    }

    #[test]
    fn a_missing_server_is_a_reason_to_skip() {
        let why = locate_in(None).unwrap_err();
        assert!(why.contains("DATALEVIN_SERVER_DIR is not set"), "{why}");
        let dir = tempfile::tempdir().unwrap();
        let why = locate_in(Some(dir.path().to_path_buf())).unwrap_err();
        assert!(why.contains("has no executable start-server.sh"), "{why}");
        let p = script(dir.path(), "true");
        assert_eq!(locate_in(Some(dir.path().to_path_buf())).unwrap(), p);
    }

    #[test]
    fn start_waits_for_ready_and_stop_ends_the_group() {
        let dir = tempfile::tempdir().unwrap();
        let log = dir.path().join("server.log");
        let root = dir.path().join("root");
        // A child of the script that ignores nothing: SIGTERM to the group must reach it.
        let p = script(
            dir.path(),
            "sleep 600 & echo \"pid $!\"; echo \"SERVER READY 127.0.0.1:$1 root $2 query-cache off\"; wait",
        );
        let s =
            DatalevinServer::start_within(&p, &root, "64m", &log, Duration::from_secs(20)).unwrap();
        assert!(s.uri().starts_with("dtlv://datalevin:datalevin@127.0.0.1:"));
        assert!(s.db_uri("a").ends_with("/a"));
        assert!(root.is_dir());
        drop(s);
        assert!(!root.exists());
        let text = std::fs::read_to_string(&log).unwrap();
        let pid: i32 = text
            .lines()
            .find_map(|l| l.strip_prefix("pid "))
            .unwrap()
            .parse()
            .unwrap();
        // Gone, or a zombie no init has reaped yet (its state `Z`).
        let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
        let state = stat.rsplit(") ").next().and_then(|r| r.chars().next());
        assert!(
            state.is_none() || state == Some('Z'),
            "the script's child {pid} outlived the stop: {stat}"
        );
    }

    #[test]
    fn a_server_that_keeps_its_cache_or_never_gets_ready_fails() {
        let dir = tempfile::tempdir().unwrap();
        let log = dir.path().join("server.log");
        let root = dir.path().join("root");
        let p = script(dir.path(), "echo \"SERVER READY 127.0.0.1:$1\"; sleep 600");
        let why = DatalevinServer::start_within(&p, &root, "64m", &log, Duration::from_secs(20))
            .err()
            .unwrap();
        assert!(why.contains("query-cache off"), "{why}");
        let p = script(dir.path(), "echo starting; exit 2");
        let why = DatalevinServer::start_within(&p, &root, "64m", &log, Duration::from_secs(20))
            .err()
            .unwrap();
        assert!(why.contains("ended without printing"), "{why}");
        let p = script(dir.path(), "sleep 600");
        let why = DatalevinServer::start_within(&p, &root, "64m", &log, Duration::from_millis(300))
            .err()
            .unwrap();
        assert!(why.contains("within"), "{why}");
    }
}
