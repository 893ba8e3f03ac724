//! The database's errors as the package's exception classes (`datalith._errors`): one class
//! per anomaly category, a few common codes with a class of their own, each carrying the
//! error's code, anomaly, fields (as a dict) and message.

use pyo3::prelude::*;

use crate::convert::to_py;
use crate::package;

/// The Python exception for a database error.
pub(crate) fn to_pyerr(py: Python<'_>, e: impl Into<datalith::Error>) -> PyErr {
    let e: datalith::Error = e.into();
    let category = e.category();
    let made = (|| {
        let data = to_py(py, &e.to_edn())?;
        package::make_error(py)?.call1((
            e.to_string(),
            category.code,
            category.anomaly.code(),
            data,
        ))
    })();
    match made {
        Ok(exception) => PyErr::from_value(exception),
        // The package is broken (its modules could not be imported): say so, with the error.
        Err(import_failure) => import_failure,
    }
}
