//! Pieces every workload shares: errors, CPU and memory accounting, the in-flight semaphore,
//! latency windows and CSV rows, child processes and their line protocol, progress bars, plots,
//! repeated passes with their spread, the peers' heap setting, and the real `datalith serve`
//! of the `--remote` peers with the loopback round trip under them, and Datalevin's server
//! prepared outside the repository for theirs.

pub mod bare;
pub mod child;
pub mod clock;
pub mod device;
pub mod dtlv_server;
pub mod error;
pub mod jvm;
pub mod loopback;
pub mod markdown;
pub mod metrics;
pub mod passes;
pub mod plot;
pub mod progress;
pub mod run_args;
pub mod rusage;
pub mod semaphore;
pub mod serve;

pub use error::BenchError;
