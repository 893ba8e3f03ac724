//! A conjunction whose first step is a function binding a collection (`[(range 0 n) [?x
//! ...]]`, or a relation, `[[?a ?b]]`, on the one input row), answered a part of the collection's elements at a time: the
//! function runs once, its elements wait as values, and each part's elements are made rows
//! and run through the rest of the plan before the next part's are made. What the answer
//! holds is then the elements (one value each) and one part's rows, not a row an element
//! through every later step (a million-element `range` held ~200 MB of rows whole).
//!
//! Why the parts add up to the answer, and share no row: as for a first scan read in parts
//! (`parts`), every later step answers a row alone; the elements are made distinct first,
//! and the variable they bind is kept, so rows of different parts differ in it.
//!
//! The rest of the plan is the first run's: the steps it had left after the function, taken
//! as they were (their order is chosen again on each part's rows, as a whole run would
//! choose on its rows).

use crate::codec::Value;
use crate::query::budget::{rows_bytes, Budget};
use crate::query::distinct::Dependency;
use crate::query::error::QueryError;
use crate::query::ir::{Binding, Clause, Term, Var};
use crate::query::relation::Relation;

/// The elements of a first step's collection not yet made rows, and what to run on them.
pub(super) struct Elements {
    /// The elements, distinct, in the order they are made rows.
    rest: std::vec::IntoIter<Value>,
    /// The input row each element extends.
    row: Vec<Value>,
    /// The variables of the rows made (the input's, then the element's).
    vars: Vec<Var>,
    /// Room a made row gets (`conj::row_spare`).
    capacity: usize,
    /// For a relation binding (`[[?a ?b]]`): each element is a tuple of this many values,
    /// each its own column; for a collection, the element is the one value.
    width: Option<usize>,
    /// The rest of the plan, kept when the first part's step ended.
    then: Option<Then>,
}

/// What a run had left to do once its first step (the function) ended: the arguments of
/// `Ctx::run_steps` for a later part's rows.
#[derive(Clone)]
pub(super) struct Then {
    pub todo: Vec<Clause>,
    pub deps: Vec<Dependency>,
    pub postponed: Vec<Clause>,
    /// The variables the step's rows kept.
    pub vars: Vec<Var>,
}

impl std::fmt::Debug for Elements {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Elements")
            .field("waiting", &self.rest.len())
            .finish_non_exhaustive()
    }
}

impl Elements {
    /// Splits a function's collection `elements` (made distinct here) into the first `n`,
    /// returned, and the rest, kept to extend `row` (of `vars`, the element's variable last)
    /// part by part.
    pub(super) fn split(
        mut elements: Vec<Value>,
        n: usize,
        row: &[Value],
        vars: Vec<Var>,
        capacity: usize,
        width: Option<usize>,
    ) -> (Vec<Value>, Elements) {
        // A generated collection (`range`) is mostly ascending already: no sort then.
        if !elements.windows(2).all(|w| w[0] < w[1]) {
            elements.sort_unstable();
            elements.dedup();
        }
        let rest = elements.split_off(n.min(elements.len()));
        let kept = Elements {
            rest: rest.into_iter(),
            row: row.to_vec(),
            vars,
            capacity,
            width,
            then: None,
        };
        (elements, kept)
    }

    /// Keeps what the first run had left to do after the function (once).
    pub(super) fn keep_then(
        &mut self,
        todo: &[Clause],
        deps: &[Dependency],
        postponed: &[Clause],
        vars: &[Var],
    ) {
        if self.then.is_none() {
            self.then = Some(Then {
                todo: todo.to_vec(),
                deps: deps.to_vec(),
                postponed: postponed.to_vec(),
                vars: vars.to_vec(),
            });
        }
    }

    /// The bytes the waiting elements hold.
    pub(super) fn waiting_bytes(&self) -> u64 {
        (self.rest.len() * std::mem::size_of::<Value>()) as u64
    }

