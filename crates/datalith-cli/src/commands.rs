//! The scriptable subcommands. Each returns what to print (or prints as it goes for long
//! output) and an error with its exit code.

use std::io::Write;
use std::path::Path;
use std::sync::atomic::AtomicBool;

use datalith::edn::{read_one, to_edn_string, Edn};
use datalith::pull::Eid;
use datalith::{Database, Db};

use crate::error::{CliError, Result};
use crate::exec;
use crate::input::text_arg;
use crate::open::open;
use crate::render::{render, Format};

/// `query DB QUERY [INPUT...]`.
pub fn query(
    db: &Path,
    query: &str,
    inputs: &[String],
    format: Format,
    view: crate::time::TimeView,
) -> Result<String> {
    let (source, text) = text_arg(query)?;
    let form = read_one(&text).map_err(|e| CliError::read(&source, &e))?;
    if !exec::is_query(&form) {
        return Err(CliError::user(format!(
            "{source}: not a query (a query is a vector or map starting with :find)"
        )));
    }
    let inputs = inputs
        .iter()
        .enumerate()
        .map(|(i, s)| {
            let (src, t) = text_arg(s)?;
            read_one(&t).map_err(|e| CliError::read(&format!("input {} ({src})", i + 1), &e))
        })
        .collect::<Result<Vec<_>>>()?;
    let database = crate::open::open_read_only(db)?;
    let snapshot = view.apply(database.db()?)?;
    if format == Format::Edn {
        return query_edn(&snapshot, &form, inputs);
    }
    let cancel = AtomicBool::new(false);
    let out = exec::query(&snapshot, &form, &inputs, &cancel)?;
    Ok(render(&out.result, &out.headers, format))
}

/// Text of a result written before it is printed: past it, a result that comes in rows is
/// printed as the engine makes it.
const PRINT_AHEAD_BYTES: usize = 64 * 1024;

/// `query` in EDN: a result that comes in rows is written as the engine makes it
/// (`Db::q_each`: a large one never whole in memory), held until its text outgrows
/// [`PRINT_AHEAD_BYTES`] and then printed as it comes; other results whole. Returns what is
/// left to print. A query that fails after its text began to be printed leaves that text,
/// then the error.
fn query_edn(snapshot: &Db, form: &Edn, inputs: Vec<Edn>) -> Result<String> {
    let (query, inputs) = match exec::query_with_args(form) {
        Some((query, mut args)) => {
            args.extend(inputs);
            (query, args)
        }
        None => (form, inputs),
    };
    let mut out = PrintedItems::default();
    let options = datalith::query::QueryOptions::default();
    let whole = snapshot.q_each(&to_edn_string(query), &inputs, &options, &mut out);
    match out.failed.take() {
        // A closed pipe (`| head`) is not an error worth reporting.
        Some(e) if e.kind() == std::io::ErrorKind::BrokenPipe => return Ok(String::new()),
        Some(e) => return Err(e.into()),
        None => {}
    }
    match whole? {
        Some(outcome) => Ok(render(&outcome.result, &[], Format::Edn)),
        None => {
            out.text.push_str(if out.set { "}" } else { "]" });
            out.text.push('\n');
            Ok(out.text)
        }
    }
}

/// A result's items written as EDN, printed once there is enough of them.
#[derive(Default)]
struct PrintedItems {
    text: String,
    set: bool,
    items: u64,
    /// Printing failed (the query stops; a closed pipe is not reported).
    failed: Option<std::io::Error>,
}

impl datalith::query::ItemSink for PrintedItems {
    fn begin(&mut self, set: bool) -> std::result::Result<(), datalith::query::QueryError> {
        self.set = set;
        self.text.push_str(if set { "#{" } else { "[" });
        Ok(())
    }

