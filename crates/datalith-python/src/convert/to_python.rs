//! EDN to Python. Vectors and lists become lists, except where Python needs a hashable value
//! (members of a set, keys of a dict): there tuples, and sets there are frozensets. A set that
//! holds a map (a query whose `:find` pulls) cannot be a Python set: it becomes a list.

use datalith::codec::Keyword;
use datalith::Edn;
use pyo3::ffi;
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyDict, PyFrozenSet, PyString};

use crate::package;

/// The Python value of `e`.
pub(crate) fn to_py<'py>(py: Python<'py>, e: &Edn) -> PyResult<Bound<'py, PyAny>> {
    convert(py, e, false)
}

/// An item of a query's result as `to_py` makes it inside the whole result: a set's
/// hashable items (its tuples) as tuples, anything else as `to_py` makes it.
pub(crate) fn item_to_py<'py>(
    py: Python<'py>,
    e: &Edn,
    in_set: bool,
) -> PyResult<Bound<'py, PyAny>> {
    convert(py, e, in_set && can_hash(e))
}

fn convert<'py>(py: Python<'py>, e: &Edn, hashable: bool) -> PyResult<Bound<'py, PyAny>> {
    Ok(match e {
        Edn::Nil => py.None().into_bound(py),
        Edn::Bool(b) => b.into_pyobject(py)?.to_owned().into_any(),
        Edn::Long(n) => n.into_pyobject(py)?.into_any(),
        Edn::BigInt(n) => n.into_pyobject(py)?.into_any(),
        Edn::Double(x) => x.into_pyobject(py)?.into_any(),
        // Display gives `0.15E1M`, which `Decimal` reads without its `M`.
        Edn::BigDec(d) => {
            package::decimal_class(py)?.call1((d.to_string().trim_end_matches('M'),))?
        }
        Edn::Ratio(r) => package::fraction_class(py)?.call1((r.numerator(), r.denominator()))?,
        Edn::String(s) => PyString::new(py, s).into_any(),
        Edn::Char(c) => PyString::new(py, c.encode_utf8(&mut [0; 4])).into_any(),
        Edn::Keyword(k) => package::keyword_class(py)?.call1((k.to_string(),))?,
        Edn::Symbol(s) => package::symbol_class(py)?.call1((symbol_text(s),))?,
        Edn::List(items) | Edn::Vector(items) => match hashable {
            true => tuple(py, items)?,
            false => list(py, items, false)?,
        },
        Edn::Set(items) if items.iter().all(can_hash) => match hashable {
            true => PyFrozenSet::new(py, items_of(py, items, true)?)?.into_any(),
            false => set(py, items)?,
        },
        Edn::Set(items) => list(py, items, false)?,
        Edn::Map(pairs) => {
            let dict = PyDict::new(py);
            for (k, v) in pairs {
                dict.set_item(convert(py, k, true)?, convert(py, v, false)?)?;
            }
            dict.into_any()
        }
        Edn::Inst(ms) => package::inst_from_ms(py)?.call1((*ms,))?,
        Edn::Uuid(bytes) => {
            let kwargs = PyDict::new(py);
            kwargs.set_item("bytes", PyBytes::new(py, bytes))?;
            package::uuid_class(py)?.call((), Some(&kwargs))?
        }
        Edn::Regex(source) => PyString::new(py, source).into_any(),
        Edn::Tagged(tag, inner) => match bytes_of(tag, inner) {
            Some(bytes) => PyBytes::new(py, &bytes).into_any(),
            None => package::tagged_class(py)?
                .call1((symbol_text(tag), convert(py, inner, hashable)?))?,
        },
    })
}

// Query results are collections of many small rows: the three builders below fill each
// container in place (no vector of elements in between), and a tuple of atoms leaves the
// cycle collector's list at once, as CPython itself would at its next collection (it cannot
// be part of a cycle), so the collections that thousands of new tuples set off find little
// to scan. Each steals or copies references as the C API documents it.

