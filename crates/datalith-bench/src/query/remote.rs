//! `datalith-remote`: Datalith through its server, the peer `query --remote` adds. The real
//! `datalith serve` (durable, as the `datalith` peer) runs in its own process on loopback;
//! this process drives it with the Rust client (`datalith-client`: CBOR over HTTP/1.1, one
//! kept-alive connection).
//!
//! - Reads: one server, loaded once with every person (one transaction); a task takes one
//!   database value (`Connection::db`, untimed, as the embedded peer takes its `Db` before
//!   the clock) and times `RemoteDb::q` until the whole result is read back (from CBOR).
//! - Writes (`add-1`, `add-5`, `add-all`, `retract-5`): each run on a fresh server and
//!   directory with the schema installed (untimed, as the embedded peer's fresh database);
//!   the timed part is the transactions, each a request answered once durable.
//! - Not over the server: `init` (the bulk loader writes files, not transactions) and
//!   `lookup-raw` (the client has no raw index call).

use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use datalith::edn::{read_one, Edn};
use datalith_client::{Connection, RemoteDb};

use super::data::{self, Person};
use super::datalith::{result_len, SCHEMA};
use super::peer::Peer;
use super::tasks::{Kind, Task};
use super::timing::{measure, Cap, Measured, Plan};
use crate::common::serve::Server;
use crate::common::BenchError;

/// The peer's label.
pub const LABEL: &str = "datalith-remote";

/// Why a task does not run over the server (`None`: it does).
pub fn not_remote(task: &Task) -> Option<&'static str> {
    match task.name {
        "init" => Some("no bulk loader over the server (init_db writes the files)"),
        "lookup-raw" => Some("the client has no raw index access"),
        _ => None,
    }
}

/// Datalith through `datalith serve`.
pub struct RemotePeer {
    people: Arc<Vec<Person>>,
    dir: PathBuf,
    runs: u64,
    /// The loaded server the read tasks query (made on first use).
    loaded: Option<(Server, PathBuf)>,
}

fn err<E: std::fmt::Display>(op: &'static str) -> impl FnOnce(E) -> BenchError {
    BenchError::store(LABEL, op)
}

/// A string as EDN text.
fn quoted(s: &str) -> String {
    datalith::edn::to_edn_string(&Edn::String(s.to_string()))
}

/// A person's entity map as EDN text, with the tempid `"p<id>"`.
fn person_map(p: &Person) -> String {
    format!(
        "{{:db/id \"p{}\" :name {} :last-name {} :sex :{} :age {} :salary {}}}",
        p.id,
        quoted(&p.name),
        quoted(&p.last_name),
        p.sex,
        p.age,
        p.salary
    )
}

impl RemotePeer {
    /// A peer whose databases go under `dir`.
    pub fn new(people: Arc<Vec<Person>>, dir: &Path) -> RemotePeer {
        RemotePeer {
            people,
            dir: dir.to_path_buf(),
            runs: 0,
            loaded: None,
        }
    }

    /// A fresh server on a fresh, empty directory, with the schema (untimed).
    fn fresh(&mut self) -> Result<(Server, PathBuf), BenchError> {
        self.runs += 1;
        let path = self.dir.join(format!("{LABEL}-{}", self.runs));
        let _ = std::fs::remove_dir_all(&path);
        let server = Server::start(&path)?;
        server
            .connection()
            .transact(SCHEMA)
            .map_err(err("schema"))?;
        Ok((server, path))
    }

    /// Every person in one transaction, as EDN text.
    fn all_maps(&self) -> String {
        let mut s = String::from("[");
        for p in self.people.iter() {
            s.push_str(&person_map(p));
            s.push('\n');
        }
        s.push(']');
        s
    }

