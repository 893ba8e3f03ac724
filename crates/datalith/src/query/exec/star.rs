//! Data patterns on a bound entity, all of one entity's patterns in one step (a "star"): one
//! read of the entity's EAV entry per row, or, when the rows name a large share of the
//! attributes' entities, one scan of each attribute's AVE range and a hash join. Short AVE
//! entries of constant patterns filter the rows first; a pattern whose entity nobody needs
//! later is answered as a semijoin over the attribute's values.

use rustc_hash::FxHashMap as HashMap;
use std::ops::Bound;

use super::column::Column;
use super::*;
use crate::codec::Value;
use crate::kv::Direction;
use crate::query::budget::{row_bytes, rows_bytes};
use crate::query::builtins::compare;
use crate::query::error::QueryError;
use crate::query::ir::{AttrTerm, Clause, Pattern, Term, Var};
use crate::query::plan::PlanIndex;
use crate::query::prefetch::{cell_ahead, prefetch};
use crate::query::relation::Relation;
use crate::store::reader::IndexReader;
use crate::store::{AttrId, EntityId};

/// Distinct values an attribute may have for lookups to reuse its decoded values.
pub(super) const DECODE_CACHE_VALUES: usize = 32;

/// The decoded value of `vb` (attribute `a`), from `cache` when decoded before; the cache
/// keeps at most `DECODE_CACHE_VALUES` entries.
pub(super) fn cached_decode<'a>(
    cache: &mut Vec<(AttrId, &'a [u8], Value)>,
    r: IndexReader<'a>,
    a: AttrId,
    vb: &'a [u8],
) -> Result<Value, crate::store::StoreError> {
    if let Some((_, _, v)) = cache.iter().find(|(ca, cb, _)| *ca == a && *cb == vb) {
        return Ok(v.clone());
    }
    let v = r.decode_value(a, vb)?;
    if cache.len() < DECODE_CACHE_VALUES {
        cache.push((a, vb, v.clone()));
    }
    Ok(v)
}

/// Rows from which a star's EAV lookups are made in entity order (the rows sorted first):
/// below it a sort costs more than the descents it saves.
pub(super) const SORT_LOOKUPS_FROM: usize = 256;

/// A scan of an attribute's whole AVE range costs about as much as this many B-tree lookups
/// per row would save: above that share of the attribute's entities, scan and hash-join.
pub(super) const SCAN_JOIN_FACTOR: u64 = 20;

/// In a scan, an entity id in its value's run of ids (read a page at a time, the value
/// decoded once) costs this share of a datom whose value is its own (a node of its own to
/// step over and a value to decode): an attribute of few values scans for less than its
/// count of datoms says (TPC-H Q4: the priority of 5,552 orders, 5 values over 150,000
/// orders, scanned in about a fifth of the time of 5,552 lookups).
pub(super) const RUN_ID_SHARE: u64 = 4;

/// What scanning `datoms` datoms over `keys` distinct values costs, in datoms of values of
/// their own (the unit of `SCAN_JOIN_FACTOR`).
pub(super) fn scan_cost(datoms: u64, keys: u64) -> u64 {
    let keys = keys.clamp(1, datoms.max(1));
    keys + datoms.saturating_sub(keys) / RUN_ID_SHARE
}

/// Whether looking up `rows` entities one by one costs less than scans costing `scan`
/// (`scan_cost`, summed over the attributes): `Ctx::scan_join`'s test.
pub(super) fn lookups_win(rows: usize, scan: u64) -> bool {
    scan > (rows as u64).saturating_mul(SCAN_JOIN_FACTOR)
}

impl<'a> Ctx<'a> {
    /// Splits off the star's constant patterns `[?e :a c]` (on a bound `?e`) whose AVE entry
    /// is shorter than looking up every row would be, and keeps only the rows whose entity is
    /// in those entries. Returns the filtered rows and the rest of the star.
    pub(super) fn const_filters(
        &self,
        star: Vec<Pattern>,
        mut rel: Relation,
    ) -> Result<(Relation, Vec<Pattern>), QueryError> {
        let Some(e_col) = star[0].e.var().and_then(|e| rel.col(e)) else {
            return Ok((rel, star));
        };
        let mut rest = Vec::with_capacity(star.len());
        for p in star {
            let mut filter = None;
            if let (AttrTerm::Attr(a), Term::Const(c)) = (&p.a, &p.v) {
                let c = coerce(self.schema, *a, c);
                let typed = self
                    .schema
                    .get(*a)
                    .is_some_and(|x| Some(x.value_type) == c.value_type());
                let budget = (rel.rows.len() as u64).saturating_mul(SCAN_JOIN_FACTOR);
                if typed && encoding_is_equality(&c) {
                    filter = self.r.entities_with_at_most(*a, &c, budget)?;
                }
            }
            match filter {
                Some(es) => {
                    // A bitmap when the ids are compact, else binary search (they ascend).
                    let set = EntitySet::new(es.iter().copied());
                    rel.rows.retain(|row| {
                        entity_of(&row[e_col]).is_some_and(|e| match set.bits {
                            Some(_) => set.may_contain(e),
                            None => es.binary_search(&e).is_ok(),
                        })
                    })
                }
                None => rest.push(p),
            }
        }
        Ok((rel, rest))
    }

