//! The framing of one log record: a fixed header (magic, kind, body length, sequence number,
//! CRC32C of header and body) followed by the body. A record is valid only if its magic,
//! length and checksum all hold and its sequence number is the one expected next, so a torn
//! write, a stale record of an earlier lap of the ring, and zeroed preallocated space all read
//! as "the log ends here".
//!
//! Layout (little-endian): `magic u32 | kind u8 | flags u8 | 0 u8 ×2 | body_len u32 | seq u64 |
//! crc u32`. The one flag, [`UNSYNCED`], marks a record its writer acknowledged without
//! syncing it (`Durability::NoSync`): after a machine crash it, and the records before it back
//! to the last synced one, may be missing or torn without the log being damaged (`survivor`).

/// Bytes of a record header.
pub(crate) const HEADER_BYTES: usize = 24;
pub(crate) const MAGIC: u32 = 0x5257_4c44; // "DLWR"
/// The flags byte's bit for a record acknowledged before any sync covered it.
pub(crate) const UNSYNCED: u8 = 1;

/// What a record holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Kind {
    /// One commit group's writes (see `body`).
    Group,
    /// The ring continues at the start of the record area.
    Wrap,
    /// One commit group's writes without those a [`super::derive::Derivation`] rebuilds: the
    /// derivation's name (`u16` length, then the name), then a body as for `Group`.
    Derived,
}

impl Kind {
    fn byte(self) -> u8 {
        match self {
            Kind::Group => 1,
            Kind::Wrap => 2,
            Kind::Derived => 3,
        }
    }

    fn from_byte(b: u8) -> Option<Kind> {
        match b {
            1 => Some(Kind::Group),
            2 => Some(Kind::Wrap),
            3 => Some(Kind::Derived),
            _ => None,
        }
    }
}

/// Writes a record of `kind` and `seq` around `body` (already in `out[HEADER_BYTES..]`): the
/// caller encodes the body in place after reserving the header, so nothing is copied.
/// `unsynced`: the record will be acknowledged without a sync ([`UNSYNCED`]).
pub(crate) fn seal(out: &mut [u8], kind: Kind, seq: u64, unsynced: bool) {
    let body_len = (out.len() - HEADER_BYTES) as u32;
    out[0..4].copy_from_slice(&MAGIC.to_le_bytes());
    out[4] = kind.byte();
    out[5] = if unsynced { UNSYNCED } else { 0 };
    out[6..8].fill(0);
    out[8..12].copy_from_slice(&body_len.to_le_bytes());
    out[12..20].copy_from_slice(&seq.to_le_bytes());
    let crc = crc32c::crc32c_append(crc32c::crc32c(&out[..20]), &out[HEADER_BYTES..]);
    out[20..24].copy_from_slice(&crc.to_le_bytes());
}

/// A parsed header, not yet checked against its body.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Header {
    pub(crate) kind: Kind,
    pub(crate) body_len: usize,
    pub(crate) seq: u64,
    /// Acknowledged without a sync ([`UNSYNCED`]).
    pub(crate) unsynced: bool,
    crc: u32,
}

/// Parses a header; `None` for anything that is not one (zeroes, garbage, a torn write).
pub(crate) fn header(b: &[u8]) -> Option<Header> {
    let b = b.get(..HEADER_BYTES)?;
    if u32::from_le_bytes(b[0..4].try_into().ok()?) != MAGIC
        || b[5] & !UNSYNCED != 0
        || b[6..8] != [0, 0]
    {
        return None;
    }
    Some(Header {
        kind: Kind::from_byte(b[4])?,
        body_len: u32::from_le_bytes(b[8..12].try_into().ok()?) as usize,
        seq: u64::from_le_bytes(b[12..20].try_into().ok()?),
        unsynced: b[5] == UNSYNCED,
        crc: u32::from_le_bytes(b[20..24].try_into().ok()?),
    })
}

/// Whether `body` is the one `header` (read from `header_bytes`) was sealed around.
pub(crate) fn checks(header: &Header, header_bytes: &[u8], body: &[u8]) -> bool {
    body.len() == header.body_len
        && crc32c::crc32c_append(crc32c::crc32c(&header_bytes[..20]), body) == header.crc
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sealed(body: &[u8], seq: u64, unsynced: bool) -> Vec<u8> {
        let mut out = vec![0; HEADER_BYTES];
        out.extend_from_slice(body);
        seal(&mut out, Kind::Group, seq, unsynced);
        out
    }

    #[test]
    fn a_sealed_record_checks_and_any_flipped_byte_does_not() {
        for unsynced in [false, true] {
            let rec = sealed(b"some writes", 7, unsynced);
            let h = header(&rec).unwrap();
            assert_eq!(
                (h.kind, h.body_len, h.seq, h.unsynced),
                (Kind::Group, 11, 7, unsynced)
            );
            assert!(checks(&h, &rec, &rec[HEADER_BYTES..]));
            for i in 0..rec.len() {
                for flip in [0x40, 0x01] {
                    let mut bad = rec.clone();
                    bad[i] ^= flip;
                    let ok = header(&bad).is_some_and(|h| checks(&h, &bad, &bad[HEADER_BYTES..]));
                    assert!(!ok, "flipping bits {flip:#x} of byte {i} went unnoticed");
                }
            }
        }
    }

    #[test]
    fn zeroes_are_no_header() {
        assert!(header(&[0; HEADER_BYTES]).is_none());
        assert!(header(&[0; 3]).is_none());
    }
}
