//! `stat`: what `datalith stat` shows, as data: sizes, datom counts, the attributes with
//! their statistics. The database's path is left out: clients need not learn the server's
//! file system.

use datalith::edn::Edn;
use datalith::kv::TableKind;
use datalith::store::{Cardinality, Unique};

use super::Source;
use crate::error::Result;

pub fn run(source: &Source, name: &str) -> Result<Edn> {
    let database = &source.database;
    let env = database.env();
    let file_bytes = std::fs::metadata(env.path().join("data.mdb")).map_or(0, |m| m.len());
    let (db, applied) = source.latest_and_whence()?;
    let basis = db.basis_t()?;
    let eav = env.table("eav", TableKind::List)?;
    let ave = env.table("ave", TableKind::List)?;
    let (eav_n, ave_n) = {
        // The same state as `db`'s where that is the data file's (a node applying a log).
        let txn = match applied {
            true => env.read_applied()?,
            false => env.read()?,
        };
        let v = txn.view();
        (v.len(&eav)?, v.len(&ave)?)
    };
    let r = db.reader();
    let mut attributes = Vec::new();
    for a in db.schema().user_attributes() {
        let s = r.stats(a.id)?;
        let mut m = vec![
            (Edn::kw(":db/ident"), Edn::Keyword(a.ident.clone())),
            (Edn::kw(":db/valueType"), Edn::kw(a.value_type.ident())),
            (
                Edn::kw(":db/cardinality"),
                Edn::kw(match a.cardinality {
                    Cardinality::One => ":db.cardinality/one",
                    Cardinality::Many => ":db.cardinality/many",
                }),
            ),
        ];
        match a.unique {
            Some(Unique::Identity) => {
                m.push((Edn::kw(":db/unique"), Edn::kw(":db.unique/identity")))
            }
            Some(Unique::Value) => m.push((Edn::kw(":db/unique"), Edn::kw(":db.unique/value"))),
            None => {}
        }
        if a.is_component {
            m.push((Edn::kw(":db/isComponent"), Edn::Bool(true)));
        }
        if let Some(doc) = &a.doc {
            m.push((Edn::kw(":db/doc"), Edn::String(doc.clone())));
        }
        if a.indexed {
            m.push((Edn::kw(":db/index"), Edn::Bool(true)));
        }
        m.push((Edn::kw(":datoms"), Edn::Long(s.datoms as i64)));
        // An attribute without AVE entries has no exact count of its distinct values (the
        // planner estimates them from a sketch, `datalith::store::sketch`).
        if !r.is_listed(a.id)? {
            m.push((Edn::kw(":distinct"), Edn::Long(s.distinct as i64)));
        }
        attributes.push(Edn::Map(m));
    }
    let n = |x: u64| Edn::Long(x as i64);
    let mut out = vec![
        (Edn::kw(":name"), Edn::String(name.to_string())),
        (Edn::kw(":basis-t"), n(basis)),
        (
            Edn::kw(":datoms"),
            Edn::Map(vec![
                (Edn::kw(":eav"), n(eav_n)),
                (Edn::kw(":ave"), n(ave_n)),
            ]),
        ),
        (Edn::kw(":schema-version"), n(db.schema().version)),
        (
            Edn::kw(":value-index"),
            Edn::kw(match database.value_index() {
                datalith::ValueIndex::Declared => ":declared",
                _ => ":all",
            }),
        ),
        (Edn::kw(":attributes"), Edn::Vector(attributes)),
        (Edn::kw(":file-bytes"), n(file_bytes)),
        (Edn::kw(":map-bytes"), n(env.map_bytes() as u64)),
        (Edn::kw(":free-pages"), n(env.free_pages()?)),
    ];
    out.push((Edn::kw(":leases"), n(source.leases.count() as u64)));
    if let Some(log) = env.log_bytes()? {
        out.push((Edn::kw(":log-bytes"), n(log)));
    }
    if let Some(replica) = &source.replica {
        out.push((Edn::kw(":replica"), replica.stat()));
    }
    Ok(Edn::Map(out))
}