    /// `[?e :a ?v]` on rows that bind only `?e`, when nothing later needs `?e`: the distinct
    /// values of `a` some row's entity holds, found by walking each value's (sorted) entity
    /// list only until its first row entity, when that is cheaper than one lookup per row.
    pub(super) fn semijoin_values(
        &self,
        star: &[Pattern],
        rel: &Relation,
        todo: &[Clause],
        keep: &[Var],
    ) -> Result<Option<Relation>, QueryError> {
        let [p] = star else { return Ok(None) };
        let (Term::Var(e), AttrTerm::Attr(a), Term::Var(v)) = (&p.e, &p.a, &p.v) else {
            return Ok(None);
        };
        if rel.vars != [*e]
            || e == v
            || keep.contains(e)
            || todo.iter().any(|c| c.vars().contains(e))
        {
            return Ok(None);
        }
        let n = rel.rows.len() as u64;
        let (datoms, distinct) = self.stats(*a)?;
        // Expected entries walked per value before the first row entity (at most all).
        let per_value = (datoms / distinct).min(datoms / n.max(1)).max(1);
        let cost = distinct.saturating_mul(SCAN_JOIN_FACTOR + per_value);
        if cost >= n.saturating_mul(SCAN_JOIN_FACTOR) {
            return Ok(None);
        }
        self.budget.charge(rows_bytes(rel.rows.len(), 1))?;
        let members: rustc_hash::FxHashSet<EntityId> =
            rel.rows.iter().filter_map(|r| entity_of(&r[0])).collect();
        let budget = &self.budget;
        let bytes = row_bytes(1);
        let r = self.r;
        self.hold_listed(*a)?;
        let mut out = Relation::empty(vec![*v]);
        r.values_held(
            *a,
            |e| members.contains(&e),
            |vb| {
                // The walk cannot be stopped from here: a stop is reported after it.
                budget.charge_step(bytes);
                out.rows.push(vec![r.decode_value(*a, vb)?]);
                Ok(())
            },
        )?;
        self.budget.check()?;
        Ok(Some(out))
    }

