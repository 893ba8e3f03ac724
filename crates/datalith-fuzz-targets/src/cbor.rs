//! Target `cbor`: the CBOR reader (`datalith::edn::cbor`, the server's binary bodies) on any
//! bytes.
//!
//! Invariant checked: whatever reads writes back as bytes that read to the same value (the
//! writer never writes what the reader refuses or reads otherwise); no bytes panic, hang or
//! reserve memory their length does not back.

use datalith::edn::cbor::{read_cbor, write_cbor};

/// Reads `data` as one CBOR value; a value read must write and read back to itself.
pub fn run(data: &[u8]) {
    let Ok(value) = read_cbor(data) else {
        return;
    };
    let mut written = Vec::new();
    write_cbor(&value, &mut written);
    match read_cbor(&written) {
        // NaN is the one value not equal to itself: compare what it prints as.
        Ok(again) => assert_eq!(
            datalith::edn::to_edn_string(&again),
            datalith::edn::to_edn_string(&value),
            "a value read does not write back to itself"
        ),
        Err(e) => panic!("written bytes do not read back ({e}): {written:02x?}"),
    }
}