    fn item(&mut self, item: &Edn) -> std::result::Result<(), datalith::query::QueryError> {
        if self.items > 0 {
            self.text.push(' ');
        }
        datalith::edn::write_edn(item, &mut self.text);
        self.items += 1;
        if self.text.len() < PRINT_AHEAD_BYTES {
            return Ok(());
        }
        let mut stdout = std::io::stdout().lock();
        match stdout.write_all(self.text.as_bytes()) {
            Ok(()) => {
                self.text.clear();
                Ok(())
            }
            Err(e) => {
                self.failed = Some(e);
                Err(datalith::query::QueryError::Cancelled)
            }
        }
    }
}

/// `transact DB TXDATA`: every form is one transaction, committed in order; prints one
/// report per form (EDN, or JSON with `format` json).
///
/// A form that fails stops the run, as a failed statement stops `sqlite3`: the forms before
/// it stay committed (their reports are printed first), the failing form commits nothing
/// (a transaction is atomic), the forms after it are not run, and the error says which is
/// which. Forms that must stand or fall together belong in one form.
pub fn transact(db: &Path, txdata: &str, format: Format) -> Result<String> {
    let (source, text) = text_arg(txdata)?;
    let forms = exec::forms(&source, &text)?;
    if forms.is_empty() {
        return Err(CliError::user(format!("{source}: no tx data")));
    }
    let database = open(db, true)?;
    let mut out = String::new();
    for (i, form) in forms.iter().enumerate() {
        match exec::transact(&database, form) {
            Ok((report, _)) => out.push_str(&render(&exec::report_edn(&report), &[], format)),
            Err(e) if forms.len() == 1 => return Err(e),
            Err(e) => {
                crate::print(&out)?;
                return Err(partly_committed(e, i, forms.len()));
            }
        }
    }
    Ok(out)
}

/// The error of form `failed` (0-based) of `total`, saying which forms committed.
fn partly_committed(e: CliError, failed: usize, total: usize) -> CliError {
    let forms = |from: usize, to: usize| match from == to {
        true => format!("form {from}"),
        false => format!("forms {from}-{to}"),
    };
    let committed = match failed {
        0 => "no form".to_string(),
        n => forms(1, n),
    };
    let skipped = match failed + 1 == total {
        true => String::new(),
        false => format!("; {} not run", forms(failed + 2, total)),
    };
    let mut e = e.context(format!(
        "form {} of {total} failed and committed nothing; {committed} committed{skipped}",
        failed + 1
    ));
    e.fields.push(("failed-form", Edn::Long(failed as i64 + 1)));
    e.fields.push(("committed-forms", Edn::Long(failed as i64)));
    e.fields.push(("forms", Edn::Long(total as i64)));
    e
}

/// Reads an entity argument: an id, an ident keyword, or a lookup ref `[:attr value]`.
pub fn read_eid(text: &str) -> Result<Eid> {
    let form = read_one(text).map_err(|e| CliError::read("entity", &e))?;
    Ok(Eid::from_edn(&form)?)
}

/// Resolves an entity argument to the entity it names (an error if it names none).
pub fn resolve_eid(db: &Db, text: &str) -> Result<u64> {
    let eid = read_eid(text)?;
    db.entid(eid.clone())?.ok_or_else(|| {
        not_an_entity(
            format!("no entity {eid}"),
            &read_one(text).unwrap_or(Edn::Nil),
        )
    })
}

/// Pulls `pattern` (EDN text) for the entity `eid` (EDN text) names: nil when it names
/// none, as Datomic's pull answers.
pub fn pull_text(snapshot: &Db, pattern: &str, eid: &str) -> Result<String> {
    let eid = read_eid(eid)?;
    let r = snapshot.pull(pattern, eid)?;
    Ok(to_edn_string(&r) + "\n")
}

/// Datomic's error for an entity reference that resolves to nothing.
fn not_an_entity(message: String, form: &Edn) -> CliError {
    CliError::categorized(
        datalith::error::NOT_AN_ENTITY,
        message,
        vec![("entity", form.clone())],
    )
}

