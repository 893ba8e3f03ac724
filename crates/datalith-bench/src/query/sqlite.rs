//! SQLite as a peer of workload Q: one table `people`, an index on every column, and for each
//! task the equivalent SQL. `sqlite` runs WAL with `synchronous=FULL` (durable, like
//! `datalith`); `sqlite-nosync` runs WAL with `synchronous=OFF` (like `datalith-nosync`, write
//! tasks only).
//!
//! Write tasks mirror the Datalog ones: `add-1` inserts the row with its name, then sets each
//! other column in its own transaction; `add-5` inserts one row per transaction; `add-all` and
//! `init` insert all rows in one transaction (SQLite has no load path faster than that);
//! `retract-5` deletes one row per transaction in the retraction order.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use rusqlite::{params, Connection};

use super::data::{self, Person};
use super::peer::Peer;
use super::tasks::{Kind, Task};
use super::timing::{measure, Cap, Measured, Plan};
use crate::common::BenchError;

pub const SCHEMA: &str = "CREATE TABLE people (id INTEGER PRIMARY KEY, name TEXT, last_name TEXT, \
     sex TEXT, age INTEGER, salary INTEGER);
     CREATE INDEX people_name ON people(name);
     CREATE INDEX people_last_name ON people(last_name);
     CREATE INDEX people_sex ON people(sex);
     CREATE INDEX people_age ON people(age);
     CREATE INDEX people_salary ON people(salary);";

pub const INSERT: &str =
    "INSERT INTO people (id, name, last_name, sex, age, salary) VALUES (?1, ?2, ?3, ?4, ?5, ?6)";

/// `add-1`: the row with its name first, then each other column in its own transaction.
pub const ADD_1_INSERT: &str = "INSERT INTO people (id, name) VALUES (?1, ?2)";
pub const ADD_1_UPDATES: [&str; 4] = [
    "UPDATE people SET last_name = ?2 WHERE id = ?1",
    "UPDATE people SET sex = ?2 WHERE id = ?1",
    "UPDATE people SET age = ?2 WHERE id = ?1",
    "UPDATE people SET salary = ?2 WHERE id = ?1",
];
/// `retract-5`: one row per transaction.
pub const DELETE: &str = "DELETE FROM people WHERE id = ?1";
/// Non-null cells of the five columns: the datoms a Datalog store would hold.
pub const CELL_COUNT: &str =
    "SELECT COUNT(name) + COUNT(last_name) + COUNT(sex) + COUNT(age) + COUNT(salary) FROM people";

/// Runs the prepared [`INSERT`] for one person.
fn insert_person(st: &mut rusqlite::CachedStatement<'_>, p: &Person) -> rusqlite::Result<usize> {
    st.execute(params![
        p.id as i64,
        p.name,
        p.last_name,
        p.sex,
        p.age,
        p.salary
    ])
}

/// The SQL of a read task and its parameter, if any.
pub fn sql(task: &str) -> Option<(&'static str, Option<rusqlite::types::Value>)> {
    use rusqlite::types::Value as V;
    Some(match task {
        "q1" => ("SELECT id FROM people WHERE name = 'Ivan'", None),
        // SQL has no clause order: q2-switch is q2 with the conditions written the other way.
        "q2" => (
            "SELECT id, age FROM people WHERE name = 'Ivan' AND age IS NOT NULL",
            None,
        ),
        "q2-switch" => (
            "SELECT id, age FROM people WHERE age IS NOT NULL AND name = 'Ivan'",
            None,
        ),
        "q3" => (
            "SELECT id, age FROM people WHERE name = 'Ivan' AND age IS NOT NULL AND sex = 'male'",
            None,
        ),
        "q4" => (
            "SELECT id, last_name, age FROM people WHERE name = 'Ivan' AND last_name IS NOT NULL \
             AND age IS NOT NULL AND sex = 'male'",
            None,
        ),
        // A set of (e1, l, a): every person whose age some Ivan has (ids are unique, so no
        // DISTINCT is needed).
        "q5" => (
            "SELECT p1.id, p1.last_name, p1.age FROM people p1 WHERE p1.last_name IS NOT NULL \
             AND p1.age IN (SELECT age FROM people WHERE name = 'Ivan')",
            None,
        ),
        "qpred1" => ("SELECT id, salary FROM people WHERE salary > 50000", None),
        "qpred2" => (
            "SELECT id, salary FROM people WHERE salary > ?1",
            Some(V::Integer(50_000)),
        ),
        // The Datalog lookup keeps one value per entity (`:with ?e`), as the raw one does.
        "lookup-q" => (
            "SELECT last_name FROM people WHERE name = ?1 AND last_name IS NOT NULL",
            Some(V::Text("Ivan".into())),
        ),
        "lookup-raw" => (
            "SELECT last_name FROM people WHERE name = ?1 AND last_name IS NOT NULL",
            Some(V::Text("Ivan".into())),
        ),
        _ => return None,
    })
}