    /// A fresh server holding every person, and the entity id of each (file order).
    fn loaded_fresh(&mut self) -> Result<(Server, PathBuf, Vec<u64>), BenchError> {
        let (server, path) = self.fresh()?;
        let report = server
            .connection()
            .transact(&self.all_maps())
            .map_err(err("load"))?;
        let ids = self
            .people
            .iter()
            .map(|p| {
                report
                    .tempid(&format!("p{}", p.id))
                    .ok_or_else(|| BenchError::Store {
                        store: LABEL.into(),
                        op: "load",
                        message: format!("tempid p{} not resolved", p.id),
                    })
            })
            .collect::<Result<Vec<_>, _>>()?;
        Ok((server, path, ids))
    }

    /// Runs `body` on a fresh server per run (setup untimed), then counts the person datoms
    /// left and stops the server.
    fn run_write(&mut self, task: &Task, plan: Plan) -> Result<Measured, BenchError> {
        let what = format!("{LABEL} {}", task.name);
        let me = std::cell::RefCell::new(self);
        let finish = |(server, path): (Server, PathBuf)| -> Result<u64, BenchError> {
            let n = datom_count(&server.connection())?;
            drop(server);
            let _ = std::fs::remove_dir_all(path);
            Ok(n)
        };
        match task.name {
            "add-1" => measure(
                plan,
                &what,
                || {
                    let mut m = me.borrow_mut();
                    let (server, path) = m.fresh()?;
                    let people = m.people.clone();
                    Ok((server, path, people))
                },
                |(server, path, people)| {
                    let cap = Cap::start(plan.cap_secs);
                    let conn = server.connection();
                    let total = people.len();
                    for (i, p) in people.iter().enumerate() {
                        cap.check(LABEL, i * 5, total * 5)?;
                        let report = conn
                            .transact(
                                format!("[[:db/add \"p\" :name {}]]", quoted(&p.name)).as_str(),
                            )
                            .map_err(err("add-1"))?;
                        let e = report.tempid("p").ok_or_else(|| BenchError::Store {
                            store: LABEL.into(),
                            op: "add-1",
                            message: "tempid p not resolved".into(),
                        })?;
                        for (a, v) in [
                            (":last-name", quoted(&p.last_name)),
                            (":sex", format!(":{}", p.sex)),
                            (":age", p.age.to_string()),
                            (":salary", p.salary.to_string()),
                        ] {
                            conn.transact(format!("[[:db/add {e} {a} {v}]]").as_str())
                                .map_err(err("add-1"))?;
                        }
                    }
                    Ok((server, path))
                },
                finish,
            ),
            "add-5" => measure(
                plan,
                &what,
                || {
                    let mut m = me.borrow_mut();
                    let (server, path) = m.fresh()?;
                    let txs: Vec<String> = m
                        .people
                        .iter()
                        .map(|p| format!("[{}]", person_map(p)))
                        .collect();
                    Ok((server, path, txs))
                },
                |(server, path, txs)| {
                    let cap = Cap::start(plan.cap_secs);
                    let conn = server.connection();
                    let total = txs.len();
                    for (i, tx) in txs.iter().enumerate() {
                        cap.check(LABEL, i, total)?;
                        conn.transact(tx).map_err(err("add-5"))?;
                    }
                    Ok((server, path))
                },
                finish,
            ),
            "add-all" => measure(
                plan,
                &what,
                || {
                    let mut m = me.borrow_mut();
                    let (server, path) = m.fresh()?;
                    let tx = m.all_maps();
                    Ok((server, path, tx))
                },
                |(server, path, tx)| {
                    server.connection().transact(&tx).map_err(err("add-all"))?;
                    Ok((server, path))
                },
                finish,
            ),
            "retract-5" => measure(
                plan,
                &what,
                || {
                    let mut m = me.borrow_mut();
                    let (server, path, ids) = m.loaded_fresh()?;
                    let txs: Vec<String> = data::retract_order(&m.people)
                        .into_iter()
                        .map(|i| format!("[[:db/retractEntity {}]]", ids[i]))
                        .collect();
                    Ok((server, path, txs))
                },
                |(server, path, txs)| {
                    let cap = Cap::start(plan.cap_secs);
                    let conn = server.connection();
                    let total = txs.len();
                    for (i, tx) in txs.iter().enumerate() {
                        cap.check(LABEL, i, total)?;
                        conn.transact(tx).map_err(err("retract-5"))?;
                    }
                    Ok((server, path))
                },
                finish,
            ),
            other => Err(BenchError::Arg {
                arg: "--tasks",
                message: format!("{other} does not run over the server"),
            }),
        }
    }

