//! The commands the documents show a user, read out of the documents themselves, so that a
//! test can run or parse each one and a document can never drift from the program again.
//!
//! A command is found in a fenced code block (one per line, `\` continues a line, a ` #` comment
//! ends it) or in an inline code span (which may wrap across lines of a paragraph). Only the
//! workspace's own programs are collected: `datalith ...`, `datalith-bench ...`, and
//! `cargo run [...] -p <crate> [...] -- ...` for the crates that build them.
//!
//! A lone `...` argument is the document's "and so on": it is dropped, not passed on.

use std::path::{Path, PathBuf};

use clap::error::ErrorKind;

/// The documents a user reads, relative to the workspace root (with every page of
/// `USER_DOCUMENT_DIRS`).
pub const USER_DOCUMENTS: &[&str] = &[
    "README.md",
    "ARCHITECTURE.md",
    "crates/datalith-bench/README.md",
    "bench/peers/README.md",
    "crates/datalith-server/README.md",
];

/// Folders whose every Markdown page is a user document (the user guide, the measurements),
/// read from the folder so that a new page is checked without being listed.
pub const USER_DOCUMENT_DIRS: &[&str] = &["docs", "docs/guide"];

/// Every user document under `root`: `USER_DOCUMENTS`, then the `.md` pages of
/// `USER_DOCUMENT_DIRS` in name order.
pub fn user_documents(root: &Path) -> Vec<String> {
    let mut all: Vec<String> = USER_DOCUMENTS.iter().map(|d| d.to_string()).collect();
    for dir in USER_DOCUMENT_DIRS {
        let entries =
            std::fs::read_dir(root.join(dir)).unwrap_or_else(|e| panic!("cannot list {dir}: {e}"));
        let mut pages: Vec<String> = entries
            .map(|e| {
                e.unwrap_or_else(|e| panic!("cannot list {dir}: {e}"))
                    .file_name()
            })
            .filter_map(|name| name.to_str().map(str::to_string))
            .filter(|name| name.ends_with(".md"))
            .map(|name| format!("{dir}/{name}"))
            .collect();
        pages.sort();
        all.extend(pages);
    }
    all
}

/// One command shown in a document.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DocCommand {
    /// The document, relative to the workspace root.
    pub document: String,
    /// The line (1-based) the command starts on.
    pub line: usize,
    /// The program the command runs: `datalith` or `datalith-bench`.
    pub program: String,
    /// The arguments after the program's name.
    pub args: Vec<String>,
    /// The command as the document writes it (continuations joined).
    pub text: String,
    /// Shown in a code block (a command to copy) rather than an inline span (which may only
    /// mention a subcommand or flag in prose).
    pub fenced: bool,
}

/// The workspace root, from a crate's `CARGO_MANIFEST_DIR` (`crates/<name>`).
pub fn workspace_root(manifest_dir: &str) -> PathBuf {
    Path::new(manifest_dir)
        .ancestors()
        .nth(2)
        .expect("a crate directory sits two levels under the workspace root")
        .to_path_buf()
}

/// Every command of `program` in the user documents under `root`.
pub fn commands_for(root: &Path, program: &str) -> Vec<DocCommand> {
    let mut all = Vec::new();
    for document in user_documents(root) {
        let text = std::fs::read_to_string(root.join(&document))
            .unwrap_or_else(|e| panic!("cannot read {document}: {e}"));
        all.extend(
            commands_in(&document, &text)
                .into_iter()
                .filter(|c| c.program == program),
        );
    }
    all
}

/// The documented commands of `program` that its command line `C` refuses, each with the
/// document, line and clap's message; an empty list means every one parses. Panics when the
/// documents show fewer than `at_least` (a reader that found nothing must not pass).
pub fn parse_failures<C: clap::Parser>(
    manifest_dir: &str,
    program: &str,
    at_least: usize,
) -> Vec<String> {
    let commands = commands_for(&workspace_root(manifest_dir), program);
    assert!(
        commands.len() >= at_least,
        "expected at least {at_least} `{program}` commands in the documents, found {commands:?}"
    );
    let mut failures = Vec::new();
    for c in &commands {
        let argv = std::iter::once(program.to_string()).chain(c.args.iter().cloned());
        let Err(e) = C::try_parse_from(argv) else {
            continue;
        };
        if e.use_stderr() && !(c.is_mention() && e.kind() != ErrorKind::UnknownArgument) {
            failures.push(format!("{}:{}: `{}`\n{e}", c.document, c.line, c.text));
        }
    }
    failures
}

