//! `open` and `Connection`: a database opened in this process.

use std::sync::Mutex;

use datalith::kv::Durability;
use datalith::{Database, DbOptions};
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;

use crate::convert::{to_edn, Place, ToEdn};
use crate::db::Db;
use crate::errors::to_pyerr;
use crate::report::TxReport;

/// A database opened by this process (`datalith.open`). Use it as a context manager, or call
/// `close()`; the database also closes when the last reference goes.
#[pyclass(frozen, module = "datalith")]
pub(crate) struct Connection {
    /// `None` once closed.
    database: Mutex<Option<Database>>,
    path: String,
}

/// Opens (creating if missing) the database in directory `path`.
///
/// `schema` is installed at open (a dict or EDN text mapping each attribute to its
/// properties); `durability` is one of "durable" (the default), "nometasync", "nosync", "writemap-async";
/// `read_only` opens an existing database without writing to it (as another process writes);
/// `value_index` says which datoms a database this open creates keeps in AVE: "declared"
/// (the default: only those of `:db/index`, `:db/unique` and ref attributes, as Datomic) or
/// "all" (every datom, as Datalevin); an existing database keeps its own.
#[pyfunction]
#[pyo3(signature = (path, *, schema = None, durability = None, read_only = false, value_index = None))]
pub(crate) fn open(
    py: Python<'_>,
    path: std::path::PathBuf,
    schema: Option<&Bound<'_, PyAny>>,
    durability: Option<&str>,
    read_only: bool,
    value_index: Option<&str>,
) -> PyResult<Connection> {
    let mut options = match durability {
        None => DbOptions::default(),
        Some(name) => DbOptions::with_durability(durability_named(name)?),
    };
    options.value_index = match value_index {
        Some("all") => datalith::ValueIndex::All,
        None | Some("declared") => datalith::ValueIndex::Declared,
        Some(other) => {
            return Err(PyValueError::new_err(format!(
                "value_index {other:?} is neither \"all\" nor \"declared\""
            )))
        }
    };
    options.schema = match schema {
        None => None,
        Some(s) => match s.extract::<String>() {
            Ok(text) => Some(
                datalith::edn::read_one(&text)
                    .map_err(|e| to_pyerr(py, datalith::Error::from(e)))?,
            ),
            Err(_) => Some(to_edn(s, Place::Value)?),
        },
    };
    let shown = path.display().to_string();
    let opened = py.detach(|| match read_only {
        true => Database::open_read_only(&path, options),
        false => Database::open(&path, options),
    });
    let database = opened.map_err(|e| to_pyerr(py, e))?;
    Ok(Connection {
        database: Mutex::new(Some(database)),
        path: shown,
    })
}

/// The durability modes by the names `open` takes.
const DURABILITIES: &[(&str, Durability)] = &[
    ("durable", Durability::Durable),
    ("nometasync", Durability::NoMetaSync),
    ("nosync", Durability::NoSync),
    ("writemap-async", Durability::WriteMapAsync),
];

fn durability_named(name: &str) -> PyResult<Durability> {
    DURABILITIES
        .iter()
        .find(|(n, _)| *n == name)
        .map(|(_, d)| *d)
        .ok_or_else(|| {
            let known: Vec<&str> = DURABILITIES.iter().map(|(n, _)| *n).collect();
            PyValueError::new_err(format!(
                "durability {name:?} is none of {}",
                known.join(", ")
            ))
        })
}

