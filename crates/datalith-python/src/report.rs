//! `TxReport`: what a transaction returns.

use pyo3::prelude::*;
use pyo3::types::PyDict;

use crate::convert::to_py;
use crate::package;

/// A committed transaction: its id, the ids its tempids resolved to, and its datoms.
#[pyclass(frozen, module = "datalith")]
pub(crate) struct TxReport {
    tx: u64,
    tempids: Py<PyDict>,
    tx_data: Py<PyAny>,
}

impl TxReport {
    pub(crate) fn new(py: Python<'_>, report: &datalith::TxReport) -> PyResult<TxReport> {
        let tempids = PyDict::new(py);
        for (k, v) in report.tempids_edn() {
            tempids.set_item(to_py(py, &k)?, to_py(py, &v)?)?;
        }
        // The attributes' idents as of after the transaction (which may have installed them).
        let after = report
            .db_after()
            .map_err(|e| crate::errors::to_pyerr(py, e))?;
        let datom = package::datom_class(py)?;
        let keyword = package::keyword_class(py)?;
        let rows = pyo3::types::PyList::empty(py);
        for d in &report.tx_data {
            let attr = after
                .schema()
                .get(d.a)
                .map(|a| a.ident.to_string())
                .unwrap_or_else(|| format!(":db.unknown/{}", d.a));
            let v = to_py(py, &datalith::edn::edn_from_value(&d.v))?;
            rows.append(datom.call1((d.e, keyword.call1((attr,))?, v, d.tx, d.added))?)?;
        }
        Ok(TxReport {
            tx: report.tx,
            tempids: tempids.unbind(),
            tx_data: rows.into_any().unbind(),
        })
    }
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
    fn tempids(&self, py: Python<'_>) -> Py<PyDict> {
        self.tempids.clone_ref(py)
    }

    /// The datoms asserted and retracted, as `datalith.Datom`s.
    #[getter]
    fn tx_data(&self, py: Python<'_>) -> Py<PyAny> {
        self.tx_data.clone_ref(py)
    }

    fn __repr__(&self, py: Python<'_>) -> String {
        format!(
            "<datalith.TxReport tx {} ({} tempids)>",
            self.tx,
            self.tempids.bind(py).len()
        )
    }
}
