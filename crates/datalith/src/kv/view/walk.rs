//! The cursor walks behind [`super::View`]'s reads: a range of entries between two key
//! bounds (`RangeIter`), one key's values (`list_walk`, and a page at a time for
//! fixed-width values, `fixed_pages`), and many lookups in one list table through one
//! cursor ([`ListReader`]).

use super::{lmdb, Direction, Entry, View};
use crate::kv::error::KvError;
use crate::kv::lmdb::cursor::{Op, Pair};
use crate::kv::lmdb::{Cursor, RoTxn};
use crate::kv::table::{Table, TableKind};
use std::ops::Bound;

/// Up to this many values of a key, a fixed-width walk steps value by value.
const FEW_VALUES: usize = 8;

/// The values of the key a fixed-width list cursor was just positioned on (its first value
/// `first`), a page at a time; false if `f` stopped the walk.
#[inline]
pub(super) fn fixed_pages<'t>(
    cursor: &mut Cursor<'t>,
    first: &'t [u8],
    mut f: impl FnMut(&'t [u8]) -> Result<bool, KvError>,
) -> Result<bool, KvError> {
    // A key with a single value has no value pages; a few values are cheaper one by one
    // than through the page ops.
    let n = lmdb(cursor.count())?;
    if n <= FEW_VALUES {
        if !f(first)? {
            return Ok(false);
        }
        for _ in 1..n {
            match lmdb(cursor.step(Op::NextDup))? {
                Some((_, v)) => {
                    if !f(v)? {
                        return Ok(false);
                    }
                }
                None => break,
            }
        }
        return Ok(true);
    }
    match lmdb(cursor.values_page(true))? {
        None | Some([]) => f(first),
        Some(page) => {
            if !f(page)? {
                return Ok(false);
            }
            while let Some(page) = lmdb(cursor.values_page(false))? {
                if !f(page)? {
                    return Ok(false);
                }
            }
            Ok(true)
        }
    }
}

/// Calls `f` with the values of `key` (from the first at least `from`, if given) through
/// `cursor`, stopping when it returns false.
#[inline]
pub(super) fn list_walk<'t>(
    cursor: &mut Cursor<'t>,
    key: &[u8],
    from: Option<&[u8]>,
    mut f: impl FnMut(&'t [u8]) -> Result<bool, KvError>,
) -> Result<(), KvError> {
    let first = match from {
        None => lmdb(cursor.seek_exact(key))?,
        Some(v) => lmdb(cursor.seek_value(key, v))?,
    };
    let Some((_, mut v)) = first else {
        return Ok(());
    };
    loop {
        if !f(v)? {
            return Ok(());
        }
        match lmdb(cursor.step(Op::NextDup))? {
            Some((_, next)) => v = next,
            None => return Ok(()),
        }
    }
}

/// Many lookups in one list table through one cursor (see [`View::list_reader`]).
pub struct ListReader<'t> {
    pub(super) view: View<'t>,
    pub(super) table: Table,
    /// `None` when every read of the table merges the view's overlay; otherwise a lookup
    /// that meets the overlay merges it, and the others use the cursor.
    pub(super) cursor: Option<Cursor<'t>>,
}

impl<'t> ListReader<'t> {
    /// Calls `f` with each value of `key`, in order, stopping when it returns false.
    pub fn each(
        &mut self,
        key: &[u8],
        f: impl FnMut(&'t [u8]) -> Result<bool, KvError>,
    ) -> Result<(), KvError> {
        self.each_from(key, &[], f)
    }

    /// The greatest value of `key` below `bound`, if any: LMDB searches the key's sorted values
    /// for the bound and steps back one (a history's last event before a point in time).
    pub fn last_below(&mut self, key: &[u8], bound: &[u8]) -> Result<Option<&'t [u8]>, KvError> {
        if key.is_empty() {
            return Ok(None);
        }
        self.view.check_key(&self.table, key)?;
        let merged = self.view.patch_key(&self.table, key).is_some();
        match &mut self.cursor {
            Some(c)
                if !merged && !bound.is_empty() && bound.len() <= crate::limits::MAX_KEY_BYTES =>
            {
                if lmdb(c.seek_value(key, bound))?.is_some() {
                    return Ok(lmdb(c.step(Op::PrevDup))?.map(|(_, v)| v));
                }
                // Every value is below the bound, or the key has none.
                if lmdb(c.seek_exact(key))?.is_none() {
                    return Ok(None);
                }
                Ok(lmdb(c.step(Op::LastDup))?.map(|(_, v)| v))
            }
            _ => {
                let mut last = None;
                for v in self.view.list(&self.table, key)? {
                    let v = v?;
                    if v >= bound {
                        break;
                    }
                    last = Some(v);
                }
                Ok(last)
            }
        }
    }

