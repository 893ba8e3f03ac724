//! What a running query carries ([`Ctx`]): the databases and input relations it reads, the
//! rules and functions it may call, its [`Budget`], and the plan trace `explain` prints; with
//! the small helpers every step uses (which source a clause reads, its statistics, the
//! printer of clauses in query terms).
//!
//! Invariant: `r`, `schema` and `ave_lists` always belong to the database numbered `active`;
//! [`Ctx::enter`] swaps them together.

use rustc_hash::FxHashMap as HashMap;
use std::collections::BTreeMap;

use crate::codec::Value;
use crate::query::budget::Budget;
use crate::query::error::QueryError;
use crate::query::ir::{Pattern, RuleBody};
use crate::query::plan::PlanIndex;
use crate::query::relation::Relation;
use crate::query::show::ClauseText;
use crate::store::reader::IndexReader;
use crate::store::schema::Schema;
use crate::store::{AttrId, EntityId, TimeFilter};

/// A user function callable from queries.
pub type UserFn = dyn Fn(&[Value]) -> Result<Value, String> + Send + Sync;

/// AVE entity lists by attribute and value.
type AveLists = std::cell::RefCell<HashMap<(AttrId, Value), std::rc::Rc<Vec<EntityId>>>>;

/// A database a query reads, by source number.
pub struct DbSource<'a> {
    r: IndexReader<'a>,
    schema: &'a Schema,
    /// Which datoms it shows.
    pub(super) time: TimeFilter,
    /// Its AVE lists while another database is the active one.
    ave_lists: AveLists,
}

impl<'a> DbSource<'a> {
    /// A database with its reader and schema.
    pub fn new(r: IndexReader<'a>, schema: &'a Schema, time: TimeFilter) -> DbSource<'a> {
        DbSource {
            // An attribute its schema keeps in AVE is then known not to be listed without a
            // read of `attr_entities` at each step that asks.
            r: r.with_schema(schema),
            schema,
            time,
            ave_lists: Default::default(),
        }
    }

    /// Its schema.
    pub(super) fn schema(&self) -> &'a Schema {
        self.schema
    }

    /// Its index reader.
    pub(super) fn reader(&self) -> IndexReader<'a> {
        self.r
    }
}

/// What a running query needs.
pub struct Ctx<'a> {
    /// Index access to the active database (`active`).
    pub r: IndexReader<'a>,
    /// Schema of the active database.
    pub schema: &'a Schema,
    /// Time filter of the active database.
    pub time: TimeFilter,
    /// The transaction log given as an input, read by `tx-ids` and `tx-data`.
    pub log: Option<IndexReader<'a>>,
    /// Input relations for sources that are not databases (by source number).
    pub sources: HashMap<usize, Relation>,
    /// The databases, by source number (`$` is 0).
    pub dbs: HashMap<usize, DbSource<'a>>,
    /// The source `$` (source 0) stands for: 0, or `$x` inside a rule called as
    /// `($x rule ...)`.
    pub dollar: usize,
    /// The database `r`, `schema` and `ave_lists` belong to.
    pub active: usize,
    /// Rules by name, for the current `$`.
    pub rules: &'a BTreeMap<String, Vec<RuleBody>>,
    /// Rules by name, for each source a rule may read as its `$`.
    pub source_rules: &'a BTreeMap<usize, BTreeMap<String, Vec<RuleBody>>>,
    /// User functions.
    pub functions: &'a std::collections::HashMap<String, std::sync::Arc<UserFn>>,
    /// What the query may spend (time, cancellation, memory); every loop ticks it.
    pub budget: Budget<'a>,
    /// Plan steps, when explaining.
    pub trace: Option<Vec<Step>>,
    /// Variable names of the clauses being run (the query's, or a rule body's while it
    /// runs), to print steps and errors in query terms.
    pub var_names: std::sync::Arc<[String]>,
    /// Rule evaluation memo (rule name + bound pattern -> relation).
    pub rule_memo: HashMap<String, Relation>,
    /// AVE entity lists of the active database read while estimating, by attribute and
    /// value, for the step that then runs the pattern (this query only).
    pub ave_lists: AveLists,
    /// Nesting depth of rule evaluation (a recursion guard for non-stratifiable input).
    pub depth: u32,
    /// Spare capacity of the rows the current step makes: `ROW_SPARE` while clauses remain
    /// that may extend them, 0 for the last step (rows that only go to the result).
    pub row_spare: usize,
    /// How the conjunction may be spread over threads (`spread`); `None` on a helper thread
    /// and while this one runs its own part.
    pub spread: Option<super::Spread<'a>>,
    /// The first step of a conjunction read a part at a time (`parts`); `None` otherwise.
    pub part: Option<super::parts::ScanPart>,
}

