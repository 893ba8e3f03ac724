//! One shell session: the open database, the output settings, and what each input does.
//! Errors are printed and the session goes on; only `.quit` (or end of input) ends it.

use std::fs::File;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::{Arc, RwLock};
use std::time::{Duration, Instant};

use datalith::edn::{is_complete, read_all, to_edn_string, Edn};
use datalith::Database;

use super::complete::DOT_COMMANDS;
use super::interrupt;
use crate::error::{CliError, Result};
use crate::exec;
use crate::render::{render, Format};

/// What to do after an input.
#[derive(Debug, PartialEq, Eq)]
pub enum Flow {
    /// Read the next input.
    Continue,
    /// End the session.
    Quit,
}

/// Shell state.
pub struct Session {
    /// The open database: `None` only after a failed `.open` (commands then say so).
    db: Option<Database>,
    /// Where the database is (what `.open` without an argument reopens).
    pub path: PathBuf,
    /// How results print.
    pub mode: Format,
    /// Whether to print each command's time.
    pub timer: bool,
    /// Where results go (`.output FILE`).
    pub output: super::output::Output,
    /// Attribute idents for completion.
    pub attrs: Arc<RwLock<Vec<String>>>,
    /// Errors so far (a script's exit status).
    pub errors: u64,
    /// Nesting of `.read` (a file that reads itself must not recurse forever).
    pub depth: u32,
    /// The point in time queries, `.pull` and `.explain` read (`.as-of`, `.since`,
    /// `.history`, `.now`); transactions always go to the current state.
    pub time: crate::time::TimeView,
}

