//! The full-text part of the torture: the texts the writer gives `:torture/text` values and
//! KV search documents, and the model the verification holds the index to.
//!
//! Datalog: entity `key` at version `n` (`:torture/version`, in the same transaction) holds
//! [`text`]`(key, n)` in `:torture/text`, or no text when that version is a retraction; so
//! the current version read back says exactly which text must be there, and which entities a
//! `fulltext` query must find.
//!
//! KV search index [`INDEX`]: documents `0..DOC_IDS`, each version's text carrying the token
//! `d<id>v<version>`. The index does not keep texts, and a write killed between its commit
//! and its acknowledgement may be there unacknowledged, so the writer logs each `write`'s
//! changes (one line, [`INTENTS`] in the database directory) before submitting it. Commits
//! keep submission order, so the index holds some prefix of the logged writes, at least as
//! long as the acknowledged ones: [`resolve`] finds which (each write changes the state, the
//! tokens tell the prefixes apart), and [`wrong_answers`] holds the index to that model.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

use datalith::search::SearchIndex;

/// The KV search index the writer writes.
pub const INDEX: &str = "torture";
/// The file, in the database directory, of the search writes submitted (one line each).
pub const INTENTS: &str = "torture-search.log";
/// Document ids are below this.
pub const DOC_IDS: u64 = 300;

/// The words texts are made of (none is a stop word).
pub const VOCAB: &[&str] = &[
    "amber", "birch", "cedar", "delta", "ember", "fjord", "grove", "heron", "indigo", "juniper",
];

fn mix(mut h: u64) -> u64 {
    h ^= h >> 33;
    h = h.wrapping_mul(0xff51_afd7_ed55_8ccd);
    h ^= h >> 33;
    h = h.wrapping_mul(0xc4ce_b9fe_1a85_ec53);
    h ^ (h >> 33)
}

fn hash(key: &str, version: u64) -> u64 {
    key.bytes()
        .fold(mix(version ^ 0x9e37_79b9), |h, b| mix(h ^ u64::from(b)))
}

/// 2 to 6 words of [`VOCAB`] chosen by `seed`, the first capitalised (case folding).
fn words(seed: u64) -> String {
    let n = 2 + (seed % 5) as usize;
    let mut h = seed;
    (0..n)
        .map(|i| {
            h = mix(h.wrapping_add(i as u64));
            let w = VOCAB[(h % VOCAB.len() as u64) as usize];
            if i == 0 {
                w[..1].to_uppercase() + &w[1..]
            } else {
                w.to_string()
            }
        })
        .collect::<Vec<_>>()
        .join(" ")
}

/// The `:torture/text` of entity `key` at `version` (`None`: that version retracts it).
/// Version 1 is the entity's creation.
pub fn text(key: &str, version: u64) -> Option<String> {
    (version == 1 || version % 4 != 0).then(|| words(hash(key, version)))
}

/// The text of KV search document `id` at `version`.
pub fn doc_text(id: u64, version: u64) -> String {
    format!("d{id}v{version} {}", words(hash("doc", id << 32 | version)))
}

/// The words of a text as the analyzer sees them (lower case).
pub fn terms(text: &str) -> Vec<String> {
    text.split_whitespace().map(str::to_lowercase).collect()
}

/// The queries whose answers are compared with the model: each word, and for neighbouring
/// words both required, and the phrase. Each with the test a text's terms must pass.
pub fn queries() -> Vec<(String, Box<dyn Fn(&[String]) -> bool>)> {
    let mut out: Vec<(String, Box<dyn Fn(&[String]) -> bool>)> = Vec::new();
    for (i, w) in VOCAB.iter().enumerate() {
        out.push((w.to_string(), Box::new(move |t| t.iter().any(|x| x == w))));
        let next = VOCAB[(i + 1) % VOCAB.len()];
        out.push((
            format!("+{w} +{next}"),
            Box::new(move |t| t.iter().any(|x| x == w) && t.iter().any(|x| x == next)),
        ));
        out.push((
            format!("\"{w} {next}\""),
            Box::new(move |t| t.windows(2).any(|p| p[0] == *w && p[1] == next)),
        ));
    }
    out
}

/// One change of a search write: document `id` put at `version`, or removed (`None`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Change {
    pub id: u64,
    pub version: Option<u64>,
}

/// A logged write as a line (without its newline): `p<id>.<version>` and `r<id>` items.
pub fn line(changes: &[Change]) -> String {
    changes
        .iter()
        .map(|c| match c.version {
            Some(v) => format!("p{}.{v}", c.id),
            None => format!("r{}", c.id),
        })
        .collect::<Vec<_>>()
        .join(" ")
}

