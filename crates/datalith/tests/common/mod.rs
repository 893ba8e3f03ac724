//! Code shared by the integration tests (each test file includes what it needs).

pub mod crash;