/// `pull DB PATTERN EID` (EDN, or JSON with `format` json).
pub fn pull(db: &Path, pattern: &str, eid: &str, format: Format) -> Result<String> {
    let (source, text) = text_arg(pattern)?;
    read_one(&text).map_err(|e| CliError::read(&source, &e))?;
    let database = crate::open::open_read_only(db)?;
    let snapshot = database.db()?;
    let r = snapshot.pull(&text, read_eid(eid)?)?;
    Ok(render(&r, &[], format))
}

/// Loads a file of EDN tx data (each form one transaction) or CSV into `database`, with a
/// progress bar. Returns a summary line.
pub fn import_file(
    database: &Database,
    file: &str,
    csv: Option<bool>,
    mapping: &[(String, String)],
) -> Result<String> {
    let text = crate::input::read_file(file)?;
    let is_csv = csv.unwrap_or_else(|| file.to_ascii_lowercase().ends_with(".csv"));
    let forms: Vec<Edn> = if is_csv {
        let schema = database.db()?.schema().clone();
        let rows = crate::csv::tx_data(&text, mapping, &schema)?;
        // Rows are independent entities: load them in transactions of a few thousand.
        rows.chunks(2000).map(|c| Edn::Vector(c.to_vec())).collect()
    } else {
        exec::forms(file, &text)?
    };
    let pb = crate::progress::bar(forms.len() as u64, "import");
    let (mut txs, mut datoms) = (0u64, 0u64);
    for (i, form) in forms.iter().enumerate() {
        if exec::is_query(form) {
            return Err(CliError::user(format!(
                "{file}: form {} is a query, not tx data",
                i + 1
            )));
        }
        let (report, _) = exec::transact(database, form)
            .map_err(|e| e.context(format!("{file}: transaction {}", i + 1)))?;
        txs += 1;
        datoms += report.tx_data.len() as u64;
        pb.inc(1);
    }
    pb.finish_and_clear();
    Ok(format!(
        "imported {datoms} datoms in {txs} transaction{} from {file}\n",
        if txs == 1 { "" } else { "s" }
    ))
}

/// `export DB [FILE]`.
pub fn export(db: &Path, output: Option<&Path>) -> Result<()> {
    let database = crate::open::open_read_only(db)?;
    let snapshot = database.db()?;
    let pb = crate::progress::spinner("datoms");
    let mut progress = |n: u64| pb.set_position(n);
    match output {
        Some(p) => crate::atomic::write_file(p, |f| {
            let mut w = std::io::BufWriter::new(f);
            snapshot.dump_with_progress(&mut w, &mut progress)?;
            w.flush()?;
            Ok(())
        })?,
        None => {
            let stdout = std::io::stdout();
            let mut w = std::io::BufWriter::new(stdout.lock());
            snapshot.dump_with_progress(&mut w, &mut progress)?;
            w.flush()?;
        }
    }
    pb.finish_and_clear();
    Ok(())
}

/// `copy SRC DST`: a compacted copy.
pub fn copy(src: &Path, dst: &Path) -> Result<String> {
    let database = crate::open::open_read_only(src)?;
    if crate::open::exists(dst) {
        return Err(CliError::user(format!(
            "{} already holds a database; copy into a new directory",
            dst.display()
        )));
    }
    let pb = crate::progress::spinner("copying");
    pb.enable_steady_tick(std::time::Duration::from_millis(100));
    database.env().copy_compacted(dst)?;
    pb.finish_and_clear();
    let size = |p: &Path| std::fs::metadata(p.join("data.mdb")).map_or(0, |m| m.len());
    Ok(format!(
        "copied {} ({} bytes) to {} ({} bytes, compacted)\n",
        src.display(),
        size(src),
        dst.display(),
        size(dst)
    ))
}

