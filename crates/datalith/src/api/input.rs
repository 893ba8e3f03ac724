//! Query inputs that may be databases: [`Input`] and [`q`], Datomic's `(d/q query inputs...)`.

use crate::edn::Edn;
use crate::query::run::{InputRef, Outcome};
use crate::query::{Answer, ItemSink, Plan, QueryError, QueryOptions, Want};

use super::Db;

/// One input of a query, for one `:in` form: a database (for `$` or `$name`) or a value (a
/// scalar, a collection, a relation, which can also be a data source, or rules for `%`).
#[derive(Debug, Clone)]
pub enum Input {
    /// A database value.
    Db(Db),
    /// An EDN value.
    Value(Edn),
    /// The transaction log of the database this value came from, up to its basis (Datomic's
    /// `(d/log conn)`): bound to a variable, it is the first argument of `tx-ids` and
    /// `tx-data` in the query.
    Log(Db),
}

impl From<Db> for Input {
    fn from(db: Db) -> Input {
        Input::Db(db)
    }
}

impl From<&Db> for Input {
    fn from(db: &Db) -> Input {
        Input::Db(db.clone())
    }
}

impl From<Edn> for Input {
    fn from(e: Edn) -> Input {
        Input::Value(e)
    }
}

impl Input {
    fn as_ref(&self) -> InputRef<'_> {
        match self {
            Input::Db(d) => InputRef::Db(d),
            Input::Value(v) => InputRef::Value(v),
            Input::Log(d) => InputRef::Log(d),
        }
    }
}

/// Runs a query (EDN text) on `inputs`, one for each `:in` form in order (`:in $` when the
/// query has no `:in`), as Datomic's `(d/q query inputs...)`: several databases, a named
/// first database (`:in $db ?x`), relations as data sources. Parsed queries are cached and
/// functions found in the first database's environment; at least one input must be a
/// database. [`Db::q`] is the shorthand whose receiver is the first `$`.
///
/// ```
/// use datalith::edn::{read_one, Edn};
/// use datalith::{Database, DbOptions, Input};
///
/// let dir = tempfile::tempdir().unwrap();
/// let people = Database::open(&dir.path().join("people"), DbOptions::default()).unwrap();
/// let tx = |text: &str| datalith::TxData::from_edn(&read_one(text).unwrap()).unwrap();
/// people.transact(tx(r#"[{:db/ident :person/id :db/valueType :db.type/string
///                         :db/cardinality :db.cardinality/one :db/unique :db.unique/identity}
///                        {:db/ident :person/name :db/valueType :db.type/string
///                         :db/cardinality :db.cardinality/one}]"#)).unwrap();
/// people.transact(tx(r#"[{:person/id "p1" :person/name "Ann"}]"#)).unwrap();
///
/// // People in a database, scores in a relation, joined on the person id.
/// let scores = read_one(r#"[["p1" 7] ["p2" 9]]"#).unwrap();
/// let result = datalith::q(
///     "[:find ?name ?score :in $people $scores
///       :where [$people ?e :person/id ?id] [$people ?e :person/name ?name]
///              [$scores ?id ?score]]",
///     &[Input::from(people.db().unwrap()), Input::from(scores)],
/// )
/// .unwrap();
/// assert_eq!(result, read_one(r#"#{["Ann" 7]}"#).unwrap());
/// ```
pub fn q(query: &str, inputs: &[Input]) -> Result<Edn, QueryError> {
    Ok(q_with(query, inputs, &QueryOptions::default())?.result)
}

/// [`q`] that also returns the query's [`Plan`] (each step's estimated and actual rows).
pub fn explain(query: &str, inputs: &[Input]) -> Result<(Edn, Plan), QueryError> {
    let o = q_with(query, inputs, &QueryOptions::default().explain(true))?;
    let plan = o.plan.expect("asked for");
    Ok((o.result, plan))
}

/// [`q`] with options, as [`Db::q_with`] for one database: a timeout, a cancellation flag, a
/// memory limit (the first database's when not given), whether to record the plan. A server
/// runs queries of several databases this way, within its limits.
pub fn q_with(
    query: &str,
    inputs: &[Input],
    options: &QueryOptions<'_>,
) -> Result<Outcome, QueryError> {
    whole(answer(query, inputs, options, Want::Whole)?).into_outcome()
}

/// [`q_with`] answering a large result a row at a time, as [`Db::q_rows`] does for one
/// database.
pub fn q_rows(
    query: &str,
    inputs: &[Input],
    options: &QueryOptions<'_>,
) -> Result<Answer, QueryError> {
    answer(query, inputs, options, Want::Rows).map(whole)
}

/// [`q_with`] handing a collection result's items to `sink` as they are made, as
/// [`Db::q_each`](crate::Db::q_each) does for one database: `None` once they were handed
/// on, or the whole result of any other query.
pub fn q_each(
    query: &str,
    inputs: &[Input],
    options: &QueryOptions<'_>,
    sink: &mut dyn ItemSink,
) -> Result<Option<Outcome>, QueryError> {
    answer(query, inputs, options, Want::Each(sink))?
        .map(Answer::into_outcome)
        .transpose()
}

fn answer(
    query: &str,
    inputs: &[Input],
    options: &QueryOptions<'_>,
    want: Want<'_>,
) -> Result<Option<Answer>, QueryError> {
    // Without a database the query still runs far enough to report what is wrong with
    // its inputs (and then that it has no database).
    let db = inputs
        .iter()
        .find_map(|i| match i {
            Input::Db(d) => Some(d),
            Input::Value(_) | Input::Log(_) => None,
        })
        .or_else(|| {
            inputs.iter().find_map(|i| match i {
                Input::Log(d) => Some(d),
                _ => None,
            })
        });
    let options = QueryOptions {
        memory_limit: options
            .memory_limit
            .or(db.and_then(|d| d.functions.query_memory_limit())),
        ..*options
    };
    let (sections, registry) = match db {
        Some(d) => (super::db::QUERIES.parse(query)?, d.functions.query()),
        None => (
            std::sync::Arc::new(crate::query::parse::parse(query)?),
            Default::default(),
        ),
    };
    let inputs: Vec<InputRef<'_>> = inputs.iter().map(Input::as_ref).collect();
    crate::query::run::answer(&sections, &inputs, None, &registry, &options, want)
}

/// The answer of a query whose caller gave no sink (only a sink's caller is handed the
/// items instead).
pub(crate) fn whole(answer: Option<Answer>) -> Answer {
    answer.expect("an answer without a sink is whole or rows")
}
