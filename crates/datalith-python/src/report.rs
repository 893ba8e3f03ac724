//! `TxReport`: what a transaction returns.
//!
//! The report keeps the database's own report and makes its Python parts when first asked:
//! most programs read `tempids` now and then and `tx_data` rarely, and building thousands of
//! `Datom`s for a bulk transaction nobody reads cost more than the transaction's conversion.

use std::sync::Mutex;

use pyo3::prelude::*;
use pyo3::sync::PyOnceLock;
use pyo3::types::PyDict;

use crate::convert::{datom_list, to_py};

/// A committed transaction: its id, the ids its tempids resolved to, and its datoms.
#[pyclass(frozen, module = "datalith")]
pub(crate) struct TxReport {
    tx: u64,
    report: Mutex<datalith::TxReport>,
    /// Where the attributes' idents are read when the report's own value is gone (the
    /// connection, not its database: a report must not keep a closed database open).
    connection: Py<crate::connection::Connection>,
    tempids: PyOnceLock<Py<PyDict>>,
    tx_data: PyOnceLock<Py<PyAny>>,
}

impl TxReport {
    pub(crate) fn new(
        report: datalith::TxReport,
        connection: Py<crate::connection::Connection>,
    ) -> TxReport {
        TxReport {
            tx: report.tx,
            report: Mutex::new(report),
            connection,
            tempids: PyOnceLock::new(),
            tx_data: PyOnceLock::new(),
        }
    }

    fn report(&self) -> std::sync::MutexGuard<'_, datalith::TxReport> {
        self.report.lock().unwrap_or_else(|p| p.into_inner())
    }
}

/// The report's datoms, named by the attributes' idents as of after the transaction (which
/// may have installed them): the report's own schema, or the database's latest when the
/// report has no database values (an attribute keeps its id).
fn datoms<'py>(
    py: Python<'py>,
    report: &datalith::TxReport,
    connection: &crate::connection::Connection,
) -> PyResult<Bound<'py, PyAny>> {
    // The report's own schema, without building its `db_after` value (a replay of the
    // batch's writes over a snapshot).
    if let Some(schema) = report.schema_after() {
        return Ok(datom_list(py, schema, &report.tx_data)?.into_any());
    }
    let latest = connection
        .database(py)?
        .db()
        .map_err(|e| crate::errors::to_pyerr(py, e))?;
    Ok(datom_list(py, latest.schema(), &report.tx_data)?.into_any())
}

#[pymethods]
impl TxReport {
    /// The transaction's entity id (its basis t).
    #[getter]
    fn tx(&self) -> u64 {
        self.tx
    }

    /// Each tempid the data named (a string, or a negative number) with the id it resolved to.
    #[getter]
    fn tempids(&self, py: Python<'_>) -> PyResult<Py<PyDict>> {
        let made = self.tempids.get_or_try_init(py, || {
            let tempids = PyDict::new(py);
            for (k, v) in self.report().tempids_edn() {
                tempids.set_item(to_py(py, &k)?, to_py(py, &v)?)?;
            }
            Ok::<_, PyErr>(tempids.unbind())
        })?;
        Ok(made.clone_ref(py))
    }

    /// The datoms asserted and retracted, as `datalith.Datom`s.
    #[getter]
    fn tx_data(&self, py: Python<'_>) -> PyResult<Py<PyAny>> {
        let made = self.tx_data.get_or_try_init(py, || {
            Ok::<_, PyErr>(datoms(py, &self.report(), self.connection.get())?.unbind())
        })?;
        Ok(made.clone_ref(py))
    }

    fn __repr__(&self) -> String {
        let n = self.report().tempids_edn().len();
        format!("<datalith.TxReport tx {} ({n} tempids)>", self.tx)
    }
}
