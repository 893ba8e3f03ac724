//! PostgreSQL, the answer reference: a fresh cluster in a temporary directory for each run
//! (`initdb` and `pg_ctl` of the installed server, as the `postgres` user when this runs as
//! root), on a free port of 127.0.0.1, loaded with `COPY` from the same `.tbl` files, the
//! spec's keys and an index on each foreign key, `ANALYZE`d. The cluster is stopped and its
//! directory deleted when the peer is dropped, also after an error.
//!
//! Queries go through the `postgres` crate's simple-query protocol: every value comes back
//! as PostgreSQL prints it (the exact `NUMERIC` of the reference), and no statement is
//! prepared, as the SQLite peer's texts are not either. Settings: `fsync=off` (a read
//! benchmark: the load does not need to survive a crash), parallel workers at PostgreSQL's
//! default (`max_parallel_workers_per_gather` 2: a query may use both cores, as Datalith's,
//! Datalevin's and DuckDB's may), `shared_buffers` 1 GB, `work_mem` 256 MB;
//! `statement_timeout` is the run's time limit.

use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use postgres::{Client, NoTls, SimpleQueryMessage};

use super::answer::{Answer, Cell};
use super::generate::{read_rows, tbl_path};
use super::peer::{Peer, RunError};
use super::queries::Query;
use super::sql_schema::{create_indexes, create_tables, Dialect};
use super::tables::TABLES;
use crate::common::BenchError;

/// Where the server's programs are (Debian's layout of PostgreSQL 15), unless
/// `$PG_BIN` says otherwise.
pub const DEFAULT_BIN: &str = "/usr/lib/postgresql/15/bin";

/// The server's programs, if installed.
pub fn bin_dir() -> Option<PathBuf> {
    let dir = std::env::var_os("PG_BIN")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(DEFAULT_BIN));
    dir.join("initdb").is_file().then_some(dir)
}

fn err<E: std::fmt::Display>(op: &'static str) -> impl FnOnce(E) -> BenchError {
    BenchError::store("postgres", op)
}

/// A running cluster; stopped and deleted on drop.
struct Cluster {
    bin: PathBuf,
    dir: PathBuf,
    as_postgres: bool,
}

impl Cluster {
    /// A command of the server's, as the `postgres` user when we are root (`initdb` refuses
    /// to run as root).
    fn command(&self, program: &str) -> Command {
        let exe = self.bin.join(program);
        if self.as_postgres {
            let mut c = Command::new("runuser");
            c.arg("-u").arg("postgres").arg("--").arg(exe);
            c
        } else {
            Command::new(exe)
        }
    }

    fn run(&self, mut c: Command, what: &'static str) -> Result<(), BenchError> {
        let out = c.output().map_err(err(what))?;
        if out.status.success() {
            return Ok(());
        }
        Err(BenchError::Store {
            store: "postgres".into(),
            op: what,
            message: format!(
                "{}: {}",
                out.status,
                String::from_utf8_lossy(&out.stderr).trim()
            ),
        })
    }