/// SQLite with one `synchronous` setting.
pub struct SqlitePeer {
    label: String,
    durable: bool,
    people: Arc<Vec<Person>>,
    dir: PathBuf,
    runs: u64,
    loaded: Option<(Connection, PathBuf)>,
}

impl SqlitePeer {
    pub fn new(durable: bool, people: Arc<Vec<Person>>, dir: &Path) -> SqlitePeer {
        SqlitePeer {
            label: if durable { "sqlite" } else { "sqlite-nosync" }.to_string(),
            durable,
            people,
            dir: dir.to_path_buf(),
            runs: 0,
            loaded: None,
        }
    }

    fn err<E: std::fmt::Display>(&self, op: &'static str) -> impl FnOnce(E) -> BenchError {
        BenchError::store(&self.label, op)
    }

    fn fresh(&mut self) -> Result<(Connection, PathBuf), BenchError> {
        self.runs += 1;
        let path = self.dir.join(format!("{}-{}", self.label, self.runs));
        let _ = std::fs::remove_dir_all(&path);
        std::fs::create_dir_all(&path).map_err(BenchError::io(&path))?;
        let conn = Connection::open(path.join("people.sqlite")).map_err(self.err("open"))?;
        let sync = if self.durable { "FULL" } else { "OFF" };
        conn.execute_batch(&format!(
            "PRAGMA journal_mode=WAL; PRAGMA synchronous={sync};"
        ))
        .map_err(self.err("pragma"))?;
        conn.execute_batch(SCHEMA).map_err(self.err("schema"))?;
        Ok((conn, path))
    }

    fn insert_all(&self, conn: &mut Connection) -> Result<(), BenchError> {
        let tx = conn.transaction().map_err(self.err("begin"))?;
        {
            let mut st = tx.prepare_cached(INSERT).map_err(self.err("prepare"))?;
            for p in self.people.iter() {
                insert_person(&mut st, p).map_err(self.err("insert"))?;
            }
        }
        tx.commit().map_err(self.err("commit"))
    }

    /// Non-null cells of the five columns: the datoms a Datalog store would hold.
    fn cell_count(&self, conn: &Connection) -> Result<u64, BenchError> {
        conn.query_row(CELL_COUNT, [], |r| r.get::<_, i64>(0))
            .map(|n| n as u64)
            .map_err(self.err("count"))
    }

    fn finish(&self, conn: Connection, path: PathBuf) -> Result<u64, BenchError> {
        let n = self.cell_count(&conn)?;
        drop(conn);
        let _ = std::fs::remove_dir_all(&path);
        Ok(n)
    }

