//! Target `edn`: the EDN reader on any text.
//!
//! Invariant checked: whatever reads prints as text that reads back and prints the same
//! (printing is a fixed point after one round), so the printer never writes what the reader
//! cannot take back.

use datalith::edn::{read_all, to_edn_string};

/// Reads `data` as EDN forms; each form read must print and re-read to the same text.
pub fn run(data: &[u8]) {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let Ok(forms) = read_all(text) else {
        return;
    };
    for form in forms {
        let printed = to_edn_string(&form);
        let again = match datalith::edn::read_one(&printed) {
            Ok(f) => f,
            Err(e) => panic!("printed form does not read back: {printed} ({e})"),
        };
        assert_eq!(
            printed,
            to_edn_string(&again),
            "printing is not a fixed point"
        );
    }
}
