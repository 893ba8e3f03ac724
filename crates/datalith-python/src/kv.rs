//! `KvTable`: a key-value table of the database, as a mapping of bytes to bytes.
//!
//! A Python program's tables live beside the Datalog store's in the same files, under names of
//! their own (`py/NAME` in the catalog: the library's rule, `datalith::api::kv_tables`, which
//! the server follows too, so a table written here is read remotely and back). Every write is one atomic, durable transaction; `update` writes many
//! pairs in one. Reads see the latest committed state.

use std::ops::Bound as KeyBound;

use datalith::kv::{Direction, Environment, KvOp, Table};
use datalith::Database;
use pyo3::exceptions::{PyKeyError, PyTypeError};
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyList, PyString, PyTuple};

use crate::errors::to_pyerr;

/// A key-value table (`Connection.kv(name)`): a mapping of `bytes` to `bytes`; keys and
/// values may be given as `str` (stored as UTF-8). Keys sort as bytes.
#[pyclass(frozen, module = "datalith")]
pub(crate) struct KvTable {
    env: Environment,
    table: Table,
    name: String,
}

impl KvTable {
    pub(crate) fn open(py: Python<'_>, database: Database, name: &str) -> PyResult<KvTable> {
        let opened = py.detach(|| database.kv_table(name));
        let table = opened.map_err(|e| to_pyerr(py, e))?;
        Ok(KvTable {
            env: database.env().clone(),
            table,
            name: name.to_string(),
        })
    }

    fn write(&self, py: Python<'_>, ops: Vec<KvOp>) -> PyResult<()> {
        let env = self.env.clone();
        py.detach(move || env.transact_kv(ops))
            .map_err(|e| to_pyerr(py, e))
    }

    /// The entries with `start <= key < end`, read from one snapshot.
    fn entries(
        &self,
        py: Python<'_>,
        start: Option<&Bound<'_, PyAny>>,
        end: Option<&Bound<'_, PyAny>>,
        reverse: bool,
    ) -> PyResult<Vec<(Vec<u8>, Vec<u8>)>> {
        let start = start.map(|s| bytes_of(s, "key")).transpose()?;
        let end = end.map(|e| bytes_of(e, "key")).transpose()?;
        let (env, table) = (self.env.clone(), self.table.clone());
        let read = py.detach(move || {
            let snapshot = env.read()?;
            let view = snapshot.view();
            let lower = start
                .as_deref()
                .map_or(KeyBound::Unbounded, KeyBound::Included);
            let upper = end
                .as_deref()
                .map_or(KeyBound::Unbounded, KeyBound::Excluded);
            let direction = match reverse {
                true => Direction::Backward,
                false => Direction::Forward,
            };
            let entries = view
                .range(&table, lower, upper, direction)?
                .map(|e| e.map(|(k, v)| (k.to_vec(), v.to_vec())))
                .collect::<Result<Vec<_>, _>>();
            entries
        });
        read.map_err(|e| to_pyerr(py, e))
    }
}

/// A key or value given as `bytes`, `bytearray` or `str` (UTF-8).
fn bytes_of(obj: &Bound<'_, PyAny>, what: &str) -> PyResult<Vec<u8>> {
    if let Ok(s) = obj.cast::<PyString>() {
        return Ok(s.to_cow()?.as_bytes().to_vec());
    }
    obj.extract::<Vec<u8>>().map_err(|_| {
        PyTypeError::new_err(format!(
            "a {what} is bytes or str, not {}",
            obj.get_type()
                .name()
                .map(|n| n.to_string())
                .unwrap_or_default()
        ))
    })
}

