//! Python values to EDN and back: the type table of the package's README.
//!
//! - `to_python.rs`: EDN (answers, pulls, reports) to Python values.
//! - `datoms.rs`: the database's datoms as `datalith.Datom`s.
//! - `from_python.rs`: Python values (tx data, query inputs, lookup refs) to EDN, with the
//!   rule for when a plain `str` is a keyword.

mod datoms;
mod from_python;
mod to_python;

pub(crate) use datoms::datom_list;
pub(crate) use from_python::{to_edn, Place, ToEdn};
pub(crate) use to_python::{item_to_py, to_py};
