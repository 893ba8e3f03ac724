//! Codec tests: byte tables per type, decode errors, property tests of order and round trip,
//! and index keys (giants).

mod encodings;
mod errors;
mod index_keys;
mod props;
mod strategies;