#[pymethods]
impl KvTable {
    fn __getitem__<'py>(
        &self,
        py: Python<'py>,
        key: &Bound<'py, PyAny>,
    ) -> PyResult<Bound<'py, PyBytes>> {
        match self.get_bytes(py, key)? {
            Some(v) => Ok(PyBytes::new(py, &v)),
            None => Err(PyKeyError::new_err(key.clone().unbind())),
        }
    }

    /// The value of `key`, or `default`.
    #[pyo3(signature = (key, default = None))]
    fn get(
        &self,
        py: Python<'_>,
        key: &Bound<'_, PyAny>,
        default: Option<Py<PyAny>>,
    ) -> PyResult<Py<PyAny>> {
        Ok(match self.get_bytes(py, key)? {
            Some(v) => PyBytes::new(py, &v).into_any().unbind(),
            None => default.unwrap_or_else(|| py.None()),
        })
    }

    fn __setitem__(
        &self,
        py: Python<'_>,
        key: &Bound<'_, PyAny>,
        value: &Bound<'_, PyAny>,
    ) -> PyResult<()> {
        let op = KvOp::put(
            &self.table,
            bytes_of(key, "key")?,
            bytes_of(value, "value")?,
        );
        self.write(py, vec![op])
    }

    fn __delitem__(&self, py: Python<'_>, key: &Bound<'_, PyAny>) -> PyResult<()> {
        if self.get_bytes(py, key)?.is_none() {
            return Err(PyKeyError::new_err(key.clone().unbind()));
        }
        self.write(py, vec![KvOp::delete(&self.table, bytes_of(key, "key")?)])
    }

    fn __contains__(&self, py: Python<'_>, key: &Bound<'_, PyAny>) -> PyResult<bool> {
        Ok(self.get_bytes(py, key)?.is_some())
    }

    fn __len__(&self, py: Python<'_>) -> PyResult<usize> {
        let (env, table) = (self.env.clone(), self.table.clone());
        let counted = py.detach(move || env.read().and_then(|s| s.view().len(&table)));
        Ok(counted.map_err(|e| to_pyerr(py, e))? as usize)
    }

    /// Writes every pair of `pairs` (a dict, or an iterable of `(key, value)`) in one
    /// transaction; `delete` removes keys in the same one.
    #[pyo3(signature = (pairs = None, *, delete = None))]
    fn update(
        &self,
        py: Python<'_>,
        pairs: Option<&Bound<'_, PyAny>>,
        delete: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<()> {
        let mut ops = Vec::new();
        if let Some(pairs) = pairs {
            let items = match pairs.call_method0("items") {
                Ok(items) => items,
                Err(_) => pairs.clone(),
            };
            for pair in items.try_iter()? {
                let pair = pair?;
                let (k, v): (Bound<'_, PyAny>, Bound<'_, PyAny>) = pair.extract()?;
                ops.push(KvOp::put(
                    &self.table,
                    bytes_of(&k, "key")?,
                    bytes_of(&v, "value")?,
                ));
            }
        }
        if let Some(keys) = delete {
            for k in keys.try_iter()? {
                ops.push(KvOp::delete(&self.table, bytes_of(&k?, "key")?));
            }
        }
        self.write(py, ops)
    }

    /// `(key, value)` pairs with `start <= key < end`, in key order (descending with
    /// `reverse`), read from one snapshot.
    #[pyo3(signature = (start = None, end = None, *, reverse = false))]
    fn items<'py>(
        &self,
        py: Python<'py>,
        start: Option<&Bound<'py, PyAny>>,
        end: Option<&Bound<'py, PyAny>>,
        reverse: bool,
    ) -> PyResult<Bound<'py, PyAny>> {
        let rows = PyList::empty(py);
        for (k, v) in self.entries(py, start, end, reverse)? {
            rows.append(PyTuple::new(
                py,
                [PyBytes::new(py, &k), PyBytes::new(py, &v)],
            )?)?;
        }
        Ok(rows.try_iter()?.into_any())
    }

    /// The keys with `start <= key < end`, in order.
    #[pyo3(signature = (start = None, end = None, *, reverse = false))]
    fn keys<'py>(
        &self,
        py: Python<'py>,
        start: Option<&Bound<'py, PyAny>>,
        end: Option<&Bound<'py, PyAny>>,
        reverse: bool,
    ) -> PyResult<Bound<'py, PyAny>> {
        let rows = PyList::empty(py);
        for (k, _) in self.entries(py, start, end, reverse)? {
            rows.append(PyBytes::new(py, &k))?;
        }
        Ok(rows.try_iter()?.into_any())
    }

    fn __iter__<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        self.keys(py, None, None, false)
    }

    /// The table's name.
    #[getter]
    fn name(&self) -> &str {
        &self.name
    }

    fn __repr__(&self) -> String {
        format!("<datalith.KvTable {:?}>", self.name)
    }
}

impl KvTable {
    fn get_bytes(&self, py: Python<'_>, key: &Bound<'_, PyAny>) -> PyResult<Option<Vec<u8>>> {
        let key = bytes_of(key, "key")?;
        let (env, table) = (self.env.clone(), self.table.clone());
        let got = py.detach(move || {
            let snapshot = env.read()?;
            let found = snapshot.view().get(&table, &key)?.map(<[u8]>::to_vec);
            Ok::<_, datalith::kv::KvError>(found)
        });
        got.map_err(|e| to_pyerr(py, e))
    }
}
