//! A join on a value narrowed, before it builds its rows, by a later pattern that only tests
//! the entities it finds.
//!
//! `[?l :lineitem/order ?o]` with `?o` bound finds each order's line items in AVE (TPC-H Q3 at
//! SF 1: 588,507 rows from 147,126 orders); `[?l :lineitem/shipdate ?sd]` with
//! `[(> ?sd #inst "1995-03-15")]`, `?sd` read by nothing else, keeps 30,519 of them. Step by
//! step, every one of the 588,507 rows is built (a copy of its order's row), then the star
//! on `?l` scans the shipdate range and drops nineteen rows in twenty. When that star would
//! scan the range anyway (its lookups would cost more: `star::lookups_win`), the range's
//! entities are read first, into a set, the join builds rows only for the entities in it, and
//! the pattern and its tests are answered there: a semijoin passed sideways into the join.
//!
//! The pattern so answered (`Prefilter::of`): `[?l :b ?w]` of the join's source, `?l` the
//! join's new entity, `?w` a variable nothing else reads (no clause still to run but the
//! comparisons below, not the caller) and at least one comparison of `?w` with a constant
//! of `:b`'s type that the AVE bounds answer exactly. Then a row survives the pattern and its
//! tests exactly when its entity has a value of `:b` within the bounds, which is what the set
//! holds. Rows are a set, so the values' number does not matter (`?w` is never bound).

use std::ops::Bound;

use rustc_hash::FxHashSet;

use super::star::{lookups_win, scan_cost};
use super::*;
use crate::codec::Value;
use crate::query::error::QueryError;
use crate::query::ir::{AttrTerm, Clause, Pattern, Term, Var};
use crate::query::relation::Relation;
use crate::store::{AttrId, EntityId};

/// A pattern of `todo` answered as a filter of a join's new entity (module doc).
#[derive(Debug)]
pub(super) struct Prefilter {
    /// The attribute whose values are tested, and the bounds the tests put on them.
    pub(super) attr: AttrId,
    pub(super) bounds: (Bound<Value>, Bound<Value>),
    /// The pattern and its tests, taken out of `todo` (for `explain`).
    pub(super) clauses: Vec<Clause>,
    /// The share of the attribute's datoms within the bounds (estimated).
    pub(super) share: f64,
}

/// The entities a [`Prefilter`] lets through.
pub(super) enum EntitySet {
    /// One bit an id from `base` on: ids dense enough (at least one in `DENSE_SPAN` of the
    /// span) that the bits take at most 8 bytes an id.
    Bits {
        base: EntityId,
        words: Vec<u64>,
    },
    Hashed(FxHashSet<EntityId>),
}

/// The span of ids per id found up to which an [`EntitySet`] is a bitmap.
const DENSE_SPAN: u64 = 64;

impl EntitySet {
    fn of(ids: Vec<EntityId>) -> EntitySet {
        let (Some(&lo), Some(&hi)) = (ids.iter().min(), ids.iter().max()) else {
            return EntitySet::Hashed(FxHashSet::default());
        };
        let span = hi - lo + 1;
        if span <= (ids.len() as u64).saturating_mul(DENSE_SPAN) {
            let mut words = vec![0u64; span.div_ceil(64) as usize];
            for e in ids {
                let at = e - lo;
                words[(at / 64) as usize] |= 1 << (at % 64);
            }
            EntitySet::Bits { base: lo, words }
        } else {
            EntitySet::Hashed(ids.into_iter().collect())
        }
    }

    #[inline]
    pub(super) fn contains(&self, e: EntityId) -> bool {
        match self {
            EntitySet::Bits { base, words } => {
                let Some(at) = e.checked_sub(*base) else {
                    return false;
                };
                words
                    .get((at / 64) as usize)
                    .is_some_and(|w| w & (1 << (at % 64)) != 0)
            }
            EntitySet::Hashed(set) => set.contains(&e),
        }
    }

    /// Bytes held (what the budget is charged).
    fn bytes(&self) -> u64 {
        match self {
            EntitySet::Bits { words, .. } => words.len() as u64 * 8,
            EntitySet::Hashed(set) => set.capacity() as u64 * 16,
        }
    }
}

