//! libFuzzer entry for the `pull` target (body: `datalith_fuzz_targets::pull::run`).
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| datalith_fuzz_targets::pull::run(data));