fn parse_line(l: &str) -> Result<Vec<Change>, String> {
    let bad = || format!("malformed search intent {l:?}");
    l.split(' ')
        .map(|item| {
            let n = |s: &str| s.parse::<u64>().map_err(|_| bad());
            match item.split_at_checked(1) {
                Some(("p", rest)) => {
                    let (id, v) = rest.split_once('.').ok_or_else(bad)?;
                    Ok(Change {
                        id: n(id)?,
                        version: Some(n(v)?),
                    })
                }
                Some(("r", id)) => Ok(Change {
                    id: n(id)?,
                    version: None,
                }),
                _ => Err(bad()),
            }
        })
        .collect()
}

/// The complete lines of the intent log in `dir` (a line cut by a kill was never submitted).
pub fn read_intents(dir: &Path) -> Result<Vec<Vec<Change>>, String> {
    let path = dir.join(INTENTS);
    let text = match std::fs::read_to_string(&path) {
        Ok(t) => t,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => String::new(),
        Err(e) => return Err(format!("{}: {e}", path.display())),
    };
    let complete = text.rfind('\n').map_or("", |end| &text[..end]);
    complete.lines().map(parse_line).collect()
}

/// Documents present and their versions.
pub type Model = BTreeMap<u64, u64>;

pub fn apply(model: &mut Model, changes: &[Change]) {
    for c in changes {
        match c.version {
            Some(v) => model.insert(c.id, v),
            None => model.remove(&c.id),
        };
    }
}

fn count(ix: &SearchIndex, q: &str) -> Result<u64, String> {
    ix.count(q).map_err(|e| format!("count {q:?}: {e}"))
}

/// Whether the index holds document `id` exactly as `model` says (at that version, or not).
fn holds(ix: &SearchIndex, model: &Model, id: u64) -> Result<bool, String> {
    let any = count(ix, &format!("d{id}v*"))?;
    Ok(match model.get(&id) {
        Some(v) => any == 1 && count(ix, &format!("d{id}v{v}"))? == 1,
        None => any == 0,
    })
}

/// How many of the logged writes `intents` the index holds (a prefix, at least
/// `acknowledged` long), and the documents that leaves.
pub fn resolve(
    ix: &SearchIndex,
    intents: &[Vec<Change>],
    acknowledged: usize,
) -> Result<(usize, Model), String> {
    if acknowledged > intents.len() {
        return Err(format!(
            "{acknowledged} search writes acknowledged, {} logged",
            intents.len()
        ));
    }
    let mut model = Model::new();
    for w in &intents[..acknowledged] {
        apply(&mut model, w);
    }
    // Only the documents the unacknowledged writes touch tell the candidates apart.
    let tail: BTreeSet<u64> = intents[acknowledged..]
        .iter()
        .flatten()
        .map(|c| c.id)
        .collect();
    let mut found = None;
    for p in acknowledged..=intents.len() {
        if p > acknowledged {
            apply(&mut model, &intents[p - 1]);
        }
        let mut all = true;
        for id in &tail {
            if !holds(ix, &model, *id)? {
                all = false;
                break;
            }
        }
        if all {
            found = Some((p, model.clone()));
        }
    }
    found.ok_or_else(|| {
        format!(
            "the search index holds no prefix of the {} logged writes at least {acknowledged} long",
            intents.len()
        )
    })
}

/// Where the index disagrees with `model`: its length, each document's version, each
/// query's count and top hits, and its own check.
pub fn wrong_answers(ix: &SearchIndex, model: &Model) -> Result<Vec<String>, String> {
    let mut wrong = Vec::new();
    let len = ix.len().map_err(|e| e.to_string())?;
    if len != model.len() as u64 {
        wrong.push(format!("search index length {len}, model {}", model.len()));
    }
    for id in 0..DOC_IDS {
        if !holds(ix, model, id)? {
            wrong.push(format!(
                "search document {id}: not as the model (version {:?})",
                model.get(&id)
            ));
        }
    }
    for (q, matches) in queries() {
        let want: BTreeSet<u64> = model
            .iter()
            .filter(|(id, v)| matches(&terms(&doc_text(**id, **v))))
            .map(|(id, _)| *id)
            .collect();
        let n = count(ix, &q)?;
        let top = ix.search(&q, 5).map_err(|e| format!("search {q:?}: {e}"))?;
        let ids: BTreeSet<u64> = top.iter().map(|h| h.id).collect();
        if n != want.len() as u64
            || top.len() != want.len().min(5)
            || ids.len() != top.len()
            || !ids.is_subset(&want)
        {
            wrong.push(format!(
                "search {q:?}: count {n}, top {ids:?}; the model has {} matches",
                want.len()
            ));
        }
    }
    let report = ix.check().map_err(|e| e.to_string())?;
    wrong.extend(
        report
            .problems
            .iter()
            .map(|p| format!("search index check: {p}")),
    );
    Ok(wrong)
}
