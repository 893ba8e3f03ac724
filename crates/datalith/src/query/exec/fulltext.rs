//! Datomic's `fulltext`: `[(fulltext $ :attr ?query) [[?e ?value ?tx ?score]]]`, the matches
//! of a search of the attribute's full-text index (`search`) as a relation. As in Datomic:
//! one row per matching datom; `?score` is the BM25 score divided by the call's best, so the
//! best match scores 1.0; an attribute that is unknown or not full-text matches nothing.

use super::*;
use crate::codec::Value;
use crate::query::error::QueryError;
use crate::search::read::SpaceReader;
use crate::search::{self, Analyzer};
use crate::store::AttrId;

impl<'a> Ctx<'a> {
    /// The `fulltext` call (its `$` already dropped).
    pub(super) fn fulltext_fn(&self, args: &[Value]) -> Result<Value, QueryError> {
        let bad = |m: String| QueryError::BadArguments {
            name: "fulltext".into(),
            message: m,
        };
        let [attr, query] = args else {
            return Err(bad(format!(
                "takes $, an attribute and a query; {} given after $",
                args.len()
            )));
        };
        let attr = match attr {
            Value::Keyword(k) => self.schema.by_ident(k),
            Value::Ref(e) => u32::try_from(*e).ok().and_then(|a| self.schema.get(a)),
            Value::Long(n) => u32::try_from(*n).ok().and_then(|a| self.schema.get(a)),
            // Datomic's category for a string where the attribute's keyword is due.
            Value::String(_) => {
                return Err(QueryError::NotAKeyword {
                    value: crate::edn::to_edn_string(&crate::edn::edn_from_value(attr)),
                })
            }
            other => {
                return Err(bad(format!(
                    "cannot interpret {} as an attribute",
                    crate::edn::to_edn_string(&crate::edn::edn_from_value(other))
                )))
            }
        };
        let Value::String(text) = query else {
            return Err(bad(format!(
                "the query is {}, not a string",
                crate::edn::to_edn_string(&crate::edn::edn_from_value(query))
            )));
        };
        let none = Ok(Value::Tuple(Vec::new()));
        let Some(attr) = attr else { return none };
        let Some(config) = attr.fulltext else {
            return none;
        };
        let a: AttrId = attr.id;
        if !self.time.is_current() {
            return self.fulltext_in_time(a, attr.is_many(), config, text);
        }
        let Some(tables) = &self.r.t.search else {
            return none;
        };
        let analyzer = Analyzer::new(config);
        let q = search::parse_query(text, &analyzer)?;
        let reader = SpaceReader::new(self.r.view, tables, a)?;
        let hits = search::exec::all(&reader, &q)?;
        let best = hits.iter().map(|h| h.score).fold(0f32, f32::max);
        let one = !attr.is_many();
        let mut history = match self.r.has_history() {
            true => Some(self.r.history_cursor()?),
            false => None,
        };
        let now = crate::store::TimeFilter::default();
        let mut rows = Vec::with_capacity(hits.len());
        for h in hits {
            self.budget.tick()?;
            let Some(doc) = reader.doc(h.id)? else {
                continue;
            };
            let Some(e) = doc
                .owner
                .get(..8)
                .and_then(|b| b.try_into().ok())
                .map(u64::from_be_bytes)
            else {
                continue;
            };
            let hash = &doc.owner[8..];
            let Some(v) = self.r.values(e, a)?.into_iter().find(|v| match v {
                Value::String(s) => &crate::tx::fulltext::owner(e, s)[8..] == hash,
                _ => false,
            }) else {
                continue;
            };
            let mut tx = None;
            if let Some(c) = history.as_mut() {
                for t in c.timed(&now, e, Some(a), one)? {
                    if c.value(e, &t)? == v {
                        tx = Some(Value::Ref(t.tx));
                        break;
                    }
                }
            }
            rows.push(row(e, v, tx, h.score, best));
        }
        Ok(Value::Tuple(rows))
    }

    /// `fulltext` on a database value in time: the index holds the current state, so the
    /// attribute's values in that view (each datom, for a history) are searched in memory.
    fn fulltext_in_time(
        &self,
        a: AttrId,
        many: bool,
        config: crate::search::AnalyzerConfig,
        text: &str,
    ) -> Result<Value, QueryError> {
        let analyzer = Analyzer::new(config);
        let q = search::parse_query(text, &analyzer)?;
        self.hold_listed(a)?;
        let mut entities: Vec<u64> = Vec::new();
        self.r.scan_attr(
            a,
            std::ops::Bound::Unbounded,
            std::ops::Bound::Unbounded,
            crate::kv::Direction::Forward,
            |_, e| {
                entities.push(e);
                Ok(true)
            },
        )?;
        entities.extend(self.r.entities_that_lost(a)?);
        entities.sort_unstable();
        entities.dedup();
        let mut datoms: Vec<(u64, String, u64)> = Vec::new();
        let mut c = self.r.history_cursor()?;
        for e in entities {
            self.budget.tick()?;
            for t in c.timed(&self.time, e, Some(a), !many)? {
                if let Value::String(s) = c.value(e, &t)? {
                    datoms.push((e, s.to_string(), t.tx));
                }
            }
        }
        let texts: Vec<&str> = datoms.iter().map(|d| d.1.as_str()).collect();
        let hits = search::naive::search_texts(&q, &analyzer, &texts);
        let best = hits.iter().map(|h| h.score).fold(0f32, f32::max);
        Ok(Value::Tuple(
            hits.into_iter()
                .map(|h| {
                    let (e, v, tx) = &datoms[h.id as usize];
                    row(*e, Value::string(v), Some(Value::Ref(*tx)), h.score, best)
                })
                .collect(),
        ))
    }
}

/// One result row, `[?e ?value ?tx ?score]`, the score divided by the call's best (Datomic's:
/// the best match scores 1.0).
fn row(e: u64, v: Value, tx: Option<Value>, score: f32, best: f32) -> Option<Value> {
    let score = if best > 0.0 { score / best } else { 1.0 };
    Some(Value::Tuple(vec![
        Some(Value::Ref(e)),
        Some(v),
        tx,
        crate::codec::F64::new(f64::from(score)).map(Value::Double),
    ]))
}