    /// For each row: one read of the entity's EAV entry answers every pattern of the star.
    /// When the rows name a large share of the attributes' entities, one sequential scan of
    /// each attribute's AVE range (then a hash join) is cheaper than a B-tree descent per
    /// row. Returns the rows and the index read: [`PlanIndex::Eav`] for the lookups,
    /// [`PlanIndex::AttrScan`] for the scans.
    pub(super) fn entity_star(
        &mut self,
        star: &[Pattern],
        rel: Relation,
        bounds: &[StarBound],
    ) -> Result<(Relation, PlanIndex), QueryError> {
        let r = self.r;
        let mut vars = rel.vars.clone();
        // Same order as rows are extended below: the attribute variable, then the value.
        for p in star {
            if let AttrTerm::Var(v) = p.a {
                if !vars.contains(&v) {
                    vars.push(v);
                }
            }
            if let Term::Var(v) = &p.v {
                if !vars.contains(v) {
                    vars.push(*v);
                }
            }
        }
        let e_col = match &star[0].e {
            Term::Var(v) => rel.col(*v),
            _ => None,
        };
        let e_const = match &star[0].e {
            Term::Const(v) => entity_of(v),
            _ => None,
        };
        let star_attrs: Option<Vec<AttrId>> = star
            .iter()
            .map(|p| match p.a {
                AttrTerm::Attr(a) => Some(a),
                _ => None,
            })
            .collect();
        let max_attr = star_attrs.as_ref().and_then(|w| w.iter().max().copied());
        // Attributes with few distinct values: their decoded values are reused across rows
        // (a string decodes into a new allocation each time otherwise).
        let mut few: Vec<AttrId> = Vec::new();
        for a in star_attrs.iter().flatten() {
            if self.stats(*a)?.1 <= DECODE_CACHE_VALUES as u64 {
                few.push(*a);
            }
        }
        let mut decoded: Vec<(AttrId, &[u8], Value)> = Vec::new();
        let last_is_one = max_attr.is_some_and(|m| !self.is_many(m));
        // The common star: `[?e :a ?new]` patterns on distinct attributes of cardinality one,
        // each binding its own new variable. A row then takes each attribute's single value in
        // star order, or is dropped when one is missing: no pattern-by-pattern matching.
        let simple: Option<Vec<AttrId>> = star_attrs.clone().filter(|attrs| {
            let mut new_vars: Vec<Var> = Vec::new();
            star.iter().zip(attrs).all(|(p, a)| match &p.v {
                Term::Var(v) if !rel.vars.contains(v) && !new_vars.contains(v) => {
                    new_vars.push(*v);
                    !self.is_many(*a) && p.e.var().is_some_and(|e| Some(e) != Some(*v))
                }
                _ => false,
            }) && (1..attrs.len()).all(|i| !attrs[..i].contains(&attrs[i]))
        });
        // Hash join when scanning the attributes costs less than looking up every row.
        let mut scanned = match (&star_attrs, e_col) {
            (Some(attrs), Some(c)) => {
                self.scan_join(star, attrs, &rel, c, bounds, simple.is_some())?
            }
            _ => None,
        };
        let mut out = Relation {
            vars: vars.clone(),
            rows: Vec::with_capacity(rel.rows.len()),
        };
        let mut looked_up: Vec<(AttrId, Value)> = Vec::new();
        // The entity `looked_up` holds: adjacent rows of one entity read it once (rows come
        // sorted by entity; a postponed pattern meets an entity once per row it reached).
        let mut looked_up_for: Option<EntityId> = None;
        let mut partial: Vec<Vec<Value>> = Vec::new();
        let mut next: Vec<Vec<Value>> = Vec::new();
        let mut matched: Vec<usize> = Vec::new();
        let mut picked: Vec<usize> = Vec::new();
        // One cursor for every row's lookup: rows mostly come in entity order, so each lookup
        // mostly stays on the previous one's leaf page.
        let mut cursor = match scanned {
            Some(_) => None,
            None => Some(r.entity_cursor()?),
        };
        let index = match scanned {
            Some(_) => PlanIndex::AttrScan,
            None => PlanIndex::Eav,
        };
        let bytes = row_bytes(vars.len());
        let mut rel = rel;
        if let (None, Some(c)) = (&scanned, e_col) {
            // Lookups in entity order: LMDB finds a key on the cursor's leaf page without a
            // descent from the root, and the next key mostly is there (in the rows' order,
            // often one of an attribute's values, each lookup is a descent to a cold page).
            if rel.rows.len() >= SORT_LOOKUPS_FROM {
                crate::query::relation::sort_rows_by_key(&mut rel.rows, |row| {
                    entity_of(&row[c]).unwrap_or(0)
                });
            }
        }
        let mut rows = rel.into_rows();
        // A column scan's cells lie in entity order, the rows mostly in another (an AVE scan's
        // values): each row's cells are asked for a few rows ahead (TPC-H Q1 at SF 1: half of
        // this loop's time was the first cell's cache miss, 5.9M rows over six columns).
        let cells_ahead = match (&scanned, e_col) {
            (Some(Scanned::Columns(_)), Some(c)) if rows.asks_ahead() => Some(c),
            _ => None,
        };
        while let Some(row) = rows.next() {
            self.budget.charge(bytes)?;
            if let (Some(c_e), Some(Scanned::Columns(c))) = (cells_ahead, &scanned) {
                // Half the rows' own distance: that row's values are on their way already.
                if let Some(e) = rows
                    .ahead(crate::query::prefetch::ROWS_AHEAD / 2)
                    .and_then(|r| r.get(c_e))
                    .and_then(entity_of)
                {
                    c.prefetch(e);
                }
            }
            let e = match e_col {
                Some(c) => entity_of(&row[c]),
                None => e_const,
            };
            let Some(e) = e else { continue };
            if let Some(Scanned::Columns(c)) = &mut scanned {
                let Some(s) = c.slot.get(e) else { continue };
                let s = s as usize;
                if !c.cols.iter().all(|col| col.has(s)) {
                    continue;
                }
                let mut row = row;
                row.reserve(c.cols.len());
                for col in &mut c.cols {
                    let v = if c.unique { col.take(s) } else { col.get(s) };
                    row.extend(v);
                }
                if row.len() != vars.len() {
                    continue;
                }
                debug_assert_eq!(row.len(), vars.len());
                out.rows.push(row);
                continue;
            }
            let datoms: &[(AttrId, Value)] = match (&scanned, &mut cursor) {
                (Some(Scanned::Grouped(j)), _) => j.datoms(e),
                (Some(Scanned::Columns(_)), _) => unreachable!("a column scan answers above"),
                (None, None) => &[],
                (None, Some(_)) if looked_up_for == Some(e) => &looked_up,
                (None, Some(cursor)) => {
                    looked_up.clear();
                    looked_up_for = Some(e);
                    let wanted = star_attrs.as_deref();
                    // From the entity's first value: stepping over a few values costs less than
                    // LMDB's search for the first wanted one.
                    cursor.entity_raw(
                        e,
                        #[inline(always)]
                        |a, vb| {
                            if wanted.is_none_or(|w| w.contains(&a)) {
                                // Numbers inline (no large `Result` through a call).
                                let v = if let Some(v) = crate::store::reader::decode_fixed(vb) {
                                    v
                                } else if few.contains(&a) {
                                    cached_decode(&mut decoded, r, a, vb)?
                                } else {
                                    r.decode_value(a, vb)?
                                };
                                looked_up.push((a, v));
                            }
                            // Attributes come in order: stop past the last one wanted, or at it
                            // when it has one value.
                            Ok(match max_attr {
                                None => true,
                                Some(m) if a == m => !last_is_one,
                                Some(m) => a < m,
                            })
                        },
                    )?;
                    &looked_up
                }
            };
            if let Some(attrs) = &simple {
                // Each attribute's datom; an attribute holding several values anyway (data
                // older than its cardinality) takes the general path.
                picked.clear();
                let mut missing = false;
                for a in attrs {
                    let mut it = datoms.iter().enumerate().filter(|(_, (x, _))| x == a);
                    match (it.next(), it.next()) {
                        (Some((i, _)), None) => picked.push(i),
                        (None, _) => {
                            missing = true;
                            break;
                        }
                        (Some(_), Some(_)) => break,
                    }
                }
                if missing {
                    continue;
                }
                if picked.len() == attrs.len() {
                    let mut row = row;
                    row.extend(picked.iter().map(|&i| datoms[i].1.clone()));
                    out.rows.push(row);
                    continue;
                }
            }
            // Extend the row pattern by pattern (a pattern may yield several values).
            partial.clear();
            partial.push(row);
            for p in star {
                next.clear();
                for mut pr in partial.drain(..) {
                    let cur_vars = &vars[..pr.len()];
                    let col = |v: Var| cur_vars.iter().position(|x| *x == v);
                    matched.clear();
                    for (i, (a, val)) in datoms.iter().enumerate() {
                        let a = *a;
                        let a_ok = match &p.a {
                            AttrTerm::Attr(x) => *x == a,
                            AttrTerm::Var(v) => match col(*v) {
                                // The attribute's id, or its ident when a function bound it.
                                Some(c) => match &pr[c] {
                                    Value::Keyword(k) => {
                                        self.schema.by_ident(k).map(|x| x.id) == Some(a)
                                    }
                                    other => *other == Value::Ref(a as u64),
                                },
                                None => true,
                            },
                            AttrTerm::Blank => true,
                            AttrTerm::Unknown(_) => false,
                        };
                        if !a_ok {
                            continue;
                        }
                        let v_ok = match &p.v {
                            Term::Const(c) => compare(c, val) == std::cmp::Ordering::Equal,
                            // An attribute variable bound by this very pattern comes first.
                            Term::Var(v) => match col(*v) {
                                Some(c) => pr[c] == *val,
                                None => match p.a {
                                    AttrTerm::Var(av) if av == *v && col(av).is_none() => {
                                        Value::Ref(a as u64) == *val
                                    }
                                    _ => true,
                                },
                            },
                            Term::Blank => true,
                        };
                        if v_ok {
                            matched.push(i);
                        }
                    }
                    // The last match takes the row itself; earlier ones copy it.
                    let last = matched.len();
                    for (k, &i) in matched.iter().enumerate() {
                        let (a, val) = &datoms[i];
                        let mut r = if k + 1 == last {
                            std::mem::take(&mut pr)
                        } else {
                            pr.clone()
                        };
                        let base = r.len();
                        r.reserve(vars.len() - base);
                        if let AttrTerm::Var(v) = p.a {
                            if !vars[..base].contains(&v) {
                                r.push(Value::Ref(*a as u64));
                            }
                        }
                        if let Term::Var(v) = &p.v {
                            if !vars[..r.len()].contains(v) {
                                r.push(val.clone());
                            }
                        }
                        self.budget.charge(bytes)?;
                        next.push(r);
                    }
                }
                std::mem::swap(&mut partial, &mut next);
                if partial.is_empty() {
                    break;
                }
            }
            out.rows
                .extend(partial.drain(..).filter(|r| r.len() == vars.len()));
        }
        Ok((out, index))
    }