    /// Calls `f` with each value of `key` that is at least `from`, in order, stopping when it
    /// returns false. LMDB finds the first such value by searching the key's sorted values.
    pub fn each_from(
        &mut self,
        key: &[u8],
        from: &[u8],
        mut f: impl FnMut(&'t [u8]) -> Result<bool, KvError>,
    ) -> Result<(), KvError> {
        if key.is_empty() {
            return Ok(());
        }
        self.view.check_key(&self.table, key)?;
        let merged = self.view.patch_key(&self.table, key).is_some();
        match &mut self.cursor {
            Some(c) if !merged && from.is_empty() => list_walk(c, key, None, f),
            Some(c) if !merged && from.len() <= crate::limits::MAX_KEY_BYTES => {
                list_walk(c, key, Some(from), f)
            }
            _ => {
                for v in self.view.list(&self.table, key)? {
                    let v = v?;
                    if v < from {
                        continue;
                    }
                    if !f(v)? {
                        break;
                    }
                }
                Ok(())
            }
        }
    }
}

/// A walk over the entries between two key bounds, in one direction, through one cursor.
pub(super) struct RangeIter<'t> {
    cursor: Cursor<'t>,
    forward: bool,
    /// The far bound, checked on every entry.
    end: Bound<Vec<u8>>,
    /// The entry to yield next; `None` once done.
    next: Option<Pair<'t>>,
}

impl<'t> RangeIter<'t> {
    /// Positions a cursor of `table` on the first entry of the range in `direction`.
    pub(super) fn new(
        txn: &'t RoTxn,
        table: &Table,
        lower: Bound<&[u8]>,
        upper: Bound<&[u8]>,
        direction: Direction,
    ) -> Result<RangeIter<'t>, KvError> {
        // No key is empty: an empty lower bound is no bound, and nothing is below an empty
        // upper bound.
        let lower = match lower {
            Bound::Included([]) | Bound::Excluded([]) => Bound::Unbounded,
            b => b,
        };
        let mut cursor = lmdb(Cursor::open(txn, table.db))?;
        let list = table.kind == TableKind::List;
        let forward = direction == Direction::Forward;
        let next = if forward {
            match lower {
                Bound::Unbounded => lmdb(cursor.step(Op::First))?,
                Bound::Included(k) => lmdb(cursor.seek(k))?,
                Bound::Excluded(k) => match lmdb(cursor.seek(k))? {
                    // Past every value of the bound key.
                    Some((found, _)) if found == k => lmdb(cursor.step(Op::NextNoDup))?,
                    other => other,
                },
            }
        } else {
            match upper {
                Bound::Included([]) | Bound::Excluded([]) => None,
                Bound::Unbounded => lmdb(cursor.step(Op::Last))?,
                Bound::Included(k) => match lmdb(cursor.seek(k))? {
                    Some((found, _)) if found == k && list => {
                        // The bound key's last value.
                        lmdb(cursor.step(Op::LastDup))?;
                        lmdb(cursor.step(Op::GetCurrent))?
                    }
                    Some((found, v)) if found == k => Some((found, v)),
                    Some(_) => lmdb(cursor.step(Op::Prev))?,
                    None => lmdb(cursor.step(Op::Last))?,
                },
                Bound::Excluded(k) => match lmdb(cursor.seek(k))? {
                    Some(_) => lmdb(cursor.step(Op::Prev))?,
                    None => lmdb(cursor.step(Op::Last))?,
                },
            }
        };
        let end = if forward { upper } else { lower };
        Ok(RangeIter {
            cursor,
            forward,
            end: end.map(<[u8]>::to_vec),
            next,
        })
    }

    /// The next entry within the bounds.
    #[inline]
    pub(super) fn advance(&mut self) -> Result<Option<Pair<'t>>, KvError> {
        let Some((k, v)) = self.next.take() else {
            return Ok(None);
        };
        let inside = match (&self.end, self.forward) {
            (Bound::Unbounded, _) => true,
            (Bound::Included(e), true) => k <= e.as_slice(),
            (Bound::Excluded(e), true) => k < e.as_slice(),
            (Bound::Included(e), false) => k >= e.as_slice(),
            (Bound::Excluded(e), false) => k > e.as_slice(),
        };
        if !inside {
            return Ok(None);
        }
        let op = if self.forward { Op::Next } else { Op::Prev };
        self.next = lmdb(self.cursor.step(op))?;
        Ok(Some((k, v)))
    }
}

impl<'t> Iterator for RangeIter<'t> {
    type Item = Result<Entry<'t>, KvError>;

    fn next(&mut self) -> Option<Self::Item> {
        self.advance().transpose()
    }
}
