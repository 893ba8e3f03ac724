//! Describing a database: `.schema`, `.attrs`, `.stat` and the `stat` subcommand.

use datalith::codec::ValueType;
use datalith::kv::TableKind;
use datalith::store::{Attribute, Cardinality, Unique};
use datalith::{Database, Db};

use crate::error::Result;
use crate::render::table;

/// The user schema as EDN tx data (what would recreate it).
pub fn schema_text(db: &Db) -> String {
    let attrs = db.schema().user_attributes();
    if attrs.is_empty() {
        return ";; no user attributes yet\n".into();
    }
    let mut out = String::from("[");
    for (i, a) in attrs.iter().enumerate() {
        if i > 0 {
            out.push_str("\n ");
        }
        out.push_str(&attr_map(a));
    }
    out.push_str("]\n");
    out
}

fn attr_map(a: &Attribute) -> String {
    let mut s = format!(
        "{{:db/ident {} :db/valueType {}",
        a.ident,
        a.value_type.ident()
    );
    s.push_str(match a.cardinality {
        Cardinality::One => " :db/cardinality :db.cardinality/one",
        Cardinality::Many => " :db/cardinality :db.cardinality/many",
    });
    match a.unique {
        Some(Unique::Identity) => s.push_str(" :db/unique :db.unique/identity"),
        Some(Unique::Value) => s.push_str(" :db/unique :db.unique/value"),
        None => {}
    }
    if a.is_component {
        s.push_str(" :db/isComponent true");
    }
    if let Some(d) = &a.doc {
        s.push_str(&format!(
            " :db/doc {}",
            datalith::edn::to_edn_string(&datalith::edn::Edn::String(d.clone()))
        ));
    }
    s.push('}');
    s
}

fn short_type(t: ValueType) -> &'static str {
    let id = t.ident();
    id.rsplit('/').next().unwrap_or(id)
}

/// A table of the user attributes with their statistics.
pub fn attrs_table(db: &Db) -> Result<String> {
    let r = db.reader();
    let mut rows = Vec::new();
    for a in db.schema().user_attributes() {
        let s = r.stats(a.id)?;
        rows.push(vec![
            a.ident.to_string(),
            short_type(a.value_type).to_string(),
            match a.cardinality {
                Cardinality::One => "one".into(),
                Cardinality::Many => "many".into(),
            },
            match a.unique {
                Some(Unique::Identity) => "identity".into(),
                Some(Unique::Value) => "value".into(),
                None if a.is_component => "component".into(),
                None => String::new(),
            },
            s.datoms.to_string(),
            s.distinct.to_string(),
        ]);
    }
    let head: Vec<String> = ["attribute", "type", "card", "unique", "datoms", "distinct"]
        .iter()
        .map(|s| s.to_string())
        .collect();
    let n = rows.len();
    Ok(table(&head, &rows, n))
}

fn human(bytes: u64) -> String {
    let units = ["B", "KiB", "MiB", "GiB", "TiB"];
    let mut v = bytes as f64;
    let mut u = 0;
    while v >= 1024.0 && u + 1 < units.len() {
        v /= 1024.0;
        u += 1;
    }
    if u == 0 {
        format!("{bytes} B")
    } else {
        format!("{v:.1} {}", units[u])
    }
}

/// The snapshots open in this process: a snapshot held while writes go on keeps LMDB from
/// reusing the pages freed since it opened, so the user should see who pins the file.
fn snapshots_line(env: &datalith::kv::Environment) -> String {
    match env.oldest_snapshot() {
        None => "snapshots   none open in this process\n".to_string(),
        Some(o) => {
            format!(
                "snapshots   {} open in this process; the oldest for {:.1} s, the file grew {} \
                 since (space not reused while it is open)\n",
                o.open_snapshots,
                o.age.as_secs_f64(),
                human(o.file_growth_bytes as u64)
            )
        }
    }
}

/// The `stat` report: file, index sizes, attributes.
/// The history index's events and its share of the indexes' bytes (keys and values as
/// stored; LMDB's page overhead comes on top of each alike).
fn history_line(env: &datalith::kv::Environment) -> Result<Option<String>> {
    let Ok(history) = env.table("history", TableKind::List) else {
        return Ok(None);
    };
    let txn = env.read()?;
    let v = txn.view();
    let bytes = |name: &str| -> Result<u64> {
        let t = env.table(name, TableKind::List)?;
        let mut n = 0u64;
        for entry in v.range(
            &t,
            std::ops::Bound::Unbounded,
            std::ops::Bound::Unbounded,
            datalith::kv::Direction::Forward,
        )? {
            let (k, val) = entry?;
            n += (k.len() + val.len()) as u64;
        }
        Ok(n)
    };
    let events = v.len(&history)?;
    let (h, indexes) = (bytes("history")?, bytes("eav")? + bytes("ave")?);
    let share = if h + indexes == 0 {
        0.0
    } else {
        100.0 * h as f64 / (h + indexes) as f64
    };
    Ok(Some(format!(
        "history     {events} events, {} ({share:.0}% of the index bytes; EAV and AVE {})\n",
        human(h),
        human(indexes)
    )))
}

/// One line per full-text attribute: its documents, terms and bytes.
fn fulltext_lines(db: &datalith::Db) -> Result<String> {
    let mut out = String::new();
    for attr in db.schema().user_attributes() {
        if attr.fulltext.is_none() {
            continue;
        }
        let Some(s) = db.fulltext_sizes(attr.id)? else {
            continue;
        };
        out.push_str(&format!(
            "fulltext    {} {} documents, {} terms, {} ({} in {} postings blocks)\n",
            attr.ident,
            s.docs,
            s.terms,
            human(s.bytes),
            human(s.postings_bytes),
            s.blocks
        ));
    }
    Ok(out)
}

pub fn stat_text(database: &Database) -> Result<String> {
    let env = database.env();
    let path = env.path();
    let file = std::fs::metadata(path.join("data.mdb"))
        .map(|m| m.len())
        .unwrap_or(0);
    // Before this report opens snapshots of its own.
    let snapshots = snapshots_line(env);
    let db = database.db()?;
    let eav = env.table("eav", TableKind::List)?;
    let ave = env.table("ave", TableKind::List)?;
    let (eav_n, ave_n) = {
        let txn = env.read()?;
        let v = txn.view();
        (v.len(&eav)?, v.len(&ave)?)
    };
    let mut out = String::new();
    out.push_str(&format!("database    {}\n", path.display()));
    out.push_str(&format!(
        "file        {} (map {}, durability {:?})\n",
        human(file),
        human(env.map_bytes() as u64),
        env.durability()
    ));
    let free = env.free_pages()?;
    out.push_str(&format!(
        "free pages  {free} ({}, reused by later commits; `datalith copy` leaves them out)\n",
        human(free * env.page_bytes()? as u64)
    ));
    if let Some(log) = env.log_bytes()? {
        out.push_str(&format!(
            "log         {} ({}, grows with use)\n",
            human(log),
            datalith::kv::wal::LOG_FILE
        ));
    }
    out.push_str(&snapshots);
    out.push_str(&format!("datoms      {eav_n} in EAV, {ave_n} in AVE\n"));
    if let Some(line) = history_line(env)? {
        out.push_str(&line);
    }
    out.push_str(&fulltext_lines(&db)?);
    out.push_str(&format!(
        "attributes  {} user, schema version {}\n\n",
        db.schema().user_attributes().len(),
        db.schema().version
    ));
    out.push_str(&attrs_table(&db)?);
    Ok(out)
}
