//! The function registry of a database: the query functions, aggregates and transaction
//! functions a program registers on a `Database`, shared by every value read from it.
//!
//! Typed, so that every layer that calls user code (query, pull through query, tx, `with`)
//! reaches the same functions without a downcast that could fail and lose them. Each table
//! sits behind its own lock: registering never blocks readers of the other tables, and a
//! reader takes a copy of the query tables (cheap `Arc` clones) so that a long query holds no
//! lock.

use std::collections::HashMap;
use std::sync::{Arc, RwLock, RwLockReadGuard};

use super::tx_data::TxData;
use crate::codec::{Keyword, Value};

/// A user function or predicate callable from a query as `[(name args...)]`.
pub type QueryFunction = dyn Fn(&[Value]) -> Result<Value, String> + Send + Sync;

/// A user aggregate callable in `:find` as `(name ?x)`: it gets every value of `?x`.
pub type AggregateFunction = dyn Fn(&[Value]) -> Result<Value, String> + Send + Sync;

/// A transaction function, called by `[:db.fn/call name args...]` or `[name args...]` in tx
/// data: it returns the tx data that replaces the call.
pub type TxFunction = dyn Fn(&[Value]) -> Result<TxData, String> + Send + Sync;

/// Registered transaction functions, by name.
pub type TxFunctions = HashMap<Keyword, Arc<TxFunction>>;

/// The functions and aggregates a query may call, by name.
#[derive(Default, Clone)]
pub struct QueryFunctions {
    /// Functions and predicates.
    pub functions: HashMap<String, Arc<QueryFunction>>,
    /// Aggregates.
    pub aggregates: HashMap<String, Arc<AggregateFunction>>,
}

/// Every function registered on one database, and the query settings shared with them by
/// every value read from it.
#[derive(Default)]
pub struct Functions {
    query: RwLock<QueryFunctions>,
    tx: RwLock<TxFunctions>,
    /// The memory limit of this database's queries in bytes (0: none set, the default of
    /// `query::budget` applies); a query's own limit takes precedence.
    query_memory_limit: std::sync::atomic::AtomicU64,
}

impl Functions {
    /// The database's query memory limit, when one is set.
    pub fn query_memory_limit(&self) -> Option<u64> {
        match self
            .query_memory_limit
            .load(std::sync::atomic::Ordering::Relaxed)
        {
            0 => None,
            n => Some(n),
        }
    }

    /// Sets the database's query memory limit (`None`: the default; `Some(0)` reads back as
    /// `None`, so callers pass at least 1).
    pub fn set_query_memory_limit(&self, bytes: Option<u64>) {
        self.query_memory_limit
            .store(bytes.unwrap_or(0), std::sync::atomic::Ordering::Relaxed);
    }

    /// A copy of the query functions and aggregates (their `Arc`s), taken once per query.
    pub fn query(&self) -> QueryFunctions {
        self.query.read().unwrap_or_else(|p| p.into_inner()).clone()
    }

    /// The transaction functions, locked for reading while a transaction expands.
    pub fn tx(&self) -> RwLockReadGuard<'_, TxFunctions> {
        self.tx.read().unwrap_or_else(|p| p.into_inner())
    }

    /// Registers (or replaces) the query function or predicate `name`.
    pub fn add_query_fn(&self, name: &str, f: Arc<QueryFunction>) {
        self.query
            .write()
            .unwrap_or_else(|p| p.into_inner())
            .functions
            .insert(name.to_string(), f);
    }

    /// Registers (or replaces) the aggregate `name`.
    pub fn add_aggregate(&self, name: &str, f: Arc<AggregateFunction>) {
        self.query
            .write()
            .unwrap_or_else(|p| p.into_inner())
            .aggregates
            .insert(name.to_string(), f);
    }

    /// Registers (or replaces) the transaction function `name`.
    pub fn add_tx_fn(&self, name: Keyword, f: Arc<TxFunction>) {
        self.tx
            .write()
            .unwrap_or_else(|p| p.into_inner())
            .insert(name, f);
    }
}
