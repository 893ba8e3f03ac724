//! `datalith`: a sqlite3-style shell on a Datalith database, scriptable subcommands, and a
//! demo database with a guided tour.
//!
//! Exit codes: 0 success, 1 user error (bad query, bad tx data, bad arguments), 2
//! environment error (cannot open, corrupt file or inconsistent indexes, I/O), 3 permission
//! denied (the message names the file or directory).
//!
//! Output into a closed pipe (`datalith demo | head`) ends the process quietly by SIGPIPE,
//! as `cat` and `grep` do, instead of a panic in the middle of printing.
//!
//! Errors print as `error: message` on standard error; with `--format edn` or `--format json`
//! (`query`, `transact`, `pull`) as one EDN map or JSON object instead, for programs:
//! `{:db/error :db.error/unique-conflict, :cognitect.anomalies/category
//! :cognitect.anomalies/conflict, :message "...", ...}` (see `datalith::error`).

/// mimalloc, as `datalith-bench` runs the library (`datalith_alloc` says why): `datalith
/// serve` answers every request through the query engine and the committer, whose many small
/// buffers glibc's allocator made about twice as slow.
#[global_allocator]
static GLOBAL: datalith_alloc::Allocator = datalith_alloc::Allocator;

mod atomic;
mod commands;
mod csv;
mod demo;
mod error;
mod exec;
mod info;
mod input;
mod log;
mod open;
mod progress;
mod remote;
mod render;
mod shell;
mod time;

use std::io::Write;
use std::path::PathBuf;

use clap::{Parser, Subcommand};

use error::{CliError, Result};
use render::Format;

/// Datalith: a fast, durable, embedded Datalog database.
#[derive(Parser)]
#[command(
    name = "datalith",
    version,
    args_conflicts_with_subcommands = true,
    after_help = "Examples:\n  datalith demo                      create the demo database and take the tour\n  datalith people.db                 open the shell on a database (created if missing)\n  datalith query people.db '[:find (count ?e) . :where [?e :name]]'\n\nA database directory named like a command (./check) opens with `datalith ./check`, or\nwith `datalith check` when no other argument follows.\n\nExit codes: 0 success, 1 user error, 2 environment error or inconsistency, 3 permission denied."
)]
struct Cli {
    /// Database directory to open in the interactive shell (created if missing).
    db: Option<PathBuf>,
    /// Open a database whose transaction log is damaged inside (whole records after a
    /// damaged one), keeping the transactions before the damage and dropping the rest.
    #[arg(long, global = true)]
    accept_log_damage: bool,
    /// Which datoms a database the shell creates keeps in AVE: `declared` (the default: only
    /// those of `:db/index`, `:db/unique` and ref attributes, Datomic's choice) or `all` (every
    /// datom, Datalevin's choice). An existing database keeps its own.
    #[arg(long, value_enum, default_value_t = datalith_server::args::ValueIndexArg::Declared, value_name = "WHICH")]
    value_index: datalith_server::args::ValueIndexArg,
    #[command(subcommand)]
    command: Option<Command>,
}