    /// The datoms of the star's attributes for the entities of column `e_col`, read by scanning
    /// each attribute's AVE entries (only those of its value, for a constant) when that costs
    /// less than one EAV lookup per row; `None` when lookups are cheaper.
    pub(super) fn scan_join(
        &self,
        star: &[Pattern],
        attrs: &[AttrId],
        rel: &Relation,
        e_col: usize,
        bounds: &[StarBound],
        simple: bool,
    ) -> Result<Option<Scanned>, QueryError> {
        // An attribute's scan can skip what the tests will drop when every pattern that scans
        // it whole has the same bounds.
        let bound_of = |a: AttrId| -> Option<&(Bound<Value>, Bound<Value>)> {
            let mut found: Option<&(Bound<Value>, Bound<Value>)> = None;
            for (i, (p, x)) in star.iter().zip(attrs).enumerate() {
                if *x != a || matches!(p.v, Term::Const(_)) {
                    continue;
                }
                match (bounds.get(i).and_then(|b| b.as_ref()), found) {
                    (None, _) => return None,
                    (Some(b), None) => found = Some(b),
                    (Some(b), Some(f)) if b == f => {}
                    _ => return None,
                }
            }
            found
        };
        let budget = (rel.rows.len() as u64).saturating_mul(SCAN_JOIN_FACTOR);
        // Per pattern: the constant whose AVE entries suffice, if any.
        let mut consts: Vec<Option<Value>> = Vec::with_capacity(star.len());
        // Datoms read, and what reading them costs (`scan_cost`).
        let mut total = 0u64;
        let mut cost = 0u64;
        for (p, a) in star.iter().zip(attrs) {
            let exact = match &p.v {
                Term::Const(c) => {
                    let c = coerce(self.schema, *a, c);
                    self.schema
                        .get(*a)
                        .is_some_and(|x| {
                            Some(x.value_type) == c.value_type() && encoding_is_equality(&c)
                        })
                        .then_some(c)
                }
                _ => None,
            };
            let (datoms, distinct) = self.stats(*a)?;
            let (read, keys) = match (&exact, bound_of(*a)) {
                (Some(c), _) => (self.r.count_with(*a, c, budget.max(1))?, 1),
                // The range's share of the values (spread as the datoms are).
                (None, Some(b)) => {
                    let n = self.bounded_rows(*a, b)?;
                    let share = n as f64 / datoms.max(1) as f64;
                    (n, (distinct as f64 * share).ceil() as u64)
                }
                (None, None) => (datoms, distinct),
            };
            total = total.saturating_add(read);
            cost = cost.saturating_add(scan_cost(read, keys));
            consts.push(exact);
            if lookups_win(rel.rows.len(), cost) {
                return Ok(None);
            }
        }
        // Entities of the rows, numbered.
        // The ids read out of the rows once (each row is its own allocation, a cache miss on a
        // large relation: asked for ahead), then numbered from this compact copy.
        let mut row_ids: Vec<EntityId> = Vec::with_capacity(rel.rows.len());
        for (i, row) in rel.rows.iter().enumerate() {
            cell_ahead(&rel.rows, i, e_col);
            row_ids.extend(entity_of(&row[e_col]));
        }
        let (slot, ids) = Slots::new(row_ids.iter().copied());
        drop(row_ids);
        self.budget.charge(slot.bytes())?;
        if simple {
            if let Some(cols) = self.scan_columns(attrs, &slot, &bound_of)? {
                return Ok(Some(Scanned::Columns(Columns {
                    unique: ids == slot.len(),
                    slot,
                    cols,
                })));
            }
            // An attribute holds two values for one entity (data older than its
            // cardinality): the grouped datoms below take every value.
        }
        // Each hit's datom, and the number of its entity (then where the grouping puts it).
        // As many hits as datoms read, at most the star's attributes for each entity.
        let expect = total.min((slot.len() as u64).saturating_mul(attrs.len() as u64)) as usize;
        let mut hits: Vec<(AttrId, Value)> = Vec::with_capacity(expect);
        let mut slots: Vec<u32> = Vec::with_capacity(expect);
        let hit_bytes = (std::mem::size_of::<(AttrId, Value)>() + 4) as u64;
        let budget = &self.budget;
        // Each datom is read once, however many patterns of the star share its attribute (a
        // datom read twice would match a pattern twice): one full scan of an attribute covers
        // its constants too.
        let mut reads: Vec<(AttrId, &Option<Value>)> = Vec::new();
        for (a, c) in attrs.iter().zip(&consts) {
            let full = consts.iter().zip(attrs).any(|(c, x)| x == a && c.is_none());
            let read = if full { &None } else { c };
            if !reads.contains(&(*a, read)) {
                reads.push((*a, read));
            }
        }
        for (a, c) in reads.iter().map(|(a, c)| (a, *c)) {
            match c {
                Some(c) => {
                    for e in self.r.entities_with(*a, c)? {
                        budget.tick()?;
                        if let Some(s) = slot.get(e) {
                            budget.charge(hit_bytes)?;
                            slots.push(s);
                            hits.push((*a, c.clone()));
                        }
                    }
                }
                None => {
                    self.scan_numbered(
                        *a,
                        bound_of(*a),
                        &slot,
                        |_| {},
                        |s, v| {
                            budget.charge_step(hit_bytes);
                            slots.push(s);
                            hits.push((*a, v));
                            true
                        },
                    )?;
                }
            }
        }
        // Group by entity: a counting sort (each entity's datoms stay in scan order), its
        // permutation applied in place, so that the datoms are never held twice (a star over
        // millions of entities holds several datoms for each).
        let mut start = vec![0u32; slot.len() + 1];
        for s in &slots {
            start[*s as usize + 1] += 1;
        }
        for i in 1..start.len() {
            start[i] += start[i - 1];
        }
        let mut fill = start.clone();
        let mut dest = slots;
        for s in dest.iter_mut() {
            let at = &mut fill[*s as usize];
            *s = *at;
            *at += 1;
        }
        drop(fill);
        for i in 0..dest.len() {
            // Each swap puts one datom where it belongs: at most one swap a datom.
            while dest[i] as usize != i {
                let j = dest[i] as usize;
                hits.swap(i, j);
                dest.swap(i, j);
            }
        }
        drop(dest);
        let datoms = hits;
        Ok(Some(Scanned::Grouped(ScanJoin {
            slot,
            start,
            datoms,
        })))
    }

