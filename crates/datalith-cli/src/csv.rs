//! CSV import: a header row, then one entity per row. Each column maps to an attribute (by
//! default the attribute named like the header, `name` -> `:name`; or as given,
//! `name=:person/name`); cells are converted to the attribute's value type; empty cells are
//! skipped; cardinality-many cells hold several values separated by `;`.

use datalith::codec::{Keyword, ValueType};
use datalith::edn::{parse_inst, read_one, Edn};
use datalith::store::Schema;

use crate::error::{CliError, Result};

/// Splits CSV text into records (RFC 4180: quoted fields, doubled quotes, CRLF).
#[cfg(test)]
pub fn parse(text: &str) -> Result<Vec<Vec<String>>> {
    Ok(parse_with_lines(text)?
        .into_iter()
        .map(|(_, r)| r)
        .collect())
}

/// [`parse`], each record with the line it starts on (a quoted field may span lines, and
/// blank lines are skipped, so the record's index does not give it).
pub fn parse_with_lines(text: &str) -> Result<Vec<(usize, Vec<String>)>> {
    let mut records = Vec::new();
    let mut record_line = 1;
    let mut record = Vec::new();
    let mut field = String::new();
    let mut chars = text.chars().peekable();
    let mut line = 1;
    let mut in_quotes = false;
    let mut any = false;
    while let Some(c) = chars.next() {
        any = true;
        if in_quotes {
            match c {
                '"' if chars.peek() == Some(&'"') => {
                    chars.next();
                    field.push('"');
                }
                '"' => in_quotes = false,
                '\n' => {
                    line += 1;
                    field.push(c);
                }
                _ => field.push(c),
            }
            continue;
        }
        match c {
            '"' if field.is_empty() => in_quotes = true,
            ',' => record.push(std::mem::take(&mut field)),
            '\r' if chars.peek() == Some(&'\n') => {}
            '\n' => {
                record.push(std::mem::take(&mut field));
                records.push((record_line, std::mem::take(&mut record)));
                line += 1;
                record_line = line;
                any = false;
            }
            _ => field.push(c),
        }
    }
    if in_quotes {
        return Err(CliError::user(format!(
            "csv: line {line}: a quoted field is not closed"
        )));
    }
    if any {
        record.push(field);
        records.push((record_line, record));
    }
    records.retain(|(_, r)| !(r.len() == 1 && r[0].is_empty()));
    Ok(records)
}

/// `s` as an EDN string literal, for messages.
fn quoted(s: &str) -> String {
    Edn::String(s.to_string()).to_string()
}

/// Converts one cell to the EDN value of `ty`.
pub fn cell_value(cell: &str, ty: ValueType) -> std::result::Result<Edn, String> {
    let t = cell.trim();
    let bad = || format!("{} is not a {}", quoted(t), ty.ident());
    Ok(match ty {
        ValueType::String => Edn::String(cell.to_string()),
        ValueType::Long | ValueType::Ref => Edn::Long(t.parse().map_err(|_| bad())?),
        ValueType::Double | ValueType::Float => Edn::Double(t.parse().map_err(|_| bad())?),
        ValueType::Boolean => match t {
            "true" | "TRUE" | "True" | "1" => Edn::Bool(true),
            "false" | "FALSE" | "False" | "0" => Edn::Bool(false),
            _ => return Err(bad()),
        },
        ValueType::Keyword => Edn::Keyword(Keyword::parse(t)),
        ValueType::Symbol => Edn::Symbol(Keyword::parse(t)),
        ValueType::Instant => Edn::Inst(parse_inst(t).ok_or_else(bad)?),
        ValueType::Uuid => read_one(&format!("#uuid \"{t}\"")).map_err(|_| bad())?,
        _ => read_one(t).map_err(|e| format!("{}: {e}", quoted(t)))?,
    })
}

