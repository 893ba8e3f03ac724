//! Relations: the sets of bindings that flow between clauses.

use rustc_hash::FxHashMap as HashMap;
use rustc_hash::FxHashSet as HashSet;

use super::ir::Var;
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
    pub fn project(&self, keep: &[Var]) -> Relation {
        let cols: Vec<usize> = keep.iter().filter_map(|v| self.col(*v)).collect();
        let vars: Vec<Var> = cols.iter().map(|c| self.vars[*c]).collect();
        if vars == self.vars {
            return self.clone();
        }
        let mut seen = HashSet::with_capacity_and_hasher(self.rows.len(), Default::default());
        let mut rows = Vec::new();
        for r in &self.rows {
            let p: Vec<Value> = cols.iter().map(|c| r[*c].clone()).collect();
            if seen.insert(p.clone()) {
                rows.push(p);
            }
        }
        Relation { vars, rows }
    }

    /// Like [`Self::project`], consuming `self` (cheap when nothing is dropped).
    pub fn project_owned(self, keep: &[Var]) -> Relation {
        if self.vars.iter().all(|v| keep.contains(v)) {
            return self;
        }
        self.project(keep)
    }

    /// Keeps only `keep` (in the relation's order), removing duplicate rows only when `dedup`
    /// is set: the caller knows whether dropping the other columns (or the step before) can
    /// have made equal rows.
    pub fn into_projection(mut self, keep: &[Var], dedup: bool) -> Relation {
        let cols: Vec<usize> = (0..self.vars.len())
            .filter(|c| keep.contains(&self.vars[*c]))
            .collect();
        if cols.len() == self.vars.len() {
            if dedup {
                self.dedup();
            }
            return self;
        }
        if dedup {
            return self.project(keep);
        }
        let vars = cols.iter().map(|c| self.vars[*c]).collect();
        let rows = self
            .rows
            .into_iter()
            .map(|mut r| {
                cols.iter()
                    .map(|c| std::mem::replace(&mut r[*c], Value::Boolean(false)))
                    .collect()
            })
            .collect();
        Relation { vars, rows }
    }

    /// Removes duplicate rows.
    pub fn dedup(&mut self) {
        let mut seen = HashSet::with_capacity_and_hasher(self.rows.len(), Default::default());
        self.rows.retain(|r| seen.insert(r.clone()));
    }

    /// Natural join on shared variables (a cartesian product when none are shared).
    pub fn join(&self, other: &Relation) -> Relation {
        let shared: Vec<Var> = self
            .vars
            .iter()
            .copied()
            .filter(|v| other.binds(*v))
            .collect();
        let extra: Vec<usize> = (0..other.vars.len())
            .filter(|c| !shared.contains(&other.vars[*c]))
            .collect();
        let mut vars = self.vars.clone();
        vars.extend(extra.iter().map(|c| other.vars[*c]));
        let lk: Vec<usize> = shared.iter().filter_map(|v| self.col(*v)).collect();
        let rk: Vec<usize> = shared.iter().filter_map(|v| other.col(*v)).collect();
        let mut index: HashMap<Vec<&Value>, Vec<usize>> = HashMap::default();
        for (i, r) in other.rows.iter().enumerate() {
            index
                .entry(rk.iter().map(|c| &r[*c]).collect())
                .or_default()
                .push(i);
        }
        let mut rows = Vec::new();
        for l in &self.rows {
            let key: Vec<&Value> = lk.iter().map(|c| &l[*c]).collect();
            if let Some(matches) = index.get(&key) {
                for &i in matches {
                    let mut row = l.clone();
                    row.extend(extra.iter().map(|c| other.rows[i][*c].clone()));
                    rows.push(row);
                }
            }
        }
        Relation { vars, rows }
    }

    /// Rows of `self` with no match in `other` on the shared variables.
    pub fn anti_join(&self, other: &Relation) -> Relation {
        let shared: Vec<Var> = self
            .vars
            .iter()
            .copied()
            .filter(|v| other.binds(*v))
            .collect();
        let lk: Vec<usize> = shared.iter().filter_map(|v| self.col(*v)).collect();
        let rk: Vec<usize> = shared.iter().filter_map(|v| other.col(*v)).collect();
        let keys: HashSet<Vec<&Value>> = other
            .rows
            .iter()
            .map(|r| rk.iter().map(|c| &r[*c]).collect())
            .collect();
        let rows = self
            .rows
            .iter()
            .filter(|l| !keys.contains(&lk.iter().map(|c| &l[*c]).collect::<Vec<_>>()))
            .cloned()
            .collect();
        Relation {
            vars: self.vars.clone(),
            rows,
        }
    }

    /// Union of relations over the same variables (columns reordered as needed).
    pub fn union(&mut self, other: Relation) {
        if self.vars == other.vars {
            self.rows.extend(other.rows);
            return;
        }
        let cols: Vec<Option<usize>> = self.vars.iter().map(|v| other.col(*v)).collect();
        for r in other.rows {
            if cols.iter().all(Option::is_some) {
                self.rows.push(
                    cols.iter()
                        .map(|c| r[c.expect("checked")].clone())
                        .collect(),
                );
            }
        }
    }
}
