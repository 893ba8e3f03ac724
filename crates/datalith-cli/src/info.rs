//! Describing a database: `.schema`, `.attrs`, `.stat` and the `stat` subcommand.

use datalith::edn::{to_edn_string, Edn};
use datalith::kv::TableKind;
use datalith::store::{Attribute, Cardinality, Unique};
use datalith::{Database, Db};

use crate::error::Result;
use crate::render::table;

/// One user attribute as `.schema` and `.attrs` show it, from a local database or from a
/// server's `stat`.
pub struct AttrRow {
    ident: String,
    /// The value type's ident, `:db.type/string`.
    value_type: String,
    many: bool,
    /// `identity` or `value`.
    unique: Option<&'static str>,
    component: bool,
    /// `:db/index true`.
    indexed: bool,
    doc: Option<String>,
    datoms: u64,
    /// `None` where nothing counts them exactly (an attribute without AVE entries, whose
    /// distinct values the planner estimates from a sketch).
    distinct: Option<u64>,
}

/// The user attributes of `db`, with their statistics.
pub fn attr_rows(db: &Db) -> Result<Vec<AttrRow>> {
    let r = db.reader();
    let mut rows = Vec::new();
    for a in db.schema().user_attributes() {
        let s = r.stats(a.id)?;
        let distinct = (!r.is_listed(a.id)?).then_some(s.distinct);
        rows.push(row_of(&a, s.datoms, distinct));
    }
    Ok(rows)
}

fn row_of(a: &Attribute, datoms: u64, distinct: Option<u64>) -> AttrRow {
    AttrRow {
        ident: a.ident.to_string(),
        value_type: a.value_type.ident().to_string(),
        many: a.cardinality == Cardinality::Many,
        unique: match a.unique {
            Some(Unique::Identity) => Some("identity"),
            Some(Unique::Value) => Some("value"),
            None => None,
        },
        component: a.is_component,
        indexed: a.indexed,
        doc: a.doc.clone(),
        datoms,
        distinct,
    }
}

/// The value under keyword `key` in the map `m` (a server's answer), if any.
pub fn field(m: &Edn, key: &str) -> Option<Edn> {
    match m {
        Edn::Map(pairs) => pairs
            .iter()
            .find(|(k, _)| *k == Edn::kw(key))
            .map(|(_, v)| v.clone()),
        _ => None,
    }
}

/// The attributes of a server's `stat` answer (`:attributes`, maps of `:db/ident`,
/// `:db/valueType`, ... and `:datoms`, `:distinct`).
pub fn attr_rows_of_stat(stat: &Edn) -> Vec<AttrRow> {
    let Some(Edn::Vector(attrs)) = field(stat, ":attributes") else {
        return Vec::new();
    };
    let text = |v: Option<Edn>| match v {
        Some(Edn::Keyword(k)) => k.to_string(),
        Some(other) => to_edn_string(&other),
        None => String::new(),
    };
    let count = |v: Option<Edn>| match v {
        Some(Edn::Long(n)) => n.max(0) as u64,
        _ => 0,
    };
    attrs
        .iter()
        .filter_map(|a| match a {
            Edn::Map(_) => Some(AttrRow {
                ident: text(field(a, ":db/ident")),
                value_type: text(field(a, ":db/valueType")),
                many: text(field(a, ":db/cardinality")) == ":db.cardinality/many",
                unique: match text(field(a, ":db/unique")).as_str() {
                    ":db.unique/identity" => Some("identity"),
                    ":db.unique/value" => Some("value"),
                    _ => None,
                },
                component: field(a, ":db/isComponent") == Some(Edn::Bool(true)),
                indexed: field(a, ":db/index") == Some(Edn::Bool(true)),
                doc: match field(a, ":db/doc") {
                    Some(Edn::String(d)) => Some(d),
                    _ => None,
                },
                datoms: count(field(a, ":datoms")),
                distinct: field(a, ":distinct").map(|d| count(Some(d))),
            }),
            _ => None,
        })
        .collect()
}

/// The user schema as EDN tx data (what would recreate it).
pub fn schema_text(rows: &[AttrRow]) -> String {
    if rows.is_empty() {
        return ";; no user attributes yet\n".into();
    }
    let mut out = String::from("[");
    for (i, a) in rows.iter().enumerate() {
        if i > 0 {
            out.push_str("\n ");
        }
        out.push_str(&attr_map(a));
    }
    out.push_str("]\n");
    out
}

fn attr_map(a: &AttrRow) -> String {
    let mut s = format!("{{:db/ident {} :db/valueType {}", a.ident, a.value_type);
    s.push_str(match a.many {
        false => " :db/cardinality :db.cardinality/one",
        true => " :db/cardinality :db.cardinality/many",
    });
    if let Some(u) = a.unique {
        s.push_str(&format!(" :db/unique :db.unique/{u}"));
    }
    if a.component {
        s.push_str(" :db/isComponent true");
    }
    if a.indexed {
        s.push_str(" :db/index true");
    }
    if let Some(d) = &a.doc {
        s.push_str(&format!(
            " :db/doc {}",
            to_edn_string(&Edn::String(d.clone()))
        ));
    }
    s.push('}');
    s
}

/// A table of the user attributes with their statistics.
pub fn attrs_table(rows: &[AttrRow]) -> String {
    let cells: Vec<Vec<String>> = rows
        .iter()
        .map(|a| {
            vec![
                a.ident.clone(),
                a.value_type
                    .rsplit('/')
                    .next()
                    .unwrap_or(&a.value_type)
                    .to_string(),
                if a.many { "many" } else { "one" }.to_string(),
                match (a.unique, a.component) {
                    (Some(u), _) => u.to_string(),
                    (None, true) => "component".into(),
                    (None, false) => String::new(),
                },
                a.datoms.to_string(),
                a.distinct
                    .map_or_else(|| "-".to_string(), |d| d.to_string()),
            ]
        })
        .collect();
    let head: Vec<String> = ["attribute", "type", "card", "unique", "datoms", "distinct"]
        .iter()
        .map(|s| s.to_string())
        .collect();
    table(&head, &cells, cells.len())
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
    out.push_str(&format!(
        "datoms      {eav_n} in EAV, {ave_n} in AVE ({})\n",
        match database.value_index() {
            datalith::ValueIndex::Declared => "those of :db/index, :db/unique and ref attributes",
            _ => "every attribute's",
        }
    ));
    if let Some(line) = history_line(env)? {
        out.push_str(&line);
    }
    out.push_str(&fulltext_lines(&db)?);
    out.push_str(&format!(
        "attributes  {} user, schema version {}\n\n",
        db.schema().user_attributes().len(),
        db.schema().version
    ));
    out.push_str(&attrs_table(&attr_rows(&db)?));
    Ok(out)
}