    /// A value of the loaded server's database (the server started and loaded on first use).
    fn reading(&mut self) -> Result<RemoteDb, BenchError> {
        if self.loaded.is_none() {
            let (server, path, _) = self.loaded_fresh()?;
            self.loaded = Some((server, path));
        }
        match &self.loaded {
            Some((server, _)) => server.connection().db().map_err(err("db")),
            None => unreachable!("loaded just above"),
        }
    }

    fn run_read(&mut self, task: &Task, plan: Plan) -> Result<Measured, BenchError> {
        let Some(text) = task.query else {
            return Err(BenchError::Arg {
                arg: "--tasks",
                message: format!("{} does not run over the server", task.name),
            });
        };
        let value = self.reading()?;
        let inputs: Vec<Edn> = task
            .input
            .map(|i| read_one(i).map_err(err("input")))
            .into_iter()
            .collect::<Result<_, _>>()?;
        measure(
            plan,
            &format!("{LABEL} {}", task.name),
            || Ok(()),
            |()| value.q(text, &inputs).map_err(err("query")),
            |edn| Ok(result_len(&edn)),
        )
    }
}

/// Datoms of the five person attributes (each of cardinality one: one datom per entity that
/// has it), counted by the server.
fn datom_count(conn: &Connection) -> Result<u64, BenchError> {
    let value = conn.db().map_err(err("count"))?;
    let mut n = 0;
    for a in ["name", "last-name", "sex", "age", "salary"] {
        let mut q = String::new();
        let _ = write!(q, "[:find (count ?e) . :where [?e :{a}]]");
        match value.q(&q, &[]).map_err(err("count"))? {
            Edn::Long(c) => n += c as u64,
            Edn::Nil => {}
            other => {
                return Err(BenchError::Store {
                    store: LABEL.into(),
                    op: "count",
                    message: format!("a count answered {other}"),
                })
            }
        }
    }
    Ok(n)
}

impl Drop for RemotePeer {
    fn drop(&mut self) {
        if let Some((server, path)) = self.loaded.take() {
            drop(server);
            let _ = std::fs::remove_dir_all(path);
        }
    }
}

impl Peer for RemotePeer {
    fn runs(&self, task: &Task) -> bool {
        not_remote(task).is_none()
    }

    fn run(&mut self, task: &Task, plan: Plan) -> Result<Measured, BenchError> {
        match task.kind {
            Kind::Write => self.run_write(task, plan),
            Kind::Read => self.run_read(task, plan),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_person_is_one_entity_map_of_edn() {
        let p = Person {
            id: 7,
            name: "Iv\"an".into(),
            last_name: "Ivanov".into(),
            sex: "male".into(),
            age: 23,
            salary: 12345,
        };
        let text = format!("[{}]", person_map(&p));
        let edn = read_one(&text).unwrap();
        let Edn::Vector(items) = edn else {
            panic!("{text}")
        };
        assert_eq!(items.len(), 1);
        assert!(text.contains(":sex :male"), "{text}");
        assert!(text.contains(":db/id \"p7\""), "{text}");
        assert_eq!(
            not_remote(&super::super::tasks::ALL[0]),
            Some("no bulk loader over the server (init_db writes the files)")
        );
        assert!(not_remote(&super::super::tasks::by_name("q1").unwrap()).is_none());
    }
}
