//! The tasks of workload Q and the exact query texts of `BENCHMARKS.md`.

/// Whether a task writes (each run on a fresh store) or reads (the loaded store).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    Write,
    Read,
}

/// One task.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Task {
    pub name: &'static str,
    pub kind: Kind,
    /// Datalog text (read tasks but `lookup-raw`).
    pub query: Option<&'static str>,
    /// The `:in` scalar after the database, as EDN, if any.
    pub input: Option<&'static str>,
    /// What the task does, for the summary.
    pub about: &'static str,
}

const fn write(name: &'static str, about: &'static str) -> Task {
    Task {
        name,
        kind: Kind::Write,
        query: None,
        input: None,
        about,
    }
}

const fn read(name: &'static str, query: &'static str, about: &'static str) -> Task {
    Task {
        name,
        kind: Kind::Read,
        query: Some(query),
        input: None,
        about,
    }
}

/// The seed 001 lookup as Datalog: the `:last-name` of each entity whose `:name` is "Ivan".
/// `:with ?e` keeps one value per entity (a bag, not the set of the 6 distinct last names), so
/// it returns the same rows as `lookup-raw`; the text `bench/peers/README.md` fixes for every
/// peer.
pub const LOOKUP_Q: &str = "[:find ?l :with ?e :where [?e :name \"Ivan\"] [?e :last-name ?l]]";

/// Every task, in run order.
pub const ALL: [Task; 15] = [
    write("init", "bulk load of prepared datoms"),
    write("add-1", "one datom per transaction"),
    write("add-5", "one entity (5 datoms) per transaction"),
    write("add-all", "all 100K datoms in one transaction"),
    write("retract-5", "retractEntity, one entity per transaction"),
    read("q1", "[:find ?e :where [?e :name \"Ivan\"]]", "one bound attribute"),
    read(
        "q2",
        "[:find ?e ?a :where [?e :name \"Ivan\"] [?e :age ?a]]",
        "plus one unbound attribute",
    ),
    read(
        "q2-switch",
        "[:find ?e ?a :where [?e :age ?a] [?e :name \"Ivan\"]]",
        "q2, clauses swapped",
    ),
    read(
        "q3",
        "[:find ?e ?a :where [?e :name \"Ivan\"] [?e :age ?a] [?e :sex :male]]",
        "plus a low-selectivity bound attribute",
    ),
    read(
        "q4",
        "[:find ?e ?l ?a :where [?e :name \"Ivan\"] [?e :last-name ?l] [?e :age ?a] [?e :sex :male]]",
        "plus one more unbound attribute",
    ),
    read(
        "q5",
        "[:find ?e1 ?l ?a :where [?e :name \"Ivan\"] [?e :age ?a] [?e1 :age ?a] [?e1 :last-name ?l]]",
        "join on equal values",
    ),
    read(
        "qpred1",
        "[:find ?e ?s :where [?e :salary ?s] [(> ?s 50000)]]",
        "range predicate",
    ),
    Task {
        name: "qpred2",
        kind: Kind::Read,
        query: Some("[:find ?e ?s :in $ ?min_s :where [?e :salary ?s] [(> ?s ?min_s)]]"),
        input: Some("50000"),
        about: "range predicate, bound through :in",
    },
    Task {
        name: "lookup-q",
        kind: Kind::Read,
        query: Some(LOOKUP_Q),
        input: None,
        about: "seed 001 lookup as Datalog",
    },
    Task {
        name: "lookup-raw",
        kind: Kind::Read,
        query: None,
        input: None,
        about: "seed 001 lookup through raw index access (AVE then EAV)",
    },
];

/// The task named `name`.
pub fn by_name(name: &str) -> Option<Task> {
    ALL.iter().copied().find(|t| t.name == name)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_unique_and_found() {
        for t in ALL {
            assert_eq!(by_name(t.name), Some(t));
            assert_eq!(ALL.iter().filter(|u| u.name == t.name).count(), 1);
        }
        assert_eq!(by_name("q9"), None);
    }

    #[test]
    fn every_query_parses_as_edn() {
        for t in ALL {
            if let Some(q) = t.query {
                datalith::edn::read_one(q).unwrap_or_else(|e| panic!("{}: {e}", t.name));
            }
            if let Some(i) = t.input {
                datalith::edn::read_one(i).unwrap();
            }
        }
    }
}
