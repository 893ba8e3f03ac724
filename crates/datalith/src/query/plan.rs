//! A query's plan as a value, in query terms: the `:where` clauses as written (with where
//! they are in the text), the steps in the order the engine chose them (each the clause it
//! ran, printed as the query writes it, the index it read ([`PlanIndex`]), with estimated and
//! actual rows), and the result's size. `explain` returns it; the shell's `.explain` and the benchmark print it.
//!
//! The engine picks each next step from index estimates under the bindings made so far (see
//! `exec`), so the order is known only as the query runs: a plan is recorded by running the
//! query with [`crate::query::QueryOptions::explain`].

use super::parse::{Position, QueryAst};
use crate::edn::{read_all, Edn};

/// What a query did, step by step.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct Plan {
    /// The query, printed back from its parsed form.
    pub query: String,
    /// The `:where` clauses as written, in the order written.
    pub clauses: Vec<PlanClause>,
    /// The steps, in the order they ran.
    pub steps: Vec<PlanStep>,
    /// Rows (or values) in the result.
    pub rows: usize,
}

/// A `:where` clause as written.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct PlanClause {
    /// The clause as EDN.
    pub text: String,
    /// Where it starts in the query text (`None` for a query given as data).
    pub position: Option<Position>,
}

/// One step the engine ran.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct PlanStep {
    /// What ran, in query terms: the clause as written (`[?e :person/name ?n]`); several
    /// patterns on one entity read together print as `merge scan [...] [...]`, a pattern
    /// answered as a semijoin as `values held [...]`, a group of clauses probed per row for a
    /// first witness as `exists [...] ...`, and ` +dedup` ends a step that removes
    /// equal rows after it.
    pub what: String,
    /// The written clauses this step ran (indexes in [`Plan::clauses`]): one, several for a
    /// merged scan, none for a step of a rule body.
    pub clauses: Vec<usize>,
    /// The index the step read.
    pub index: PlanIndex,
    /// Rows estimated after the step.
    pub estimated: u64,
    /// Rows after the step.
    pub actual: u64,
}

/// The index a step read, printed in uppercase as Datomic's and Datalevin's explain name
/// theirs (`EAV`, `AVE`, ...). The store keeps its datoms in two indexes, EAV and AVE; the
/// other kinds name what a step read instead of an index, or that it read nothing.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum PlanIndex {
    /// `EAV`: the entity is known (a constant or bound by the rows), one read of its EAV
    /// entry per row answers the step's patterns on it.
    Eav,
    /// `AVE`: attribute and value known, the entities holding the value (one lookup per
    /// distinct value when the rows bind it); also a merge scan answered entirely by the short
    /// AVE entries of its constant patterns.
    Ave,
    /// `AVE SCAN`: a scan of one attribute's AVE range, the scan of an attribute as a whole
    /// (Datomic's `AEVT`-like read): the whole attribute, or the part the comparisons on its
    /// value bound; also a merge scan that read its attributes' ranges and hash-joined them
    /// with the rows, and a semijoin walking the attribute's values (`values held`).
    AttrScan,
    /// `EAV SCAN`: the whole EAV index (a pattern whose attribute and entity are both unknown).
    FullScan,
    /// `INPUT RELATION`: a relation given as an input (`:in $x` with a collection or tuples).
    Input,
    /// `FUNCTION`: a function call binding variables, reading no index.
    Function,
    /// `RULE`: a rule call; the steps of its body are listed of their own, before it.
    Rule,
    /// `NESTED`: a `not` or `or`; its clauses ran as steps of their own, listed before it,
    /// and this step joins their rows with the rows so far.
    Nested,
    /// `AEV`: an attribute without AVE entries (`store::value_index`), read through the list
    /// of its entities and their EAV entries: what `AVE` and `AVE SCAN` are for the others
    /// (a lookup by value walks the attribute once a step; a scan or range walks it).
    Aev,
    /// `HISTORY`: the history index (a pattern naming the transaction or `added`, or any
    /// pattern on an `as-of`, `since` or `history` database), one read per candidate entity.
    History,
    /// `NONE`: no index, a predicate filtering the rows (or a pattern on an attribute the
    /// database does not have, which matches nothing).
    None,
}

impl PlanIndex {
    /// The name `explain` prints: `EAV`, `AVE`, `AVE SCAN`, `EAV SCAN`, `AEV`,
    /// `INPUT RELATION`, `FUNCTION`, `RULE`, `NESTED`, `HISTORY`, `NONE`.
    pub fn as_str(self) -> &'static str {
        match self {
            PlanIndex::Eav => "EAV",
            PlanIndex::Ave => "AVE",
            PlanIndex::AttrScan => "AVE SCAN",
            PlanIndex::FullScan => "EAV SCAN",
            PlanIndex::Aev => "AEV",
            PlanIndex::Input => "INPUT RELATION",
            PlanIndex::History => "HISTORY",
            PlanIndex::Function => "FUNCTION",
            PlanIndex::Rule => "RULE",
            PlanIndex::Nested => "NESTED",
            PlanIndex::None => "NONE",
        }
    }
}