    fn run_write(&mut self, task: &Task, plan: Plan) -> Result<Measured, BenchError> {
        let label = self.label.clone();
        let what = format!("{label} {}", task.name);
        let people = self.people.clone();
        let me = std::cell::RefCell::new(self);
        let fail = |op: &'static str| BenchError::store(&label, op);
        let setup = || me.borrow_mut().fresh();
        let count = |(conn, path): (Connection, PathBuf)| me.borrow().finish(conn, path);
        match task.name {
            // init's timer includes opening the file and creating the table, as every
            // peer's `init` includes opening its store and installing the schema.
            "init" => measure(
                plan,
                &what,
                || Ok(()),
                |()| {
                    let (mut conn, path) = me.borrow_mut().fresh()?;
                    me.borrow().insert_all(&mut conn)?;
                    Ok((conn, path))
                },
                count,
            ),
            "add-all" => measure(
                plan,
                &what,
                setup,
                |(mut conn, path)| {
                    me.borrow().insert_all(&mut conn)?;
                    Ok((conn, path))
                },
                count,
            ),
            "add-1" => measure(
                plan,
                &what,
                setup,
                |(conn, path)| {
                    {
                        let mut ins = conn.prepare_cached(ADD_1_INSERT).map_err(fail("prepare"))?;
                        let mut cols = ADD_1_UPDATES.map(|s| conn.prepare(s));
                        let cap = Cap::start(plan.cap_secs);
                        for (i, p) in people.iter().enumerate() {
                            cap.check(&label, i * 5, people.len() * 5)?;
                            ins.execute(params![p.id as i64, p.name])
                                .map_err(fail("insert"))?;
                            let vals: [rusqlite::types::Value; 4] = [
                                p.last_name.clone().into(),
                                p.sex.clone().into(),
                                p.age.into(),
                                p.salary.into(),
                            ];
                            for (st, v) in cols.iter_mut().zip(vals) {
                                let st = st.as_mut().map_err(|e| BenchError::Store {
                                    store: label.clone(),
                                    op: "prepare",
                                    message: e.to_string(),
                                })?;
                                st.execute(params![p.id as i64, v])
                                    .map_err(fail("update"))?;
                            }
                        }
                    }
                    Ok((conn, path))
                },
                count,
            ),
            "add-5" => measure(
                plan,
                &what,
                setup,
                |(conn, path)| {
                    {
                        let mut st = conn.prepare_cached(INSERT).map_err(fail("prepare"))?;
                        let cap = Cap::start(plan.cap_secs);
                        for (i, p) in people.iter().enumerate() {
                            cap.check(&label, i, people.len())?;
                            insert_person(&mut st, p).map_err(fail("insert"))?;
                        }
                    }
                    Ok((conn, path))
                },
                count,
            ),
            "retract-5" => measure(
                plan,
                &what,
                || {
                    let mut m = me.borrow_mut();
                    let (mut conn, path) = m.fresh()?;
                    m.insert_all(&mut conn)?;
                    Ok((conn, path))
                },
                |(conn, path)| {
                    {
                        let mut st = conn.prepare_cached(DELETE).map_err(fail("prepare"))?;
                        let cap = Cap::start(plan.cap_secs);
                        for (k, i) in data::retract_order(&people).into_iter().enumerate() {
                            cap.check(&label, k, people.len())?;
                            st.execute(params![people[i].id as i64])
                                .map_err(fail("delete"))?;
                        }
                    }
                    Ok((conn, path))
                },
                count,
            ),
            other => Err(BenchError::Arg {
                arg: "--tasks",
                message: format!("{other} is not a write task"),
            }),
        }
    }

    fn run_read(&mut self, task: &Task, plan: Plan) -> Result<Measured, BenchError> {
        if self.loaded.is_none() {
            let (mut conn, path) = self.fresh()?;
            self.insert_all(&mut conn)?;
            conn.execute_batch("ANALYZE").map_err(self.err("analyze"))?;
            self.loaded = Some((conn, path));
        }
        let Some((conn, _)) = &self.loaded else {
            unreachable!("loaded just above")
        };
        let Some((text, param)) = sql(task.name) else {
            return Err(BenchError::Arg {
                arg: "--tasks",
                message: format!("{} has no SQL", task.name),
            });
        };
        let label = self.label.clone();
        let fail = |op: &'static str| BenchError::store(&label, op);
        measure(
            plan,
            &format!("{label} {}", task.name),
            || Ok(()),
            |()| {
                let mut st = conn.prepare_cached(text).map_err(fail("prepare"))?;
                let ncols = st.column_count();
                let params: Vec<&dyn rusqlite::ToSql> = match &param {
                    Some(p) => vec![p],
                    None => Vec::new(),
                };
                let mut rows = st.query(params.as_slice()).map_err(fail("query"))?;
                // Every column is read, as a Datalog peer materializes every tuple.
                let mut out: Vec<Vec<rusqlite::types::Value>> = Vec::new();
                while let Some(r) = rows.next().map_err(fail("step"))? {
                    let mut row = Vec::with_capacity(ncols);
                    for i in 0..ncols {
                        row.push(r.get::<_, rusqlite::types::Value>(i).map_err(fail("get"))?);
                    }
                    out.push(row);
                }
                Ok(out.len() as u64)
            },
            Ok,
        )
    }
}

impl Drop for SqlitePeer {
    fn drop(&mut self) {
        if let Some((conn, path)) = self.loaded.take() {
            drop(conn);
            let _ = std::fs::remove_dir_all(path);
        }
    }
}

impl Peer for SqlitePeer {
    fn runs(&self, task: &Task) -> bool {
        match task.kind {
            Kind::Read => self.durable,
            Kind::Write => true,
        }
    }

    fn run(&mut self, task: &Task, plan: Plan) -> Result<Measured, BenchError> {
        match task.kind {
            Kind::Write => self.run_write(task, plan),
            Kind::Read => self.run_read(task, plan),
        }
    }
}
