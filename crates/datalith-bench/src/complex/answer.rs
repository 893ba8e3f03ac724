//! Answers as every peer's rows normalized to one shape, and their comparison with the
//! reference's (PostgreSQL's, or SQLite's without it).
//!
//! Normalizing: a number (integer, decimal, double; also text that reads as one, as SQL
//! engines print them) is an `f64`; a date is its `YYYY-MM-DD` text (Datalith's instants
//! at midnight UTC); everything else is text; SQL `NULL` and Datalog `nil` are `Null`.
//! Comparing: same row count; when the query orders, row by row in order, otherwise both
//! sides sorted first; numbers equal within a relative 1e-9 (a double's sum of two-decimal
//! values against PostgreSQL's exact `NUMERIC`: the spec's decimals are printed exactly, the
//! averages with 16 digits or more), the rest exactly. SQL's single all-`NULL` row of an
//! aggregate over no rows equals an empty answer (Datalog returns nothing then).

use std::cmp::Ordering;
use std::fmt::Write as _;

use datalith::edn::Edn;

/// Relative tolerance of a number.
pub const REL_TOL: f64 = 1e-9;
/// Absolute tolerance near zero (below the spec's cents by far).
pub const ABS_TOL: f64 = 1e-9;

/// One value of an answer.
#[derive(Debug, Clone, PartialEq)]
pub enum Cell {
    Null,
    Num(f64),
    Text(String),
}

impl Cell {
    /// A value printed as text (SQL engines' text protocol, strings).
    pub fn from_text(s: &str) -> Cell {
        let t = s.trim_end();
        match t.parse::<f64>() {
            // "NaN"/"inf" are words, not the engines' numbers.
            Ok(x) if x.is_finite() && t.bytes().any(|b| b.is_ascii_digit()) => Cell::Num(x),
            _ => Cell::Text(t.to_string()),
        }
    }

    fn cmp_total(&self, other: &Cell) -> Ordering {
        match (self, other) {
            (Cell::Null, Cell::Null) => Ordering::Equal,
            (Cell::Null, _) => Ordering::Less,
            (_, Cell::Null) => Ordering::Greater,
            (Cell::Num(a), Cell::Num(b)) => a.total_cmp(b),
            (Cell::Num(_), Cell::Text(_)) => Ordering::Less,
            (Cell::Text(_), Cell::Num(_)) => Ordering::Greater,
            (Cell::Text(a), Cell::Text(b)) => a.cmp(b),
        }
    }

    fn close(&self, other: &Cell) -> bool {
        match (self, other) {
            (Cell::Num(a), Cell::Num(b)) => {
                (a - b).abs() <= REL_TOL * a.abs().max(b.abs()) + ABS_TOL
            }
            (a, b) => a == b,
        }
    }
}

impl std::fmt::Display for Cell {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Cell::Null => f.write_str("NULL"),
            Cell::Num(x) => write!(f, "{x}"),
            Cell::Text(s) => write!(f, "{s:?}"),
        }
    }
}

/// A query's rows.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Answer {
    pub rows: Vec<Vec<Cell>>,
}

impl Answer {
    /// A Datalith result: a relation (set or vector of vectors), a collection, a tuple or a
    /// scalar (`nil`: no rows).
    pub fn from_edn(result: &Edn) -> Answer {
        let rows = match result {
            Edn::Nil => Vec::new(),
            Edn::Set(items) | Edn::Vector(items) | Edn::List(items)
                if items
                    .iter()
                    .all(|i| matches!(i, Edn::Vector(_) | Edn::List(_))) =>
            {
                items
                    .iter()
                    .map(|i| match i {
                        Edn::Vector(r) | Edn::List(r) => r.iter().map(cell_of_edn).collect(),
                        _ => unreachable!("checked above"),
                    })
                    .collect()
            }
            // A collection (`[?x ...]`): one value a row. A tuple (`[?a ?b]`) would be read
            // as a one-row relation's values: the ports write tuples as relations of one row
            // or as scalars, never as a find tuple, so this branch is collections only.
            Edn::Set(items) | Edn::Vector(items) => {
                items.iter().map(|i| vec![cell_of_edn(i)]).collect()
            }
            scalar => vec![vec![cell_of_edn(scalar)]],
        };
        Answer { rows }
    }

    /// The first rows as text, for a report.
    pub fn preview(&self, n: usize) -> String {
        let mut s = String::new();
        for r in self.rows.iter().take(n) {
            let cells: Vec<String> = r.iter().map(|c| c.to_string()).collect();
            let _ = write!(s, "[{}] ", cells.join(", "));
        }
        if self.rows.len() > n {
            let _ = write!(s, "... ({} rows)", self.rows.len());
        }
        s
    }

