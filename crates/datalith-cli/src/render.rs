//! Printing query results: EDN (exact: reads back to the same values), JSON, CSV and an
//! aligned table for people.

use std::cmp::Ordering;

use datalith::edn::{to_edn_string, to_json, Edn};

use crate::error::{CliError, Result};

/// An output format.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Format {
    /// EDN, exactly as the query returned it.
    Edn,
    /// JSON.
    Json,
    /// Comma-separated values with a header row.
    Csv,
    /// An aligned table with a header.
    Table,
}

impl Format {
    /// Parses `edn`, `json`, `csv` or `table`.
    pub fn parse(s: &str) -> Result<Format> {
        match s {
            "edn" => Ok(Format::Edn),
            "json" => Ok(Format::Json),
            "csv" => Ok(Format::Csv),
            "table" => Ok(Format::Table),
            other => Err(CliError::user(format!(
                "unknown format {other:?} (edn, json, csv or table)"
            ))),
        }
    }

    /// The name of the format.
    pub fn name(self) -> &'static str {
        match self {
            Format::Edn => "edn",
            Format::Json => "json",
            Format::Csv => "csv",
            Format::Table => "table",
        }
    }
}

/// The `:find` elements of a query, printed, to head the columns (empty if the query cannot
/// be read; the query itself reports that error).
pub fn find_headers(query: &Edn) -> Vec<String> {
    let elems: Vec<&Edn> = match query {
        Edn::Vector(items) => items
            .iter()
            .skip_while(|x| x.as_keyword().is_none_or(|k| k.to_string() != ":find"))
            .skip(1)
            .take_while(|x| x.as_keyword().is_none())
            .collect(),
        Edn::Map(pairs) => pairs
            .iter()
            .find(|(k, _)| k.as_keyword().is_some_and(|k| k.to_string() == ":find"))
            .and_then(|(_, v)| v.as_seq())
            .map(|s| s.iter().collect())
            .unwrap_or_default(),
        _ => Vec::new(),
    };
    let mut out = Vec::new();
    for e in elems {
        match e {
            // `[?e ...]` (a collection) heads one column.
            Edn::Vector(inner) => {
                if let Some(first) = inner.first() {
                    out.push(to_edn_string(first));
                }
            }
            Edn::Symbol(s) if s.to_symbol_text() == "." || s.to_symbol_text() == "..." => {}
            other => out.push(to_edn_string(other)),
        }
    }
    out
}

/// Rows and a header: a relation (set or vector of vectors or maps), a collection (one
/// column), a tuple (one row) or a scalar (one cell).
pub fn rows(result: &Edn, headers: &[String]) -> (Vec<String>, Vec<Vec<Edn>>) {
    let header = |n: usize| -> Vec<String> {
        (0..n)
            .map(|i| {
                headers
                    .get(i)
                    .cloned()
                    .unwrap_or_else(|| format!("col{}", i + 1))
            })
            .collect()
    };
    match result {
        Edn::Set(items) | Edn::Vector(items) | Edn::List(items)
            if items.iter().all(|r| matches!(r, Edn::Vector(_))) && !items.is_empty() =>
        {
            let rows: Vec<Vec<Edn>> = items
                .iter()
                .map(|r| r.as_seq().map(|s| s.to_vec()).unwrap_or_default())
                .collect();
            let n = rows.iter().map(Vec::len).max().unwrap_or(0);
            if headers.len() == 1 && n > 1 && matches!(result, Edn::Vector(_)) {
                // A tuple result of tuples cannot occur; but `[?x ...]` of tuple values can.
                return (header(1), items.iter().map(|r| vec![r.clone()]).collect());
            }
            (header(n), rows)
        }
        Edn::Set(items) | Edn::Vector(items) | Edn::List(items)
            if items.iter().all(|r| matches!(r, Edn::Map(_))) && !items.is_empty() =>
        {
            let keys: Vec<String> = match &items[0] {
                Edn::Map(pairs) => pairs.iter().map(|(k, _)| to_edn_string(k)).collect(),
                _ => Vec::new(),
            };
            let rows = items
                .iter()
                .map(|r| match r {
                    Edn::Map(pairs) => pairs.iter().map(|(_, v)| v.clone()).collect(),
                    _ => Vec::new(),
                })
                .collect();
            (keys, rows)
        }
        Edn::Set(items) | Edn::List(items) => {
            (header(1), items.iter().map(|x| vec![x.clone()]).collect())
        }
        Edn::Vector(items) if headers.len() == items.len() && headers.len() > 1 => {
            (header(items.len()), vec![items.clone()])
        }
        Edn::Vector(items) => (header(1), items.iter().map(|x| vec![x.clone()]).collect()),
        Edn::Nil => (header(1), Vec::new()),
        other => (header(1), vec![vec![other.clone()]]),
    }
}

/// A cell as people read it: strings without quotes, everything else as EDN.
pub fn cell(v: &Edn) -> String {
    match v {
        Edn::String(s) => s.clone(),
        other => to_edn_string(other),
    }
}