    /// Calls `f(number, value)` for each datom of attribute `a` (within `bounds`) whose
    /// entity `slot` numbers, in AVE order (an attribute without AVE entries: in entity
    /// order), until it returns false. A value's entities come a
    /// page at a time: the value is decoded once a page, and `ahead(number)` is called for
    /// each of the page's numbers before `f` is called for any (a caller that writes where a
    /// number points fetches those places in parallel, not one cache miss after another).
    fn scan_numbered(
        &self,
        a: AttrId,
        bounds: Option<&(Bound<Value>, Bound<Value>)>,
        slot: &Slots,
        ahead: impl Fn(u32),
        mut f: impl FnMut(u32, Value) -> bool,
    ) -> Result<(), QueryError> {
        let r = self.r;
        let budget = &self.budget;
        let (lo, hi) = match bounds {
            Some((lo, hi)) => (as_ref(lo), as_ref(hi)),
            None => (Bound::Unbounded, Bound::Unbounded),
        };
        let mut numbers: Vec<u32> = Vec::new();
        // Any order: the caller groups by entity (an entity's values come in value order from
        // either index) or fills columns by number.
        r.scan_attr_blocks_any_order(a, lo, hi, |vb, block| {
            // A page's ids not numbered take a step too (a scan that finds few is still
            // stopped on time).
            if !budget.step() {
                return Ok(false);
            }
            numbers.clear();
            for raw in block.chunks_exact(std::mem::size_of::<EntityId>()) {
                let e = EntityId::from_be_bytes(raw.try_into().unwrap_or_default());
                if let Some(s) = slot.get(e) {
                    numbers.push(s);
                }
            }
            for &s in &numbers {
                ahead(s);
            }
            let Some((&last, rest)) = numbers.split_last() else {
                return Ok(true);
            };
            let v = match crate::store::reader::decode_fixed(vb) {
                Some(v) => v,
                None => r.decode_value(a, vb)?,
            };
            for &s in rest {
                if !budget.step() || !f(s, v.clone()) {
                    return Ok(false);
                }
            }
            Ok(budget.step() && f(last, v))
        })?;
        budget.check()?;
        Ok(())
    }

