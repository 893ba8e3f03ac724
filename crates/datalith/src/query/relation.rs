//! Relations: the sets of bindings that flow between clauses.
//!
//! Every operation that walks or builds rows ticks the query's [`Budget`] per row and charges
//! it for the rows and hash-table entries it keeps, so a join that grows without end is
//! stopped (timeout, cancel, memory) instead of running on.

use rustc_hash::FxHashMap as HashMap;
use rustc_hash::FxHashSet as HashSet;

use super::budget::{row_bytes, Budget, FreeAfterStop};
use super::error::QueryError;
use super::ir::Var;
use super::prefetch::{row_ahead, PREFETCH_FROM_ROWS, ROWS_AHEAD};
use crate::codec::Value;

/// A relation over some variables: rows, one value per variable. Between the steps of a
/// query it is a set (no two equal rows); `distinct` says which steps must deduplicate to keep
/// it one.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Relation {
    /// The variables, in column order.
    pub vars: Vec<Var>,
    /// The rows.
    pub rows: Vec<Vec<Value>>,
}

impl Relation {
    /// The relation with no columns and one empty row: the identity of joins.
    pub fn unit() -> Relation {
        Relation {
            vars: Vec::new(),
            rows: vec![Vec::new()],
        }
    }

    /// An empty relation over `vars`.
    pub fn empty(vars: Vec<Var>) -> Relation {
        Relation {
            vars,
            rows: Vec::new(),
        }
    }

    /// The column of `v`.
    pub fn col(&self, v: Var) -> Option<usize> {
        self.vars.iter().position(|x| *x == v)
    }

    /// Whether `v` is bound.
    pub fn binds(&self, v: Var) -> bool {
        self.vars.contains(&v)
    }

    /// Keeps only `keep` (in that order), removing duplicate rows.
    pub fn project(&self, keep: &[Var], budget: &Budget<'_>) -> Result<Relation, QueryError> {
        let cols: Vec<usize> = keep.iter().filter_map(|v| self.col(*v)).collect();
        let vars: Vec<Var> = cols.iter().map(|c| self.vars[*c]).collect();
        if vars == self.vars {
            return Ok(self.clone());
        }
        // A kept row is held twice: in the rows and in the set.
        let bytes = 2 * row_bytes(vars.len());
        let mut seen = FreeAfterStop::new(HashSet::with_capacity_and_hasher(
            self.rows.len(),
            Default::default(),
        ));
        let mut rows = Vec::new();
        for r in &self.rows {
            budget.tick()?;
            let p: Vec<Value> = cols.iter().map(|c| r[*c].clone()).collect();
            if seen.insert(p.clone()) {
                budget.charge(bytes)?;
                rows.push(p);
            }
        }
        Ok(Relation { vars, rows })
    }

    /// Like [`Self::project`], consuming `self` (cheap when nothing is dropped).
    pub fn project_owned(self, keep: &[Var], budget: &Budget<'_>) -> Result<Relation, QueryError> {
        if self.vars.iter().all(|v| keep.contains(v)) {
            return Ok(self);
        }
        self.project(keep, budget)
    }

    /// Keeps only `keep` (in the relation's order), removing duplicate rows only when `dedup`
    /// is set: the caller knows whether dropping the other columns (or the step before) can
    /// have made equal rows.
    pub fn into_projection(
        mut self,
        keep: &[Var],
        dedup: bool,
        budget: &Budget<'_>,
    ) -> Result<Relation, QueryError> {
        let cols: Vec<usize> = (0..self.vars.len())
            .filter(|c| keep.contains(&self.vars[*c]))
            .collect();
        if cols.len() == self.vars.len() {
            if dedup {
                self.dedup(budget)?;
            }
            return Ok(self);
        }
        if dedup {
            return self.project(keep, budget);
        }
        // Each row keeps its own vector: the kept values move down in place, and the room of
        // the dropped ones stays for the values later steps add.
        let kept: Vec<bool> = (0..self.vars.len()).map(|c| cols.contains(&c)).collect();
        for i in 0..self.rows.len() {
            budget.tick()?;
            row_ahead(&self.rows, i);
            let r = &mut self.rows[i];
            let mut at = 0;
            r.retain(|_| {
                at += 1;
                kept[at - 1]
            });
        }
        self.vars = cols.iter().map(|c| self.vars[*c]).collect();
        Ok(self)
    }

