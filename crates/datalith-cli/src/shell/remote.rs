//! The shell on a server: `datalith shell http://HOST:PORT/db/NAME` (or `datalith URL`).
//! Queries, tx data and `.pull` go through `datalith-client`, and print as the local shell
//! prints them (`.schema` and `.attrs` from the server's `stat`, `.output` and `.read` as
//! locally, `.explain` from the plan the server answers with); what only a local file allows
//! (`.open`, `.import`, `.dump`, `.backup`) is refused with a word on why. Without a database in the URL, the server's
//! only database is used, or `.use NAME` picks one.

use std::path::Path;
use std::sync::{Arc, RwLock};
use std::time::Instant;

use datalith::edn::{read_all, to_edn_string, Edn};
use datalith_client::Connection;

use super::session::{read_forms, Flow};
use super::Handler;
use crate::error::{CliError, Result};
use crate::exec;
use crate::remote::{report_edn, Remote};
use crate::render::{find_headers, render, Format};

const HELP: &str = "\
Type a query ([:find ...], {:find ...}, or {:query [:find ...] :args [INPUT ...]}) or tx data
([{:name \"Ann\"}]); each runs on the server, a query on the database's latest value.

.help                 this text
.dbs                  the databases this client may read
.use NAME             work on database NAME
.stat                 the database's statistics, as the server gives them
.schema               the database's attributes as tx data (what would recreate them)
.attrs                its attributes with their datoms and distinct values
.pull PATTERN EID     pull PATTERN for EID (an entity id, an :ident or a lookup ref [:attr v])
.explain QUERY        run QUERY and show its plan: each step's index, estimated and actual rows
.mode table|edn|json|csv   how results print
.timer on|off         print how long each command took (the round trip)
.output [FILE]        write results to FILE (no FILE: back to the screen)
.read FILE            run the commands of FILE
.quit                 leave (also .exit, Ctrl-D)
";

/// A shell session on a server.
pub struct RemoteSession {
    remote: Remote,
    /// The database inputs go to.
    db: Option<Connection>,
    /// How results print.
    mode: Format,
    timer: bool,
    /// Where results go (`.output FILE`).
    output: super::output::Output,
    /// How deep `.read` is nested.
    depth: u32,
    /// Errors so far (a script's exit status).
    pub errors: u64,
    /// Attribute idents for completion.
    pub attrs: Arc<RwLock<Vec<String>>>,
}

/// `scheme://host:port` and the database the URL's path names (`/db/NAME`), if any.
pub fn split_url(url: &str) -> Result<(String, Option<String>)> {
    let bad = |why: &str| {
        CliError::user(format!(
            "{url}: {why} (expected http://HOST:PORT or https://HOST:PORT, with /db/NAME for a \
             database)"
        ))
    };
    let Some((scheme, rest)) = url.split_once("://") else {
        return Err(bad("not a URL"));
    };
    if scheme != "http" && scheme != "https" {
        return Err(bad("not http or https"));
    }
    let (host, path) = rest.split_once('/').unwrap_or((rest, ""));
    if host.is_empty() {
        return Err(bad("no host"));
    }
    let base = format!("{scheme}://{host}");
    let path = path.trim_end_matches('/');
    if path.is_empty() {
        return Ok((base, None));
    }
    match path.strip_prefix("db/") {
        Some(name) if !name.is_empty() && !name.contains('/') => Ok((base, Some(name.to_string()))),
        _ => Err(bad("its path is not /db/NAME")),
    }
}

impl RemoteSession {
    /// A session on the server at `url`, trusting `cacert` over `https://`.
    pub fn new(url: &str, cacert: Option<&Path>) -> Result<RemoteSession> {
        let (base, name) = split_url(url)?;
        let remote = Remote::new(&base, cacert)?;
        let mut session = RemoteSession {
            remote,
            db: None,
            mode: Format::Table,
            timer: false,
            output: Default::default(),
            depth: 0,
            errors: 0,
            attrs: Arc::new(RwLock::new(Vec::new())),
        };
        let name = match name {
            Some(name) => Some(name),
            // One database served: that one; several: `.use` picks.
            None => match session.remote.client().databases()?.as_slice() {
                [only] => Some(only.clone()),
                _ => None,
            },
        };
        if let Some(name) = name {
            session.use_database(&name)?;
        }
        Ok(session)
    }

    /// What the banner names.
    pub fn on(&self) -> String {
        match &self.db {
            Some(db) => format!("{} at {}", db.name(), self.remote.url()),
            None => format!(
                "{} (no database yet: .dbs lists them, .use NAME)",
                self.remote.url()
            ),
        }
    }

    fn use_database(&mut self, name: &str) -> Result<()> {
        let db = self.remote.database(name);
        // Asks the server now, so that a wrong name or token is told at once.
        let snapshot = db.db()?;
        let idents = snapshot.q(
            "[:find [?i ...] :where [?a :db/ident ?i] [?a :db/valueType]]",
            &[],
        )?;
        if let Edn::Vector(idents) = idents {
            let names = idents.iter().map(to_edn_string).collect();
            *self.attrs.write().unwrap_or_else(|p| p.into_inner()) = names;
        }
        self.db = Some(db);
        Ok(())
    }

    fn database(&self) -> Result<&Connection> {
        self.db.as_ref().ok_or_else(|| {
            CliError::user("no database chosen: .dbs lists them, .use NAME picks one")
        })
    }

    /// Writes `text` where results go.
    fn out(&mut self, text: &str) {
        self.output.write(text);
    }

    fn timed(&self, start: Instant) {
        if self.timer {
            println!("time: {:.3} ms", start.elapsed().as_secs_f64() * 1e3);
        }
    }

    fn dispatch(&mut self, text: &str, source: &str, first_line: usize) -> Result<Flow> {
        let t = text.trim();
        if t.starts_with('.') {
            return self.dot(t);
        }
        for form in read_forms(text, source, first_line)? {
            self.form(&form)?;
        }
        Ok(Flow::Continue)
    }

    /// A query or tx data.
    fn form(&mut self, form: &Edn) -> Result<()> {
        let start = Instant::now();
        if exec::is_query(form) {
            let (query, args) = match exec::query_with_args(form) {
                Some((q, args)) => (q.clone(), args),
                None => (form.clone(), Vec::new()),
            };
            let result = self.database()?.db()?.q(&to_edn_string(&query), &args)?;
            let text = render(&result, &find_headers(&query), self.mode);
            self.out(&text);
            self.timed(start);
            return Ok(());
        }
        if !matches!(form, Edn::Vector(_) | Edn::List(_)) {
            return Err(CliError::user(format!(
                "{} is neither a query (a vector or map starting with :find) nor tx data (a \
                 vector of maps and operations)",
                to_edn_string(form)
            )));
        }
        let report = self.database()?.transact(form)?;
        let text = format!("{}\n", to_edn_string(&report_edn(&report)?));
        self.out(&text);
        self.timed(start);
        Ok(())
    }

    fn dot(&mut self, line: &str) -> Result<Flow> {
        let (cmd, rest) = line
            .split_once(char::is_whitespace)
            .map_or((line, ""), |(c, r)| (c, r.trim()));
        let args: Vec<&str> = rest.split_whitespace().collect();
        let start = Instant::now();
        match cmd {
            ".quit" | ".exit" => return Ok(Flow::Quit),
            ".help" => print!("{HELP}"),
            ".dbs" => {
                for name in self.remote.client().databases()? {
                    self.out(&format!("{name}\n"));
                }
            }
            ".use" => match args.as_slice() {
                [name] => self.use_database(name)?,
                _ => return Err(CliError::user("usage: .use NAME")),
            },
            ".stat" => {
                let stat = self.database()?.stat()?;
                self.out(&format!("{}\n", to_edn_string(&stat)));
            }
            ".schema" => {
                let rows = crate::info::attr_rows_of_stat(&self.database()?.stat()?);
                self.out(&crate::info::schema_text(&rows));
            }
            ".attrs" => {
                let rows = crate::info::attr_rows_of_stat(&self.database()?.stat()?);
                self.out(&crate::info::attrs_table(&rows));
            }
            ".output" => self.output.set(&args)?,
            ".read" => return super::read_script(self, &args),
            ".pull" => {
                let forms = read_all(rest).map_err(|e| CliError::read("pull", &e))?;
                let [pattern, eid] = forms.as_slice() else {
                    return Err(CliError::user("usage: .pull PATTERN EID"));
                };
                let eid = datalith::Eid::from_edn(eid)?;
                let result = self.database()?.db()?.pull(&to_edn_string(pattern), eid)?;
                self.out(&format!("{}\n", to_edn_string(&result)));
            }
            ".mode" => match args.as_slice() {
                [m] => self.mode = Format::parse(m)?,
                [] => println!("mode: {}", self.mode.name()),
                _ => return Err(CliError::user("usage: .mode table|edn|json|csv")),
            },
            ".timer" => match args.as_slice() {
                ["on"] => self.timer = true,
                ["off"] => self.timer = false,
                _ => return Err(CliError::user("usage: .timer on|off")),
            },
            ".explain" => {
                super::session::explain_argument(rest)?;
                // The text as typed: the plan's positions are in it.
                let (_, plan) = self.database()?.db()?.explain(rest, &[])?;
                self.out(&super::session::explain_text_of_edn(&plan));
            }
            ".open" | ".import" | ".dump" | ".backup" => {
                return Err(CliError::user(format!(
                    "{cmd} works on a local database, not over a server (.help lists what does)"
                )))
            }
            other => {
                return Err(CliError::user(format!(
                    "unknown command {other}: .help lists them"
                )))
            }
        }
        if cmd != ".timer" {
            self.timed(start);
        }
        Ok(Flow::Continue)
    }
}

impl Handler for RemoteSession {
    fn handle(&mut self, text: &str, source: &str, first_line: usize) -> Flow {
        match self.dispatch(text, source, first_line) {
            Ok(flow) => flow,
            Err(e) => {
                self.errors += 1;
                eprintln!("error: {e}");
                Flow::Continue
            }
        }
    }
    fn errors(&self) -> u64 {
        self.errors
    }
    fn reading(&mut self) -> &mut u32 {
        &mut self.depth
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn urls_name_a_server_and_maybe_a_database() {
        let cases: &[(&str, Option<(&str, Option<&str>)>)] = &[
            (
                "http://127.0.0.1:7171",
                Some(("http://127.0.0.1:7171", None)),
            ),
            (
                "http://127.0.0.1:7171/",
                Some(("http://127.0.0.1:7171", None)),
            ),
            (
                "https://db.example:7171/db/people",
                Some(("https://db.example:7171", Some("people"))),
            ),
            (
                "http://localhost:7171/db/people/",
                Some(("http://localhost:7171", Some("people"))),
            ),
            ("http://localhost:7171/people", None),
            ("http://localhost:7171/db/", None),
            ("http://localhost:7171/db/a/b", None),
            ("ftp://localhost/db/x", None),
            ("localhost:7171", None),
            ("http:///db/x", None),
        ];
        for (url, want) in cases {
            let got = split_url(url).ok();
            let want = want.map(|(b, n)| (b.to_string(), n.map(str::to_string)));
            assert_eq!(got, want, "{url}");
        }
    }
}
