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
            return Err(bad(
                "full-text search reads the current state; a database as of, since or with \
                 history is not searched (see the README)"
                    .into(),
            ));
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
            let score = if best > 0.0 { h.score / best } else { 1.0 };
            let score = crate::codec::F64::new(f64::from(score)).map(Value::Double);
            rows.push(Some(Value::Tuple(vec![
                Some(Value::Ref(e)),
                Some(v),
                tx,
                score,
            ])));
        }
        Ok(Value::Tuple(rows))
    }
}