/// One executed step, for `explain`.
#[derive(Debug, Clone, PartialEq)]
pub struct Step {
    /// What ran, in query terms: the clause as written (`[?e :person/name ?n]`); several
    /// patterns on one entity read together as `merge scan [...] [...]`, and a pattern
    /// answered as a semijoin as `values held [...]`.
    pub what: String,
    /// The index the step read.
    pub index: PlanIndex,
    /// Estimated rows after the step.
    pub estimated: u64,
    /// Actual rows after the step.
    pub actual: u64,
}

impl std::fmt::Display for Step {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{}  ({}, estimated {}, actual {})",
            self.what, self.index, self.estimated, self.actual
        )
    }
}

/// Spare capacity of a new row: room for the columns later steps usually add, so that
/// extending a row rarely moves it.
pub(crate) const ROW_SPARE: usize = 2;

/// The most spare capacity a new row takes for later steps (`conj::row_spare`): a query of
/// many clauses would otherwise make rows far larger than most ever grow.
pub(crate) const ROW_SPARE_MAX: usize = 12;

impl<'a> Ctx<'a> {
    /// The source a clause's source number reads (`$` is whatever it stands for now).
    pub fn source_of(&self, src: usize) -> usize {
        if src == 0 {
            self.dollar
        } else {
            src
        }
    }

    /// Whether source `src` of a clause is a database.
    pub(super) fn reads_db(&self, src: usize) -> bool {
        self.dbs.contains_key(&self.source_of(src))
    }

    /// Makes the database of clause source `src` the active one (`r`, `schema` and
    /// `ave_lists` read it); nothing when it is not a database.
    pub(super) fn enter(&mut self, src: usize) {
        let src = self.source_of(src);
        if src == self.active || !self.dbs.contains_key(&src) {
            return;
        }
        // The active database's lists go back to it; the next one's come out.
        if let Some(cur) = self.dbs.get_mut(&self.active) {
            std::mem::swap(cur.ave_lists.get_mut(), self.ave_lists.get_mut());
        }
        let next = self.dbs.get_mut(&src).expect("checked");
        std::mem::swap(next.ave_lists.get_mut(), self.ave_lists.get_mut());
        self.r = next.r;
        self.schema = next.schema;
        self.time = next.time;
        self.active = src;
    }

    pub(super) fn stats(&self, a: AttrId) -> Result<(u64, u64), QueryError> {
        let s = self.r.estimated_stats(a)?;
        Ok((s.datoms, s.distinct.max(1)))
    }

    /// Charges the memory a read of attribute `a` by value holds when its datoms have no AVE
    /// entries (its rows sorted by value, or a value cursor's map of holders:
    /// `store::listed`), before the read makes it; nothing for an attribute in AVE. Held
    /// until the step settles, as the step's reader holds it.
    pub(super) fn hold_listed(&self, a: AttrId) -> Result<(), QueryError> {
        if self.r.is_listed(a)? {
            let (datoms, _) = self.stats(a)?;
            self.budget
                .charge(datoms.saturating_mul(crate::store::listed::LISTED_BYTES_PER_DATOM))?;
        }
        Ok(())
    }

    pub(super) fn is_many(&self, a: AttrId) -> bool {
        self.schema.get(a).is_some_and(|x| x.is_many())
    }

    /// The printer of the clauses being run.
    pub fn show(&self) -> ClauseText<'_> {
        ClauseText {
            names: &self.var_names,
            schema: self.schema,
        }
    }

    /// A step of several patterns, printed (only when explaining).
    pub(super) fn show_step(&self, how: &str, patterns: &[Pattern]) -> String {
        if self.trace.is_none() {
            return String::new();
        }
        let show = self.show();
        let list: Vec<String> = patterns.iter().map(|p| show.pattern(0, p)).collect();
        format!("{how} {}", list.join(" "))
    }

    /// Runs `f` with `names` as the variable names of the clauses (a rule body's); only
    /// `explain` and errors read them.
    pub fn with_names<T>(
        &mut self,
        names: &std::sync::Arc<[String]>,
        f: impl FnOnce(&mut Self) -> T,
    ) -> T {
        let outer = std::mem::replace(&mut self.var_names, names.clone());
        let out = f(self);
        self.var_names = outer;
        out
    }
}
