//! libFuzzer entry for the `edn` target (body: `datalith_fuzz_targets::edn::run`).
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| datalith_fuzz_targets::edn::run(data));