#[derive(Subcommand)]
enum Command {
    /// Create (if missing) the demo database and print a guided tour.
    Demo {
        /// Where the demo database lives (default: $DATALITH_DEMO_DIR, else
        /// $XDG_DATA_HOME/datalith/demo, else ~/.local/share/datalith/demo).
        #[arg(long)]
        path: Option<PathBuf>,
        /// Delete and recreate the demo database.
        #[arg(long)]
        fresh: bool,
    },
    /// Open the interactive shell (same as `datalith DB`); DB may be a server's URL,
    /// http(s)://HOST:PORT[/db/NAME], to work on its databases (a token from
    /// $DATALITH_TOKEN).
    Shell {
        db: PathBuf,
        /// With an https:// URL: trust the certificates in FILE (PEM).
        #[arg(long, value_name = "FILE")]
        cacert: Option<PathBuf>,
    },
    /// Run a query; inputs (EDN) bind to `:in` after `$`. QUERY may be `-` or `@file`.
    Query {
        db: PathBuf,
        query: String,
        inputs: Vec<String>,
        /// Output format (default edn). Given as edn or json, errors print in it too.
        #[arg(long, short, value_enum)]
        format: Option<Format>,
        /// Ask a server (`datalith serve`) at URL; DB is then its database's name. A token
        /// comes from $DATALITH_TOKEN.
        #[arg(long, value_name = "URL")]
        connect: Option<String>,
        /// With --connect https://: trust the certificates in FILE (PEM: a CA, or the
        /// server's self-signed certificate from `datalith cert`).
        #[arg(long, value_name = "FILE", requires = "connect")]
        cacert: Option<PathBuf>,
        /// Query the database as it was at T (a transaction id, or an instant such as
        /// 2030-01-01), as Datomic's as-of.
        #[arg(long, value_name = "T", conflicts_with = "connect")]
        as_of: Option<String>,
        /// Query only what was asserted after T and is still there, as Datomic's since.
        #[arg(long, value_name = "T", conflicts_with = "connect")]
        since: Option<String>,
        /// Query every assertion and retraction ([?e ?a ?v ?tx ?added]), as Datomic's history.
        #[arg(long, conflicts_with = "connect")]
        history: bool,
    },
    /// Transact EDN tx data (`-` or `@file` too; several forms are several transactions,
    /// run in order until one fails: the error says which committed); prints the tx id and
    /// the tempids.
    Transact {
        db: PathBuf,
        txdata: String,
        /// Output format, edn (default) or json; given, errors print in it too.
        #[arg(long, short, value_enum)]
        format: Option<Format>,
        /// Transact on a server (`datalith serve`) at URL; DB is then its database's name.
        #[arg(long, value_name = "URL")]
        connect: Option<String>,
        /// With --connect https://: trust the certificates in FILE (PEM).
        #[arg(long, value_name = "FILE", requires = "connect")]
        cacert: Option<PathBuf>,
    },
    /// Pull a pattern for an entity (id, :ident or lookup ref [:attr value]).
    Pull {
        db: PathBuf,
        pattern: String,
        eid: String,
        /// Output format, edn (default) or json; given, errors print in it too.
        #[arg(long, short, value_enum)]
        format: Option<Format>,
        /// Pull from a server (`datalith serve`) at URL; DB is then its database's name.
        #[arg(long, value_name = "URL")]
        connect: Option<String>,
        /// With --connect https://: trust the certificates in FILE (PEM).
        #[arg(long, value_name = "FILE", requires = "connect")]
        cacert: Option<PathBuf>,
    },
    /// Import EDN tx data or CSV (one entity per row) into a database (created if missing).
    Import {
        db: PathBuf,
        file: String,
        /// Treat the file as CSV (default: by extension .csv).
        #[arg(long)]
        csv: bool,
        /// CSV column to attribute, `column=:attr` (or `column=-` to skip it); repeatable.
        #[arg(long = "map", value_name = "COLUMN=:ATTR")]
        map: Vec<String>,
    },
    /// Export the schema and all datoms as EDN tx data that reloads to the same database.
    #[command(alias = "dump")]
    Export {
        db: PathBuf,
        /// Output file (default: standard output).
        output: Option<PathBuf>,
    },
    /// Show the database's size, attributes and statistics.
    Stat { db: PathBuf },
    /// Write a compacted copy of a database into a new directory; with --connect, of the
    /// database SRC names on a server (the admin role; token from $DATALITH_TOKEN), e.g. for
    /// a node joining a replicated database.
    Copy {
        src: PathBuf,
        dst: PathBuf,
        /// Copy from the server at URL (`datalith serve`) instead of a directory.
        #[arg(long, value_name = "URL")]
        connect: Option<String>,
        /// With --connect https://: trust the certificates in FILE (PEM).
        #[arg(long, value_name = "FILE", requires = "connect")]
        cacert: Option<PathBuf>,
    },
    /// Verify every page of the data file, then that EAV and AVE agree and the statistics are
    /// right; read-only, creates nothing (exit 2 on damage or inconsistency).
    Check { db: PathBuf },
    /// Print the transaction log as EDN, one transaction per line, as it is read (from tx
    /// SINCE on, before tx UNTIL).
    Log {
        db: PathBuf,
        /// The first transaction id to print.
        #[arg(long)]
        since: Option<u64>,
        /// The transaction id to stop before.
        #[arg(long)]
        until: Option<u64>,
    },
    /// Serve databases over HTTP, in EDN and JSON (API: crates/datalith-server/README.md);
    /// stops on SIGTERM or Ctrl-C after the running requests.
    Serve(Box<datalith_server::ServeArgs>),
    /// Make a self-signed certificate and key (DIR/cert.pem, DIR/key.pem) to try `serve`
    /// with TLS; clients trust it with --cacert DIR/cert.pem.
    Cert(datalith_server::CertArgs),
    /// Run the benchmark suite (`datalith-bench`) with the given arguments.
    Bench {
        #[arg(trailing_var_arg = true, allow_hyphen_values = true)]
        args: Vec<String>,
    },
}

