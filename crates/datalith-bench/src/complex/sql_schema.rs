//! The SQL tables of both SQL peers, from [`TABLES`]: the spec's primary keys, and an index
//! on every foreign key column (the "TPC-H indexes on keys": what a user of either engine
//! would create; no other index, as Datalith's AVE is its only other access path).

use super::tables::{Kind, TABLES};

/// Which engine the DDL is for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Dialect {
    Sqlite,
    Postgres,
}

fn type_of(kind: Kind, d: Dialect) -> &'static str {
    match (kind, d) {
        (Kind::Key | Kind::Ref(_) | Kind::Int, _) => "INTEGER",
        // SQLite keeps doubles; PostgreSQL the spec's exact decimal.
        (Kind::Decimal, Dialect::Sqlite) => "REAL",
        (Kind::Decimal, Dialect::Postgres) => "NUMERIC(15,2)",
        (Kind::Date, Dialect::Sqlite) => "TEXT",
        (Kind::Date, Dialect::Postgres) => "DATE",
        // Not the spec's CHAR(n): a padded CHAR would compare and print differently in the
        // two engines; the generated values have no trailing blanks.
        (Kind::Text, Dialect::Sqlite) => "TEXT",
        (Kind::Text, Dialect::Postgres) => "VARCHAR",
    }
}

/// `CREATE TABLE` statements (keys included).
pub fn create_tables(d: Dialect) -> Vec<String> {
    TABLES
        .iter()
        .map(|t| {
            let cols: Vec<String> = t
                .columns
                .iter()
                .map(|c| format!("{} {} NOT NULL", c.sql, type_of(c.kind, d)))
                .collect();
            format!(
                "CREATE TABLE {} ({}, PRIMARY KEY ({}))",
                t.sql,
                cols.join(", "),
                t.primary_key.join(", ")
            )
        })
        .collect()
}

/// `CREATE INDEX` on each foreign key column (after the load: faster than maintained).
pub fn create_indexes() -> Vec<String> {
    TABLES
        .iter()
        .flat_map(|t| {
            t.columns
                .iter()
                .filter(|c| matches!(c.kind, Kind::Ref(_)))
                .map(move |c| format!("CREATE INDEX {0}_{1} ON {0} ({1})", t.sql, c.sql))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ddl() {
        let t = create_tables(Dialect::Postgres);
        assert_eq!(t.len(), 8);
        assert!(t[7].contains("l_quantity NUMERIC(15,2) NOT NULL"));
        assert!(t[7].ends_with("PRIMARY KEY (l_orderkey, l_linenumber))"));
        let i = create_indexes();
        assert!(i.contains(&"CREATE INDEX lineitem_l_partkey ON lineitem (l_partkey)".to_string()));
        assert_eq!(i.len(), 9);
    }
}