    fn start(bin: PathBuf, port: u16) -> Result<Cluster, BenchError> {
        let as_postgres = unsafe { libc::geteuid() } == 0;
        let dir = std::env::temp_dir().join(format!("datalith-complex-pg-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).map_err(BenchError::io(&dir))?;
        let cluster = Cluster {
            bin,
            dir,
            as_postgres,
        };
        if as_postgres {
            cluster.run(
                {
                    let mut c = Command::new("chown");
                    c.arg("postgres:").arg(&cluster.dir);
                    c
                },
                "chown",
            )?;
        }
        let data = cluster.dir.join("data");
        let mut init = cluster.command("initdb");
        init.arg("-D").arg(&data).args([
            "--no-locale",
            "-E",
            "UTF8",
            "-A",
            "trust",
            "-U",
            "postgres",
        ]);
        cluster.run(init, "initdb")?;
        let mut start = cluster.command("pg_ctl");
        start
            .arg("-D")
            .arg(&data)
            .arg("-l")
            .arg(cluster.dir.join("server.log"))
            .arg("-w")
            .arg("-o")
            .arg(format!(
                "-p {port} -k {} -c listen_addresses=127.0.0.1 -c fsync=off \
                 -c synchronous_commit=off -c full_page_writes=off \
                 -c shared_buffers=1GB \
                 -c work_mem=256MB -c max_wal_size=8GB",
                cluster.dir.display()
            ))
            .arg("start");
        cluster.run(start, "pg_ctl start")?;
        Ok(cluster)
    }
}

impl Drop for Cluster {
    fn drop(&mut self) {
        let mut stop = self.command("pg_ctl");
        stop.arg("-D")
            .arg(self.dir.join("data"))
            .args(["-m", "immediate", "-w", "stop"]);
        let _ = stop.output();
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

/// A free TCP port on 127.0.0.1 (bound and let go: another process could take it before
/// the server does, and the start would then fail saying so).
fn free_port() -> Result<u16, BenchError> {
    let l = std::net::TcpListener::bind("127.0.0.1:0").map_err(err("port"))?;
    Ok(l.local_addr().map_err(err("port"))?.port())
}

/// PostgreSQL loaded with the tables of one scale factor.
pub struct PostgresPeer {
    client: Client,
    /// The `statement_timeout` set (set again only when it changes: outside the timer).
    timeout: Option<Duration>,
    /// Dropped after the client (fields drop in order).
    _cluster: Cluster,
}

impl PostgresPeer {
    /// Starts a cluster and loads `data` into it; the peer and the load's seconds.
    pub fn start(data: &Path, log: impl Fn(&str)) -> Result<(PostgresPeer, f64), BenchError> {
        let bin = bin_dir().ok_or_else(|| BenchError::Store {
            store: "postgres".into(),
            op: "start",
            message: format!("no initdb in {DEFAULT_BIN} (or $PG_BIN)"),
        })?;
        let port = free_port()?;
        let cluster = Cluster::start(bin, port)?;
        let mut client = Client::connect(
            &format!("host=127.0.0.1 port={port} user=postgres dbname=postgres"),
            NoTls,
        )
        .map_err(err("connect"))?;
        let start = Instant::now();
        for ddl in create_tables(Dialect::Postgres) {
            client.batch_execute(&ddl).map_err(err("create table"))?;
        }
        for t in &TABLES {
            let t0 = Instant::now();
            let mut w = client
                .copy_in(&format!("COPY {} FROM STDIN WITH (DELIMITER '|')", t.sql))
                .map_err(err("copy"))?;
            let mut line = String::new();
            let n = read_rows(&tbl_path(data, t.sql), |fields| {
                line.clear();
                line.push_str(&fields.join("|"));
                line.push('\n');
                w.write_all(line.as_bytes()).map_err(err("copy"))
            })?;
            w.finish().map_err(err("copy"))?;
            log(&format!(
                "postgres: loaded {} ({n} rows) in {:.1} s",
                t.sql,
                t0.elapsed().as_secs_f64()
            ));
        }
        for ddl in create_indexes() {
            client.batch_execute(&ddl).map_err(err("create index"))?;
        }
        client
            .batch_execute("VACUUM ANALYZE")
            .map_err(err("analyze"))?;
        let secs = start.elapsed().as_secs_f64();
        log(&format!(
            "postgres: loaded, indexed and analyzed in {secs:.1} s"
        ));
        Ok((
            PostgresPeer {
                client,
                timeout: None,
                _cluster: cluster,
            },
            secs,
        ))
    }
}

impl Peer for PostgresPeer {
    fn run(&mut self, query: &Query, limit: Duration) -> Result<Answer, RunError> {
        if self.timeout != Some(limit) {
            self.client
                .batch_execute(&format!(
                    "SET statement_timeout = {}",
                    limit.as_millis().max(1)
                ))
                .map_err(|e| RunError::Failed(e.to_string()))?;
            self.timeout = Some(limit);
        }
        let messages = self.client.simple_query(&query.sql).map_err(|e| {
            let cancelled = e
                .code()
                .is_some_and(|c| *c == postgres::error::SqlState::QUERY_CANCELED);
            if cancelled {
                RunError::Timeout
            } else {
                RunError::Failed(e.to_string())
            }
        })?;
        let rows = messages
            .iter()
            .filter_map(|m| match m {
                SimpleQueryMessage::Row(r) => Some(
                    (0..r.len())
                        .map(|i| r.get(i).map_or(Cell::Null, Cell::from_text))
                        .collect(),
                ),
                _ => None,
            })
            .collect();
        Ok(Answer { rows })
    }
}
