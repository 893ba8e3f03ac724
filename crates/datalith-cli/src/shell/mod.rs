//! The interactive shell, `datalith FILE` (sqlite3 habits).
//!
//! - [`session`]: the state and what each input (query, tx data, dot-command) does.
//! - [`remote`]: the same shell on a server (`datalith shell URL`), through the client.
//! - [`output`]: where results go (`.output FILE`), and `.read FILE` ([`read_script`]) for
//!   both.
//! - [`complete`]: tab completion.
//! - [`interrupt`]: Ctrl-C cancels a running query.
//!
//! With a terminal on standard input the shell edits lines with `rustyline` and keeps its
//! history in `$DATALITH_HISTORY` (default `~/.datalith_history`); otherwise it runs standard
//! input as a script, like `sqlite3 FILE < script.sql`, and exits 1 if any input failed.

pub mod complete;
pub mod interrupt;
pub mod output;
pub mod remote;
pub mod session;

use std::io::{IsTerminal, Read};
use std::path::{Path, PathBuf};

use rustyline::config::Config;
use rustyline::error::ReadlineError;
use rustyline::history::DefaultHistory;
use rustyline::{CompletionType, Editor};

use crate::error::{CliError, Result};
use complete::ShellHelper;
use session::{input_complete, Flow, Session};

/// What runs each complete input: a session on a local database or on a server.
pub trait Handler {
    /// Runs one input; errors are printed and counted, and the session goes on.
    fn handle(&mut self, text: &str, source: &str, first_line: usize) -> Flow;
    /// Errors so far.
    fn errors(&self) -> u64;
    /// How deep `.read` is nested now.
    fn reading(&mut self) -> &mut u32;
}

impl Handler for Session {
    fn handle(&mut self, text: &str, source: &str, first_line: usize) -> Flow {
        Session::handle(self, text, source, first_line)
    }
    fn errors(&self) -> u64 {
        self.errors
    }
    fn reading(&mut self) -> &mut u32 {
        &mut self.depth
    }
}

/// How deep `.read` may nest: a file that reads itself stops there.
const MAX_READ_DEPTH: u32 = 16;

/// `.read FILE`: runs FILE's inputs through `session`, saying how many failed.
pub fn read_script(session: &mut dyn Handler, args: &[&str]) -> Result<Flow> {
    let [file] = args else {
        return Err(CliError::user("usage: .read FILE"));
    };
    let text = crate::input::read_file(file)?;
    if *session.reading() >= MAX_READ_DEPTH {
        return Err(CliError::user(format!(
            ".read nested more than {MAX_READ_DEPTH} deep"
        )));
    }
    *session.reading() += 1;
    let before = session.errors();
    let flow = session::run_script(&text, file, &mut |input, source, first| {
        session.handle(input, source, first)
    });
    *session.reading() -= 1;
    if session.errors() > before {
        eprintln!("{file}: {} error(s)", session.errors() - before);
    }
    Ok(flow)
}

fn history_path() -> Option<PathBuf> {
    if let Some(p) = std::env::var_os("DATALITH_HISTORY") {
        return Some(PathBuf::from(p));
    }
    std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".datalith_history"))
}

/// Runs the shell on `target`: a server's URL (`http://`, `https://`), else a database
/// directory; returns the exit code.
pub fn run_any(target: &Path, cacert: Option<&Path>) -> Result<i32> {
    match target.to_str() {
        Some(url) if url.starts_with("http://") || url.starts_with("https://") => {
            run_remote(url, cacert)
        }
        _ => match cacert {
            Some(_) => Err(CliError::user(
                "--cacert goes with a server's https:// URL, not a database directory",
            )),
            None => run(target),
        },
    }
}

/// The shell on a server.
fn run_remote(url: &str, cacert: Option<&Path>) -> Result<i32> {
    let mut session = remote::RemoteSession::new(url, cacert)?;
    if !std::io::stdin().is_terminal() {
        let mut text = String::new();
        std::io::stdin()
            .read_to_string(&mut text)
            .map_err(|e| CliError::env(format!("reading standard input: {e}")))?;
        session::run_script(&text, "stdin", &mut |input, source, first| {
            session.handle(input, source, first)
        });
        return Ok(if session.errors > 0 { 1 } else { 0 });
    }
    let attrs = session.attrs.clone();
    let on = session.on();
    interactive(&mut session, &on, attrs)?;
    Ok(0)
}

/// Runs the shell on the database at `path` (created if missing); returns the exit code.
pub fn run(path: &Path) -> Result<i32> {
    let db = match crate::open::open(path, true) {
        Ok(db) => db,
        // Another process writes it (as `sqlite3` on a database an application holds, the
        // shell still reads it): read-only, saying so.
        Err(e) if e.category == datalith::error::DATABASE_BUSY => {
            let db = crate::open::open_read_only(path)?;
            eprintln!("note: {}; this shell opened it read-only", e.message);
            db
        }
        Err(e) => return Err(e),
    };
    let mut session = Session::new(db, path.to_path_buf());
    if !std::io::stdin().is_terminal() {
        let mut text = String::new();
        std::io::stdin()
            .read_to_string(&mut text)
            .map_err(|e| CliError::env(format!("reading standard input: {e}")))?;
        session.script(&text, "stdin");
        return Ok(if session.errors > 0 { 1 } else { 0 });
    }
    let attrs = session.attrs.clone();
    interactive(&mut session, &path.display().to_string(), attrs)?;
    Ok(0)
}

/// Reads inputs from the terminal until `.quit` or Ctrl-D; `on` names what the session is
/// on, `attrs` are the attribute names to complete.
pub fn interactive(
    session: &mut dyn Handler,
    on: &str,
    attrs: std::sync::Arc<std::sync::RwLock<Vec<String>>>,
) -> Result<()> {
    interrupt::install();
    let config = Config::builder()
        .auto_add_history(false)
        .completion_type(CompletionType::List)
        .max_history_size(10_000)
        .map_err(|e| CliError::env(e.to_string()))?
        .build();
    let mut rl: Editor<ShellHelper, DefaultHistory> =
        Editor::with_config(config).map_err(|e| CliError::env(format!("terminal: {e}")))?;
    rl.set_helper(Some(ShellHelper { attrs }));
    let history = history_path();
    if let Some(h) = &history {
        let _ = rl.load_history(h);
    }
    println!(
        "Datalith {} on {}\nType .help for help; a query or tx data runs when its form is complete.",
        env!("CARGO_PKG_VERSION"),
        on
    );
    let mut buf = String::new();
    loop {
        let prompt = if buf.is_empty() {
            "datalith> "
        } else {
            "     ...> "
        };
        match rl.readline(prompt) {
            Ok(line) => {
                buf.push_str(&line);
                buf.push('\n');
                if buf.trim().is_empty() {
                    buf.clear();
                    continue;
                }
                if !input_complete(&buf) {
                    continue;
                }
                let input = std::mem::take(&mut buf);
                let _ = rl.add_history_entry(input.trim_end());
                if let Some(h) = &history {
                    let _ = rl.save_history(h);
                }
                if session.handle(&input, "input", 1) == Flow::Quit {
                    break;
                }
            }
            Err(ReadlineError::Interrupted) => {
                if !buf.is_empty() {
                    buf.clear();
                    println!("(input discarded)");
                }
            }
            Err(ReadlineError::Eof) => break,
            Err(e) => return Err(CliError::env(format!("terminal: {e}"))),
        }
    }
    if let Some(h) = &history {
        let _ = rl.save_history(h);
    }
    Ok(())
}
