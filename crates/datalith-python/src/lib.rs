//! The extension module `datalith._datalith`: Datalith's embedded database for Python. The
//! package around it (`python/datalith`) adds the types Python lacks (keywords, symbols),
//! the exception classes, and the public names.
//!
//! - `connection.rs`: `open` and `Connection` (transact, db, close; a context manager).
//! - `db.rs`: `Db`, a database value (q, pull, pull_many, entity, datoms); `q` over several.
//! - `report.rs`: `TxReport`, what a transaction returns.
//! - `kv.rs`: `KvTable`, a key-value table of the same database as a mapping.
//! - `convert/`: Python values to EDN and back (the README's type table).
//! - `errors.rs`: the database's errors as the package's exception classes.
//! - `interrupt.rs`: running without the GIL on the caller's thread, and Ctrl-C cancelling a
//!   query.
//! - `package.rs`: the package's Python-side names the extension uses, looked up once.
//!
//! Every call that reads or writes the database releases the GIL, so other Python threads run
//! meanwhile; `Connection` and `Db` are safe to share between threads (the database is).

use pyo3::prelude::*;

mod connection;
mod convert;
mod db;
mod errors;
mod interrupt;
mod kv;
mod package;
mod report;

#[pymodule]
fn _datalith(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(connection::open, m)?)?;
    m.add_function(wrap_pyfunction!(db::q, m)?)?;
    m.add_function(wrap_pyfunction!(db::comes_in_rows, m)?)?;
    m.add_class::<connection::Connection>()?;
    m.add_class::<db::Db>()?;
    m.add_class::<db::Entity>()?;
    m.add_class::<report::TxReport>()?;
    m.add_class::<kv::KvTable>()?;
    Ok(())
}