/// `(entity id, attribute, value)` triples from Python, checked one by one: a bad one names
/// its position.
fn bulk_datoms(
    datoms: &Bound<'_, PyAny>,
) -> PyResult<Vec<(u64, datalith::codec::Keyword, datalith::codec::Value)>> {
    // One conversion for all: each attribute's keyword is read once.
    let mut conv = ToEdn::default();
    let mut out = Vec::new();
    for (i, item) in datoms.try_iter()?.enumerate() {
        let item = item?;
        let bad = |what: &str| {
            PyValueError::new_err(format!(
                "datom {i} ({}): {what}",
                item.repr().map(|r| r.to_string()).unwrap_or_default()
            ))
        };
        let (e, a, v): (u64, Bound<'_, PyAny>, Bound<'_, PyAny>) = item
            .extract()
            .map_err(|_| bad("not an (entity id, attribute, value) triple"))?;
        let datalith::Edn::Keyword(a) = conv.edn(&a, Place::Keyword)? else {
            return Err(bad("the attribute is not a keyword"));
        };
        let v = datalith::edn::value_from_edn(&conv.edn(&v, Place::Value)?)
            .ok_or_else(|| bad("the value is not storable"))?;
        out.push((e, a, v));
    }
    Ok(out)
}

impl Connection {
    pub(crate) fn database(&self, py: Python<'_>) -> PyResult<Database> {
        match &*self.database.lock().unwrap_or_else(|p| p.into_inner()) {
            Some(d) => Ok(d.clone()),
            None => Err(to_pyerr(py, datalith::kv::KvError::Closed)),
        }
    }
}

#[pymethods]
impl Connection {
    /// Commits `data` (a list of entity dicts and `[op, e, a, v]` lists, or EDN text) as one
    /// transaction and returns its report, once it is as durable as the database promises.
    fn transact(slf: &Bound<'_, Self>, data: &Bound<'_, PyAny>) -> PyResult<TxReport> {
        let py = slf.py();
        let database = slf.get().database(py)?;
        let edn = crate::db::tx_data(py, data)?;
        let report = py.detach(|| database.transact(&edn));
        let report = report.map_err(|e| to_pyerr(py, e))?;
        Ok(TxReport::new(report, slf.clone().unbind()))
    }

    /// Bulk-loads `datoms`, an iterable of `(entity id, attribute, value)` (Datalevin's
    /// `fill-db`): no tempids, upserts or uniqueness checks, only the attribute and the value's
    /// type; entity ids lie in the user partition. Returns the number of datoms written.
    fn fill_db(&self, py: Python<'_>, datoms: &Bound<'_, PyAny>) -> PyResult<u64> {
        let database = self.database(py)?;
        let datoms = bulk_datoms(datoms)?;
        py.detach(|| database.fill_db(&datoms))
            .map_err(|e| to_pyerr(py, e))
    }

    /// The key-value table `name` of this database (created if missing), a mapping of bytes to
    /// bytes beside the Datalog store.
    fn kv(&self, py: Python<'_>, name: &str) -> PyResult<crate::kv::KvTable> {
        let database = self.database(py)?;
        crate::kv::KvTable::open(py, database, name)
    }

    /// The database as of now: a value that does not change while others transact.
    fn db(&self, py: Python<'_>) -> PyResult<Db> {
        let database = self.database(py)?;
        let db = py.detach(|| database.db()).map_err(|e| to_pyerr(py, e))?;
        Ok(Db::new(db))
    }

    /// Closes the database (what is committed stays); later calls raise `Unavailable`.
    fn close(&self, py: Python<'_>) {
        let taken = self
            .database
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .take();
        // Closing applies and checkpoints the log: not under the GIL.
        py.detach(|| drop(taken));
    }

    /// The directory of the database.
    #[getter]
    fn path(&self) -> &str {
        &self.path
    }

    fn __enter__(slf: Py<Self>) -> Py<Self> {
        slf
    }

    #[pyo3(signature = (*_exc))]
    fn __exit__(&self, py: Python<'_>, _exc: &Bound<'_, pyo3::types::PyTuple>) -> bool {
        self.close(py);
        false
    }

    fn __repr__(&self) -> String {
        let open = self
            .database
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .is_some();
        match open {
            true => format!("<datalith.Connection {:?}>", self.path),
            false => format!("<datalith.Connection {:?} (closed)>", self.path),
        }
    }
}