/// A tuple of `items` (hashable all through).
fn tuple<'py>(py: Python<'py>, items: &[Edn]) -> PyResult<Bound<'py, PyAny>> {
    let n = ffi::Py_ssize_t::try_from(items.len()).map_err(|_| too_long())?;
    // SAFETY: the GIL is held (`py`); a new reference is owned by the `Bound` at once; a slot
    // left empty by an error is a null the tuple's deallocation skips.
    unsafe {
        let t = Bound::from_owned_ptr_or_err(py, ffi::PyTuple_New(n))?;
        for (i, item) in items.iter().enumerate() {
            let v = convert(py, item, true)?;
            // Steals the reference of `v`; cannot fail for an index inside a new tuple.
            ffi::PyTuple_SetItem(t.as_ptr(), i as ffi::Py_ssize_t, v.into_ptr());
        }
        if items.iter().all(is_atom) {
            ffi::PyObject_GC_UnTrack(t.as_ptr().cast());
        }
        Ok(t)
    }
}

/// A list of `items`.
fn list<'py>(py: Python<'py>, items: &[Edn], hashable: bool) -> PyResult<Bound<'py, PyAny>> {
    let n = ffi::Py_ssize_t::try_from(items.len()).map_err(|_| too_long())?;
    // SAFETY: as in `tuple`; a list's empty slots are nulls its deallocation skips.
    unsafe {
        let l = Bound::from_owned_ptr_or_err(py, ffi::PyList_New(n))?;
        for (i, item) in items.iter().enumerate() {
            let v = convert(py, item, hashable)?;
            ffi::PyList_SetItem(l.as_ptr(), i as ffi::Py_ssize_t, v.into_ptr());
        }
        Ok(l)
    }
}

/// A set of `items` (each hashable: the caller checked).
fn set<'py>(py: Python<'py>, items: &[Edn]) -> PyResult<Bound<'py, PyAny>> {
    // SAFETY: the GIL is held; `PySet_Add` takes its own reference to the key.
    unsafe {
        let s = Bound::from_owned_ptr_or_err(py, ffi::PySet_New(std::ptr::null_mut()))?;
        for item in items {
            let v = convert(py, item, true)?;
            if ffi::PySet_Add(s.as_ptr(), v.as_ptr()) != 0 {
                return Err(PyErr::fetch(py));
            }
        }
        Ok(s)
    }
}

/// Whether `e` becomes a Python object that holds no other object.
fn is_atom(e: &Edn) -> bool {
    matches!(
        e,
        Edn::Nil
            | Edn::Bool(_)
            | Edn::Long(_)
            | Edn::BigInt(_)
            | Edn::Double(_)
            | Edn::String(_)
            | Edn::Char(_)
            | Edn::Keyword(_)
            | Edn::Symbol(_)
            | Edn::Inst(_)
            | Edn::Uuid(_)
            | Edn::Regex(_)
    )
}

fn too_long() -> PyErr {
    pyo3::exceptions::PyOverflowError::new_err("a collection too long for Python")
}

fn items_of<'py>(
    py: Python<'py>,
    items: &[Edn],
    hashable: bool,
) -> PyResult<Vec<Bound<'py, PyAny>>> {
    items.iter().map(|i| convert(py, i, hashable)).collect()
}

/// Whether `e` has a hashable Python form (maps are dicts; everything else has one).
fn can_hash(e: &Edn) -> bool {
    match e {
        Edn::Map(_) => false,
        Edn::List(items) | Edn::Vector(items) | Edn::Set(items) => items.iter().all(can_hash),
        Edn::Tagged(_, inner) => can_hash(inner),
        _ => true,
    }
}

/// `ns/name` (a symbol's or tag's text, without a keyword's colon).
fn symbol_text(k: &Keyword) -> String {
    match k.namespace() {
        Some(ns) => format!("{ns}/{}", k.name()),
        None => k.name().to_string(),
    }
}

/// The bytes of the library's `#bytes [...]` form of a byte value.
fn bytes_of(tag: &Keyword, inner: &Edn) -> Option<Vec<u8>> {
    if tag.namespace().is_some() || tag.name() != "bytes" {
        return None;
    }
    let Edn::Vector(items) = inner else {
        return None;
    };
    items
        .iter()
        .map(|i| match i {
            Edn::Long(n) => u8::try_from(*n).ok(),
            _ => None,
        })
        .collect()
}
