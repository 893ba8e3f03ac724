//! Patterns of a merge scan that only add a value to each row, run after the rest of the
//! conjunction instead: late materialization.
//!
//! A pattern `[?e :a ?v]` on a bound entity, of an attribute with one value, whose variable
//! no other clause still to run reads (only the caller: `:find`, `:with`), can neither join
//! nor test anything; it keeps a row or drops it (an entity without the attribute) and adds
//! one value. Reading it when the greedy choice reaches it reads it for every row at that
//! point; read last, only for the rows the rest lets through (TPC-H Q3: an order's key and
//! priority for the 11,620 orders left at the end instead of the 147,126 that reach the line
//! items). Its entity variable stays bound meanwhile (the postponed clause reads it, so no
//! step projects it away), and lookups of one entity for adjacent rows read it once
//! (`star::entity_star`), so read last it costs at most the distinct entities it would have
//! read then.

use super::*;
use crate::query::ir::{AttrTerm, Clause, Pattern, Term, Var};
use crate::query::relation::Relation;

impl Ctx<'_> {
    /// Takes out of `star` (a merge scan on a bound entity) the patterns that only add a value
    /// (module doc), when a clause still to run (`todo`) may drop rows and at least one
    /// pattern stays in the star. Returns the patterns taken out.
    pub(super) fn postpone_extensions(
        &self,
        star: &mut Vec<Pattern>,
        rel: &Relation,
        todo: &[Clause],
    ) -> Vec<Pattern> {
        // Functions keep every row: after nothing but them, reading late reads as many rows
        // in a second pass (TPC-H Q1: two scans of three attributes of 5.9M line items
        // instead of one of six, no faster).
        let may_drop = |c: &Clause| !matches!(c, Clause::Fn { .. });
        if !todo.iter().any(may_drop) || star.len() < 2 {
            return Vec::new();
        }
        let read_elsewhere = |v: Var, star: &[Pattern], me: usize| {
            todo.iter().any(|c| c.vars().contains(&v))
                || star
                    .iter()
                    .enumerate()
                    .any(|(i, q)| i != me && (q.e.var() == Some(v) || q.v.var() == Some(v)))
        };
        let extends: Vec<bool> = star
            .iter()
            .enumerate()
            .map(|(i, q)| {
                self.adds_one_value(q, rel)
                    .is_some_and(|v| !read_elsewhere(v, star, i))
            })
            .collect();
        if extends.iter().all(|x| *x) || !extends.iter().any(|x| *x) {
            return Vec::new();
        }
        let mut later = Vec::new();
        let mut kept = Vec::with_capacity(star.len());
        for (q, x) in std::mem::take(star).into_iter().zip(extends) {
            if x {
                later.push(q);
            } else {
                kept.push(q);
            }
        }
        *star = kept;
        later
    }

    /// The patterns of `todo` that only add a value to each row (as above, and the step
    /// they would make holds nothing else), while a clause that may drop rows is still to
    /// run: they wait until nothing else can run, for the rows the rest lets through. The
    /// greedy choice otherwise takes them early, since they never add rows: on half of TPC-H
    /// Q3's customers (a part of the query spread over two threads) an order's key and
    /// priority were read for 73,519 orders before the line items left 15,119 rows.
    pub(super) fn waiting_extensions(&self, todo: &[Clause], rel: &Relation) -> Vec<Clause> {
        let extends = |i: usize, c: &Clause| match c {
            Clause::Pattern(src, q)
                if self.source_of(*src) == self.active
                    && self.reads_db(*src)
                    && self.is_current(*src) =>
            {
                self.adds_one_value(q, rel).is_some_and(|v| {
                    !todo
                        .iter()
                        .enumerate()
                        .any(|(j, c)| j != i && c.vars().contains(&v))
                })
            }
            _ => false,
        };
        let marks: Vec<bool> = todo
            .iter()
            .enumerate()
            .map(|(i, c)| extends(i, c))
            .collect();
        let may_drop = todo
            .iter()
            .zip(&marks)
            .any(|(c, x)| !x && !matches!(c, Clause::Fn { .. }));
        if !may_drop {
            return Vec::new();
        }
        todo.iter()
            .zip(marks)
            .filter(|(_, x)| *x)
            .map(|(c, _)| c.clone())
            .collect()
    }

    /// The variable `q` binds when it can only add a value to each row of `rel`: `[?e :a ?v]`
    /// with `?e` bound, `?v` new and `:a` of one value (whether another clause reads `?v` is
    /// the caller's question).
    fn adds_one_value(&self, q: &Pattern, rel: &Relation) -> Option<Var> {
        match (&q.e, &q.a, &q.v) {
            (Term::Var(e), AttrTerm::Attr(a), Term::Var(v))
                if e != v && rel.binds(*e) && !rel.binds(*v) && !self.is_many(*a) =>
            {
                Some(*v)
            }
            _ => None,
        }
    }
}
