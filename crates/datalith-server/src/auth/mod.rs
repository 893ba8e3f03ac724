//! Who may do what: bearer tokens from a file, each with a role on one database or on all.
//!
//! The file holds one grant a line, `NAME ROLE DB-OR-* SHA256-HEX`: a name for people and
//! logs, the role (`read`, `write` or `admin`), the database (or `*` for every one), and the
//! SHA-256 of the token in hex (`printf %s "$TOKEN" | sha256sum`). `#` starts a comment.
//! The same token may have several lines (one per database). Only hashes are kept, at rest
//! and in memory, so the file and a memory dump do not give tokens away; a presented token
//! is hashed and compared with every line's hash in constant time ([`hash::same`]), so the
//! time an answer takes says nothing about how much of a hash matched.
//!
//! Roles nest: `read` runs `q`, `pull`, `pull-many`, `datoms`, `index-range`, `tx-range`
//! and `stat`; `write` adds
//! `transact`; `admin` adds creating and deleting databases (with `--create-in`). Without a token file every request is allowed, which is why the
//! server then listens on loopback only.

mod file;
pub mod hash;

use std::path::Path;

use datalith::edn::Edn;

use crate::error::{codes, Result, ServerError};

/// What a token allows on a database; ordered, each role allowing what those below do.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Role {
    /// Queries, pulls, index reads, statistics.
    Read,
    /// And transactions.
    Write,
    /// And administration.
    Admin,
}

impl Role {
    /// Parses `read`, `write` or `admin`.
    pub fn parse(s: &str) -> Option<Role> {
        match s {
            "read" => Some(Role::Read),
            "write" => Some(Role::Write),
            "admin" => Some(Role::Admin),
            _ => None,
        }
    }

    /// The role's name.
    pub fn name(self) -> &'static str {
        match self {
            Role::Read => "read",
            Role::Write => "write",
            Role::Admin => "admin",
        }
    }
}

/// One line of the token file.
#[derive(Debug, Clone)]
pub struct Grant {
    /// The token's name.
    pub name: String,
    /// Its role.
    pub role: Role,
    /// The database, or `None` for every one (`*`).
    pub db: Option<String>,
    /// SHA-256 of the token.
    pub hash: [u8; 32],
}

/// The grants of a token file.
#[derive(Debug, Clone)]
pub struct Tokens {
    grants: Vec<Grant>,
}

/// Who a request is: anyone (no token file) or the holder of a known token.
#[derive(Debug, Clone)]
pub enum Access {
    /// No token file: everything is allowed.
    Open,
    /// The grants of the presented token.
    Token {
        /// The token's name (of its first line).
        name: String,
        /// Its grants: database (`None`: every one) and role.
        grants: Vec<(Option<String>, Role)>,
    },
}

impl Tokens {
    /// Reads a token file; every database it names must be one of `served`, or any valid
    /// name when `any_name` (databases may be created).
    pub fn load(path: &Path, served: &[String], any_name: bool) -> Result<Tokens> {
        let text = std::fs::read_to_string(path).map_err(|e| {
            ServerError::from(e).with("path", Edn::String(path.display().to_string()))
        })?;
        let grants = file::parse(&text, served, any_name).map_err(|e| {
            ServerError::invalid(format!("{}: {e}", path.display()))
                .with("path", Edn::String(path.display().to_string()))
        })?;
        Ok(Tokens { grants })
    }

    /// Tokens from grants (tests, programs that embed the server).
    pub fn from_grants(grants: Vec<Grant>) -> Tokens {
        Tokens { grants }
    }

    /// Who presents `authorization` (the `Authorization` header's value).
    pub fn authenticate(&self, authorization: Option<&str>) -> Result<Access> {
        let unauthorized = |why: &str| ServerError::new(codes::UNAUTHORIZED, why.to_string());
        let header = authorization
            .ok_or_else(|| unauthorized("no token: send Authorization: Bearer TOKEN"))?;
        let token = header
            .strip_prefix("Bearer ")
            .or_else(|| header.strip_prefix("bearer "))
            .map(str::trim)
            .filter(|t| !t.is_empty())
            .ok_or_else(|| unauthorized("Authorization must be Bearer TOKEN"))?;
        let presented = hash::sha256(token.as_bytes());
        let mut name = None;
        let mut grants = Vec::new();
        // Every line is compared, matching or not, so the time taken does not depend on
        // where (or whether) the token's lines are.
        for g in &self.grants {
            if hash::same(&presented, &g.hash) {
                name.get_or_insert_with(|| g.name.clone());
                grants.push((g.db.clone(), g.role));
            }
        }
        match name {
            Some(name) => Ok(Access::Token { name, grants }),
            None => Err(unauthorized("unknown token")),
        }
    }
}

impl Access {
    /// The role this access has on database `db`, if any.
    pub fn role_on(&self, db: &str) -> Option<Role> {
        match self {
            Access::Open => Some(Role::Admin),
            Access::Token { grants, .. } => grants
                .iter()
                .filter(|(d, _)| d.as_deref().is_none_or(|d| d == db))
                .map(|(_, r)| *r)
                .max(),
        }
    }

    /// Succeeds when this access has at least `role` on `db`.
    pub fn require(&self, db: &str, role: Role) -> Result<()> {
        let Access::Token { name, .. } = self else {
            return Ok(());
        };
        match self.role_on(db) {
            Some(held) if held >= role => Ok(()),
            held => Err(ServerError::new(
                codes::FORBIDDEN,
                format!(
                    "token {name:?} has {} on database {db:?}; this needs {}",
                    held.map_or("no role", Role::name),
                    role.name()
                ),
            )
            .with("database", Edn::String(db.to_string()))
            .with("role", Edn::String(role.name().to_string()))),
        }
    }
}

#[cfg(test)]
mod tests;
