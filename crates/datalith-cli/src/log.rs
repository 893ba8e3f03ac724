//! `datalith log DB [--since TX]`: the transaction log as EDN, one map per transaction per
//! line, oldest first: `{:tx 13194139534313, :instant #inst "...", :data [[e :attr value tx
//! added] ...]}` (attributes by ident). Read-only; a replica can apply the lines in order.

use std::io::Write;
use std::path::Path;

use datalith::codec::Value;
use datalith::edn::{edn_from_value, to_edn_string, Edn};

use crate::error::Result;

/// Prints the log of the database at `db` from transaction `since` (inclusive) on.
pub fn run(db: &Path, since: Option<u64>) -> Result<()> {
    let database = crate::open::open_read_only(db)?;
    let snapshot = database.db()?;
    let schema = snapshot.schema().clone();
    let entries = database.tx_range(since, None)?;
    let mut out = std::io::BufWriter::new(std::io::stdout().lock());
    for entry in entries {
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
        let map = Edn::Map(vec![
            (Edn::kw(":tx"), Edn::Long(entry.tx as i64)),
            (Edn::kw(":instant"), instant),
            (Edn::kw(":data"), Edn::Vector(data)),
        ]);
        writeln!(out, "{}", to_edn_string(&map))?;
    }
    out.flush()?;
    Ok(())
}
