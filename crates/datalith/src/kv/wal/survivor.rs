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
//! The search is bounded, so that every open stays cheap (~0.1 ms added to opening a database
//! whose 64 MiB ring has wrapped, this machine): the record after a damaged one whose header
//! is whole (it gives the length), a window past the stop (a damaged header gives nothing, so
//! the window is searched for a record header at every byte), and the start of the record
//! area (the records after a wrap). Stale records of earlier laps of the ring have lower
//! sequence numbers and are passed over.

use super::file::LogFile;
use super::frame::{self, HEADER_BYTES};

/// Bytes past the stop searched for a later record when the stopped record's header gives
/// no length: more than the records of batches of small transactions (W at batch 1000: ~85
/// KB), so that damage inside one is found from the record after it.
const SEARCH_BYTES: u64 = 256 << 10;

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
    // A record whose header is whole but whose body is not says where the next one begins.
    let mut head = [0u8; HEADER_BYTES];
    if log.read_at(pos, &mut head).is_ok() {
        if let Some(h) = frame::header(&head).filter(|h| h.seq == seq) {
            let next = pos + (HEADER_BYTES + h.body_len) as u64;
            if let Some(s) = whole_at(log, next, seq) {
                return Some(s);
            }
        }
    }
    let from = pos.max(log.area_start);
    let to = log.capacity().min(pos.saturating_add(SEARCH_BYTES));
    let mut window = vec![0u8; to.saturating_sub(from) as usize];
    if !window.is_empty() && log.read_at(from, &mut window).is_ok() {
        // Headers are read from the window first: stale records of earlier laps (lower
        // numbers) are passed over without reading their bodies.
        let found = memchr::memmem::find_iter(&window, &frame::MAGIC.to_le_bytes())
            .filter(|&i| frame::header(&window[i..]).is_none_or(|h| h.seq >= seq))
            .find_map(|i| whole_at(log, from + i as u64, seq));
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
    let h = log.record_at(at, |h| h.seq >= seq, &mut head, &mut body)?;
    Some(Survivor { at, seq: h.seq })
}
