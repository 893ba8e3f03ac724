//! (bytes, expected error): decoding never trusts its input.

use crate::codec::*;

fn malformed(offset: usize, what: &'static str) -> CodecError {
    CodecError::Malformed { offset, what }
}

fn truncated(offset: usize, expected: &'static str) -> CodecError {
    CodecError::Truncated { offset, expected }
}

#[test]
fn decode_error_table() {
    let mut deep = Vec::new();
    for _ in 0..=crate::limits::MAX_TUPLE_DEPTH {
        deep.extend([0x0E, 0x02]);
    }
    deep.extend(long_bytes(1));
    let cases: Vec<(Vec<u8>, CodecError)> = vec![
        (vec![], truncated(0, "a type tag")),
        (vec![0x00], CodecError::UnknownTag { offset: 0, tag: 0 }),
        (
            vec![0xFF],
            CodecError::UnknownTag {
                offset: 0,
                tag: 0xFF,
            },
        ),
        (vec![0x01], truncated(1, "a boolean")),
        (vec![0x01, 0x02], malformed(1, "boolean (0 or 1)")),
        (vec![0x02, 1, 2], truncated(1, "8 bytes of long")),
        (vec![0x03, 1], truncated(1, "16 bytes of bigint")),
        (
            vec![0x04, 0x7F, 0xFF, 0xFF, 0xFF],
            malformed(1, "float (NaN or -0.0)"),
        ),
        (
            vec![0x05, 0x7F, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF],
            malformed(1, "double (NaN or -0.0)"),
        ),
        (
            vec![0x05, 0xFF, 0xF8, 0, 0, 0, 0, 0, 0],
            malformed(1, "double (NaN or -0.0)"),
        ),
        (vec![0x06], truncated(1, "a bigdec sign")),
        (vec![0x06, 0x03], malformed(1, "bigdec sign (0, 1 or 2)")),
        (vec![0x06, 0x02, 0x80], truncated(2, "a bigdec exponent")),
        (
            vec![0x06, 0x02, 0x80, 0, 0, 1, b'1'],
            truncated(7, "bigdec digits and terminator"),
        ),
        (
            vec![0x06, 0x02, 0x80, 0, 0, 1, 0x00],
            malformed(6, "bigdec digits"),
        ),
        (
            vec![0x06, 0x02, 0x80, 0, 0, 1, b'0', b'1', 0x00],
            malformed(6, "bigdec digits"),
        ),
        (
            vec![0x06, 0x02, 0x80, 0, 0, 1, b'1', b'x', 0x00],
            malformed(6, "bigdec digits"),
        ),
        (vec![0x08, 1, 2, 3], truncated(1, "16 bytes of uuid")),
        (vec![0x09, b'a'], truncated(2, "a 0x00 0x00 terminator")),
        (vec![0x09, b'a', 0], truncated(3, "an escape or terminator")),
        (
            vec![0x09, 0, 1],
            malformed(2, "escape (0x00 must be followed by 0x00 or 0xFF)"),
        ),
        (vec![0x09, 0xFF, 0, 0], malformed(1, "UTF-8 text")),
        (vec![0x09, 0, 0xFF, 0xC3, 0, 0], malformed(1, "UTF-8 text")),
        (
            vec![0x0A, b'a', 0, 0],
            truncated(4, "a 0x00 0x00 terminator"),
        ),
        (vec![0x0C, 1], truncated(1, "8 bytes of ref")),
        (
            vec![0x0D, 1, 0, 2],
            malformed(3, "escape (0x00 must be followed by 0x00 or 0xFF)"),
        ),
        (vec![0x0E], truncated(1, "a tuple element marker")),
        (vec![0x0E, 0x03], malformed(1, "tuple element marker")),
        (vec![0x0E, 0x02], truncated(2, "a type tag")),
        (
            vec![0x0E, 0x02, 0x0F],
            CodecError::UnknownTag {
                offset: 2,
                tag: 0x0F,
            },
        ),
        (deep, malformed(2 * 8, "tuple nested too deeply")),
    ];
    for (bytes, want) in cases {
        assert_eq!(decode(&bytes), Err(want), "{bytes:02x?}");
    }
}

#[test]
fn exact_and_typed_decoders() {
    assert_eq!(
        decode_exact(&[0x01, 0x01, 0x00]),
        Err(CodecError::TrailingBytes {
            offset: 2,
            extra: 1
        })
    );
    assert_eq!(
        decode_long(&ref_bytes(5)),
        Err(CodecError::WrongType {
            offset: 0,
            expected: ValueType::Long,
            tag: 0x0C
        })
    );
    assert_eq!(
        decode_ref(&[0x42]),
        Err(CodecError::UnknownTag {
            offset: 0,
            tag: 0x42
        })
    );
    assert_eq!(decode_long(&[0x02, 0x80]), Err(truncated(1, "8 bytes")));
    assert_eq!(peek_type(&[]), Err(truncated(0, "a type tag")));
    assert!(decode_str(&long_bytes(1)).is_err());
}

#[test]
fn errors_display_their_fields() {
    let e = malformed(6, "bigdec digits");
    assert_eq!(e.to_string(), "malformed bigdec digits at byte 6");
    let e = CodecError::UnknownTag {
        offset: 3,
        tag: 0xAB,
    };
    assert_eq!(e.to_string(), "unknown type tag 0xab at byte 3");
}