    /// The next part's rows (`n` elements), projected as the first part's were, with the
    /// steps to run on them; `None` when every element was made a row.
    pub(super) fn next_part(
        &mut self,
        n: usize,
        budget: &Budget<'_>,
    ) -> Result<Option<(Relation, Then)>, QueryError> {
        if self.rest.len() == 0 {
            return Ok(None);
        }
        let then = self
            .then
            .as_ref()
            .expect("the first part's run kept its rest before the next part");
        let mut rows = Vec::with_capacity(n.min(self.rest.len()));
        for x in self.rest.by_ref().take(n) {
            rows.push(row_of(&self.row, x, self.width, self.capacity));
        }
        budget.charge(rows_bytes(rows.len(), self.vars.len()))?;
        let rel = Relation {
            vars: self.vars.clone(),
            rows,
        }
        // Distinct elements make distinct rows in the kept element: nothing to deduplicate.
        .into_projection(&then.vars, false, budget)?;
        Ok(Some((rel, then.clone())))
    }
}

/// The elements a binding takes from a function's result: a tuple's (a nil as false), a
/// set's (as Datomic's `[(ground #{1 2}) [?x ...]]`), a map's entries, a string's
/// characters, or the value itself; a tuple's in its
/// own buffer (its 32-byte items become the 32-byte values in place, so a million elements
/// are not held twice while they are taken).
pub(super) fn all(result: Value) -> Vec<Value> {
    match result {
        Value::Tuple(items) => items
            .into_iter()
            .map(|i| i.unwrap_or(Value::Boolean(false)))
            .collect(),
        Value::Set(items) => items.to_vec(),
        // Clojure's sequence of a map is its entries, of a string its characters (Java's
        // UTF-16 units: `[(re-find ?re ?s) [?c ...]]` binds a found text's characters).
        Value::Map(_) | Value::String(_) => crate::query::builtins::seq_items(&result)
            .unwrap_or_default()
            .into_iter()
            .flatten()
            .collect(),
        other => vec![other],
    }
}

/// The tuples of a function's relation result for a binding of `width` variables, as
/// `clauses::destructure` binds them: each element's first `width` values, an element with
/// fewer left out.
pub(super) fn tuples(result: Value, width: usize) -> Vec<Value> {
    all(result)
        .into_iter()
        .filter_map(|element| {
            let values = all(element);
            (values.len() >= width)
                .then(|| Value::Tuple(values.into_iter().take(width).map(Some).collect()))
        })
        .collect()
}

/// `row` extended by element `x` (its values, for a relation binding of `width`), with room
/// for `capacity` values.
pub(super) fn row_of(row: &[Value], x: Value, width: Option<usize>, capacity: usize) -> Vec<Value> {
    let mut r = Vec::with_capacity(capacity);
    r.extend_from_slice(row);
    match (width, x) {
        (Some(_), Value::Tuple(items)) => r.extend(
            items
                .into_iter()
                .map(|i| i.unwrap_or(Value::Boolean(false))),
        ),
        (_, x) => r.push(x),
    }
    r
}

/// Whether `clause`, a run's first step on the one row of `rel`, binds a collection whose
/// elements can be made rows a part at a time: a function binding `[?x ...]`, or `[[?a ?b
/// ...]]`, to distinct variables not bound yet that the answer keeps (rows of distinct
/// elements then differ in what the answer keeps).
pub(super) fn fits(clause: &Clause, rel: &Relation, keep: &[Var]) -> bool {
    let new_and_kept = |t: &Term| matches!(t, Term::Var(x) if !rel.binds(*x) && keep.contains(x));
    rel.rows.len() == 1
        && match clause {
            Clause::Fn {
                binding: Binding::Collection(x),
                ..
            } => new_and_kept(x),
            Clause::Fn {
                binding: Binding::Relation(ts),
                ..
            } => {
                let vars: std::collections::BTreeSet<&Term> = ts.iter().collect();
                !ts.is_empty() && vars.len() == ts.len() && ts.iter().all(new_and_kept)
            }
            _ => false,
        }
}

/// The number of values each element of `clause`'s binding makes a row of, when it is a
/// relation binding (`None`: a collection's one value).
pub(super) fn width(binding: &Binding) -> Option<usize> {
    match binding {
        Binding::Relation(ts) => Some(ts.len()),
        _ => None,
    }
}