impl DocCommand {
    /// Prose naming a program, a subcommand or a flag (`datalith check`, `datalith-bench write
    /// --warmup`): an inline span of at most two words after the program. It must name things
    /// that exist, but it need not give their arguments.
    pub fn is_mention(&self) -> bool {
        !self.fenced && self.args.len() <= 2
    }
}

/// Every command of the workspace's programs in one document's text.
pub fn commands_in(document: &str, text: &str) -> Vec<DocCommand> {
    let mut found = Vec::new();
    for (line, snippet, fenced) in snippets(text) {
        if let Some((program, args)) = as_command(&snippet) {
            found.push(DocCommand {
                document: document.to_string(),
                line,
                program,
                args,
                text: snippet,
                fenced,
            });
        }
    }
    found
}

/// The fenced code lines and inline code spans of a markdown text, with their line numbers.
fn snippets(text: &str) -> Vec<(usize, String, bool)> {
    let mut out = Vec::new();
    let mut in_fence = false;
    let mut pending: Option<(usize, String)> = None; // a fenced line continued with `\`
    let mut span: Option<(usize, String)> = None; // an inline span, perhaps wrapping lines
    for (index, raw) in text.lines().enumerate() {
        let number = index + 1;
        if raw.trim_start().starts_with("```") {
            in_fence = !in_fence;
            span = None;
            continue;
        }
        if in_fence {
            let line = strip_comment(raw);
            let (start, mut joined) = pending.take().unwrap_or((number, String::new()));
            if let Some(head) = line.trim_end().strip_suffix('\\') {
                joined.push_str(head);
                joined.push(' ');
                pending = Some((start, joined));
            } else {
                joined.push_str(line.trim());
                out.push((start, joined.trim().to_string(), true));
            }
            continue;
        }
        if raw.trim().is_empty() {
            span = None; // a code span never crosses a paragraph
            continue;
        }
        if let Some((_, body)) = span.as_mut() {
            body.push(' '); // the line break inside a wrapped span
        }
        for c in raw.chars() {
            match (c, span.as_mut()) {
                ('`', Some(_)) => {
                    let (start, body) = span.take().expect("matched Some");
                    out.push((start, body.trim().to_string(), false));
                }
                ('`', None) => span = Some((number, String::new())),
                (c, Some((_, body))) => body.push(c),
                (_, None) => {}
            }
        }
    }
    out
}

/// A fenced line without its shell comment (` # ...`; a `#` inside a word is kept).
fn strip_comment(line: &str) -> &str {
    let mut quote: Option<char> = None;
    let mut prev = ' ';
    for (i, c) in line.char_indices() {
        match (quote, c) {
            (None, '\'' | '"') => quote = Some(c),
            (Some(q), c) if c == q => quote = None,
            (None, '#') if prev.is_whitespace() => return &line[..i],
            _ => {}
        }
        prev = c;
    }
    line
}

/// The program and arguments of a snippet, if it runs one of the workspace's programs.
fn as_command(snippet: &str) -> Option<(String, Vec<String>)> {
    let words = shell_words(snippet)?;
    let (program, rest) = match words.first().map(String::as_str) {
        Some(p @ ("datalith" | "datalith-bench")) => (p.to_string(), words[1..].to_vec()),
        Some("cargo") if words.get(1).map(String::as_str) == Some("run") => {
            let dashes = words.iter().position(|w| w == "--")?;
            let cargo_args = &words[2..dashes];
            let package = cargo_args
                .iter()
                .position(|w| w == "-p" || w == "--package")
                .and_then(|i| cargo_args.get(i + 1))?;
            let program = match package.as_str() {
                "datalith-cli" => "datalith",
                "datalith-bench" => "datalith-bench",
                _ => return None,
            };
            (program.to_string(), words[dashes + 1..].to_vec())
        }
        _ => return None,
    };
    let args = rest.into_iter().filter(|w| w != "...").collect();
    Some((program, args))
}

