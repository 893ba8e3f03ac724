//! The 22 TPC-H queries as the files in `bench/complex/` hold them: `sql/qNN.sql` (what
//! PostgreSQL runs, and SQLite unless `sql/qNN.sqlite.sql` spells it for SQLite),
//! `datalog/qNN.edn` (the Datalog port: one query, or steps the harness composes, see
//! [`super::steps`]). The files are read at run time, so that the external peers read the
//! very texts the in-process peers run.
//!
//! Parameters that depend on the scale factor are written `{{name}}` and put in here: only
//! Q11's `{{fraction}}` (0.0001 / SF).

use std::path::{Path, PathBuf};

use crate::common::BenchError;

/// Every query's name, in run order.
pub const NAMES: [&str; 22] = [
    "q1", "q2", "q3", "q4", "q5", "q6", "q7", "q8", "q9", "q10", "q11", "q12", "q13", "q14", "q15",
    "q16", "q17", "q18", "q19", "q20", "q21", "q22",
];

/// One query's texts, parameters put in.
#[derive(Debug, Clone)]
pub struct Query {
    pub name: &'static str,
    /// PostgreSQL's text (the spec's, see `PORTS.md` for the few spellings changed).
    pub sql: String,
    /// SQLite's text.
    pub sqlite: String,
    /// The Datalog port's file text.
    pub datalog: String,
    /// Whether the answer's row order is part of it (the query has an `order by`).
    pub ordered: bool,
}

/// `bench/complex` of this repository: found from the working directory up, else beside
/// the crate.
pub fn default_dir() -> PathBuf {
    if let Ok(cwd) = std::env::current_dir() {
        for dir in cwd.ancestors() {
            let candidate = dir.join("bench").join("complex");
            if candidate.join("PORTS.md").is_file() {
                return candidate;
            }
        }
    }
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../bench/complex")
        .to_path_buf()
}

/// The file stem of a query (`q1` is `q01`).
pub fn stem(name: &str) -> String {
    let n: u32 = name.trim_start_matches('q').parse().unwrap_or(0);
    format!("q{n:02}")
}

/// Reads the queries `names` from `dir` for scale factor `sf`.
pub fn load(dir: &Path, names: &[&'static str], sf: f64) -> Result<Vec<Query>, BenchError> {
    let read = |p: PathBuf| std::fs::read_to_string(&p).map_err(BenchError::io(&p));
    // 1 / (10000 SF), not 0.0001 / SF: at SF 0.1 the latter is 0.0009999999999999998.
    let params = [("fraction", format!("{}", 1.0 / (10_000.0 * sf)))];
    let fill = |text: String| {
        params
            .iter()
            .fold(text, |t, (k, v)| t.replace(&format!("{{{{{k}}}}}"), v))
    };
    names
        .iter()
        .map(|&name| {
            let stem = stem(name);
            let sql = fill(read(dir.join("sql").join(format!("{stem}.sql")))?);
            let lite = dir.join("sql").join(format!("{stem}.sqlite.sql"));
            let sqlite = if lite.is_file() {
                fill(read(lite)?)
            } else {
                sql.clone()
            };
            let datalog = fill(read(dir.join("datalog").join(format!("{stem}.edn")))?);
            let ordered = strip_comments(&sql).to_lowercase().contains("order by");
            Ok(Query {
                name,
                sql,
                sqlite,
                datalog,
                ordered,
            })
        })
        .collect()
}

/// The names `list` picks (`q1,q5`), in run order; every name when empty.
pub fn pick(list: &[String]) -> Result<Vec<&'static str>, BenchError> {
    if list.is_empty() {
        return Ok(NAMES.to_vec());
    }
    for n in list {
        if !NAMES.contains(&n.as_str()) {
            return Err(BenchError::Arg {
                arg: "--queries",
                message: format!("unknown query {n} (q1 .. q22)"),
            });
        }
    }
    Ok(NAMES
        .iter()
        .copied()
        .filter(|n| list.iter().any(|l| l == n))
        .collect())
}

/// SQL text without its `--` comments.
fn strip_comments(sql: &str) -> String {
    sql.lines()
        .map(|l| l.split("--").next().unwrap_or(""))
        .collect::<Vec<_>>()
        .join("\n")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_query_file_is_there() {
        let qs = load(&default_dir(), &NAMES, 0.1).expect("bench/complex files");
        assert_eq!(qs.len(), 22);
        for q in &qs {
            assert!(!q.sql.contains("{{"), "{}: a parameter left", q.name);
            assert!(!q.datalog.contains("{{"), "{}: a parameter left", q.name);
        }
        let unordered: Vec<&str> = qs.iter().filter(|q| !q.ordered).map(|q| q.name).collect();
        assert_eq!(unordered, ["q6", "q14", "q17", "q19"]);
        assert!(qs[10].sql.contains("* 0.001\n"), "q11's fraction at SF 0.1");
    }

    #[test]
    fn names() {
        assert_eq!(stem("q1"), "q01");
        assert_eq!(stem("q22"), "q22");
        assert_eq!(pick(&["q5".into(), "q1".into()]).unwrap(), ["q1", "q5"]);
        assert!(pick(&["q23".into()]).is_err());
    }
}
