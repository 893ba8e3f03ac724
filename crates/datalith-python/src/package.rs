//! Names of the Python package the extension uses (its types, its exception factory), looked
//! up once per interpreter: a conversion of thousands of values would otherwise import and
//! look up each class thousands of times.

use pyo3::prelude::*;
use pyo3::sync::PyOnceLock;

macro_rules! package_name {
    ($fn_name:ident, $module:literal, $attr:literal) => {
        pub(crate) fn $fn_name(py: Python<'_>) -> PyResult<&Bound<'_, PyAny>> {
            static CELL: PyOnceLock<Py<PyAny>> = PyOnceLock::new();
            CELL.get_or_try_init(py, || {
                Ok::<_, PyErr>(py.import($module)?.getattr($attr)?.unbind())
            })
            .map(|o| o.bind(py))
        }
    };
}

package_name!(keyword_class, "datalith._types", "Keyword");
package_name!(symbol_class, "datalith._types", "Symbol");
package_name!(tagged_class, "datalith._types", "Tagged");
package_name!(datom_class, "datalith._types", "Datom");
package_name!(inst_from_ms, "datalith._types", "_inst_from_ms");
package_name!(ms_from_inst, "datalith._types", "_ms_from_inst");
package_name!(make_error, "datalith._errors", "_make");
package_name!(datetime_class, "datetime", "datetime");
package_name!(uuid_class, "uuid", "UUID");
package_name!(decimal_class, "decimal", "Decimal");
package_name!(fraction_class, "fractions", "Fraction");

/// `tuple.__new__`, to make a named tuple (`Datom`) from a tuple of its fields.
pub(crate) fn tuple_new(py: Python<'_>) -> PyResult<&Bound<'_, PyAny>> {
    static CELL: PyOnceLock<Py<PyAny>> = PyOnceLock::new();
    CELL.get_or_try_init(py, || {
        Ok::<_, PyErr>(
            py.import("builtins")?
                .getattr("tuple")?
                .getattr("__new__")?
                .unbind(),
        )
    })
    .map(|o| o.bind(py))
}
