//! libFuzzer entry for the `tx` target (body: `datalith_fuzz_targets::tx::run`).
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| datalith_fuzz_targets::tx::run(data));
