//! Tab completion of dot-commands, `.mode` values, attribute idents and query keywords.

use std::sync::{Arc, RwLock};

use rustyline::completion::{Completer, Pair};
use rustyline::highlight::Highlighter;
use rustyline::hint::Hinter;
use rustyline::validate::Validator;
use rustyline::{Context, Helper};

/// Every dot-command, for completion and `.help`.
pub const DOT_COMMANDS: &[&str] = &[
    ".as-of", ".attrs", ".backup", ".dump", ".exit", ".explain", ".help", ".history", ".import",
    ".mode", ".now", ".open", ".output", ".pull", ".quit", ".read", ".schema", ".since", ".stat",
    ".timer",
];

const QUERY_WORDS: &[&str] = &[
    ":find",
    ":in",
    ":where",
    ":keys",
    ":strs",
    ":syms",
    ":with",
    ":db/add",
    ":db/retract",
    ":db/retractEntity",
    ":db/cas",
    ":db/id",
    ":db/ident",
    ":db/valueType",
    ":db/cardinality",
    ":db/unique",
    ":db/isComponent",
    ":db/doc",
    ":db.type/string",
    ":db.type/long",
    ":db.type/double",
    ":db.type/boolean",
    ":db.type/keyword",
    ":db.type/ref",
    ":db.type/instant",
    ":db.type/uuid",
    ":db.cardinality/one",
    ":db.cardinality/many",
    ":db.unique/identity",
    ":db.unique/value",
];

/// The shell's line-editor helper.
pub struct ShellHelper {
    /// Attribute idents of the current schema (refreshed after transactions).
    pub attrs: Arc<RwLock<Vec<String>>>,
}

fn word_start(line: &str, pos: usize) -> usize {
    line[..pos]
        .rfind(|c: char| c.is_whitespace() || "[](){}#\"".contains(c))
        .map_or(0, |i| i + 1)
}

impl ShellHelper {
    /// Candidates for the word ending at `pos`.
    pub fn candidates(&self, line: &str, pos: usize) -> (usize, Vec<String>) {
        let start = word_start(line, pos);
        let word = &line[start..pos];
        let before = line[..start].trim();
        let pick = |items: &mut dyn Iterator<Item = String>| -> Vec<String> {
            let mut v: Vec<String> = items.filter(|c| c.starts_with(word)).collect();
            v.sort();
            v.dedup();
            v
        };
        if before.is_empty() && word.starts_with('.') {
            return (start, pick(&mut DOT_COMMANDS.iter().map(|s| s.to_string())));
        }
        if before == ".mode" {
            return (
                start,
                pick(
                    &mut ["table", "edn", "json", "csv"]
                        .iter()
                        .map(|s| s.to_string()),
                ),
            );
        }
        if before == ".timer" {
            return (
                start,
                pick(&mut ["on", "off"].iter().map(|s| s.to_string())),
            );
        }
        if word.starts_with(':') {
            let attrs = self.attrs.read().unwrap_or_else(|p| p.into_inner()).clone();
            return (
                start,
                pick(
                    &mut attrs
                        .into_iter()
                        .chain(QUERY_WORDS.iter().map(|s| s.to_string())),
                ),
            );
        }
        (start, Vec::new())
    }
}

impl Completer for ShellHelper {
    type Candidate = Pair;

    fn complete(
        &self,
        line: &str,
        pos: usize,
        _ctx: &Context<'_>,
    ) -> rustyline::Result<(usize, Vec<Pair>)> {
        let (start, found) = self.candidates(line, pos);
        Ok((
            start,
            found
                .into_iter()
                .map(|c| Pair {
                    display: c.clone(),
                    replacement: c,
                })
                .collect(),
        ))
    }
}

impl Hinter for ShellHelper {
    type Hint = String;
}

impl Highlighter for ShellHelper {}

impl Validator for ShellHelper {}

impl Helper for ShellHelper {}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn completes() {
        let h = ShellHelper {
            attrs: Arc::new(RwLock::new(vec![":name".into(), ":last-name".into()])),
        };
        let cases: &[(&str, usize, Vec<&str>)] = &[
            (".sc", 0, vec![".schema"]),
            (".mode j", 6, vec!["json"]),
            ("[:find ?e :where [?e :na", 21, vec![":name"]),
            ("[:find ?e :w", 10, vec![":where", ":with"]),
        ];
        for (line, start, want) in cases {
            let (s, got) = h.candidates(line, line.len());
            assert_eq!(
                (s, got),
                (*start, want.iter().map(|x| x.to_string()).collect()),
                "{line}"
            );
        }
    }
}