    /// Each attribute's value for every numbered entity, one column per attribute, read by
    /// one scan of the attribute (within its bounds); `None` when an attribute holds two
    /// values for one entity.
    fn scan_columns<'b>(
        &self,
        attrs: &[AttrId],
        slot: &Slots,
        bound_of: &impl Fn(AttrId) -> Option<&'b (Bound<Value>, Bound<Value>)>,
    ) -> Result<Option<Vec<Column>>, QueryError> {
        let budget = &self.budget;
        let n = slot.len();
        let bytes = Column::bytes(n).saturating_mul(attrs.len() as u64);
        budget.charge(bytes)?;
        let mut cols: Vec<Column> = Vec::with_capacity(attrs.len());
        for a in attrs {
            let mut col = Column::new(n);
            let mut twice = false;
            // The column's first cell and the bytes between cells, once it has taken its form
            // (at its first value; again if a second kind of value changes it).
            let cells = std::cell::Cell::new((std::ptr::null::<u8>(), 0usize));
            let ahead = |s: u32| {
                let (at, stride) = cells.get();
                // A hint only: the address is read by no one here.
                prefetch(at.wrapping_add(s as usize * stride));
            };
            self.scan_numbered(*a, bound_of(*a), slot, ahead, |s, v| {
                if !col.put(s as usize, v) {
                    twice = true;
                    return false;
                }
                let at = col.cell_addr(0);
                if cells.get().0 != at {
                    cells.set((at, col.cell_stride()));
                }
                true
            })?;
            if twice {
                budget.release(bytes);
                return Ok(None);
            }
            cols.push(col);
        }
        Ok(Some(cols))
    }
}

/// What a scan join read: the datoms grouped by entity, or, for a simple star (each attribute
/// of cardinality one binding a new variable), one column of values per attribute.
pub(super) enum Scanned {
    Grouped(ScanJoin),
    Columns(Columns),
}

/// A simple star's values: `cols[i][s]` is the value of the star's `i`th attribute for the
/// entity numbered `s`, `None` when it has none (the row is then dropped).
pub(super) struct Columns {
    slot: Slots,
    cols: Vec<Column>,
    /// No entity is in two rows: each value can move into its row.
    unique: bool,
}

impl Columns {
    /// Asks for entity `e`'s cells in every column ahead of its row.
    #[inline(always)]
    fn prefetch(&self, e: EntityId) {
        if let Some(s) = self.slot.get(e) {
            for col in &self.cols {
                col.prefetch(s as usize);
            }
        }
    }
}

/// The datoms of a scan join, grouped by entity.
pub(super) struct ScanJoin {
    slot: Slots,
    /// `datoms[start[s]..start[s + 1]]` belong to the entity numbered `s`.
    start: Vec<u32>,
    datoms: Vec<(AttrId, Value)>,
}

