//! The eight TPC-H tables as every loader sees them: column names, their kinds, and the
//! Datalith attribute each becomes. One table of facts, so that the `.tbl` reader, the
//! Datalith schema, SQLite's and PostgreSQL's DDL cannot disagree about a column.

/// What a column holds, and so how each store types it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// The table's own key: a unique identity long in Datalith, the primary key in SQL.
    Key,
    /// A foreign key to the table named: a ref in Datalith, an integer with an index in SQL.
    Ref(&'static str),
    /// A small integer (sizes, quantities available, line numbers).
    Int,
    /// Money and quantities: `DECIMAL(15,2)` in the spec; a double in Datalith and SQLite,
    /// `NUMERIC(15,2)` in PostgreSQL (the reference keeps the spec's exact type).
    Decimal,
    /// A date (`YYYY-MM-DD`): an instant at midnight UTC in Datalith, text in SQLite, `DATE`
    /// in PostgreSQL.
    Date,
    /// Text.
    Text,
}

/// One column: its SQL name, its Datalith attribute name (`None` for a composite key's
/// part that is a ref under another name), its kind.
#[derive(Debug, Clone, Copy)]
pub struct Column {
    pub sql: &'static str,
    /// The attribute's name in the table's namespace (`:lineitem/quantity`).
    pub attr: &'static str,
    pub kind: Kind,
}

/// One table: its SQL name (also the `.tbl` file's), its Datalith namespace, its columns in
/// file order, its primary key columns (SQL).
#[derive(Debug, Clone, Copy)]
pub struct Table {
    pub sql: &'static str,
    pub ns: &'static str,
    pub columns: &'static [Column],
    pub primary_key: &'static [&'static str],
}

const fn c(sql: &'static str, attr: &'static str, kind: Kind) -> Column {
    Column { sql, attr, kind }
}

use Kind::*;

/// Every table, parents before children (the load order; SQL foreign keys point back).
pub const TABLES: [Table; 8] = [
    Table {
        sql: "region",
        ns: "region",
        columns: &[
            c("r_regionkey", "key", Key),
            c("r_name", "name", Text),
            c("r_comment", "comment", Text),
        ],
        primary_key: &["r_regionkey"],
    },
    Table {
        sql: "nation",
        ns: "nation",
        columns: &[
            c("n_nationkey", "key", Key),
            c("n_name", "name", Text),
            c("n_regionkey", "region", Ref("region")),
            c("n_comment", "comment", Text),
        ],
        primary_key: &["n_nationkey"],
    },
    Table {
        sql: "part",
        ns: "part",
        columns: &[
            c("p_partkey", "key", Key),
            c("p_name", "name", Text),
            c("p_mfgr", "mfgr", Text),
            c("p_brand", "brand", Text),
            c("p_type", "type", Text),
            c("p_size", "size", Int),
            c("p_container", "container", Text),
            c("p_retailprice", "retailprice", Decimal),
            c("p_comment", "comment", Text),
        ],
        primary_key: &["p_partkey"],
    },
    Table {
        sql: "supplier",
        ns: "supplier",
        columns: &[
            c("s_suppkey", "key", Key),
            c("s_name", "name", Text),
            c("s_address", "address", Text),
            c("s_nationkey", "nation", Ref("nation")),
            c("s_phone", "phone", Text),
            c("s_acctbal", "acctbal", Decimal),
            c("s_comment", "comment", Text),
        ],
        primary_key: &["s_suppkey"],
    },
    Table {
        sql: "partsupp",
        ns: "partsupp",
        columns: &[
            c("ps_partkey", "part", Ref("part")),
            c("ps_suppkey", "supplier", Ref("supplier")),
            c("ps_availqty", "availqty", Int),
            c("ps_supplycost", "supplycost", Decimal),
            c("ps_comment", "comment", Text),
        ],
        primary_key: &["ps_partkey", "ps_suppkey"],
    },
    Table {
        sql: "customer",
        ns: "customer",
        columns: &[
            c("c_custkey", "key", Key),
            c("c_name", "name", Text),
            c("c_address", "address", Text),
            c("c_nationkey", "nation", Ref("nation")),
            c("c_phone", "phone", Text),
            c("c_acctbal", "acctbal", Decimal),
            c("c_mktsegment", "mktsegment", Text),
            c("c_comment", "comment", Text),
        ],
        primary_key: &["c_custkey"],
    },
    Table {
        sql: "orders",
        ns: "order",
        columns: &[
            c("o_orderkey", "key", Key),
            c("o_custkey", "customer", Ref("customer")),
            c("o_orderstatus", "orderstatus", Text),
            c("o_totalprice", "totalprice", Decimal),
            c("o_orderdate", "orderdate", Date),
            c("o_orderpriority", "orderpriority", Text),
            c("o_clerk", "clerk", Text),
            c("o_shippriority", "shippriority", Int),
            c("o_comment", "comment", Text),
        ],
        primary_key: &["o_orderkey"],
    },
    Table {
        sql: "lineitem",
        ns: "lineitem",
        columns: &[
            c("l_orderkey", "order", Ref("orders")),
            c("l_partkey", "part", Ref("part")),
            c("l_suppkey", "supplier", Ref("supplier")),
            c("l_linenumber", "linenumber", Int),
            c("l_quantity", "quantity", Decimal),
            c("l_extendedprice", "extendedprice", Decimal),
            c("l_discount", "discount", Decimal),
            c("l_tax", "tax", Decimal),
            c("l_returnflag", "returnflag", Text),
            c("l_linestatus", "linestatus", Text),
            c("l_shipdate", "shipdate", Date),
            c("l_commitdate", "commitdate", Date),
            c("l_receiptdate", "receiptdate", Date),
            c("l_shipinstruct", "shipinstruct", Text),
            c("l_shipmode", "shipmode", Text),
            c("l_comment", "comment", Text),
        ],
        primary_key: &["l_orderkey", "l_linenumber"],
    },
];