const HELP: &str = "\
Type a query ([:find ...], {:find ...}, or {:query [:find ...] :args [INPUT ...]} where the
inputs bind to :in after $) or tx data ([{:name \"Ann\"}] or [[:db/add ...]]);
input continues over several lines until the form is complete. Ctrl-C cancels a running
query or the current input, Ctrl-D quits.

.help                 this text
.schema               the user schema as EDN tx data
.attrs                attributes with type, cardinality, uniqueness and statistics
.stat                 database size, index sizes, statistics
.timer on|off         print how long each command took
.explain QUERY        run QUERY and show the plan: indexes, estimated and actual sizes
.pull PATTERN EID     pull PATTERN for EID (an entity id, an :ident or a lookup ref [:attr v])
.as-of T              read the database as it was at T (a transaction id or an instant,
                      2030-01-01); .since T: only what was asserted after T
.history              read every assertion and retraction ([?e ?a ?v ?tx ?added])
.now                  read the current state again
.mode table|edn|json|csv   how results print
.output [FILE]        send results to FILE (no FILE: back to the screen)
.open [DIR]           open another database, or reopen this one (after a failed write,
                      e.g. a full disk, once space is freed)
.read FILE            run the queries, tx data and dot-commands of FILE
.import FILE [COL=:attr ...]  load EDN tx data, or CSV (one entity per row)
.dump [FILE]          schema and datoms as EDN tx data that reloads to the same database
.backup DIR           a compacted copy of the database into a new directory
.quit                 leave (also .exit, Ctrl-D)
";

/// Whether `text` (one input, possibly several lines) is complete enough to run.
pub fn input_complete(text: &str) -> bool {
    let t = text.trim_start();
    if let Some(rest) = t
        .strip_prefix(".explain")
        .or_else(|| t.strip_prefix(".pull"))
    {
        return is_complete(rest);
    }
    if t.starts_with('.') {
        return true;
    }
    is_complete(text)
}

impl Session {
    /// A session on `db`, opened from `path`.
    pub fn new(db: Database, path: PathBuf) -> Session {
        let s = Session {
            db: Some(db),
            path,
            mode: Format::Table,
            timer: false,
            output: Default::default(),
            attrs: Arc::new(RwLock::new(Vec::new())),
            errors: 0,
            depth: 0,
            time: Default::default(),
        };
        s.refresh_attrs();
        s
    }

    /// The open database, or the error that says none is.
    /// The value queries read: the current state through the session's time view.
    fn snapshot(&self) -> Result<datalith::Db> {
        self.time.apply(self.database()?.db()?)
    }

    fn database(&self) -> Result<&Database> {
        self.db.as_ref().ok_or_else(|| {
            CliError::env(format!(
                "no database is open: .open DIR opens one (.open alone tries {} again)",
                self.path.display()
            ))
        })
    }

    /// Closes the database and opens `target` (created if missing). When that fails, the
    /// previous database is opened again if it was another one.
    fn reopen(&mut self, target: &Path) -> Result<()> {
        // LMDB allows one open of a file per process: the old handle must be gone first.
        self.db = None;
        match crate::open::open(target, true) {
            Ok(db) => {
                self.db = Some(db);
                self.path = target.to_path_buf();
                self.refresh_attrs();
                Ok(())
            }
            Err(e) => {
                if target != self.path {
                    self.db = crate::open::open(&self.path, true).ok();
                }
                Err(e)
            }
        }
    }

    /// Reloads the attribute names used by completion.
    pub fn refresh_attrs(&self) {
        if let Some(Ok(db)) = self.db.as_ref().map(Database::db) {
            let names = db
                .schema()
                .user_attributes()
                .iter()
                .map(|a| a.ident.to_string())
                .collect();
            *self.attrs.write().unwrap_or_else(|p| p.into_inner()) = names;
        }
    }

    /// Writes a result to the current output.
    pub fn out(&mut self, text: &str) {
        self.output.write(text);
    }

    fn time(&mut self, what: &str, d: Duration) {
        if self.timer {
            println!("time: {:.3} ms{what}", d.as_secs_f64() * 1e3);
        }
    }

    /// Runs one complete input; an error is printed, counted, and the session goes on.
    pub fn handle(&mut self, text: &str, source: &str, first_line: usize) -> Flow {
        match self.dispatch(text, source, first_line) {
            Ok(flow) => flow,
            Err(e) => {
                self.errors += 1;
                eprintln!("error: {e}");
                if self
                    .db
                    .as_ref()
                    .is_some_and(|d| d.env().poisoned().is_some())
                {
                    eprintln!(
                        "hint: after a failed commit the database refuses writes until it is reopened: free space if the disk is full, then type .open"
                    );
                }
                Flow::Continue
            }
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
        if exec::is_query(form) {
            let out = self.interruptible_query(form)?;
            let text = render(&out.result, &out.headers, self.mode);
            self.out(&text);
            self.time("", out.elapsed);
            return Ok(());
        }
        if !matches!(form, Edn::Vector(_) | Edn::List(_)) {
            return Err(CliError::user(format!(
                "{} is neither a query (a vector or map starting with :find) nor tx data (a vector of maps and operations)",
                to_edn_string(form)
            )));
        }
        let (report, elapsed) = exec::transact(self.database()?, form)?;
        let text = to_edn_string(&exec::report_edn_short(&report, 20)) + "\n";
        self.out(&text);
        self.time("", elapsed);
        if report
            .tx_data
            .iter()
            .any(|d| d.e < datalith::raw::USER_PARTITION_START)
        {
            self.refresh_attrs();
        }
        Ok(())
    }

    /// Runs a query on its own thread so that Ctrl-C gives the prompt back at once: the
    /// engine notices cancellation between plan steps, and a single long step would otherwise
    /// hold the session until it finished. An abandoned query stops at its next step and its
    /// result is dropped.
    fn interruptible_query(&self, form: &Edn) -> Result<exec::QueryOutcome> {
        let snapshot = self.snapshot()?;
        interrupt::reset();
        let cancel = Arc::new(std::sync::atomic::AtomicBool::new(false));
        let (tx, rx) = std::sync::mpsc::channel();
        let form = form.clone();
        let flag = cancel.clone();
        std::thread::Builder::new()
            .name("datalith-query".into())
            .spawn(move || {
                let _ = tx.send(exec::query(&snapshot, &form, &[], &flag));
            })
            .map_err(|e| CliError::env(format!("cannot start a query thread: {e}")))?;
        loop {
            match rx.recv_timeout(Duration::from_millis(20)) {
                Ok(result) => return result,
                Err(std::sync::mpsc::RecvTimeoutError::Timeout) => {
                    if interrupt::CANCEL.load(std::sync::atomic::Ordering::SeqCst) {
                        cancel.store(true, std::sync::atomic::Ordering::SeqCst);
                        println!();
                        return Err(CliError::user("query cancelled"));
                    }
                }
                Err(std::sync::mpsc::RecvTimeoutError::Disconnected) => {
                    return Err(CliError::env("the query thread failed"));
                }
            }
        }
    }

    fn dot(&mut self, line: &str) -> Result<Flow> {
        let (cmd, rest) = line
            .split_once(char::is_whitespace)
            .map_or((line, ""), |(c, r)| (c, r.trim()));
        let args: Vec<String> = rest.split_whitespace().map(str::to_string).collect();
        let start = Instant::now();
        match cmd {
            ".quit" | ".exit" => return Ok(Flow::Quit),
            ".open" => {
                let target = match args.as_slice() {
                    [] => self.path.clone(),
                    [d] => PathBuf::from(d),
                    _ => return Err(CliError::user("usage: .open [DIR]")),
                };
                self.reopen(&target)?;
                println!("opened {}", target.display());
            }
            ".help" => print!("{HELP}"),
            ".as-of" | ".since" => {
                let [t] = args.as_slice() else {
                    return Err(CliError::user(format!("usage: {cmd} T")));
                };
                let point = crate::time::parse_point(t)?;
                let mut view = self.time;
                match cmd {
                    ".as-of" => view.as_of = Some(point),
                    _ => view.since = Some(point),
                }
                // Refused here, not at the next query, when the point is not one.
                view.apply(self.database()?.db()?)?;
                self.time = view;
                println!("reading {}", self.time.describe());
            }
            ".history" => {
                self.time.history = true;
                println!("reading {}", self.time.describe());
            }
            ".now" => {
                self.time = Default::default();
                println!("reading now");
            }
            ".schema" => {
                let text =
                    crate::info::schema_text(&crate::info::attr_rows(&self.database()?.db()?)?);
                self.out(&text);
            }
            ".attrs" => {
                let text =
                    crate::info::attrs_table(&crate::info::attr_rows(&self.database()?.db()?)?);
                self.out(&text);
            }
            ".stat" => {
                let text = crate::info::stat_text(self.database()?)?;
                self.out(&text);
            }
            ".timer" => {
                match args.as_slice() {
                    [x] if x == "on" => self.timer = true,
                    [x] if x == "off" => self.timer = false,
                    _ => return Err(CliError::user("usage: .timer on|off")),
                }
                return Ok(Flow::Continue);
            }
            ".mode" => match args.as_slice() {
                [m] => self.mode = Format::parse(m)?,
                [] => println!("mode: {}", self.mode.name()),
                _ => return Err(CliError::user("usage: .mode table|edn|json|csv")),
            },
            ".output" => self
                .output
                .set(&args.iter().map(String::as_str).collect::<Vec<_>>())?,
            ".explain" => {
                explain_argument(rest)?;
                let snapshot = self.snapshot()?;
                let t0 = Instant::now();
                // The text as typed (one form, just read): the plan's positions are in it.
                let (_, plan) = snapshot.explain(rest, &[])?;
                let elapsed = t0.elapsed();
                let text = explain_text(&plan);
                self.out(&text);
                self.time("", elapsed);
                return Ok(Flow::Continue);
            }
            ".pull" => {
                let forms =
                    datalith::edn::read_all(rest).map_err(|e| CliError::read("pull", &e))?;
                let [pattern, eid] = forms.as_slice() else {
                    return Err(CliError::user("usage: .pull PATTERN EID"));
                };
                let snapshot = self.snapshot()?;
                let t0 = Instant::now();
                let text = crate::commands::pull_text(
                    &snapshot,
                    &to_edn_string(pattern),
                    &to_edn_string(eid),
                )?;
                let elapsed = t0.elapsed();
                self.out(&text);
                self.time("", elapsed);
                return Ok(Flow::Continue);
            }
            ".read" => {
                let args: Vec<&str> = args.iter().map(String::as_str).collect();
                return super::read_script(self, &args);
            }
            ".import" => match args.split_first() {
                Some((f, mapping)) => {
                    let mapping = crate::csv::mapping(mapping)?;
                    let text = crate::commands::import_file(self.database()?, f, None, &mapping)?;
                    self.refresh_attrs();
                    print!("{text}");
                }
                None => return Err(CliError::user("usage: .import FILE [COLUMN=:attr ...]")),
            },
            ".dump" => {
                let snapshot = self.database()?.db()?;
                match args.as_slice() {
                    [] => {
                        let mut buf = Vec::new();
                        snapshot.dump(&mut buf)?;
                        self.out(&String::from_utf8_lossy(&buf));
                    }
                    [f] => {
                        let file = File::create(f)
                            .map_err(|e| CliError::user(format!("cannot create {f}: {e}")))?;
                        let mut w = std::io::BufWriter::new(file);
                        let s = snapshot.dump(&mut w)?;
                        w.flush()?;
                        println!(
                            "dumped {} attributes, {} entities, {} datoms to {f}",
                            s.attributes, s.entities, s.datoms
                        );
                    }
                    _ => return Err(CliError::user("usage: .dump [FILE]")),
                }
            }
            ".backup" => match args.as_slice() {
                [d] => {
                    let path = std::path::Path::new(d);
                    if crate::open::exists(path) {
                        return Err(CliError::user(format!("{d} already holds a database")));
                    }
                    self.database()?.env().copy_compacted(path)?;
                    println!("backed up to {d}");
                }
                _ => return Err(CliError::user("usage: .backup DIR")),
            },
            other => {
                let near: Vec<&str> = DOT_COMMANDS
                    .iter()
                    .copied()
                    .filter(|c| c.starts_with(&other[..other.len().min(3)]))
                    .collect();
                return Err(CliError::user(format!(
                    "unknown command {other}{} (.help lists them)",
                    if near.is_empty() {
                        String::new()
                    } else {
                        format!("; did you mean {}?", near.join(" or "))
                    }
                )));
            }
        }
        self.time("", start.elapsed());
        Ok(Flow::Continue)
    }

    /// Runs `text` as shell input: dot-commands on their own lines, queries and tx data
    /// spanning lines until complete.
    pub fn script(&mut self, text: &str, source: &str) -> Flow {
        run_script(text, source, &mut |input, source, first| {
            self.handle(input, source, first)
        })
    }
}

/// Runs `text` as shell input through `handle` (a local or a remote session): dot-commands
/// on their own lines, queries and tx data spanning lines until complete.
pub fn run_script(
    text: &str,
    source: &str,
    handle: &mut dyn FnMut(&str, &str, usize) -> Flow,
) -> Flow {
    let mut buf = String::new();
    let mut first = 1;
    let mut balance = Balance::default();
    for (i, line) in text.lines().enumerate() {
        if buf.trim().is_empty() {
            buf.clear();
            balance = Balance::default();
            first = i + 1;
            if line.trim().is_empty() || line.trim_start().starts_with(';') {
                continue;
            }
        }
        buf.push_str(line);
        buf.push('\n');
        // Re-reading the whole buffer on every line would be quadratic on a large dump:
        // only a line that closes every bracket can complete the input.
        let dot = buf.trim_start().starts_with('.');
        if !dot && !balance.feed(line) {
            continue;
        }
        if input_complete(&buf) {
            let input = std::mem::take(&mut buf);
            if handle(&input, source, first) == Flow::Quit {
                return Flow::Quit;
            }
        }
    }
    if !buf.trim().is_empty() {
        // Unfinished at the end of the file: run it for its error message.
        handle(&buf, source, first);
    }
    Flow::Continue
}

/// Checks `.explain`'s argument: one query.
pub fn explain_argument(rest: &str) -> Result<()> {
    if rest.is_empty() {
        return Err(CliError::user("usage: .explain QUERY"));
    }
    let form = datalith::edn::read_one(rest).map_err(|e| CliError::read("query", &e))?;
    if !exec::is_query(&form) {
        return Err(CliError::user(".explain needs a query ([:find ...])"));
    }
    Ok(())
}

/// The plan of `.explain`: steps with the index each read, estimated and actual sizes and
/// where (line:column) the clauses each ran were written, then the result size.
pub fn explain_text(plan: &datalith::query::Plan) -> String {
    // Where the clauses a step ran were written (none for a step of a rule body).
    let written_at = |clauses: &[usize]| -> String {
        clauses
            .iter()
            .filter_map(|c| plan.clauses.get(*c)?.position)
            .map(|p| format!("{}:{}", p.line, p.column))
            .collect::<Vec<_>>()
            .join(" ")
    };
    let rows: Vec<Vec<String>> = plan
        .steps
        .iter()
        .map(|s| {
            vec![
                s.what.clone(),
                s.index.to_string(),
                s.estimated.to_string(),
                s.actual.to_string(),
                written_at(&s.clauses),
            ]
        })
        .collect();
    explain_table(&rows, plan.rows)
}

/// [`explain_text`] of a plan as a server answers it (`q` with `:explain true`).
pub fn explain_text_of_edn(plan: &Edn) -> String {
    let get = crate::info::field;
    let text = |v: Option<Edn>| match v {
        Some(Edn::String(s)) => s,
        Some(Edn::Long(n)) => n.to_string(),
        Some(other) => to_edn_string(&other),
        None => String::new(),
    };
    let items = |v: Option<Edn>| match v {
        Some(Edn::Vector(items)) => items,
        _ => Vec::new(),
    };
    let clauses = items(get(plan, ":clauses"));
    let rows: Vec<Vec<String>> = items(get(plan, ":steps"))
        .iter()
        .map(|s| {
            let written_at = items(get(s, ":clauses"))
                .iter()
                .filter_map(|i| match i {
                    Edn::Long(i) => clauses.get(usize::try_from(*i).ok()?),
                    _ => None,
                })
                .filter_map(|c| {
                    let line = get(c, ":line")?;
                    Some(format!("{}:{}", text(Some(line)), text(get(c, ":column"))))
                })
                .collect::<Vec<_>>()
                .join(" ");
            vec![
                text(get(s, ":step")),
                text(get(s, ":index")),
                text(get(s, ":estimated")),
                text(get(s, ":actual")),
                written_at,
            ]
        })
        .collect();
    let n = match get(plan, ":rows") {
        Some(Edn::Long(n)) => usize::try_from(n).unwrap_or(0),
        _ => 0,
    };
    explain_table(&rows, n)
}

/// The table of a plan's steps, then the result's size.
fn explain_table(rows: &[Vec<String>], n: usize) -> String {
    let head: Vec<String> = ["step", "index", "estimated", "actual", "written at"]
        .iter()
        .map(|s| s.to_string())
        .collect();
    let mut out = crate::render::table(&head, rows, rows.len());
    out.push_str(&format!(
        "result: {n} {}\n",
        if n == 1 { "row" } else { "rows" }
    ));
    out
}

/// Bracket depth across lines, outside strings, comments and character literals: a cheap
/// necessary condition for a complete form.
#[derive(Default)]
pub struct Balance {
    depth: i64,
    in_string: bool,
}

impl Balance {
    /// Feeds one line; true when every bracket opened so far is closed.
    pub fn feed(&mut self, line: &str) -> bool {
        let mut chars = line.chars();
        while let Some(c) = chars.next() {
            if self.in_string {
                match c {
                    '\\' => {
                        chars.next();
                    }
                    '"' => self.in_string = false,
                    _ => {}
                }
                continue;
            }
            match c {
                '"' => self.in_string = true,
                '\\' => {
                    chars.next();
                }
                ';' => break,
                '(' | '[' | '{' => self.depth += 1,
                ')' | ']' | '}' => self.depth -= 1,
                _ => {}
            }
        }
        !self.in_string && self.depth <= 0
    }
}

/// The forms of input `text` from `source` that begins at line `first_line`, with a read
/// error's line counted in the source (the local and the remote shell read alike).
pub fn read_forms(text: &str, source: &str, first_line: usize) -> Result<Vec<Edn>> {
    read_all(text).map_err(|mut e| {
        e.line += first_line - 1;
        CliError::read(source, &e)
    })
}