    fn without_null_rows(&self) -> Vec<Vec<Cell>> {
        if self.rows.len() == 1 && self.rows[0].iter().all(|c| *c == Cell::Null) {
            Vec::new()
        } else {
            self.rows.clone()
        }
    }
}

/// One Datalith value as a cell.
pub fn cell_of_edn(v: &Edn) -> Cell {
    match v {
        Edn::Nil => Cell::Null,
        Edn::Long(x) => Cell::Num(*x as f64),
        Edn::BigInt(x) => Cell::Num(*x as f64),
        Edn::Double(x) => Cell::Num(*x),
        Edn::Bool(b) => Cell::Text(b.to_string()),
        Edn::String(s) => Cell::from_text(s),
        Edn::Inst(ms) => Cell::Text(super::tables::date_from_days(ms.div_euclid(86_400_000))),
        Edn::Keyword(k) => Cell::Text(k.to_string()),
        other => Cell::from_text(&other.to_string()),
    }
}

/// Whether `got` is `reference`'s answer; `Err` says the first difference.
pub fn compare(reference: &Answer, got: &Answer, ordered: bool) -> Result<(), String> {
    let mut want = reference.without_null_rows();
    let mut have = got.without_null_rows();
    if want.len() != have.len() {
        return Err(format!(
            "{} rows, expected {} (got {}; expected {})",
            have.len(),
            want.len(),
            got.preview(3),
            reference.preview(3)
        ));
    }
    if !ordered {
        let key = |a: &Vec<Cell>, b: &Vec<Cell>| {
            a.iter()
                .zip(b)
                .map(|(x, y)| x.cmp_total(y))
                .find(|o| *o != Ordering::Equal)
                .unwrap_or(a.len().cmp(&b.len()))
        };
        want.sort_by(key);
        have.sort_by(key);
    }
    for (i, (w, h)) in want.iter().zip(&have).enumerate() {
        if w.len() != h.len() {
            return Err(format!(
                "row {i}: {} columns, expected {}",
                h.len(),
                w.len()
            ));
        }
        if let Some(j) = (0..w.len()).find(|&j| !w[j].close(&h[j])) {
            return Err(format!(
                "row {i} column {j}: {} where {} was expected",
                h[j], w[j]
            ));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use datalith::edn::read_one;

    fn rows(text: &[&[&str]]) -> Answer {
        Answer {
            rows: text
                .iter()
                .map(|r| r.iter().map(|c| Cell::from_text(c)).collect())
                .collect(),
        }
    }

    #[test]
    fn cells_from_text() {
        let cases = [
            ("12", Cell::Num(12.0)),
            ("0.0500000000000000", Cell::Num(0.05)),
            ("-3.5", Cell::Num(-3.5)),
            ("1995-03-15", Cell::Text("1995-03-15".into())),
            ("BRAZIL", Cell::Text("BRAZIL".into())),
            ("NaN", Cell::Text("NaN".into())),
            ("inf", Cell::Text("inf".into())),
        ];
        for (t, want) in cases {
            assert_eq!(Cell::from_text(t), want, "{t}");
        }
    }

    #[test]
    fn edn_results() {
        let cases = [
            (r#"#{["A" 1 2.5] ["B" 2 3.0]}"#, 2, 3),
            (r#"[["A" #inst "1995-03-15T00:00:00.000-00:00"]]"#, 1, 2),
            ("12.5", 1, 1),
            ("nil", 0, 0),
            (r#"["x" "y" "z"]"#, 3, 1),
        ];
        for (text, n, width) in cases {
            let a = Answer::from_edn(&read_one(text).unwrap());
            assert_eq!(a.rows.len(), n, "{text}");
            assert!(a.rows.iter().all(|r| r.len() == width), "{text}");
        }
        let a = Answer::from_edn(&read_one(r#"[#inst "1995-03-15T00:00:00.000-00:00"]"#).unwrap());
        assert_eq!(a.rows[0][0], Cell::Text("1995-03-15".into()));
    }

    #[test]
    fn comparisons() {
        let pg = rows(&[&["A", "10.0000"], &["B", "0.333333333333333333"]]);
        let close = rows(&[&["A", "10.000000000001"], &["B", "0.3333333333333333"]]);
        let swapped = rows(&[&["B", "0.3333333333333333"], &["A", "10"]]);
        let off = rows(&[&["A", "10.01"], &["B", "0.3333333333333333"]]);
        let short = rows(&[&["A", "10"]]);
        assert!(compare(&pg, &close, true).is_ok());
        assert!(compare(&pg, &swapped, false).is_ok());
        assert!(compare(&pg, &swapped, true).is_err());
        assert!(compare(&pg, &off, false).is_err());
        assert!(compare(&pg, &short, false).is_err());
        let null_row = Answer {
            rows: vec![vec![Cell::Null]],
        };
        assert!(compare(&null_row, &Answer::default(), false).is_ok());
    }
}
