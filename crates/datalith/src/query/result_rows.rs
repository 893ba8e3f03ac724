//! A collection result taken a row at a time ([`ResultRows`]): the engine's last relation
//! kept as it is, each row made into its EDN item (and pulled) only when it is taken.
//!
//! Why: a result built whole holds every row twice at its end, once as the relation's
//! values and once as EDN (a tuple of one entity id: 56 bytes in the relation, ~96 more as
//! EDN; a pulled entity, its whole map). A server writing a large answer as the client reads
//! it needs only the relation, and frees each row once written.

use super::error::QueryError;
use super::find::element;
use super::ir::{FindElem, FindShape, Query};
use super::relation::{Relation, Rows};
use crate::db::Db;
use crate::edn::{edn_from_value, Edn};

/// Where [`crate::Db::q_each`] hands a collection result's items, one at a time as they are
/// made.
pub trait ItemSink {
    /// Called once, before the first item: whether the items make a set (`#{...}`) or a
    /// vector.
    fn begin(&mut self, set: bool) -> Result<(), QueryError>;
    /// The next item. An error stops the query and is its answer (a writer whose reader went
    /// away answers [`QueryError::Cancelled`]).
    fn item(&mut self, item: &Edn) -> Result<(), QueryError>;
}

/// The rows of a collection result (`:find ?a ?b`, `:find [?a ...]`, with or without pull),
/// each made into its EDN item when taken, in the order the whole result lists them.
///
/// Taking every item and collecting them gives exactly the result [`crate::Db::q`] returns:
/// a set (`#{...}`) when [`ResultRows::is_set`], else a vector. The rows keep the database
/// value they were read from (for pull) until they are dropped.
pub struct ResultRows {
    /// The value pulls read (`None` without a pull: sharing a snapshot with another `Db`
    /// costs a read of each table).
    db: Option<Db>,
    find: Vec<FindElem>,
    /// The relation's column of each find element.
    cols: Vec<usize>,
    /// Every find element is a plain variable (no pull).
    plain: bool,
    /// `[?a ...]`: each item is the row's one value, not a tuple.
    collection: bool,
    set: bool,
    rows: Rows,
    /// The tuple `next_with` fills for each plain row (one allocation for them all).
    tuple: Vec<Edn>,
}

impl ResultRows {
    /// Whether `q`'s result is a collection whose items are its rows one for one: no
    /// aggregate (which folds rows), no `:order-by`, `:limit` or `:offset` (which need them
    /// all first), no `:keys`.
    pub(crate) fn fit(q: &Query) -> bool {
        !q.find
            .iter()
            .any(|f| matches!(f, FindElem::Aggregate { .. }))
            && q.order_by.is_empty()
            && q.offset.is_none()
            && q.limit.is_none()
            && q.keys.is_none()
            && matches!(q.shape, FindShape::Relation | FindShape::Collection)
    }

    /// Whether `q`'s result (one that [fits](Self::fit)) is a set; otherwise a vector.
    pub(crate) fn is_set_of(q: &Query) -> bool {
        // `:with` without an aggregate leaves a bag, which is no set.
        matches!(q.shape, FindShape::Relation) && q.with.is_empty()
    }

    /// Hands every item not taken yet to `sink`, in order.
    pub(crate) fn hand_to(mut self, sink: &mut dyn ItemSink) -> Result<(), QueryError> {
        while let Some(handed) = self.next_with(|item| sink.item(item)) {
            handed??;
        }
        Ok(())
    }

    /// The rows of `rel` as `q`'s result items (`q` must [`fit`](Self::fit)); pulls read `db`.
    pub(crate) fn new(db: &Db, q: &Query, rel: Relation) -> ResultRows {
        debug_assert!(Self::fit(q));
        let cols = columns(q, &rel);
        let plain = q.find.iter().all(|f| matches!(f, FindElem::Var(_)));
        ResultRows {
            db: (!plain).then(|| db.clone()),
            plain,
            find: q.find.clone(),
            cols,
            collection: matches!(q.shape, FindShape::Collection),
            set: Self::is_set_of(q),
            rows: rel.into_rows(),
            tuple: Vec::new(),
        }
    }

    /// Items not taken yet.
    pub fn len(&self) -> usize {
        self.rows.size_hint().0
    }

    /// Whether every item has been taken.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Whether the result is a set (`#{...}`); otherwise it is a vector.
    pub fn is_set(&self) -> bool {
        self.set
    }