/// Splits a command line as a POSIX shell does for plain words and quotes (no expansion:
/// `$(date -u +%F)` stays one word). `None` when a quote is left open.
fn shell_words(line: &str) -> Option<Vec<String>> {
    let mut words = Vec::new();
    let mut word = String::new();
    let mut in_word = false;
    let mut chars = line.chars().peekable();
    let mut parens = 0usize;
    while let Some(c) = chars.next() {
        match c {
            '\'' => {
                in_word = true;
                loop {
                    match chars.next()? {
                        '\'' => break,
                        c => word.push(c),
                    }
                }
            }
            '"' => {
                in_word = true;
                loop {
                    match chars.next()? {
                        '"' => break,
                        '\\' => word.push(chars.next()?),
                        c => word.push(c),
                    }
                }
            }
            '\\' => {
                in_word = true;
                word.push(chars.next()?);
            }
            '(' | ')' => {
                parens = if c == '(' {
                    parens + 1
                } else {
                    parens.saturating_sub(1)
                };
                in_word = true;
                word.push(c);
            }
            c if c.is_whitespace() && parens == 0 => {
                if in_word {
                    words.push(std::mem::take(&mut word));
                    in_word = false;
                }
            }
            c => {
                in_word = true;
                word.push(c);
            }
        }
    }
    if in_word {
        words.push(word);
    }
    Some(words)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args_of(doc: &str) -> Vec<(usize, String, Vec<String>)> {
        commands_in("doc.md", doc)
            .into_iter()
            .map(|c| (c.line, c.program, c.args))
            .collect()
    }

    fn owned(words: &[&str]) -> Vec<String> {
        words.iter().map(|w| w.to_string()).collect()
    }

    #[test]
    fn commands_are_read_from_fences_and_spans() {
        let cases: &[(&str, Vec<(usize, &str, Vec<String>)>)] = &[
            (
                "```sh\ncargo run --release -p datalith-cli -- demo\n```\n",
                vec![(2, "datalith", owned(&["demo"]))],
            ),
            (
                "```sh\ncargo run -p datalith-bench -- write --kv --quick   # CI, ~10 s\n```\n",
                vec![(2, "datalith-bench", owned(&["write", "--kv", "--quick"]))],
            ),
            (
                "```sh\ndatalith query db \\\n  '[:find ?e :where [?e :a 1]]'\n```\n",
                vec![(
                    2,
                    "datalith",
                    owned(&["query", "db", "[:find ?e :where [?e :a 1]]"]),
                )],
            ),
            (
                "Run (`datalith-bench write --writes 10 --max-secs\n20 --passes 1`, writes/s).\n",
                vec![(
                    1,
                    "datalith-bench",
                    owned(&["write", "--writes", "10", "--max-secs", "20", "--passes", "1"]),
                )],
            ),
            (
                "see `datalith check` and `cargo test --workspace` and `datalith log DB ...`\n",
                vec![
                    (1, "datalith", owned(&["check"])),
                    (1, "datalith", owned(&["log", "DB"])),
                ],
            ),
            (
                "```sh\ncargo run -p datalith-bench -- all --out bench/results/$(date -u +%F)\n```\n",
                vec![(
                    2,
                    "datalith-bench",
                    owned(&["all", "--out", "bench/results/$(date -u +%F)"]),
                )],
            ),
            ("`datalith` alone is not a command with arguments\n", vec![(1, "datalith", vec![])]),
            ("```sh\ncargo test --workspace\n```\n", vec![]),
        ];
        for (doc, expected) in cases {
            let expected: Vec<(usize, String, Vec<String>)> = expected
                .iter()
                .map(|(l, p, a)| (*l, p.to_string(), a.clone()))
                .collect();
            assert_eq!(args_of(doc), expected, "document: {doc:?}");
        }
    }
}
