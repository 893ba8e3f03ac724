//! Reading: one API over a snapshot ([`super::ReadTxn`]) and over the committer's write
//! transaction (which sees every earlier request of its batch).

use super::error::KvError;
use super::table::{Table, TableKind};
use heed::RoTxn;
use std::ops::Bound;

/// A borrowed read view of one consistent state of the environment.
#[derive(Clone, Copy)]
pub struct View<'t> {
    pub(crate) txn: &'t RoTxn<'t>,
}

/// A `(key, value)` pair borrowed from the memory map (zero copy).
pub type Entry<'t> = (&'t [u8], &'t [u8]);

/// An iterator over entries borrowed from a snapshot.
pub type Entries<'t> = Box<dyn Iterator<Item = Result<Entry<'t>, KvError>> + 't>;

/// An iterator over the values of one key of a list table.
pub type ListValues<'t> = Box<dyn Iterator<Item = Result<&'t [u8], KvError>> + 't>;

/// Which way a range is walked.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Direction {
    /// Ascending key (then value) order.
    Forward,
    /// Descending order.
    Backward,
}

fn lmdb<T>(r: heed::Result<T>) -> Result<T, KvError> {
    r.map_err(KvError::from)
}

impl<'t> View<'t> {
    /// The value stored under `key` (the first value for a list table).
    pub fn get(&self, table: &Table, key: &[u8]) -> Result<Option<&'t [u8]>, KvError> {
        if key.is_empty() {
            return Ok(None);
        }
        lmdb(table.db.get(self.txn, key))
    }

    /// Entries whose keys fall within the bounds, in the given direction. For a list table
    /// every `(key, value)` pair is an entry.
    pub fn range<'a>(
        &self,
        table: &Table,
        lower: Bound<&'a [u8]>,
        upper: Bound<&'a [u8]>,
        direction: Direction,
    ) -> Result<Entries<'t>, KvError> {
        if bounds_are_empty(lower, upper) {
            return Ok(Box::new(std::iter::empty()));
        }
        let bounds = (lower, upper);
        Ok(match direction {
            Direction::Forward => Box::new(lmdb(table.db.range(self.txn, &bounds))?.map(lmdb)),
            Direction::Backward => Box::new(lmdb(table.db.rev_range(self.txn, &bounds))?.map(lmdb)),
        })
    }

    /// Entries whose keys start with `prefix`.
    pub fn prefix(
        &self,
        table: &Table,
        prefix: &[u8],
        direction: Direction,
    ) -> Result<Entries<'t>, KvError> {
        Ok(match direction {
            Direction::Forward => Box::new(lmdb(table.db.prefix_iter(self.txn, prefix))?.map(lmdb)),
            Direction::Backward => {
                Box::new(lmdb(table.db.rev_prefix_iter(self.txn, prefix))?.map(lmdb))
            }
        })
    }

    /// Number of entries within the bounds. LMDB keeps no per-page counts, so this walks the
    /// range: O(n). The planner uses its own statistics instead.
    pub fn count_range(
        &self,
        table: &Table,
        lower: Bound<&[u8]>,
        upper: Bound<&[u8]>,
    ) -> Result<u64, KvError> {
        let mut n = 0u64;
        for e in self.range(table, lower, upper, Direction::Forward)? {
            e?;
            n += 1;
        }
        Ok(n)
    }

    /// Number of entries in the table (O(1): from LMDB's page statistics).
    pub fn len(&self, table: &Table) -> Result<u64, KvError> {
        lmdb(table.db.len(self.txn))
    }

    /// First entry in key order.
    pub fn first(&self, table: &Table) -> Result<Option<Entry<'t>>, KvError> {
        lmdb(table.db.first(self.txn))
    }

    /// Last entry in key order.
    pub fn last(&self, table: &Table) -> Result<Option<Entry<'t>>, KvError> {
        lmdb(table.db.last(self.txn))
    }

    /// The sorted values of `key` in a list table.
    pub fn list(&self, table: &Table, key: &[u8]) -> Result<ListValues<'t>, KvError> {
        require_list(table)?;
        if key.is_empty() {
            return Ok(Box::new(std::iter::empty()));
        }
        match lmdb(table.db.get_duplicates(self.txn, key))? {
            Some(it) => Ok(Box::new(it.map(|r| lmdb(r).map(|(_, v)| v)))),
            None => Ok(Box::new(std::iter::empty())),
        }
    }

    /// How many values `key` has in a list table.
    pub fn list_count(&self, table: &Table, key: &[u8]) -> Result<u64, KvError> {
        let mut n = 0;
        for v in self.list(table, key)? {
            v?;
            n += 1;
        }
        Ok(n)
    }

    /// Whether `key` holds exactly `value` in a list table.
    pub fn list_contains(&self, table: &Table, key: &[u8], value: &[u8]) -> Result<bool, KvError> {
        require_list(table)?;
        if key.is_empty() {
            return Ok(false);
        }
        // A dupsort table sorts a key's values; walk them in order and stop once past `value`.
        match lmdb(table.db.get_duplicates(self.txn, key))? {
            None => Ok(false),
            Some(it) => {
                for r in it {
                    let (_, v) = lmdb(r)?;
                    match v.cmp(value) {
                        std::cmp::Ordering::Less => continue,
                        std::cmp::Ordering::Equal => return Ok(true),
                        std::cmp::Ordering::Greater => return Ok(false),
                    }
                }
                Ok(false)
            }
        }
    }
}

fn require_list(table: &Table) -> Result<(), KvError> {
    if table.kind != TableKind::List {
        return Err(KvError::WrongTableKind {
            name: table.name.to_string(),
            actual: table.kind.name(),
            wanted: TableKind::List.name(),
        });
    }
    Ok(())
}

/// LMDB's range functions misbehave on inverted bounds; an inverted range is simply empty.
fn bounds_are_empty(lower: Bound<&[u8]>, upper: Bound<&[u8]>) -> bool {
    match (lower, upper) {
        (Bound::Included(a), Bound::Included(b)) => a > b,
        (Bound::Included(a), Bound::Excluded(b))
        | (Bound::Excluded(a), Bound::Included(b))
        | (Bound::Excluded(a), Bound::Excluded(b)) => a >= b,
        _ => false,
    }
}
