//! Telling where the log ends from damage inside it.
//!
//! Replay stops at the first record that is missing, torn or fails its checksum. After a crash
//! that is the end of the log: the committer writes a record only after the one before it
//! was synced, so nothing after a torn record was ever acknowledged. A **whole** record with
//! a later sequence number past the stop says otherwise: the record where replay stopped was
//! synced once and has been damaged since, and stopping there would silently drop every
//! acknowledged transaction after it. Recovery refuses that log instead (`Corrupt`), before
//! it touches the data file, unless the caller accepts the loss
//! (`EnvOptions::log_accept_damage`). When more than one record is missing before the whole
//! one, the ring may have moved on past the checkpoint in use (its newer slot lost, and the
//! pages of the one left reused since): that is refused even when damage is accepted.
//!
//! The search is bounded, so that every open stays cheap: the bytes just past the stop (a
//! damaged record's header gives its length, but a damaged header gives nothing, so the
//! search looks for a record header at every byte of a window) and the start of the record
//! area (the records after a wrap). Stale records of earlier laps of the ring have lower
//! sequence numbers and are passed over.

use super::file::LogFile;
use super::frame::{self, HEADER_BYTES};

/// Bytes past the stop searched for a later record: more than any record a batch of small
/// transactions writes (W at batch 1000: ~85 KB), so damage inside one is found from the
/// record after it.
const SEARCH_BYTES: u64 = 1 << 20;

/// A whole record past the point where replay stopped.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Survivor {
    /// Its offset in the log file.
    pub(crate) at: u64,
    pub(crate) seq: u64,
}

/// The first whole record with sequence number `seq` or later from `pos` on (where replay
/// expected record `seq` and found none whole: a whole one there has another number, a later
/// one after a recycled stretch of the ring), within the search bounds.
pub(crate) fn after(log: &LogFile, pos: u64, seq: u64) -> Option<Survivor> {
    let from = pos.max(log.area_start);
    let to = log.capacity.min(pos.saturating_add(SEARCH_BYTES));
    let mut window = vec![0u8; to.saturating_sub(from) as usize];
    if !window.is_empty() && log.read_at(from, &mut window).is_ok() {
        let magic = frame::MAGIC.to_le_bytes();
        // Headers are read from the window first: stale records of earlier laps (lower
        // numbers) are passed over without reading their bodies.
        let found = window
            .windows(magic.len())
            .enumerate()
            .filter(|(i, w)| {
                *w == magic && frame::header(&window[*i..]).is_none_or(|h| h.seq >= seq)
            })
            .find_map(|(i, _)| whole_at(log, from + i as u64, seq));
        if found.is_some() {
            return found;
        }
    }
    match pos == log.area_start {
        true => None,
        false => whole_at(log, log.area_start, seq),
    }
}

/// The record at `at`, if it is whole and numbered `seq` or later.
fn whole_at(log: &LogFile, at: u64, seq: u64) -> Option<Survivor> {
    let (mut head, mut body) = ([0u8; HEADER_BYTES], Vec::new());
    let h = log.record_at(at, &mut head, &mut body)?;
    (h.seq >= seq).then_some(Survivor { at, seq: h.seq })
}
