//! [`IntoTxData`]: what `transact`, `transact_async` and `with` take, so a caller can hand
//! them tx data built in Rust, EDN data, or EDN text alike.
//!
//! Borrowed tx data stays borrowed (`with` on `&TxData` copies nothing); text is read as
//! one EDN form, then converted as [`super::edn::tx_data_from_edn`] converts EDN.

use std::borrow::Cow;

use super::data::TxData;
use super::edn::tx_data_from_edn;
use super::error::TxError;
use crate::edn::{read_one, Edn};

/// Tx data, or something that converts to it: [`TxData`] (owned or borrowed), [`Edn`], or
/// EDN text.
///
/// ```
/// use datalith::{Database, DbOptions};
///
/// let dir = tempfile::tempdir().unwrap();
/// let db = Database::open(dir.path(), DbOptions::default()).unwrap();
/// db.transact(r#"[{:db/ident :name :db/valueType :db.type/string
///                  :db/cardinality :db.cardinality/one}]"#).unwrap();
/// let data: datalith::Edn = r#"[{:name "Ann"}]"#.parse().unwrap();
/// db.transact(&data).unwrap();
/// let err = db.transact("[{:name").unwrap_err();
/// assert_eq!(err.category().code, ":datalith.error/invalid-edn");
/// ```
pub trait IntoTxData<'a> {
    /// The tx data, or why this is none.
    fn into_tx_data(self) -> Result<Cow<'a, TxData>, TxError>;
}

impl<'a> IntoTxData<'a> for TxData {
    fn into_tx_data(self) -> Result<Cow<'a, TxData>, TxError> {
        Ok(Cow::Owned(self))
    }
}

impl<'a> IntoTxData<'a> for &'a TxData {
    fn into_tx_data(self) -> Result<Cow<'a, TxData>, TxError> {
        Ok(Cow::Borrowed(self))
    }
}

impl<'a> IntoTxData<'a> for &Edn {
    fn into_tx_data(self) -> Result<Cow<'a, TxData>, TxError> {
        Ok(Cow::Owned(tx_data_from_edn(self)?))
    }
}

impl<'a> IntoTxData<'a> for Edn {
    fn into_tx_data(self) -> Result<Cow<'a, TxData>, TxError> {
        (&self).into_tx_data()
    }
}

impl<'a> IntoTxData<'a> for &str {
    fn into_tx_data(self) -> Result<Cow<'a, TxData>, TxError> {
        (&read_one(self)?).into_tx_data()
    }
}

impl<'a> IntoTxData<'a> for &String {
    fn into_tx_data(self) -> Result<Cow<'a, TxData>, TxError> {
        self.as_str().into_tx_data()
    }
}
