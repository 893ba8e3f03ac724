//! `datalith serve` as its clients see it: the real binary started on a free loopback port,
//! driven through plain HTTP. Each test is a table of requests and the status and body each
//! must get, run in order against one server (later rows read what earlier ones wrote).

mod admin;
mod api;
mod auth;
mod bad_input;
mod client;
mod client_crate;
mod connect;
mod copy;
mod kafka_log;
mod kv;
mod limits;
mod load;
mod metrics;
mod readme;
mod server;
mod shell;
mod slow_and_idle;
mod streaming;
mod tls;
