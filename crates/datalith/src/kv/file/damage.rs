//! What is wrong with a file, and where: the answer of the header check and of the walk.

use std::fmt;

/// One piece of damage found in a data file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Damage {
    /// The page it was found on, when there is one.
    pub(crate) page: Option<u64>,
    /// The table whose tree holds that page (`main` for LMDB's table of tables, `free` for its
    /// free-page list), when known.
    pub(crate) table: Option<String>,
    /// What is wrong.
    pub(crate) detail: String,
}

impl Damage {
    pub(crate) fn at(page: u64, table: &str, detail: impl Into<String>) -> Damage {
        Damage {
            page: Some(page),
            table: Some(table.to_string()),
            detail: detail.into(),
        }
    }

    pub(crate) fn file(detail: impl Into<String>) -> Damage {
        Damage {
            page: None,
            table: None,
            detail: detail.into(),
        }
    }
}

impl fmt::Display for Damage {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match (&self.page, &self.table) {
            (Some(p), Some(t)) => write!(f, "page {p} (table {t}): {}", self.detail),
            (Some(p), None) => write!(f, "page {p}: {}", self.detail),
            (None, Some(t)) => write!(f, "table {t}: {}", self.detail),
            (None, None) => f.write_str(&self.detail),
        }
    }
}

/// Why a file was refused before LMDB could map it.
#[derive(Debug)]
pub(crate) enum Refusal {
    /// The file is not an LMDB data file at all (empty, too short, no magic).
    NotADatabase(String),
    /// An LMDB data file whose structure is broken.
    Damaged(Damage),
    /// Reading failed.
    Io(std::io::Error),
}

impl From<Damage> for Refusal {
    fn from(d: Damage) -> Self {
        Refusal::Damaged(d)
    }
}

impl From<std::io::Error> for Refusal {
    fn from(e: std::io::Error) -> Self {
        Refusal::Io(e)
    }
}
