//! libFuzzer entry for the `query` target (body: `datalith_fuzz_targets::query::run`).
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| datalith_fuzz_targets::query::run(data));