impl ScanJoin {
    fn datoms(&self, e: EntityId) -> &[(AttrId, Value)] {
        match self.slot.get(e) {
            Some(s) => {
                let s = s as usize;
                &self.datoms[self.start[s] as usize..self.start[s + 1] as usize]
            }
            None => &[],
        }
    }
}

/// The rows' entities, numbered: in an array over their span when it is small, by rank when
/// their ids are compact enough for a bitmap over their span (entity ids are allocated
/// densely: a bit test and a population count instead of a hash lookup for every datom a
/// scan join reads), else in order of first appearance in a hash map behind a membership
/// pre-test.
pub(super) enum Slots {
    /// An array of numbers over a span small enough for the cache (first appearance order).
    Small {
        lo: EntityId,
        /// The number of entity `lo + i` at `i`, `Slots::NONE` for ids not in the rows.
        at: Vec<u32>,
        len: usize,
    },
    Dense {
        lo: EntityId,
        /// Bit `i` set when entity `lo + i` is in the rows.
        bits: Vec<u64>,
        /// Before each word of `bits`, the bits set in the words before it: an entity's number
        /// is its rank among the rows' entities. Bits and ranks take 12 bytes for 64 ids of
        /// span, where an array of numbers took 256 (24 MB, beyond the caches, for TPC-H Q3's
        /// line items at SF 1, whose scan of 3.2 million ship dates finds 30,519).
        ranks: Vec<u32>,
        len: usize,
    },
    Hashed {
        members: EntitySet,
        map: HashMap<EntityId, u32>,
    },
}

impl Slots {
    const NONE: u32 = u32::MAX;

    /// The widest span numbered by an array of numbers (256 KiB of them: where the array stays
    /// in the cache, a load beats the bit test and count of `Dense`; workload Q's `q2`, 2,575
    /// people over 20,000 ids, was 3-5% slower numbered by rank).
    const SMALL_SPAN: u64 = 1 << 16;

    /// The numbering, and how many ids there were (repeats included).
    fn new(ids: impl Iterator<Item = EntityId> + Clone) -> (Slots, usize) {
        let (mut lo, mut hi, mut n) = (u64::MAX, 0, 0u64);
        for e in ids.clone() {
            lo = lo.min(e);
            hi = hi.max(e);
            n += 1;
        }
        let span = hi.saturating_sub(lo).saturating_add(1);
        if n > 0 && span <= Self::SMALL_SPAN && span <= n.saturating_mul(16).saturating_add(4096) {
            let mut at = vec![Self::NONE; span as usize];
            let mut len = 0u32;
            for e in ids {
                let x = &mut at[(e - lo) as usize];
                if *x == Self::NONE {
                    *x = len;
                    len += 1;
                }
            }
            let small = Slots::Small {
                lo,
                at,
                len: len as usize,
            };
            return (small, n as usize);
        }
        // At most 64 ids of span per row (12 bytes a row, where a hash map takes about 24 and
        // costs a probe per datom the scan reads): TPC-H's orders are one id in four (order
        // keys are sparse), and a query's orders one in five of those.
        if n > 0 && span <= n.saturating_mul(64).saturating_add(1 << 16) {
            let words = span.div_ceil(64) as usize;
            let mut bits = vec![0u64; words];
            for e in ids {
                let i = (e - lo) as usize;
                bits[i / 64] |= 1 << (i % 64);
            }
            let mut ranks = Vec::with_capacity(words);
            let mut len = 0u32;
            for w in &bits {
                ranks.push(len);
                len += w.count_ones();
            }
            let dense = Slots::Dense {
                lo,
                bits,
                ranks,
                len: len as usize,
            };
            return (dense, n as usize);
        }
        let mut map: HashMap<EntityId, u32> =
            HashMap::with_capacity_and_hasher(n as usize, Default::default());
        for e in ids {
            let next = map.len() as u32;
            map.entry(e).or_insert(next);
        }
        let members = EntitySet::new(map.keys().copied());
        (Slots::Hashed { members, map }, n as usize)
    }

    /// The number of distinct entities.
    fn len(&self) -> usize {
        match self {
            Slots::Small { len, .. } | Slots::Dense { len, .. } => *len,
            Slots::Hashed { map, .. } => map.len(),
        }
    }

    /// What the numbering holds, for the query's memory budget.
    fn bytes(&self) -> u64 {
        match self {
            Slots::Small { at, .. } => at.len() as u64 * 4,
            Slots::Dense { bits, ranks, .. } => bits.len() as u64 * 8 + ranks.len() as u64 * 4,
            Slots::Hashed { map, .. } => rows_bytes(map.len(), 2),
        }
    }