    /// Takes the next item and hands it to `use_item`, which reads it where it was made.
    /// What a writer of many items calls: an item returned by value through `next` is
    /// stored field by field and read back 16 bytes at a time, and each such load waits for
    /// the stores before it (a store-forwarding stall), which made writing a 2,575-row answer
    /// over the server ~15% slower than through `next`'s callers' own loop.
    pub fn next_with<R>(
        &mut self,
        use_item: impl FnOnce(&Edn) -> R,
    ) -> Option<Result<R, QueryError>> {
        let row = self.rows.next()?;
        match (self.plain, self.collection) {
            (true, true) => Some(Ok(use_item(&edn_from_value(&row[self.cols[0]])))),
            (true, false) => {
                // The tuple's vector is reused from row to row.
                let mut items = std::mem::take(&mut self.tuple);
                items.clear();
                for c in &self.cols {
                    push_edn(&mut items, &row[*c]);
                }
                let tuple = Edn::Vector(items);
                let used = use_item(&tuple);
                if let Edn::Vector(items) = tuple {
                    self.tuple = items;
                }
                Some(Ok(used))
            }
            (false, _) => {
                let db = self
                    .db
                    .as_ref()
                    .expect("a pulling result keeps its database value");
                let item = pulled_item(db, &self.find, &self.cols, self.collection, &row);
                Some(item.map(|i| use_item(&i)))
            }
        }
    }

    /// Takes the next item and writes it as CBOR at the end of `out`: what [`Self::next_with`]
    /// handing it to `edn::cbor::write_cbor` writes, without making the item's EDN when the
    /// result pulls nothing (a row's values written as they are: no vector, no value made and
    /// dropped for each of them).
    pub fn write_next_cbor(&mut self, out: &mut Vec<u8>) -> Option<Result<(), QueryError>> {
        if !self.plain {
            return self.next_with(|item| crate::edn::cbor::write_cbor(item, out));
        }
        let row = self.rows.next()?;
        let mut w = crate::edn::cbor::CborWriter(out);
        if self.collection {
            w.stored(&row[self.cols[0]]);
        } else {
            w.array_head(self.cols.len());
            for c in &self.cols {
                w.stored(&row[*c]);
            }
        }
        Some(Ok(()))
    }

    /// The items not taken yet, as the whole result.
    pub fn into_edn(self) -> Result<Edn, QueryError> {
        let set = self.set;
        let items = self.collect::<Result<Vec<Edn>, QueryError>>()?;
        Ok(if set {
            Edn::Set(items)
        } else {
            Edn::Vector(items)
        })
    }
}

impl Iterator for ResultRows {
    type Item = Result<Edn, QueryError>;

    fn next(&mut self) -> Option<Result<Edn, QueryError>> {
        let row = self.rows.next()?;
        if self.plain {
            return Some(Ok(plain_item(&self.cols, self.collection, &row)));
        }
        let db = self
            .db
            .as_ref()
            .expect("a pulling result keeps its database value");
        Some(pulled_item(
            db,
            &self.find,
            &self.cols,
            self.collection,
            &row,
        ))
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        self.rows.size_hint()
    }
}

impl std::fmt::Debug for ResultRows {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "ResultRows({} left)", self.len())
    }
}

/// The relation's column of each of `q`'s find elements.
fn columns(q: &Query, rel: &Relation) -> Vec<usize> {
    q.find
        .iter()
        .map(|f| rel.col(f.var()).expect("find variables are bound"))
        .collect()
}

/// A row's result item when every find element is a plain variable.
fn plain_item(cols: &[usize], collection: bool, row: &[crate::codec::Value]) -> Edn {
    match collection {
        true => edn_from_value(&row[cols[0]]),
        false => Edn::Vector(cols.iter().map(|c| edn_from_value(&row[*c])).collect()),
    }
}

/// A row's result item when a find element pulls: the tuple of its find columns, each pulled
/// where its element pulls, or for a collection find its one value.
fn pulled_item(
    db: &Db,
    find: &[FindElem],
    cols: &[usize],
    collection: bool,
    row: &[crate::codec::Value],
) -> Result<Edn, QueryError> {
    if collection {
        return element(db, &find[0], &row[cols[0]]);
    }
    find.iter()
        .zip(cols)
        .map(|(f, c)| element(db, f, &row[*c]))
        .collect::<Result<Vec<Edn>, QueryError>>()
        .map(Edn::Vector)
}

/// `v` as EDN, pushed onto `items`: entity ids and longs (most of a large result) made in
/// their slot, where `edn_from_value`'s value, returned through memory and moved into the
/// vector, cost a store-forwarding stall on every row (29% of the samples of the server's
/// answer writer for q1, 2026-12-07).
fn push_edn(items: &mut Vec<Edn>, v: &crate::codec::Value) {
    use crate::codec::Value;
    match v {
        Value::Long(n) => items.push(Edn::Long(*n)),
        Value::Ref(e) => items.push(Edn::Long(*e as i64)),
        other => items.push(edn_from_value(other)),
    }
}