impl std::fmt::Display for PlanIndex {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

impl Plan {
    /// The plan of `ast`'s run: its executed `steps` and its `result`.
    pub(crate) fn new(ast: &QueryAst, steps: Vec<super::exec::Step>, result: &Edn) -> Plan {
        let clauses: Vec<PlanClause> = ast
            .clauses
            .iter()
            .map(|c| PlanClause {
                text: crate::edn::to_edn_string(&c.form.edn),
                position: ast.position(c.form.span),
            })
            .collect();
        let steps = steps
            .into_iter()
            .map(|s| {
                let clauses = written_clauses(ast, &s.what);
                PlanStep {
                    what: s.what,
                    clauses,
                    index: s.index,
                    estimated: s.estimated,
                    actual: s.actual,
                }
            })
            .collect();
        let rows = match result {
            Edn::Set(v) | Edn::Vector(v) | Edn::List(v) => v.len(),
            Edn::Nil => 0,
            _ => 1,
        };
        Plan {
            query: ast.to_string(),
            clauses,
            steps,
            rows,
        }
    }
}

/// The written clauses a step printed as `what` ran: the clauses it prints that the query
/// wrote at its top level, compared as the engine prints them (a short pattern padded with
/// `_`, a `not`/`or` as the `-join` over the variables it shares).
fn written_clauses(ast: &QueryAst, what: &str) -> Vec<usize> {
    let what = what.trim_end_matches(" +dedup");
    let what = ["merge scan ", "values held ", "exists "]
        .iter()
        .find_map(|prefix| what.strip_prefix(prefix))
        .unwrap_or(what);
    read_all(what)
        .unwrap_or_default()
        .iter()
        .map(as_printed)
        .filter_map(|ran| {
            ast.clauses
                .iter()
                .position(|c| as_printed(&c.form.edn) == ran)
        })
        .collect()
}

/// A clause with what printing may add or drop made equal: a data pattern's missing
/// positions as `_`, the join vector of `not-join`/`or-join` left out (the engine prints
/// every `not`/`or` with the variables it shares).
fn as_printed(clause: &Edn) -> Edn {
    let blank = || Edn::Symbol(crate::codec::Keyword::new(None, "_"));
    match clause {
        Edn::Vector(items) if items.len() < 3 && !matches!(items.first(), Some(Edn::List(_))) => {
            let mut items = items.clone();
            items.resize_with(3, blank);
            Edn::Vector(items)
        }
        Edn::List(items) => {
            let head = items.first().and_then(Edn::as_symbol);
            match head.as_deref() {
                Some(join @ ("not-join" | "or-join")) => {
                    let plain = join.trim_end_matches("-join");
                    let mut out = vec![Edn::Symbol(crate::codec::Keyword::new(None, plain))];
                    out.extend(items.iter().skip(2).cloned());
                    Edn::List(out)
                }
                _ => clause.clone(),
            }
        }
        other => other.clone(),
    }
}

impl std::fmt::Display for PlanStep {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{}  ({}, estimated {}, actual {})",
            self.what, self.index, self.estimated, self.actual
        )
    }
}

impl std::fmt::Display for Plan {
    /// The query, its clauses as written, the steps in the order run (each with the index it
    /// read), the result's size.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        writeln!(f, "query: {}", self.query)?;
        writeln!(f, "clauses, as written:")?;
        for (i, c) in self.clauses.iter().enumerate() {
            match &c.position {
                Some(p) => writeln!(f, "  {}. {}  ({p})", i + 1, c.text)?,
                None => writeln!(f, "  {}. {}", i + 1, c.text)?,
            }
        }
        writeln!(f, "steps, in the order run:")?;
        for (i, s) in self.steps.iter().enumerate() {
            let clause = match s.clauses.as_slice() {
                [] => String::new(),
                [one] => format!("  (clause {})", one + 1),
                many => {
                    let numbers: Vec<String> = many.iter().map(|c| (c + 1).to_string()).collect();
                    format!("  (clauses {})", numbers.join(", "))
                }
            };
            writeln!(f, "  {}. {s}{clause}", i + 1)?;
        }
        let noun = if self.rows == 1 { "row" } else { "rows" };
        write!(f, "result: {} {noun}", self.rows)
    }
}
