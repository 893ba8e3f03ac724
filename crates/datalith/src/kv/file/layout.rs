//! LMDB's on-disk format, as `mdb.c` lays it out on a 64-bit little-endian build without
//! `MDB_VL32` (the only build Datalith uses): page headers, meta pages, table records and
//! nodes, parsed from plain byte slices. Nothing here trusts a byte: every accessor is given
//! bounds it checks, and the parsers return `None` where the bytes run out.

/// Page header: page number (8), pad / LEAF2 key size (2), flags (2), lower and upper bounds
/// of the free space (2 + 2; on an overflow page these 4 bytes are the page count).
pub(crate) const PAGE_HEADER: usize = 16;
/// Node header: data size or child page number (2 + 2), flags (2), key size (2).
pub(crate) const NODE_HEADER: usize = 8;
/// A table record (`MDB_db`): pad, flags, depth, page counts, entries, root.
pub(crate) const DB_RECORD: usize = 48;
/// Offset of `MDB_meta` in a meta page, and its size.
pub(crate) const META_OFFSET: usize = PAGE_HEADER;
pub(crate) const META_BYTES: usize = 136;

pub(crate) const MAGIC: u32 = 0xBEEF_C0DE;
pub(crate) const DATA_VERSION: u32 = 1;
/// "No page": the root of an empty tree.
pub(crate) const NO_PAGE: u64 = u64::MAX;
/// LMDB's compile-time key limit (`MDB_MAXKEYSIZE`).
pub(crate) const MAX_KEY_BYTES: usize = 511;
/// LMDB's cursor stack (`CURSOR_STACK`): no tree is deeper.
pub(crate) const MAX_DEPTH: u16 = 32;
pub(crate) const MIN_PAGE_BYTES: u32 = 512;
pub(crate) const MAX_PAGE_BYTES: u32 = 65536;

pub(crate) mod page_flag {
    pub(crate) const BRANCH: u16 = 0x01;
    pub(crate) const LEAF: u16 = 0x02;
    pub(crate) const OVERFLOW: u16 = 0x04;
    pub(crate) const META: u16 = 0x08;
    pub(crate) const LEAF2: u16 = 0x20;
    pub(crate) const SUBPAGE: u16 = 0x40;
    /// The bits that say what a page is; the rest (dirty, loose, keep) are bookkeeping.
    pub(crate) const KIND: u16 = BRANCH | LEAF | OVERFLOW | META | LEAF2 | SUBPAGE;
}

pub(crate) mod node_flag {
    /// The data lives on overflow pages; the node holds their first page number.
    pub(crate) const BIG_DATA: u16 = 0x01;
    /// The data is a table record (a named table, or a key's tree of list values).
    pub(crate) const SUB_DATA: u16 = 0x02;
    /// The key has several list values (in a sub-page, or with `SUB_DATA` a tree).
    pub(crate) const DUP_DATA: u16 = 0x04;
}

pub(crate) mod table_flag {
    pub(crate) const INTEGER_KEY: u16 = 0x08;
    pub(crate) const DUP_SORT: u16 = 0x04;
    pub(crate) const DUP_FIXED: u16 = 0x10;
    /// Orders Datalith never uses: a table with them is not ours to judge.
    pub(crate) const FOREIGN_ORDER: u16 = 0x02 | 0x20 | 0x40;
}

fn u16_at(b: &[u8], at: usize) -> Option<u16> {
    Some(u16::from_le_bytes(b.get(at..at + 2)?.try_into().ok()?))
}

fn u32_at(b: &[u8], at: usize) -> Option<u32> {
    Some(u32::from_le_bytes(b.get(at..at + 4)?.try_into().ok()?))
}

pub(crate) fn u64_at(b: &[u8], at: usize) -> Option<u64> {
    Some(u64::from_le_bytes(b.get(at..at + 8)?.try_into().ok()?))
}

/// A page header.
#[derive(Debug, Clone, Copy)]
pub(crate) struct PageHeader {
    pub(crate) pgno: u64,
    /// Key size on a LEAF2 page.
    pub(crate) pad: u16,
    pub(crate) flags: u16,
    pub(crate) lower: u16,
    pub(crate) upper: u16,
    /// Page count of an overflow page (the same bytes as lower and upper).
    pub(crate) overflow_pages: u32,
}