/// Days since 1970-01-01 of a `YYYY-MM-DD` date (proleptic Gregorian), or `None` when the
/// text is not one. (Howard Hinnant's `days_from_civil`.)
pub fn days_from_date(text: &str) -> Option<i64> {
    let b = text.as_bytes();
    if b.len() != 10 || b[4] != b'-' || b[7] != b'-' {
        return None;
    }
    let y: i64 = text[0..4].parse().ok()?;
    let m: i64 = text[5..7].parse().ok()?;
    let d: i64 = text[8..10].parse().ok()?;
    if !(1..=12).contains(&m) || !(1..=31).contains(&d) {
        return None;
    }
    let y = if m <= 2 { y - 1 } else { y };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let mp = (m + 9) % 12;
    let doy = (153 * mp + 2) / 5 + d - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    Some(era * 146_097 + doe - 719_468)
}

/// `YYYY-MM-DD` of a day count since 1970-01-01 (the inverse of [`days_from_date`]).
pub fn date_from_days(z: i64) -> String {
    let z = z + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let y = yoe + era * 400;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    let y = if m <= 2 { y + 1 } else { y };
    format!("{y:04}-{m:02}-{d:02}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dates_round_trip() {
        let cases = [
            ("1970-01-01", 0),
            ("1992-01-01", 8035),
            ("1998-12-01", 10561),
            ("2000-02-29", 11016),
            ("1969-12-31", -1),
        ];
        for (text, days) in cases {
            assert_eq!(days_from_date(text), Some(days), "{text}");
            assert_eq!(date_from_days(days), text, "{days}");
        }
        assert_eq!(days_from_date("1998-13-01"), None);
        assert_eq!(days_from_date("19981201"), None);
    }

    fn table(sql: &str) -> Option<&'static Table> {
        TABLES.iter().find(|t| t.sql == sql)
    }

    #[test]
    fn every_ref_names_a_table_and_keys_come_first() {
        for t in &TABLES {
            for c in t.columns {
                if let Kind::Ref(to) = c.kind {
                    let target = table(to).expect("ref target");
                    assert!(target.columns.iter().any(|c| c.kind == Kind::Key), "{to}");
                }
            }
            for k in t.primary_key {
                assert!(t.columns.iter().any(|c| c.sql == *k), "{k}");
            }
        }
    }
}
