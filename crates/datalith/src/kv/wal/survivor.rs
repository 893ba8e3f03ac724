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
//!
//! A wrap marker counts only when it is numbered past the record where replay stopped. The
//! committer writes a marker and the record it names one after the other and syncs them
//! once, so `kill -9` between the two leaves marker `n` whole before a record `n` that was
//! never synced nor acknowledged: the normal end of a log, not damage. Marker `n + 1` is
//! written only after record `n` was synced, so it does speak for record `n`.
//!
//! A record written without a sync (`Durability::NoSync`, flagged `frame::UNSYNCED`) says
//! nothing of the records before it: the page cache writes its pages back in any order, so
//! after a machine crash it may be whole while earlier ones are not. Such a survivor is not
//! damage (`recovery::inspect`): the log ends where replay stopped, as that mode allows.

use super::file::LogFile;
use super::frame::{self, Kind, HEADER_BYTES};

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
    /// A wrap marker (numbered for the record after it), not a record.
    pub(crate) marker: bool,
    /// Acknowledged without a sync (`frame::UNSYNCED`): the records missing before it may
    /// never have reached the disk, which is what its writer's mode allowed.
    pub(crate) unsynced: bool,
}

impl Survivor {
    /// What it is, for an error message: "record 7 at byte 4096".
    pub(crate) fn describe(&self) -> String {
        match self.marker {
            true => format!("the wrap marker of record {} at byte {}", self.seq, self.at),
            false => format!("record {} at byte {}", self.seq, self.at),
        }
    }
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

/// The record at `at`, if it is whole and numbered `seq` or later, or a whole wrap marker
/// numbered past `seq` (see the module's note).
fn whole_at(log: &LogFile, at: u64, seq: u64) -> Option<Survivor> {
    let (mut head, mut body) = ([0u8; HEADER_BYTES], Vec::new());
    let speaks = |h: &frame::Header| match h.kind {
        Kind::Wrap => h.seq > seq,
        Kind::Group | Kind::Derived => h.seq >= seq,
    };
    let h = log.record_at(at, speaks, &mut head, &mut body)?;
    Some(Survivor {
        at,
        seq: h.seq,
        marker: h.kind == Kind::Wrap,
        unsynced: h.unsynced,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::FileExt;

    /// A frame of `kind` numbered `seq` with a body of `body` bytes.
    fn frame(kind: Kind, seq: u64, body: usize) -> Vec<u8> {
        let mut out = vec![7u8; HEADER_BYTES + body];
        frame::seal(&mut out, kind, seq, false);
        out
    }

    #[test]
    fn only_what_was_synced_after_the_stop_counts_as_a_survivor() {
        use Kind::{Group, Wrap};
        // Replay stopped at the start of the record area expecting record 5 (the checkpoint
        // named the wrap marker's offset, `far`, as where record 5 begins).
        type Row = (
            &'static str,
            &'static [(u64, Kind, u64)],
            Option<(u64, bool)>,
        );
        const FAR: u64 = 64 << 10;
        #[rustfmt::skip]
        let table: &[Row] = &[
            ("nothing past the stop", &[], None),
            ("the marker of record 5: killed before record 5 was written", &[(FAR, Wrap, 5)], None),
            ("the marker of record 6: record 5 was synced before it", &[(FAR, Wrap, 6)], Some((6, true))),
            ("a whole record 5", &[(FAR, Group, 5)], Some((5, false))),
            ("a whole record 9", &[(FAR, Group, 9)], Some((9, false))),
            ("a stale record of an earlier lap", &[(FAR, Group, 3)], None),
            ("marker 5, then a whole record 8", &[(FAR, Wrap, 5), (FAR + 4096, Group, 8)], Some((8, false))),
        ];
        for &(case, frames, want) in table {
            let dir = tempfile::tempdir().unwrap();
            let log = LogFile::open(dir.path(), 4096, 256 << 10, true)
                .unwrap()
                .unwrap();
            let area = log.area_start;
            for &(at, kind, seq) in frames {
                let body = if kind == Wrap { 0 } else { 300 };
                log.file
                    .write_all_at(&frame(kind, seq, body), area + at)
                    .unwrap();
            }
            let got = after(&log, area, 5).map(|s| (s.seq, s.marker));
            assert_eq!(got, want, "{case}");
        }
    }
}
