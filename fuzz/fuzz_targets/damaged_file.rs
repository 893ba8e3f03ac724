//! libFuzzer entry for the `damaged_file` target (body: `datalith_fuzz_targets::damaged_file::run`).
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| datalith_fuzz_targets::damaged_file::run(data));