/// Orders values for display: numbers by value, then everything else by printed text.
pub fn compare(a: &Edn, b: &Edn) -> Ordering {
    fn num(e: &Edn) -> Option<f64> {
        match e {
            Edn::Long(n) => Some(*n as f64),
            Edn::Double(x) => Some(*x),
            Edn::BigInt(n) => Some(*n as f64),
            _ => None,
        }
    }
    match (num(a), num(b)) {
        (Some(x), Some(y)) => x.partial_cmp(&y).unwrap_or(Ordering::Equal),
        (Some(_), None) => Ordering::Less,
        (None, Some(_)) => Ordering::Greater,
        _ => match (a, b) {
            (Edn::Vector(x), Edn::Vector(y)) => {
                for (p, q) in x.iter().zip(y) {
                    let o = compare(p, q);
                    if o != Ordering::Equal {
                        return o;
                    }
                }
                x.len().cmp(&y.len())
            }
            _ => cell(a).cmp(&cell(b)),
        },
    }
}

fn csv_field(s: &str) -> String {
    if s.contains([',', '"', '\n', '\r']) {
        format!("\"{}\"", s.replace('"', "\"\""))
    } else {
        s.to_string()
    }
}

/// Renders `result` of a query whose `:find` headers are `headers`.
pub fn render(result: &Edn, headers: &[String], format: Format) -> String {
    match format {
        Format::Edn => to_edn_string(result) + "\n",
        Format::Json => to_json(result) + "\n",
        Format::Csv => {
            let (head, rows) = sorted_rows(result, headers);
            let mut out = String::new();
            out.push_str(
                &head
                    .iter()
                    .map(|h| csv_field(h))
                    .collect::<Vec<_>>()
                    .join(","),
            );
            out.push('\n');
            for r in rows {
                out.push_str(
                    &r.iter()
                        .map(|c| csv_field(&cell(c)))
                        .collect::<Vec<_>>()
                        .join(","),
                );
                out.push('\n');
            }
            out
        }
        Format::Table => {
            let (head, rows) = sorted_rows(result, headers);
            let cells: Vec<Vec<String>> =
                rows.iter().map(|r| r.iter().map(cell).collect()).collect();
            table(&head, &cells, rows.len())
        }
    }
}

/// Rows sorted for display when the result is a set (a set has no order of its own; a
/// vector keeps the order the query gave it, e.g. `:order-by`).
fn sorted_rows(result: &Edn, headers: &[String]) -> (Vec<String>, Vec<Vec<Edn>>) {
    let (head, mut rows) = rows(result, headers);
    if matches!(result, Edn::Set(_)) {
        rows.sort_by(|a, b| {
            for (x, y) in a.iter().zip(b) {
                let o = compare(x, y);
                if o != Ordering::Equal {
                    return o;
                }
            }
            Ordering::Equal
        });
    }
    (head, rows)
}

/// Most rows a table prints before it says how many it left out.
pub const TABLE_MAX_ROWS: usize = 1000;

/// An aligned table with a count line.
pub fn table(head: &[String], cells: &[Vec<String>], total: usize) -> String {
    let ncols = head
        .len()
        .max(cells.iter().map(Vec::len).max().unwrap_or(0));
    let mut width = vec![0usize; ncols];
    let shown = &cells[..cells.len().min(TABLE_MAX_ROWS)];
    for (i, h) in head.iter().enumerate() {
        width[i] = width[i].max(h.chars().count());
    }
    for r in shown {
        for (i, c) in r.iter().enumerate() {
            width[i] = width[i].max(c.chars().count());
        }
    }
    let line = |r: &[String]| -> String {
        let mut s = String::new();
        for (i, w) in width.iter().enumerate() {
            let c = r.get(i).map_or("", String::as_str);
            if i > 0 {
                s.push_str(" | ");
            }
            s.push_str(c);
            if i + 1 < ncols {
                s.push_str(&" ".repeat(w - c.chars().count()));
            }
        }
        s.trim_end().to_string() + "\n"
    };
    let mut out = line(head);
    out.push_str(
        &width
            .iter()
            .map(|w| "-".repeat(*w))
            .collect::<Vec<_>>()
            .join("-+-"),
    );
    out.push('\n');
    for r in shown {
        out.push_str(&line(r));
    }
    if cells.len() > shown.len() {
        out.push_str(&format!("... {} more rows\n", cells.len() - shown.len()));
    }
    out.push_str(&format!(
        "({total} {})\n",
        if total == 1 { "row" } else { "rows" }
    ));
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use datalith::edn::read_one;

    #[test]
    fn headers_come_from_find() {
        let cases: &[(&str, &[&str])] = &[
            ("[:find ?e ?a :where [?e :age ?a]]", &["?e", "?a"]),
            ("[:find (count ?e) . :where [?e :age]]", &["(count ?e)"]),
            ("[:find [?e ...] :where [?e :age]]", &["?e"]),
            ("{:find [?e] :where [[?e :age]]}", &["?e"]),
        ];
        for (q, want) in cases {
            assert_eq!(find_headers(&read_one(q).unwrap()), *want, "{q}");
        }
    }

    #[test]
    fn formats() {
        let r = read_one(r#"#{[2 "b,c"] [1 "a"]}"#).unwrap();
        let h = vec!["?e".to_string(), "?n".to_string()];
        assert_eq!(render(&r, &h, Format::Csv), "?e,?n\n1,a\n2,\"b,c\"\n");
        assert_eq!(
            render(&r, &h, Format::Table),
            "?e | ?n\n---+----\n1  | a\n2  | b,c\n(2 rows)\n"
        );
        assert_eq!(
            render(&read_one("42").unwrap(), &[], Format::Csv),
            "col1\n42\n"
        );
    }
}
