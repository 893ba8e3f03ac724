//! libFuzzer entry for the `cbor` target (body: `datalith_fuzz_targets::cbor::run`).
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| datalith_fuzz_targets::cbor::run(data));