fn print(s: &str) -> Result<()> {
    let mut out = std::io::stdout().lock();
    match out.write_all(s.as_bytes()).and_then(|_| out.flush()) {
        Ok(()) => Ok(()),
        // A closed pipe (`| head`) is not an error worth reporting.
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => Ok(()),
        Err(e) => Err(e.into()),
    }
}

/// The format of a command whose output is one EDN value (`transact`, `pull`): EDN or JSON.
fn data_format(format: Option<Format>) -> Result<Format> {
    match format.unwrap_or(Format::Edn) {
        f @ (Format::Edn | Format::Json) => Ok(f),
        other => Err(CliError::user(format!(
            "this command prints edn or json, not {}",
            other.name()
        ))),
    }
}

/// The format errors print in: the command's `--format` when it is given as edn or json.
fn error_format(command: Option<&Command>) -> Option<Format> {
    let format = match command? {
        Command::Query { format, .. }
        | Command::Transact { format, .. }
        | Command::Pull { format, .. } => (*format)?,
        _ => return None,
    };
    matches!(format, Format::Edn | Format::Json).then_some(format)
}

/// Prints an error on standard error: as `error: message`, or as one EDN map or JSON object.
fn report(e: &CliError, format: Option<Format>) {
    match format {
        Some(Format::Edn) => eprintln!("{}", datalith::edn::to_edn_string(&e.to_edn())),
        Some(Format::Json) => eprintln!("{}", datalith::edn::to_json(&e.to_edn())),
        _ => eprintln!("error: {e}"),
    }
}

fn run(cli: Cli) -> Result<i32> {
    let command = match (cli.command, cli.db) {
        (Some(c), _) => c,
        (None, Some(db)) => return shell::run_any(&db, None),
        (None, None) => {
            return Err(CliError::user(
                "no database given: try `datalith demo`, `datalith FILE` or `datalith --help`",
            ))
        }
    };
    match command {
        Command::Demo { path, fresh } => demo::run(path, fresh).map(|_| 0),
        Command::Shell { db, cacert } => shell::run_any(&db, cacert.as_deref()),
        Command::Query {
            db,
            query,
            inputs,
            format,
            connect,
            cacert,
            as_of,
            since,
            history,
        } => {
            let format = format.unwrap_or(Format::Edn);
            let view = time::TimeView::from_flags(as_of.as_deref(), since.as_deref(), history)?;
            let out = match connect {
                Some(url) => remote::query(
                    &remote::Remote::new(&url, cacert.as_deref())?,
                    &db,
                    &query,
                    &inputs,
                    format,
                )?,
                None => commands::query(&db, &query, &inputs, format, view)?,
            };
            print(&out).map(|_| 0)
        }
        Command::Transact {
            db,
            txdata,
            format,
            connect,
            cacert,
        } => {
            let format = data_format(format)?;
            let out = match connect {
                Some(url) => remote::transact(
                    &remote::Remote::new(&url, cacert.as_deref())?,
                    &db,
                    &txdata,
                    format,
                )?,
                None => commands::transact(&db, &txdata, format)?,
            };
            print(&out).map(|_| 0)
        }
        Command::Pull {
            db,
            pattern,
            eid,
            format,
            connect,
            cacert,
        } => {
            let format = data_format(format)?;
            let out = match connect {
                Some(url) => remote::pull(
                    &remote::Remote::new(&url, cacert.as_deref())?,
                    &db,
                    &pattern,
                    &eid,
                    format,
                )?,
                None => commands::pull(&db, &pattern, &eid, format)?,
            };
            print(&out).map(|_| 0)
        }
        Command::Import { db, file, csv, map } => {
            let mapping = csv::mapping(&map)?;
            let database = open::open(&db, true)?;
            let csv = if csv { Some(true) } else { None };
            print(&commands::import_file(&database, &file, csv, &mapping)?).map(|_| 0)
        }
        Command::Export { db, output } => commands::export(&db, output.as_deref()).map(|_| 0),
        Command::Stat { db } => {
            let database = open::open_read_only(&db)?;
            print(&info::stat_text(&database)?).map(|_| 0)
        }
        Command::Copy {
            src,
            dst,
            connect,
            cacert,
        } => {
            let out = match connect {
                Some(url) => {
                    remote::copy(&remote::Remote::new(&url, cacert.as_deref())?, &src, &dst)?
                }
                None => commands::copy(&src, &dst)?,
            };
            print(&out).map(|_| 0)
        }
        Command::Check { db } => {
            let (text, ok) = commands::check(&db)?;
            print(&text)?;
            Ok(if ok { 0 } else { 2 })
        }
        Command::Log { db, since, until } => log::run(&db, since, until).map(|_| 0),
        Command::Serve(args) => datalith_server::serve(*args)
            .map(|_| 0)
            .map_err(CliError::from),
        Command::Cert(args) => datalith_server::cert::make(&args)
            .map_err(CliError::from)
            .and_then(|said| print(&said))
            .map(|_| 0),
        Command::Bench { args } => commands::bench(&args),
    }
}

