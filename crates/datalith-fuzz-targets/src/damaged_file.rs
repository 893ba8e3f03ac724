//! Target `damaged_file`: a sound `data.mdb` damaged as the fuzzer's bytes say, then opened
//! (read-only with every page verified, as `check` does; and read-write, as the shell does),
//! checked, queried and pulled, and written to when it opened for writing.
//!
//! The input is a program of damages, each [`STEP_BYTES`] bytes: an operation byte, a 32-bit
//! offset into the file and a 16-bit argument (see [`Damage`]). Describing damage instead of
//! shipping whole files keeps the corpus to a few bytes per case while the file stays real.

use std::path::Path;

use datalith::edn::read_one;
use datalith::kv::Verify;
use datalith::{Database, DbOptions};

/// LMDB's page size on the platforms Datalith runs on.
pub const PAGE_BYTES: usize = 4096;
/// Bytes of input per damage.
pub const STEP_BYTES: usize = 7;
/// At most this many damages are applied (more says nothing new and slows the target).
pub const MAX_STEPS: usize = 16;

/// One damage to the file. Offsets (`at`) wrap around the file's current length.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Damage {
    /// Two bytes overwritten.
    Overwrite {
        /// Offset of the first byte.
        at: usize,
        /// The bytes written.
        bytes: [u8; 2],
    },
    /// A page zeroed.
    ZeroPage {
        /// An offset inside the page.
        at: usize,
    },
    /// The file cut short.
    Truncate {
        /// The new length.
        at: usize,
    },
    /// Two pages swapped.
    SwapPages {
        /// An offset inside the first page.
        at: usize,
        /// The second page's number (modulo the page count).
        other: usize,
    },
    /// One byte XORed with a nonzero mask.
    FlipBits {
        /// The byte's offset.
        at: usize,
        /// The mask.
        mask: u8,
    },
}

/// Decodes the damage program in `data`.
pub fn damages(data: &[u8]) -> Vec<Damage> {
    data.chunks_exact(STEP_BYTES)
        .take(MAX_STEPS)
        .map(|c| {
            let at = u32::from_le_bytes([c[1], c[2], c[3], c[4]]) as usize;
            let arg = [c[5], c[6]];
            match c[0] % 5 {
                0 => Damage::Overwrite { at, bytes: arg },
                1 => Damage::ZeroPage { at },
                2 => Damage::Truncate { at },
                3 => Damage::SwapPages {
                    at,
                    other: u16::from_le_bytes(arg) as usize,
                },
                _ => Damage::FlipBits {
                    at,
                    mask: arg[0] | 1,
                },
            }
        })
        .collect()
}

/// Applies `damage` to `file` (offsets wrap around the file's current length).
pub fn apply(file: &mut Vec<u8>, damage: Damage) {
    if file.is_empty() {
        return;
    }
    let len = file.len();
    let pages = len.div_ceil(PAGE_BYTES);
    let page_range = |p: usize| p * PAGE_BYTES..((p + 1) * PAGE_BYTES).min(len);
    match damage {
        Damage::Overwrite { at, bytes } => {
            for (i, b) in bytes.iter().enumerate() {
                file[(at + i) % len] = *b;
            }
        }
        Damage::ZeroPage { at } => file[page_range((at % len) / PAGE_BYTES)].fill(0),
        Damage::Truncate { at } => file.truncate(at % len),
        Damage::SwapPages { at, other } => {
            let (a, b) = ((at % len) / PAGE_BYTES, other % pages);
            let (ra, rb) = (page_range(a), page_range(b));
            if a != b && ra.len() == rb.len() {
                let page_a = file[ra.clone()].to_vec();
                file.copy_within(rb.clone(), ra.start);
                file[rb].copy_from_slice(&page_a);
            }
        }
        Damage::FlipBits { at, mask } => file[at % len] ^= mask,
    }
}

fn options() -> DbOptions {
    // NoSync: a flush proves nothing here and would make each run wait on the disk.
    let mut o = DbOptions::with_durability(datalith::kv::Durability::NoSync);
    o.env.verify = Verify::Everything;
    o
}

fn read_everything(db: &Database) {
    let Ok(snapshot) = db.db() else { return };
    let _ = snapshot.check();
    let _ = snapshot.q(
        "[:find ?n ?a ?t :where [?e :name ?n] [?e :age ?a] [?e :tag ?t]]",
        &[],
    );
    let _ = snapshot.q("[:find (count ?e) :where [?e :friend ?f] [?f :nick]]", &[]);
    if let Ok(ann) = read_one("[:name \"Ann\"]") {
        if let Ok(eid) = datalith::pull::Eid::from_edn(&ann) {
            let _ = snapshot.pull("[* {:friend [:name {:friend ...}]}]", eid);
        }
    }
}

fn open_all_ways(dir: &Path) {
    if let Ok(db) = Database::open_read_only(dir, options()) {
        read_everything(&db);
    }
    if let Ok(db) = Database::open(dir, options()) {
        read_everything(&db);
        if let Ok(form) =
            read_one("[{:name \"Zed\" :age 1 :tag [:z]} [:db/retract [:name \"Bob\"] :age 42]]")
        {
            if let Ok(tx) = datalith::TxData::from_edn(&form) {
                let _ = db.transact(tx);
            }
        }
        read_everything(&db);
    }
}

/// Damages a copy of the sound data file as `data` says and opens, reads and writes it.
pub fn run(data: &[u8]) {
    let mut file = crate::fixture::sound_data_file().to_vec();
    for d in damages(data) {
        apply(&mut file, d);
    }
    let dir = tempfile::tempdir().expect("temporary directory");
    std::fs::write(dir.path().join("data.mdb"), &file).expect("write the damaged copy");
    open_all_ways(dir.path());
}
