//! A checkpoint slot: what the last durable LMDB sync covered. The log file begins with two
//! slots, and each checkpoint is written into both in turn (`LogFile::write_checkpoint`): a
//! torn write leaves the other whole, and a slot damaged later leaves its twin; the valid slot
//! with the higher generation is the checkpoint.
//!
//! Layout (little-endian): `magic u32 | version u32 | generation u64 | seq u64 | txnid u64 |
//! start u64 | meta_len u32 | meta | crc u32` (CRC32C of everything before it). `meta` is a
//! copy of the data file's two LMDB meta pages as they were when the sync returned: restoring
//! them rolls the data file back to exactly the checkpointed state (see `recovery`).

const MAGIC: u32 = 0x4b43_4c44; // "DLCK"
const VERSION: u32 = 1;
const FIXED_BYTES: usize = 44;

/// One checkpoint.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Checkpoint {
    /// Which slot write this was (the higher wins).
    pub(crate) generation: u64,
    /// The last log sequence number whose writes the checkpointed LMDB state holds.
    pub(crate) seq: u64,
    /// That state's LMDB transaction id.
    pub(crate) txnid: u64,
    /// Where in the log the record `seq + 1` begins (or will be written).
    pub(crate) start: u64,
    /// The data file's first two pages (LMDB's meta pages) at the checkpoint.
    pub(crate) meta: Vec<u8>,
}

/// Bytes a slot takes for meta pages of `page_bytes` each (a multiple of 4 KiB).
pub(crate) fn slot_bytes(page_bytes: usize) -> usize {
    (FIXED_BYTES + 2 * page_bytes + 4).div_ceil(4096) * 4096
}

impl Checkpoint {
    /// The slot's bytes (padded to `slot_bytes`).
    pub(crate) fn encode(&self, slot_len: usize) -> Vec<u8> {
        let mut b = Vec::with_capacity(slot_len);
        b.extend_from_slice(&MAGIC.to_le_bytes());
        b.extend_from_slice(&VERSION.to_le_bytes());
        for n in [self.generation, self.seq, self.txnid, self.start] {
            b.extend_from_slice(&n.to_le_bytes());
        }
        b.extend_from_slice(&(self.meta.len() as u32).to_le_bytes());
        b.extend_from_slice(&self.meta);
        let crc = crc32c::crc32c(&b);
        b.extend_from_slice(&crc.to_le_bytes());
        b.resize(slot_len.max(b.len()), 0);
        b
    }

    /// Parses a slot; `None` if it is not a whole, valid one.
    pub(crate) fn decode(b: &[u8]) -> Option<Checkpoint> {
        let u32_at = |at: usize| Some(u32::from_le_bytes(b.get(at..at + 4)?.try_into().ok()?));
        let u64_at = |at: usize| Some(u64::from_le_bytes(b.get(at..at + 8)?.try_into().ok()?));
        if u32_at(0)? != MAGIC || u32_at(4)? != VERSION {
            return None;
        }
        let meta_len = u32_at(40)? as usize;
        let end = FIXED_BYTES.checked_add(meta_len)?;
        let crc = u32_at(end)?;
        if crc32c::crc32c(b.get(..end)?) != crc {
            return None;
        }
        Some(Checkpoint {
            generation: u64_at(8)?,
            seq: u64_at(16)?,
            txnid: u64_at(24)?,
            start: u64_at(32)?,
            meta: b[FIXED_BYTES..end].to_vec(),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_slot_round_trips_and_a_torn_one_is_refused() {
        let c = Checkpoint {
            generation: 3,
            seq: 41,
            txnid: 99,
            start: 1 << 20,
            meta: vec![7; 8192],
        };
        let len = slot_bytes(4096);
        let b = c.encode(len);
        assert_eq!(b.len(), len);
        assert_eq!(Checkpoint::decode(&b), Some(c));
        for cut in [0, 10, 43, 4000, 8235] {
            let mut torn = b.clone();
            torn[cut..].fill(0);
            assert_eq!(Checkpoint::decode(&torn), None, "cut at {cut}");
        }
    }
}
