//! The database's datoms as a list of `datalith.Datom(e, a, v, tx, added)`.

use datalith::store::Schema;
use datalith::Datom;
use pyo3::prelude::*;
use pyo3::types::{PyBool, PyList, PyTuple};

use super::to_py;
use crate::package;

/// `datoms` as `Datom`s, each attribute named by its ident in `schema`.
pub(crate) fn datom_list<'py>(
    py: Python<'py>,
    schema: &Schema,
    datoms: &[Datom],
) -> PyResult<Bound<'py, PyList>> {
    let datom = package::datom_class(py)?;
    let keyword = package::keyword_class(py)?;
    // `tuple.__new__(Datom, fields)` is what the named tuple's own constructor does, without
    // its Python-level argument handling (a third of a walk's time).
    let tuple_new = package::tuple_new(py)?;
    // A walk or a transaction names few attributes: each attribute's keyword is made once.
    let mut idents: Vec<(u32, Bound<'py, PyAny>)> = Vec::new();
    let rows = PyList::empty(py);
    for d in datoms {
        let attr = match idents.iter().find(|(a, _)| *a == d.a) {
            Some((_, k)) => k.clone(),
            None => {
                let text = schema
                    .get(d.a)
                    .map(|a| a.ident.to_string())
                    .unwrap_or_else(|| format!(":db.unknown/{}", d.a));
                let k = keyword.call1((text,))?;
                idents.push((d.a, k.clone()));
                k
            }
        };
        let v = to_py(py, &datalith::edn::edn_from_value(&d.v))?;
        let fields = PyTuple::new(
            py,
            [
                d.e.into_pyobject(py)?.into_any(),
                attr,
                v,
                d.tx.into_pyobject(py)?.into_any(),
                PyBool::new(py, d.added).to_owned().into_any(),
            ],
        )?;
        rows.append(tuple_new.call1((datom, fields))?)?;
    }
    Ok(rows)
}