/// Tx data (one map per row) for CSV `text`, with `mapping` of `column=:attr` pairs
/// overriding the header names.
pub fn tx_data(text: &str, mapping: &[(String, String)], schema: &Schema) -> Result<Vec<Edn>> {
    let records = parse_with_lines(text)?;
    let Some(((_, header), rows)) = records.split_first() else {
        return Ok(Vec::new());
    };
    let mut columns = Vec::new();
    for h in header {
        let name = mapping
            .iter()
            .find(|(c, _)| c == h.trim())
            .map_or_else(|| h.trim().to_string(), |(_, a)| a.clone());
        if name == "-" {
            columns.push(None);
            continue;
        }
        let kw = Keyword::parse(&name);
        let attr = schema.by_ident(&kw).ok_or_else(|| {
            CliError::user(format!(
                "csv: column {} maps to {kw}, which is not an attribute (map it with {h}=:attr, or skip it with {h}=-)",
                quoted(h)
            ))
        })?;
        columns.push(Some(attr.clone()));
    }
    let mut out = Vec::with_capacity(rows.len());
    for (line, row) in rows {
        // A row with more or fewer cells than the header is refused, not padded or cut: the
        // cells of a ragged row cannot be told apart from shifted columns.
        if row.len() != header.len() {
            return Err(CliError::user(format!(
                "csv: line {line}: {} cells where the header has {} columns (an empty cell is still written, as nothing between two commas)",
                row.len(),
                header.len()
            )));
        }
        let mut pairs = Vec::new();
        for (c, cell) in row.iter().enumerate() {
            let Some(Some(attr)) = columns.get(c) else {
                continue;
            };
            if cell.is_empty() {
                continue;
            }
            let conv = |s: &str| {
                cell_value(s, attr.value_type)
                    .map_err(|m| CliError::user(format!("csv: line {line}: column {}: {m}", c + 1)))
            };
            let v = if attr.is_many() {
                Edn::Set(cell.split(';').map(conv).collect::<Result<_>>()?)
            } else {
                conv(cell)?
            };
            pairs.push((Edn::Keyword(attr.ident.clone()), v));
        }
        if !pairs.is_empty() {
            out.push(Edn::Map(pairs));
        }
    }
    Ok(out)
}

/// Parses `col=:attr` mapping arguments.
pub fn mapping(args: &[String]) -> Result<Vec<(String, String)>> {
    args.iter()
        .map(|a| {
            a.split_once('=')
                .map(|(c, v)| (c.trim().to_string(), v.trim().to_string()))
                .ok_or_else(|| {
                    CliError::user(format!("mapping {} is not column=:attribute", quoted(a)))
                })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn records() {
        let cases: &[(&str, &[&[&str]])] = &[
            ("a,b\n1,2\n", &[&["a", "b"], &["1", "2"]]),
            (
                "a,b\r\n\"x,\"\"y\"\"\",\n",
                &[&["a", "b"], &["x,\"y\"", ""]],
            ),
            ("a\n\"multi\nline\"", &[&["a"], &["multi\nline"]]),
        ];
        for (text, want) in cases {
            let got = parse(text).unwrap();
            let want: Vec<Vec<String>> = want
                .iter()
                .map(|r| r.iter().map(|s| s.to_string()).collect())
                .collect();
            assert_eq!(got, want, "{text:?}");
        }
        assert!(parse("a\n\"open").is_err());
    }

    #[test]
    fn ragged_rows_are_refused_naming_their_line() {
        let schema = Schema::default();
        let cases = [
            // A quoted field over two lines and a blank line: the bad row is still named by
            // the line it starts on.
            (
                "a,b\n\"x\ny\",1\n\n3\n",
                "csv: line 5: 1 cells where the header has 2 columns",
            ),
            (
                "a,b\n1,2,3\n",
                "csv: line 2: 3 cells where the header has 2 columns",
            ),
        ];
        for (text, want) in cases {
            let mapping = [
                ("a".to_string(), "-".to_string()),
                ("b".to_string(), "-".to_string()),
            ];
            let e = tx_data(text, &mapping, &schema).unwrap_err();
            assert!(e.message.starts_with(want), "{text:?}: {}", e.message);
        }
        let ok = tx_data(
            "a,b\n,\n",
            &[("a".into(), "-".into()), ("b".into(), "-".into())],
            &schema,
        );
        assert!(ok.unwrap().is_empty(), "empty cells are not ragged");
    }

    #[test]
    fn cells() {
        let cases: &[(&str, ValueType, Option<Edn>)] = &[
            ("42", ValueType::Long, Some(Edn::Long(42))),
            ("x", ValueType::Long, None),
            ("2.5", ValueType::Double, Some(Edn::Double(2.5))),
            (":male", ValueType::Keyword, Some(Edn::kw(":male"))),
            ("male", ValueType::Keyword, Some(Edn::kw(":male"))),
            ("true", ValueType::Boolean, Some(Edn::Bool(true))),
            (" a ", ValueType::String, Some(Edn::String(" a ".into()))),
        ];
        for (cell, ty, want) in cases {
            assert_eq!(cell_value(cell, *ty).ok(), *want, "{cell} {ty:?}");
        }
    }
}
