//! libFuzzer entry for the `search_query` target (body: `datalith_fuzz_targets::search_query::run`).
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| datalith_fuzz_targets::search_query::run(data));