    /// Removes duplicate rows (the first of equal rows stays).
    pub fn dedup(&mut self, budget: &Budget<'_>) -> Result<(), QueryError> {
        // The set holds a borrowed slice a row (and the table's own byte), not the row: what
        // it takes is counted while it lives and let go with it.
        let bytes = (std::mem::size_of::<&[Value]>() + 8) as u64;
        let mut counted = 0u64;
        // Which rows to keep, found with a set that borrows the rows (no row is copied).
        let mut keep: Vec<bool> = Vec::with_capacity(self.rows.len());
        let mut stopped = false;
        {
            let mut seen: HashSet<&[Value]> =
                HashSet::with_capacity_and_hasher(self.rows.len(), Default::default());
            for r in &self.rows {
                // Rows equal but for an entity id given as a long are kept apart here (they
                // meet only where an input's longs join the database's ids, in `join`).
                counted += bytes;
                if !budget.charge_step(bytes) {
                    // A stop keeps the remaining rows, and is reported below.
                    keep.resize(self.rows.len(), true);
                    stopped = true;
                    break;
                }
                keep.push(seen.insert(r.as_slice()));
            }
        }
        budget.release(counted);
        let mut flags = keep.iter();
        self.rows.retain(|_| *flags.next().unwrap_or(&true));
        if stopped {
            budget.check()?;
        }
        Ok(())
    }

    /// The variables `self` and `other` share, and their columns in each.
    fn shared_columns(&self, other: &Relation) -> (Vec<Var>, Vec<usize>, Vec<usize>) {
        let shared: Vec<Var> = self
            .vars
            .iter()
            .copied()
            .filter(|v| other.binds(*v))
            .collect();
        let lk = shared.iter().filter_map(|v| self.col(*v)).collect();
        let rk = shared.iter().filter_map(|v| other.col(*v)).collect();
        (shared, lk, rk)
    }

    /// Natural join on shared variables (a cartesian product when none are shared).
    pub fn join(&self, other: &Relation, budget: &Budget<'_>) -> Result<Relation, QueryError> {
        let (shared, lk, rk) = self.shared_columns(other);
        let extra: Vec<usize> = (0..other.vars.len())
            .filter(|c| !shared.contains(&other.vars[*c]))
            .collect();
        let mut vars = self.vars.clone();
        vars.extend(extra.iter().map(|c| other.vars[*c]));
        let mut index: HashMap<Vec<Same>, Vec<usize>> = HashMap::default();
        let entry_bytes = row_bytes(rk.len());
        for (i, r) in other.rows.iter().enumerate() {
            budget.charge(entry_bytes)?;
            index
                .entry(rk.iter().map(|c| Same(&r[*c])).collect())
                .or_default()
                .push(i);
        }
        let bytes = row_bytes(vars.len());
        let mut rows = Vec::new();
        for l in &self.rows {
            budget.tick()?;
            let key: Vec<Same> = lk.iter().map(|c| Same(&l[*c])).collect();
            if let Some(matches) = index.get(&key) {
                for &i in matches {
                    budget.charge(bytes)?;
                    // At its final size at once: a clone extended grows again (to at least
                    // four values), a second allocation and most of a row left empty.
                    let mut row = Vec::with_capacity(l.len() + extra.len());
                    row.extend_from_slice(l);
                    row.extend(extra.iter().map(|c| other.rows[i][*c].clone()));
                    rows.push(row);
                }
            }
        }
        Ok(Relation { vars, rows })
    }

    /// Rows of `self` with no match in `other` on the shared variables.
    pub fn anti_join(&self, other: &Relation, budget: &Budget<'_>) -> Result<Relation, QueryError> {
        let (_, lk, rk) = self.shared_columns(other);
        let key_bytes = row_bytes(rk.len());
        let mut keys: HashSet<Vec<Same>> = HashSet::default();
        for r in &other.rows {
            budget.charge(key_bytes)?;
            keys.insert(rk.iter().map(|c| Same(&r[*c])).collect());
        }
        let bytes = row_bytes(self.vars.len());
        let mut rows = Vec::new();
        for l in &self.rows {
            budget.tick()?;
            if !keys.contains(&lk.iter().map(|c| Same(&l[*c])).collect::<Vec<_>>()) {
                budget.charge(bytes)?;
                rows.push(l.clone());
            }
        }
        Ok(Relation {
            vars: self.vars.clone(),
            rows,
        })
    }

    /// Union of relations over the same variables (columns reordered as needed).
    pub fn union(&mut self, other: Relation, budget: &Budget<'_>) -> Result<(), QueryError> {
        if self.vars == other.vars {
            self.rows.extend(other.into_rows());
            return Ok(());
        }
        let cols: Vec<Option<usize>> = self.vars.iter().map(|v| other.col(*v)).collect();
        for r in other.into_rows() {
            budget.tick()?;
            if cols.iter().all(Option::is_some) {
                self.rows.push(
                    cols.iter()
                        .map(|c| r[c.expect("checked")].clone())
                        .collect(),
                );
            }
        }
        Ok(())
    }
}