impl Ctx<'_> {
    /// For the join on a value `p` of source `src` (its entity new, its value bound in every
    /// row of `rel`), the pattern of `todo` it can answer as a filter (module doc), taken out
    /// of `todo` with its tests; `None` (and `todo` untouched) when there is none or when
    /// the pattern's star would look its rows up rather than scan.
    pub(super) fn prefilter(
        &self,
        src: usize,
        p: &Pattern,
        rel: &Relation,
        todo: &mut Vec<Clause>,
        keep: &[Var],
    ) -> Result<Option<Prefilter>, QueryError> {
        let (Term::Var(l), AttrTerm::Attr(a), Term::Var(o)) = (&p.e, &p.a, &p.v) else {
            return Ok(None);
        };
        if rel.binds(*l) || !rel.binds(*o) {
            return Ok(None);
        }
        // The rows the join will make: each value's entities on average.
        let (datoms, distinct) = self.stats(*a)?;
        let rows = (rel.rows.len() as u64).saturating_mul(datoms / distinct.max(1));
        let mut best: Option<(usize, Vec<usize>, Prefilter)> = None;
        for (j, c) in todo.iter().enumerate() {
            let Clause::Pattern(s, q) = c else { continue };
            let (Term::Var(e), AttrTerm::Attr(b), Term::Var(w)) = (&q.e, &q.a, &q.v) else {
                continue;
            };
            if self.source_of(*s) != src || e != l || w == l || rel.binds(*w) || keep.contains(w) {
                continue;
            }
            let tests = range_preds(q, todo, self.schema);
            if tests.is_empty() || tests.iter().any(|(_, _, _, exact)| !exact) {
                continue;
            }
            // `?w` read by the tests only.
            let readers = todo
                .iter()
                .enumerate()
                .filter(|(i, c)| *i != j && c.vars().contains(w))
                .count();
            if readers != tests.len() {
                continue;
            }
            let ranges: Vec<(Bound<Value>, Bound<Value>)> = tests
                .iter()
                .map(|(_, lo, hi, _)| (lo.clone(), hi.clone()))
                .collect();
            let bounds = intersect_ranges(&ranges);
            let (b_datoms, b_distinct) = self.stats(*b)?;
            let read = self.bounded_rows(*b, &bounds)?;
            let share = read as f64 / b_datoms.max(1) as f64;
            let keys = (b_distinct as f64 * share).ceil() as u64;
            if lookups_win(
                usize::try_from(rows).unwrap_or(usize::MAX),
                scan_cost(read, keys),
            ) {
                continue;
            }
            if best.as_ref().is_some_and(|(_, _, f)| f.share <= share) {
                continue;
            }
            let indices = tests.iter().map(|(i, _, _, _)| *i).collect();
            best = Some((
                j,
                indices,
                Prefilter {
                    attr: *b,
                    bounds,
                    clauses: Vec::new(),
                    share,
                },
            ));
        }
        let Some((j, tests, mut found)) = best else {
            return Ok(None);
        };
        let mut taken: Vec<usize> = tests;
        taken.push(j);
        taken.sort_unstable_by(|x, y| y.cmp(x));
        for i in taken {
            found.clauses.push(todo.remove(i));
        }
        found.clauses.reverse();
        Ok(Some(found))
    }

    /// When the star `star` (of source `src`) is one join on a value (`[?l :a ?o]`, `?l` new,
    /// `?o` bound), its attribute, the value's column in `rel` and the pattern of `todo` that
    /// filters it ([`Self::prefilter`], taken out of `todo`).
    pub(super) fn join_prefilter(
        &self,
        src: usize,
        star: &[Pattern],
        rel: &Relation,
        todo: &mut Vec<Clause>,
        keep: &[Var],
    ) -> Result<Option<(AttrId, usize, Prefilter)>, QueryError> {
        let [p] = star else { return Ok(None) };
        let (Term::Var(l), AttrTerm::Attr(a), Term::Var(o)) = (&p.e, &p.a, &p.v) else {
            return Ok(None);
        };
        let Some(c) = rel.col(*o).filter(|_| !rel.binds(*l)) else {
            return Ok(None);
        };
        Ok(self.prefilter(src, p, rel, todo, keep)?.map(|f| (*a, c, f)))
    }

    /// The entities with a value of `f.attr` within `f.bounds`: one scan of that AVE range.
    pub(super) fn prefiltered(&self, f: &Prefilter) -> Result<EntitySet, QueryError> {
        let budget = &self.budget;
        let mut ids: Vec<EntityId> = Vec::new();
        // Any order: the ids become a set.
        self.r.scan_attr_blocks_any_order(
            f.attr,
            as_ref(&f.bounds.0),
            as_ref(&f.bounds.1),
            |_, block| {
                let n = block.len() / std::mem::size_of::<EntityId>();
                if !budget.charge_step(n as u64 * 8) {
                    return Ok(false);
                }
                ids.extend(
                    block
                        .chunks_exact(std::mem::size_of::<EntityId>())
                        .map(|raw| EntityId::from_be_bytes(raw.try_into().unwrap_or_default())),
                );
                Ok(true)
            },
        )?;
        self.budget.check()?;
        let held = ids.len() as u64 * 8;
        let set = EntitySet::of(ids);
        self.budget.release(held);
        self.budget.charge(set.bytes())?;
        Ok(set)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Dense ids take the bitmap, sparse ones the hash set; both answer membership exactly.
    #[test]
    fn an_entity_set_holds_exactly_its_ids() {
        let cases: Vec<(Vec<EntityId>, bool)> = vec![
            (vec![], false),
            (vec![7], true),
            (vec![100, 101, 103, 164, 165], true),
            (vec![1, 1 << 40], false),
            (vec![5, 5, 6], true),
        ];
        for (ids, dense) in cases {
            let set = EntitySet::of(ids.clone());
            assert_eq!(matches!(set, EntitySet::Bits { .. }), dense, "{ids:?}");
            let lo = ids.iter().min().copied().unwrap_or(0).saturating_sub(70);
            let hi = ids.iter().max().copied().unwrap_or(0).saturating_add(70);
            for e in (lo..=hi.min(lo + 400)).chain(ids.iter().copied()) {
                assert_eq!(set.contains(e), ids.contains(&e), "{ids:?} {e}");
            }
        }
    }
}
