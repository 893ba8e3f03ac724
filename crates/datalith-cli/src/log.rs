//! `datalith log DB [--since TX] [--until TX]`: the transaction log as EDN, one map per
//! transaction per line, oldest first, printed (and flushed) as each entry is read:
//! `{:tx 13194139534313, :instant #inst "...", :data [[e :attr value tx added] ...]}`
//! (attributes by ident). Read-only; a replica can apply the lines in order and resume with
//! `--since` one past the last `:tx` it applied. The binary record format is in
//! `datalith::tx::log`.

use std::io::Write;
use std::path::Path;

use datalith::codec::Value;
use datalith::edn::{edn_from_value, to_edn_string, Edn};
use datalith::store::schema::Schema;
use datalith::tx::log::TxLogEntry;

use crate::error::{CliError, Result};

/// Prints the log of the database at `db` for transactions `since <= tx < until` (either
/// bound open when absent).
pub fn run(db: &Path, since: Option<u64>, until: Option<u64>) -> Result<()> {
    let database = crate::open::open_read_only(db)?;
    if !database.keeps_tx_log() {
        return Err(CliError::user(format!(
            "{} has no transaction log (made before the log existed)",
            Edn::String(db.display().to_string())
        )));
    }
    let entries = database.tx_range(since, until)?;
    // Taken after the log's snapshot, so every attribute its entries use is in it (attributes
    // are never removed).
    let snapshot = database.db()?;
    let schema = snapshot.schema().clone();
    let mut out = std::io::stdout().lock();
    for entry in entries {
        let line = to_edn_string(&entry_edn(&entry?, &schema));
        match writeln!(out, "{line}").and_then(|_| out.flush()) {
            Ok(()) => {}
            // A closed pipe (`| head`) ends the listing quietly, as elsewhere in the CLI.
            Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => return Ok(()),
            Err(e) => return Err(e.into()),
        }
    }
    Ok(())
}

/// One entry as the EDN map the command prints.
fn entry_edn(entry: &TxLogEntry, schema: &Schema) -> Edn {
    let data = entry
        .datoms
        .iter()
        .map(|d| {
            let attr = schema.get(d.a).map_or_else(
                || Edn::String(format!("unknown attribute {}", d.a)),
                |x| Edn::Keyword(x.ident.clone()),
            );
            Edn::Vector(vec![
                Edn::Long(d.e as i64),
                attr,
                edn_from_value(&d.v),
                Edn::Long(d.tx as i64),
                Edn::Bool(d.added),
            ])
        })
        .collect();
    let instant = entry
        .instant
        .map_or(Edn::Nil, |ms| edn_from_value(&Value::Instant(ms)));
    Edn::Map(vec![
        (Edn::kw(":tx"), Edn::Long(entry.tx as i64)),
        (Edn::kw(":instant"), instant),
        (Edn::kw(":data"), Edn::Vector(data)),
    ])
}