/// `check DB`: the report, and whether the database is consistent. Opens read-only after
/// walking every page of the data file (damage is an error: exit 2, naming the page).
pub fn check(db: &Path) -> Result<(String, bool)> {
    let database = crate::open::open_read_only(db)?;
    let structure = database
        .env()
        .verified()
        .map(|s| {
            format!(
                "pages: {} in use and {} free, every one walked; {} tables, {} bytes\n",
                s.pages_in_use,
                s.free_pages,
                s.tables.len(),
                s.file_bytes
            )
        })
        .unwrap_or_default();
    let snapshot = database.db()?;
    let pb = crate::progress::bar(0, "check");
    let report = snapshot.check_with_progress(&mut |p| {
        pb.set_length(p.total);
        pb.set_position(p.done);
    })?;
    pb.finish_and_clear();
    let name = |a: u32| {
        snapshot
            .schema()
            .get(a)
            .map_or_else(|| format!("#{a}"), |x| x.ident.to_string())
    };
    let mut out = String::new();
    for p in &report.problems {
        use datalith::admin::Inconsistency as I;
        let line = match p {
            I::MissingInAve { e, a, value } => {
                format!(
                    "datom [{e} {} {value}] is in EAV but missing from AVE",
                    name(*a)
                )
            }
            I::MissingInEav { e, a, value } => {
                format!(
                    "datom [{e} {} {value}] is in AVE but missing from EAV",
                    name(*a)
                )
            }
            I::Stats {
                a,
                recorded,
                actual,
            } => format!(
                "statistics of {}: recorded {} datoms / {} distinct, the index holds {} / {}",
                name(*a),
                recorded.datoms,
                recorded.distinct,
                actual.datoms,
                actual.distinct
            ),
            other => other.to_string(),
        };
        out.push_str(&format!("inconsistent: {line}\n"));
    }
    // The log: what the next open for writing replays, or why it would refuse the log. Looked
    // at before the summary, whose first word is the verdict on both.
    let page_bytes = database.env().verified().map(|s| s.page_bytes);
    let log = match page_bytes {
        Some(p) => datalith::admin::check_log(db, p)?,
        None => None,
    };
    let log_ok = log.as_ref().is_none_or(|l| l.damage.is_none());
    let ok = report.is_ok() && log_ok;
    out.push_str(&format!(
        "{}: {} EAV entries, {} AVE entries, {} attributes, {} {}{}\n",
        if ok { "ok" } else { "FAILED" },
        report.eav_entries,
        report.ave_entries,
        report.attributes,
        report.problems.len(),
        if report.problems.len() == 1 {
            "inconsistency"
        } else {
            "inconsistencies"
        },
        if log_ok { "" } else { "; the log is damaged" }
    ));
    out.push_str(&structure);
    if let Some(l) = &log {
        match &l.damage {
            Some(d) => out.push_str(&format!("log: DAMAGED: {d}\n")),
            None if l.records_after_checkpoint > 0 => out.push_str(&format!(
                "log: {} records after its checkpoint, replayed at the next open for writing\n",
                l.records_after_checkpoint
            )),
            None => out.push_str("log: whole, nothing to replay\n"),
        }
    }
    Ok((out, ok))
}

/// `bench [ARGS...]`: runs `datalith-bench` from the same build directory or the `PATH`.
pub fn bench(args: &[String]) -> Result<i32> {
    let beside = std::env::current_exe()
        .ok()
        .and_then(|p| p.parent().map(|d| d.join("datalith-bench")))
        .filter(|p| p.is_file());
    let program = match beside {
        Some(p) => p,
        None => {
            let on_path = std::env::var_os("PATH").and_then(|paths| {
                std::env::split_paths(&paths)
                    .map(|d| d.join("datalith-bench"))
                    .find(|p| p.is_file())
            });
            match on_path {
                Some(p) => p,
                None => {
                    return Err(CliError::env(
                        "datalith-bench is not built; build it with\n  cargo build --release -p datalith-bench\nthen run `datalith bench` again (arguments are passed on; try `datalith bench --help`)",
                    ))
                }
            }
        }
    };
    let status = std::process::Command::new(&program)
        .args(args)
        .status()
        .map_err(|e| CliError::env(format!("cannot run {}: {e}", program.display())))?;
    Ok(status.code().unwrap_or(2))
}