    #[inline(always)]
    fn get(&self, e: EntityId) -> Option<u32> {
        match self {
            Slots::Small { lo, at, .. } => {
                let i = e.checked_sub(*lo)?;
                at.get(i as usize).copied().filter(|s| *s != Self::NONE)
            }
            Slots::Dense {
                lo, bits, ranks, ..
            } => {
                let i = e.checked_sub(*lo)? as usize;
                let word = *bits.get(i / 64)?;
                let bit = 1u64 << (i % 64);
                if word & bit == 0 {
                    return None;
                }
                Some(ranks[i / 64] + (word & (bit - 1)).count_ones())
            }
            Slots::Hashed { members, map } => {
                if !members.may_contain(e) {
                    return None;
                }
                map.get(&e).copied()
            }
        }
    }
}

/// A quick membership pre-test for entity ids: a bitmap over their span when it is compact
/// (entity ids are allocated densely; then the test is exact), else nothing (everything may
/// be a member).
pub(super) struct EntitySet {
    lo: EntityId,
    bits: Option<Vec<u64>>,
}

impl EntitySet {
    fn new(ids: impl Iterator<Item = EntityId> + Clone) -> EntitySet {
        let (mut lo, mut hi, mut n) = (u64::MAX, 0, 0u64);
        for e in ids.clone() {
            lo = lo.min(e);
            hi = hi.max(e);
            n += 1;
        }
        // At most 64 bits per member (plus a little): never more memory than a hash set.
        let span = hi.saturating_sub(lo).saturating_add(1);
        if n == 0 || span > n.saturating_mul(64).saturating_add(4096) {
            return EntitySet { lo, bits: None };
        }
        let mut bits = vec![0u64; span.div_ceil(64) as usize];
        for e in ids {
            let i = e - lo;
            bits[(i / 64) as usize] |= 1 << (i % 64);
        }
        EntitySet {
            lo,
            bits: Some(bits),
        }
    }

    /// False only for ids certainly not in the set.
    #[inline]
    fn may_contain(&self, e: EntityId) -> bool {
        match &self.bits {
            None => true,
            Some(bits) => {
                let Some(i) = e.checked_sub(self.lo) else {
                    return false;
                };
                bits.get((i / 64) as usize)
                    .is_some_and(|w| w & (1 << (i % 64)) != 0)
            }
        }
    }
}

/// Whether two values of this one's type are equal exactly when their index encodings are
/// (so an AVE lookup of it finds what a comparison would).
pub(super) fn encoding_is_equality(v: &Value) -> bool {
    matches!(
        v,
        Value::Boolean(_)
            | Value::Long(_)
            | Value::BigInt(_)
            | Value::Instant(_)
            | Value::Uuid(_)
            | Value::String(_)
            | Value::Keyword(_)
            | Value::Symbol(_)
            | Value::Ref(_)
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every numbering (small, dense, sparse within the dense bound, hashed) numbers the distinct ids
    /// 0, 1, ... (one number each) and answers `None` for every id not among them.
    #[test]
    fn slots_number_each_distinct_id_once() {
        let base: EntityId = 1 << 40;
        let cases: Vec<(&str, Vec<EntityId>)> = vec![
            ("one id", vec![base]),
            ("every id of a span", (0..1000).map(|i| base + i).collect()),
            (
                "repeats",
                vec![base + 5, base + 1, base + 5, base + 2, base + 1],
            ),
            ("one in seven", (0..1000).map(|i| base + i * 7).collect()),
            (
                "one in sixteen, descending",
                (0..500).rev().map(|i| base + i * 16).collect(),
            ),
            (
                "one in sixty, across word edges",
                (0..3000).map(|i| base + 63 + i * 60).collect(),
            ),
            (
                "one in three, past the small span",
                (0..40_000).rev().map(|i| base + i * 3).collect(),
            ),
            (
                "spread past the dense bound",
                (0..50).map(|i| base + i * 100_000).collect(),
            ),
        ];
        for (name, ids) in cases {
            let (slots, n) = Slots::new(ids.iter().copied());
            assert_eq!(n, ids.len(), "{name}");
            let distinct: std::collections::BTreeSet<EntityId> = ids.iter().copied().collect();
            assert_eq!(slots.len(), distinct.len(), "{name}");
            let mut numbers: Vec<u32> = distinct
                .iter()
                .map(|e| {
                    slots
                        .get(*e)
                        .unwrap_or_else(|| panic!("{name}: id {e} unnumbered"))
                })
                .collect();
            numbers.sort_unstable();
            let expected: Vec<u32> = (0..distinct.len() as u32).collect();
            assert_eq!(numbers, expected, "{name}");
            let lo = ids.iter().min().copied().unwrap_or(base);
            let hi = ids.iter().max().copied().unwrap_or(base);
            for e in lo.saturating_sub(70)..=hi.saturating_add(70) {
                if !distinct.contains(&e) && (e % 7 == 0 || distinct.len() < 100) {
                    assert_eq!(slots.get(e), None, "{name}: id {e}");
                }
            }
            assert_eq!(slots.get(0), None, "{name}");
            assert_eq!(slots.get(u64::MAX), None, "{name}");
        }
    }
}
