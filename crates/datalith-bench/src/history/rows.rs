//! The rows of workload H and the exact query texts every peer runs (the Datomic harness reads
//! them from the data file's header, written from these constants).

/// Which database value a query row reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Basis {
    /// The current database.
    Current,
    /// The database as of the transaction after this percentage of the data transactions.
    AsOf(u8),
}

/// Which query a query row runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Query {
    /// [`AGG`]: every item's value, summed and counted.
    Agg,
    /// [`LOOKUP`]: the values of a fixed set of item ids.
    Lookup,
}

/// What a row measures.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// A query on a database value (current or as of a point in the history).
    Query(Basis, Query),
    /// [`ENTITY_HISTORY`] on the history database, for one entity.
    EntityHistory,
    /// The transaction log read through the API (`Database::tx_range` / `d/tx-range`).
    TxRange,
    /// The transaction log read through the query functions `tx-ids` and `tx-data`
    /// ([`TX_DATA_Q`]).
    TxDataQ,
}

/// One row of the table.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Row {
    pub name: &'static str,
    pub kind: Kind,
    /// What it is, for the summary.
    pub about: &'static str,
}

/// "What is the total and the number of items (as of t)": every entity's current value of a
/// cardinality-one attribute, aggregated; the report a user runs on a past date.
pub const AGG: &str = "[:find (sum ?v) (count ?e) :where [?e :item/value ?v]]";

/// "What were these items' values (as of t)": an audit of some entities by their unique id.
pub const LOOKUP: &str =
    "[:find ?id ?v :in $ [?id ...] :where [?e :item/id ?id] [?e :item/value ?v]]";

/// One entity's full history of `:item/value`: every assertion and retraction with its
/// transaction (on the history database).
pub const ENTITY_HISTORY: &str =
    "[:find ?v ?tx ?added :in $ ?e :where [?e :item/value ?v ?tx ?added]]";

/// The transaction log through the query functions: every `:item/value` datom (assertion or
/// retraction) of the transactions `t1 <= tx < t2`, counted and its values summed. `:with`
/// keeps one tuple per datom; `?attr` is the attribute's entity id (each peer its own).
pub const TX_DATA_Q: &str = "[:find (count ?v) (sum ?v) :with ?e ?tx ?added \
:in $ ?log ?t1 ?t2 ?attr \
:where [(tx-ids ?log ?t1 ?t2) [?tx ...]] \
[(tx-data ?log ?tx) [[?e ?a ?v _ ?added]]] \
[(= ?a ?attr)]]";

/// The schema: a unique identity id and a cardinality-one value (each update of the value
/// retracts the previous one), indexed by value as every attribute was before the declared
/// layout became the default.
pub const SCHEMA: &str = "[{:db/ident :item/id :db/valueType :db.type/long \
:db/cardinality :db.cardinality/one :db/unique :db.unique/identity} \
{:db/ident :item/value :db/valueType :db.type/long :db/cardinality :db.cardinality/one :db/index true}]";

/// The points of the history the as-of rows read, in percent of the data transactions.
pub const CHECKPOINTS: [u8; 3] = [25, 50, 75];

const fn q(name: &'static str, basis: Basis, query: Query, about: &'static str) -> Row {
    Row {
        name,
        kind: Kind::Query(basis, query),
        about,
    }
}

/// Every row, in run order.
pub const ALL: [Row; 11] = [
    q(
        "current-agg",
        Basis::Current,
        Query::Agg,
        "AGG on the current db",
    ),
    q(
        "asof25-agg",
        Basis::AsOf(25),
        Query::Agg,
        "AGG as of 25% of the history",
    ),
    q(
        "asof50-agg",
        Basis::AsOf(50),
        Query::Agg,
        "AGG as of 50% of the history",
    ),
    q(
        "asof75-agg",
        Basis::AsOf(75),
        Query::Agg,
        "AGG as of 75% of the history",
    ),
    q(
        "current-lookup",
        Basis::Current,
        Query::Lookup,
        "LOOKUP on the current db",
    ),
    q(
        "asof25-lookup",
        Basis::AsOf(25),
        Query::Lookup,
        "LOOKUP as of 25% of the history",
    ),
    q(
        "asof50-lookup",
        Basis::AsOf(50),
        Query::Lookup,
        "LOOKUP as of 50% of the history",
    ),
    q(
        "asof75-lookup",
        Basis::AsOf(75),
        Query::Lookup,
        "LOOKUP as of 75% of the history",
    ),
    Row {
        name: "entity-history",
        kind: Kind::EntityHistory,
        about: "ENTITY_HISTORY on the history db: one entity's every version",
    },
    Row {
        name: "tx-range",
        kind: Kind::TxRange,
        about: "the log through the API over every data transaction: Datalith \
                `Database::tx_range`, Datomic `(d/tx-range log t1 t2)`",
    },
    Row {
        name: "tx-data-q",
        kind: Kind::TxDataQ,
        about: "TX_DATA_Q over every data transaction: `tx-ids` and `tx-data` in a query",
    },
];

/// The row called `name`.
pub fn by_name(name: &str) -> Option<Row> {
    ALL.iter().copied().find(|r| r.name == name)
}

/// The text of a row's query (`None` for `tx-range`, which is no query).
pub fn text(kind: Kind) -> Option<&'static str> {
    match kind {
        Kind::Query(_, Query::Agg) => Some(AGG),
        Kind::Query(_, Query::Lookup) => Some(LOOKUP),
        Kind::EntityHistory => Some(ENTITY_HISTORY),
        Kind::TxRange => None,
        Kind::TxDataQ => Some(TX_DATA_Q),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_unique_and_found_and_checkpoints_are_the_as_of_rows() {
        for r in ALL {
            assert_eq!(by_name(r.name), Some(r));
            if let Kind::Query(Basis::AsOf(p), q) = r.kind {
                assert!(CHECKPOINTS.contains(&p), "{}", r.name);
                let suffix = match q {
                    Query::Agg => "agg",
                    Query::Lookup => "lookup",
                };
                assert_eq!(r.name, format!("asof{p}-{suffix}"));
            }
        }
        assert_eq!(by_name("nope"), None);
        let edn = |t: &str| datalith::edn::read_one(t).unwrap();
        for t in [AGG, LOOKUP, ENTITY_HISTORY, TX_DATA_Q, SCHEMA] {
            edn(t);
        }
    }
}
