//! EDN: reading and printing the data format of queries, tx data and results.
//!
//! Hand-written rather than taken from a crate: we need line and column in every error, exact
//! round trips of every value type Datalith stores (`#inst`, `#uuid`, `N` and `M` numbers), a
//! completeness check for the shell's multi-line input, and no panic on any input. The reader
//! is one small recursive-descent parser with a depth limit.

pub mod cbor;
mod convert;
mod deserialize;
mod duplicate;
mod print;
mod read;
mod serialize;
mod slot;
mod value;

pub use convert::{edn_from_value, value_from_edn, value_from_input};
pub use deserialize::{from_edn, DeserializeError};
pub use print::{inst_text, to_edn_string, to_json, write_edn, write_escaped, TextOut};
pub(crate) use read::read_one_spanned;
pub use read::{
    civil_from_days, is_complete, parse_inst, read_all, read_one, read_prefix, ReadError,
};
pub use serialize::{to_edn, SerializeError};
pub use value::Edn;

#[cfg(test)]
mod tests;