impl Relation {
    /// The rows, taken out (a relation's drop guards its rows, so they are not moved out
    /// directly); they are freed off-thread if the query stops while they are being read.
    pub fn into_rows(mut self) -> Rows {
        let ahead = self.rows.len() >= PREFETCH_FROM_ROWS;
        Rows {
            rows: FreeAfterStop::new(std::mem::take(&mut self.rows).into_iter()),
            ahead,
        }
    }
}

/// A relation's rows taken out ([`Relation::into_rows`]), in order. Each row's values are
/// their own allocation, which the hardware's prefetcher does not follow: each step over
/// millions of rows (TPC-H Q1: 5.9M line items through four functions) met a cache miss at
/// every row's first value, so the row `ROWS_AHEAD` places on is asked for as each is taken
/// (from `PREFETCH_FROM_ROWS` rows on).
pub struct Rows {
    rows: FreeAfterStop<std::vec::IntoIter<Vec<Value>>>,
    ahead: bool,
}

impl Iterator for Rows {
    type Item = Vec<Value>;

    #[inline]
    fn next(&mut self) -> Option<Vec<Value>> {
        if self.ahead {
            if let Some(ahead) = self.rows.as_slice().get(ROWS_AHEAD) {
                super::prefetch::prefetch_all(ahead);
            }
        }
        self.rows.next()
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        self.rows.size_hint()
    }
}

impl Rows {
    /// The row `k` places after the one `next` gave last (for asking ahead for what a row
    /// will read).
    #[inline]
    pub fn ahead(&self, k: usize) -> Option<&[Value]> {
        self.rows.as_slice().get(k).map(Vec::as_slice)
    }

    /// Whether the rows are many enough to ask ahead for (`PREFETCH_FROM_ROWS`).
    pub fn asks_ahead(&self) -> bool {
        self.ahead
    }
}

impl Drop for Relation {
    fn drop(&mut self) {
        // A stopped query frees its rows off-thread (see `FreeAfterStop`).
        if !self.rows.is_empty() && super::budget::stopping() {
            super::budget::free_later(Box::new(std::mem::take(&mut self.rows)));
        }
    }
}

/// A value as joins compare it: an entity id and the long of the same number are one value
/// (Datomic's entity ids are longs: an id that came back from a query as a number and is
/// given again as an input, or a relation source's column, joins the database's ids).
#[derive(Clone, Copy)]
struct Same<'a>(&'a Value);

impl Same<'_> {
    fn long(&self) -> Option<i64> {
        match self.0 {
            Value::Long(n) => Some(*n),
            Value::Ref(e) => i64::try_from(*e).ok(),
            _ => None,
        }
    }
}

impl PartialEq for Same<'_> {
    fn eq(&self, other: &Self) -> bool {
        match (self.long(), other.long()) {
            (Some(a), Some(b)) => a == b,
            _ => self.0 == other.0,
        }
    }
}

impl Eq for Same<'_> {}

impl std::hash::Hash for Same<'_> {
    fn hash<H: std::hash::Hasher>(&self, state: &mut H) {
        match self.long() {
            Some(n) => Value::Long(n).hash(state),
            None => self.0.hash(state),
        }
    }
}

/// Sorts `rows` by a key taken from each row once: the keys are sorted with their row numbers,
/// then the rows moved into that order. A sort comparing rows reads two rows' own allocations
/// at every comparison (about log2(n) cache misses a row on a large relation: the rows of
/// TPC-H Q6 at SF 1, sorted by entity before their lookups, were 8.6% of its samples).
pub fn sort_rows_by_key<K: Ord + Copy>(rows: &mut Vec<Vec<Value>>, key: impl Fn(&[Value]) -> K) {
    let Ok(n) = u32::try_from(rows.len()) else {
        rows.sort_by_key(|r| key(r));
        return;
    };
    let keyed: Vec<(K, u32)> = rows.iter().zip(0..n).map(|(r, i)| (key(r), i)).collect();
    sort_rows_by_keys(rows, keyed);
}