impl PageHeader {
    pub(crate) fn parse(b: &[u8]) -> Option<PageHeader> {
        Some(PageHeader {
            pgno: u64_at(b, 0)?,
            pad: u16_at(b, 8)?,
            flags: u16_at(b, 10)?,
            lower: u16_at(b, 12)?,
            upper: u16_at(b, 14)?,
            overflow_pages: u32_at(b, 12)?,
        })
    }

    pub(crate) fn kind(&self) -> u16 {
        self.flags & page_flag::KIND
    }

    /// Number of nodes (`NUMKEYS`), if the lower bound is a plausible one.
    pub(crate) fn keys(&self) -> Option<usize> {
        let lower = self.lower as usize;
        (lower >= PAGE_HEADER && (lower - PAGE_HEADER) % 2 == 0).then(|| (lower - PAGE_HEADER) / 2)
    }

    /// The offset of node `i` (`mp_ptrs[i]`).
    pub(crate) fn node_offset(page: &[u8], i: usize) -> Option<usize> {
        u16_at(page, PAGE_HEADER + 2 * i).map(usize::from)
    }
}

/// A table record (`MDB_db`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct DbRecord {
    /// Page size in the free table's record of a meta page; key size of LEAF2 pages in a
    /// list tree's record.
    pub(crate) pad: u32,
    pub(crate) flags: u16,
    pub(crate) depth: u16,
    pub(crate) branch_pages: u64,
    pub(crate) leaf_pages: u64,
    pub(crate) overflow_pages: u64,
    pub(crate) entries: u64,
    pub(crate) root: u64,
}

impl DbRecord {
    pub(crate) fn parse(b: &[u8]) -> Option<DbRecord> {
        Some(DbRecord {
            pad: u32_at(b, 0)?,
            flags: u16_at(b, 4)?,
            depth: u16_at(b, 6)?,
            branch_pages: u64_at(b, 8)?,
            leaf_pages: u64_at(b, 16)?,
            overflow_pages: u64_at(b, 24)?,
            entries: u64_at(b, 32)?,
            root: u64_at(b, 40)?,
        })
    }
}

/// The contents of a meta page (`MDB_meta`).
#[derive(Debug, Clone, Copy)]
pub(crate) struct Meta {
    pub(crate) magic: u32,
    pub(crate) version: u32,
    pub(crate) free: DbRecord,
    pub(crate) main: DbRecord,
    pub(crate) last_page: u64,
    pub(crate) txnid: u64,
}

impl Meta {
    /// Parses the meta part of a meta page (`page` starts at the page header).
    pub(crate) fn parse(page: &[u8]) -> Option<Meta> {
        let m = page.get(META_OFFSET..META_OFFSET + META_BYTES)?;
        Some(Meta {
            magic: u32_at(m, 0)?,
            version: u32_at(m, 4)?,
            free: DbRecord::parse(m.get(24..24 + DB_RECORD)?)?,
            main: DbRecord::parse(m.get(72..72 + DB_RECORD)?)?,
            last_page: u64_at(m, 120)?,
            txnid: u64_at(m, 128)?,
        })
    }

    /// The page size LMDB records (in the free table's pad).
    pub(crate) fn page_bytes(&self) -> u32 {
        self.free.pad
    }
}

/// A node of a branch or leaf page (`MDB_node`), located at `offset` inside its page.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Node {
    pub(crate) lo: u16,
    pub(crate) hi: u16,
    pub(crate) flags: u16,
    pub(crate) key_bytes: u16,
}

impl Node {
    pub(crate) fn parse(page: &[u8], offset: usize) -> Option<Node> {
        Some(Node {
            lo: u16_at(page, offset)?,
            hi: u16_at(page, offset + 2)?,
            flags: u16_at(page, offset + 4)?,
            key_bytes: u16_at(page, offset + 6)?,
        })
    }

    /// The child page of a branch node (`NODEPGNO`: lo, hi and flags make 48 bits).
    pub(crate) fn child(&self) -> u64 {
        self.lo as u64 | (self.hi as u64) << 16 | (self.flags as u64) << 32
    }

    /// The data size of a leaf node (`NODEDSZ`).
    pub(crate) fn data_bytes(&self) -> usize {
        self.lo as usize | (self.hi as usize) << 16
    }
}

/// Pages an overflow value of `bytes` needs (`OVPAGES`).
pub(crate) fn overflow_pages_for(bytes: usize, page_bytes: usize) -> u64 {
    ((PAGE_HEADER - 1 + bytes) / page_bytes + 1) as u64
}