/// Restores the default action of SIGPIPE, which the Rust runtime ignores: a write into a
/// closed pipe then ends the process silently (exit by signal, as every Unix filter does)
/// instead of failing each `print!` with a panic. LMDB's commits are atomic, so an end at
/// any moment loses nothing acknowledged.
fn die_quietly_on_closed_pipes() {
    // SAFETY: resetting a signal's disposition to its default before any thread starts.
    unsafe {
        libc::signal(libc::SIGPIPE, libc::SIG_DFL);
    }
}

/// `datalith NAME` where NAME is both a subcommand needing arguments and an existing
/// directory: the user means the directory (the subcommand alone would only be a usage
/// error), as `sqlite3 NAME` would open it.
fn directory_named_like_a_command() -> Option<PathBuf> {
    let args: Vec<std::ffi::OsString> = std::env::args_os().skip(1).collect();
    let [only] = args.as_slice() else {
        return None;
    };
    let name = only.to_str()?;
    let command = <Cli as clap::CommandFactory>::command();
    let sub = command
        .get_subcommands()
        .find(|c| c.get_name() == name || c.get_all_aliases().any(|a| a == name))?;
    let needs_arguments = sub.get_arguments().any(|a| a.is_required_set());
    let path = PathBuf::from(name);
    (needs_arguments && path.is_dir()).then_some(path)
}

fn main() {
    // A query's freed rows serve the next steps and queries, not fresh pages
    // (`datalith_alloc::KEEP_FREED_MS` says why and what it costs).
    datalith_alloc::keep_freed_memory();
    die_quietly_on_closed_pipes();
    if let Some(db) = directory_named_like_a_command() {
        let code = shell::run(&db).unwrap_or_else(|e| {
            report(&e, None);
            e.exit_code()
        });
        std::process::exit(code);
    }
    let cli = match Cli::try_parse() {
        Ok(c) => c,
        Err(e) => {
            let code = if e.use_stderr() { 1 } else { 0 };
            let _ = e.print();
            std::process::exit(code);
        }
    };
    let format = error_format(cli.command.as_ref());
    open::accept_log_damage(cli.accept_log_damage);
    open::value_index(cli.value_index.into());
    let code = match run(cli) {
        Ok(code) => code,
        Err(e) => {
            report(&e, format);
            e.exit_code()
        }
    };
    std::process::exit(code);
}

#[cfg(test)]
mod doc_commands {
    /// Every `datalith` command the user documents show parses as the program does; a document
    /// that names a subcommand or flag the program lost fails here.
    #[test]
    fn every_documented_command_parses() {
        let failures = datalith_testdata::doc_commands::parse_failures::<super::Cli>(
            env!("CARGO_MANIFEST_DIR"),
            "datalith",
            5,
        );
        assert!(failures.is_empty(), "{}", failures.join("\n"));
    }
}