/// Sorts `rows` by column `c` in [`compare`](crate::query::builtins::compare)'s order. A
/// column of entity ids, or of longs (what a join on a value mostly sorts), is sorted by a
/// key taken once a row ([`sort_rows_by_key`]); any other, comparing rows. (TPC-H Q3 at SF 1:
/// 147,126 orders sorted by id before their line items' AVE lookups, comparing rows, were a
/// fifth of the query.)
pub fn sort_rows_by_column(rows: &mut Vec<Vec<Value>>, c: usize) {
    // Entity ids order as the numbers they are; longs too. A column of both kinds (or of
    // anything else) takes the general order below.
    if let Some(keyed) = column_keys(rows, c, |v| match v {
        Value::Ref(e) => Some(*e),
        _ => None,
    }) {
        return sort_rows_by_keys(rows, keyed);
    }
    if let Some(keyed) = column_keys(rows, c, |v| match v {
        Value::Long(x) => Some(*x),
        _ => None,
    }) {
        return sort_rows_by_keys(rows, keyed);
    }
    rows.sort_by(|x, y| crate::query::builtins::compare(&x[c], &y[c]));
}

/// Each row's key in column `c` with the row's number, when `key` gives every row one.
fn column_keys<K>(
    rows: &[Vec<Value>],
    c: usize,
    key: impl Fn(&Value) -> Option<K>,
) -> Option<Vec<(K, u32)>> {
    let n = u32::try_from(rows.len()).ok()?;
    rows.iter()
        .zip(0..n)
        .map(|(r, i)| key(&r[c]).map(|k| (k, i)))
        .collect()
}

/// Moves `rows` into the order of `keyed` (each row's key and number) sorted.
fn sort_rows_by_keys<K: Ord + Copy>(rows: &mut Vec<Vec<Value>>, mut keyed: Vec<(K, u32)>) {
    debug_assert_eq!(keyed.len(), rows.len());
    // Equal keys keep their rows' order (the row number breaks the tie): a stable sort.
    keyed.sort_unstable();
    let mut old = std::mem::take(rows);
    rows.reserve_exact(old.len());
    // Each row moved once; `take` leaves an empty vector, which holds no memory.
    rows.extend(
        keyed
            .iter()
            .map(|(_, i)| std::mem::take(&mut old[*i as usize])),
    );
}

#[cfg(test)]
mod sort_tests {
    use super::*;

    /// The same order as the standard library's stable sort by the same key, for every shape.
    #[test]
    fn sorting_by_a_key_gives_the_stable_sort() {
        let row = |e: i64, tag: i64| vec![Value::Long(e), Value::Long(tag)];
        let cases: Vec<Vec<Vec<Value>>> = vec![
            vec![],
            vec![row(1, 0)],
            vec![row(3, 0), row(1, 1), row(2, 2)],
            vec![row(2, 0), row(1, 1), row(2, 2), row(1, 3), row(2, 4)],
            (0..1000).map(|i| row((i * 7919) % 101, i)).collect(),
            (0..300).rev().map(|i| row(i, i)).collect(),
        ];
        let key = |r: &[Value]| match r[0] {
            Value::Long(e) => e,
            _ => unreachable!(),
        };
        for rows in cases {
            let mut expected = rows.clone();
            expected.sort_by_key(|r| key(r));
            let mut got = rows;
            sort_rows_by_key(&mut got, key);
            assert_eq!(got, expected);
        }
    }

    /// A column sorted by its key (ids, longs) or by comparing rows (anything else) comes in
    /// the order of the standard library's stable sort by `compare`, for every kind of column.
    #[test]
    fn sorting_by_a_column_gives_the_stable_sort_by_compare() {
        let row = |v: Value, tag: i64| vec![Value::Long(tag), v];
        let scrambled = |make: &dyn Fn(i64) -> Value| -> Vec<Vec<Value>> {
            (0..500)
                .map(|i| row(make((i * 7919) % 97 - 40), i))
                .collect()
        };
        let cases: Vec<Vec<Vec<Value>>> = vec![
            vec![],
            scrambled(&|n| Value::Ref(n.unsigned_abs())),
            scrambled(&|n| Value::Long(n)),
            // Ids and longs in one column, then numbers of two kinds: the general order.
            scrambled(&|n| match n % 2 {
                0 => Value::Ref(n.unsigned_abs()),
                _ => Value::Long(n),
            }),
            scrambled(&|n| match n % 3 {
                0 => Value::Double(crate::codec::number::F64::new(n as f64 + 0.5).unwrap()),
                _ => Value::Long(n),
            }),
            scrambled(&|n| Value::String(format!("s{n}").into())),
            vec![
                row(Value::Long(i64::MIN), 0),
                row(Value::Long(-1), 1),
                row(Value::Long(i64::MAX), 2),
            ],
        ];
        for rows in cases {
            let mut expected = rows.clone();
            expected.sort_by(|x, y| crate::query::builtins::compare(&x[1], &y[1]));
            let mut got = rows;
            sort_rows_by_column(&mut got, 1);
            assert_eq!(got, expected);
        }
    }
}
