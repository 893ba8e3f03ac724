//! Datalith.
