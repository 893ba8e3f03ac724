//! The structural walk: every page reachable from the newer meta page, read with plain reads
//! and checked before anything maps the file. Trees: LMDB's free-page table, its main table
//! (whose entries are the named tables), each named table, and each list key's own tree of
//! values. Checks: page numbers inside the file and below the meta's last page, page kinds
//! where the tree's depth wants them, node offsets, key and data sizes inside their page, keys
//! strictly ascending and inside the range their parent's keys give, overflow runs in range,
//! the page counts and entry counts each table record states, no page reached twice, no page
//! both used and listed free, and every page accounted for (used, free, or one of the two meta
//! pages). Memory is two bitmaps bounded by the file's page count; every page is read at most
//! once, so the walk ends.
//!
//! The key order is LMDB's default (bytes, then shorter first), which is what Datalith's
//! comparator gives every table (`kv::lmdb::compare`), and native integers for the free table.
//!
//! Just over 700 lines: one walk over one page format, whose checks depend on each other's
//! state (depth, bounds from the parent, the two bitmaps); split, they would share it all.

use std::cmp::Ordering;

use super::damage::{Damage, Refusal};
use super::header::Header;
use super::layout::{
    node_flag, overflow_pages_for, page_flag, table_flag, u64_at, DbRecord, Node, PageHeader,
    DB_RECORD, MAX_DEPTH, MAX_KEY_BYTES, NODE_HEADER, NO_PAGE, PAGE_HEADER,
};
use super::pages::PageFile;

/// Tables of at most this many pages are walked by every open.
const SMALL_TABLE_PAGES: u64 = 16;

/// How far the walk goes.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum Verify {
    /// LMDB's own two tables (the catalog of tables and the free list), each table's root
    /// page number, and every page of tables of at most 16 pages: what every open checks.
    #[default]
    Catalog,
    /// Every page of every table (reads the whole file once).
    Everything,
}

/// What a walk found in a sound file.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Structure {
    /// The file's length in bytes.
    pub file_bytes: u64,
    /// The page size.
    pub page_bytes: usize,
    /// The last page number the current meta page names.
    pub last_page: u64,
    /// Pages reached from the trees (meta pages not included).
    pub pages_in_use: u64,
    /// Pages the free list names.
    pub free_pages: u64,
    /// Every named table, in name order.
    pub tables: Vec<TableShape>,
}

/// A named table as its record in LMDB's table of tables states it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TableShape {
    /// The table's name.
    pub name: String,
    /// Entries (list tables: one per value).
    pub entries: u64,
    /// The root page, if the table has any entry.
    pub root: Option<u64>,
}

#[derive(Debug, Clone, Copy)]
enum Kind {
    Main,
    Free,
    Plain,
    List { fixed: bool },
    Values { fixed: bool },
}

struct Tree<'n> {
    name: &'n str,
    kind: Kind,
}

impl Tree<'_> {
    fn integer_keys(&self) -> bool {
        matches!(self.kind, Kind::Free)
    }

    fn leaf2(&self) -> bool {
        matches!(self.kind, Kind::Values { fixed: true })
    }

    fn cmp(&self, a: &[u8], b: &[u8]) -> Ordering {
        if self.integer_keys() {
            let n = |x: &[u8]| u64::from_le_bytes(x.try_into().unwrap_or([0; 8]));
            n(a).cmp(&n(b))
        } else {
            a.cmp(b)
        }
    }
}

#[derive(Debug, Default, PartialEq, Eq)]
struct Counts {
    branch: u64,
    leaf: u64,
    overflow: u64,
    entries: u64,
}

struct Bitmap(Vec<u64>);

impl Bitmap {
    fn new(bits: u64) -> Bitmap {
        Bitmap(vec![0; bits.div_ceil(64) as usize])
    }

    /// Sets bit `i`; whether it was set before.
    fn set(&mut self, i: u64) -> bool {
        let (w, b) = ((i / 64) as usize, 1u64 << (i % 64));
        let was = self.0[w] & b != 0;
        self.0[w] |= b;
        was
    }

    fn get(&self, i: u64) -> bool {
        self.0
            .get((i / 64) as usize)
            .is_some_and(|w| w & (1 << (i % 64)) != 0)
    }
}

struct Walker<'f> {
    file: &'f PageFile,
    reach: Verify,
    last_page: u64,
    /// Pages reached from the trees.
    seen: Bitmap,
    /// Pages the free list names (read only when needed).
    free: Option<Bitmap>,
    free_count: u64,
    pages: u64,
    /// The value width of the fixed-width list table being walked, once seen.
    width: Option<usize>,
    tables: Vec<TableShape>,
}

/// Walks the file from its current meta page, as far as `reach`.
pub(crate) fn walk(file: &PageFile, header: &Header, reach: Verify) -> Result<Structure, Refusal> {
    let meta = &header.current;
    let last_page = meta.last_page;
    // Pages past the end are legitimate only if never written (freed in the transaction that
    // allocated them): then the free list must name them, so it is read.
    let short = file.pages <= last_page;
    let mut w = Walker {
        file,
        reach,
        last_page,
        seen: Bitmap::new((last_page + 1).min(file.pages)),
        free: (reach == Verify::Everything || short).then(|| Bitmap::new(last_page + 1)),
        free_count: 0,
        pages: 0,
        width: None,
        tables: Vec::new(),
    };
    let meta_page = header.current_page;
    w.tree(
        &Tree {
            name: "free",
            kind: Kind::Free,
        },
        &meta.free,
        meta_page,
    )?;
    w.tree(
        &Tree {
            name: "main",
            kind: Kind::Main,
        },
        &meta.main,
        meta_page,
    )?;
    w.accounts(short)?;
    Ok(Structure {
        file_bytes: file.bytes,
        page_bytes: file.page_bytes,
        last_page,
        pages_in_use: w.pages,
        free_pages: w.free_count,
        tables: w.tables,
    })
}

impl Walker<'_> {
    fn psize(&self) -> usize {
        self.file.page_bytes
    }

    /// Marks `pgno` (named on page `from`) as used by a tree.
    fn claim(&mut self, pgno: u64, from: u64, table: &str) -> Result<(), Damage> {
        if !(2..=self.last_page).contains(&pgno) {
            return Err(Damage::at(
                from,
                table,
                format!("names page {pgno}, outside pages 2..={}", self.last_page),
            ));
        }
        if pgno >= self.file.pages {
            return Err(Damage::at(
                from,
                table,
                format!(
                    "names page {pgno}, past the end of the file ({} bytes, {} pages): truncated?",
                    self.file.bytes, self.file.pages
                ),
            ));
        }
        if self.seen.set(pgno) {
            return Err(Damage::at(pgno, table, "page reached twice"));
        }
        self.pages += 1;
        Ok(())
    }

    fn tree(&mut self, tree: &Tree, rec: &DbRecord, owner: u64) -> Result<(), Refusal> {
        let stated = Counts {
            branch: rec.branch_pages,
            leaf: rec.leaf_pages,
            overflow: rec.overflow_pages,
            entries: rec.entries,
        };
        if rec.root == NO_PAGE {
            if rec.depth != 0 || stated != Counts::default() {
                return Err(
                    Damage::at(owner, tree.name, "an empty tree with pages or entries").into(),
                );
            }
            return Ok(());
        }
        if rec.depth == 0 || rec.depth > MAX_DEPTH {
            return Err(Damage::at(owner, tree.name, format!("tree depth {}", rec.depth)).into());
        }
        self.claim(rec.root, owner, tree.name)?;
        let mut counts = Counts::default();
        self.page(tree, rec, rec.root, 1, None, None, &mut counts)?;
        if counts != stated {
            return Err(Damage::at(
                rec.root,
                tree.name,
                format!(
                    "the table record states {} branch, {} leaf, {} overflow pages and {} entries; the tree holds {}, {}, {} and {}",
                    stated.branch, stated.leaf, stated.overflow, stated.entries,
                    counts.branch, counts.leaf, counts.overflow, counts.entries
                ),
            )
            .into());
        }
        Ok(())
    }

    /// Walks page `pgno` (already claimed) at `level` (the root is 1) of a tree of depth
    /// `rec.depth`, whose keys must lie in `[low, high)`.
    #[allow(clippy::too_many_arguments)]
    fn page(
        &mut self,
        tree: &Tree,
        rec: &DbRecord,
        pgno: u64,
        level: u16,
        low: Option<&[u8]>,
        high: Option<&[u8]>,
        counts: &mut Counts,
    ) -> Result<(), Refusal> {
        let page = self.file.read(pgno, 1, tree.name)?;
        let psize = self.psize();
        let damage = |detail: String| Refusal::Damaged(Damage::at(pgno, tree.name, detail));
        let h = PageHeader::parse(&page).ok_or_else(|| damage("short page".into()))?;
        if h.pgno != pgno {
            return Err(damage(format!("the page header says page {}", h.pgno)));
        }
        let leaf = level == rec.depth;
        let want = match (leaf, tree.leaf2()) {
            (false, _) => page_flag::BRANCH,
            (true, false) => page_flag::LEAF,
            (true, true) => page_flag::LEAF | page_flag::LEAF2,
        };
        if h.kind() != want {
            return Err(damage(format!(
                "page flags {:#x} where level {level} of a tree of depth {} wants {want:#x}",
                h.flags, rec.depth
            )));
        }
        let n = node_count(&h, psize).map_err(damage)?;
        if leaf {
            counts.leaf += 1;
        } else {
            counts.branch += 1;
        }
        if leaf && tree.leaf2() {
            // A value tree's pages take their width from its record (their own pad is unset).
            let width = self.fixed_width(rec.pad as usize, pgno, tree.name)?;
            if PAGE_HEADER + n * width > psize {
                return Err(damage(format!(
                    "{n} values of {width} bytes overflow the page"
                )));
            }
            let keys = (0..n).map(|i| &page[PAGE_HEADER + i * width..][..width]);
            check_order(tree, keys, low, high).map_err(damage)?;
            counts.entries += n as u64;
            return Ok(());
        }
        let mut nodes = Vec::with_capacity(n);
        for i in 0..n {
            let (node, off, key) = node_at(&page, &h, i, psize).map_err(damage)?;
            nodes.push((node, off, key));
        }
        // A branch's first key is never compared (LMDB leaves it empty).
        let skip = usize::from(!leaf);
        check_order(
            tree,
            nodes[skip..]
                .iter()
                .map(|(_, off, ks)| &page[off + NODE_HEADER..][..*ks]),
            low,
            high,
        )
        .map_err(damage)?;
        let key = |i: usize| {
            let (_, off, ks) = nodes[i];
            &page[off + NODE_HEADER..][..ks]
        };
        if !leaf {
            for (i, (node, _, _)) in nodes.iter().enumerate() {
                let child = node.child();
                self.claim(child, pgno, tree.name)?;
                let child_low = if i == 0 { low } else { Some(key(i)) };
                let child_high = if i + 1 < n { Some(key(i + 1)) } else { high };
                self.page(tree, rec, child, level + 1, child_low, child_high, counts)?;
            }
            return Ok(());
        }
        for (i, &(node, off, ks)) in nodes.iter().enumerate() {
            self.leaf_node(
                tree,
                pgno,
                &page,
                off + NODE_HEADER + ks,
                &node,
                key(i),
                counts,
            )?;
        }
        Ok(())
    }

    /// One leaf node whose data starts at `at` in `page`.
    #[allow(clippy::too_many_arguments)]
    fn leaf_node(
        &mut self,
        tree: &Tree,
        pgno: u64,
        page: &[u8],
        at: usize,
        node: &Node,
        key: &[u8],
        counts: &mut Counts,
    ) -> Result<(), Refusal> {
        let damage = |detail: String| Refusal::Damaged(Damage::at(pgno, tree.name, detail));
        let size = node.data_bytes();
        let inline = |len: usize| -> Result<&[u8], Refusal> {
            page.get(at..at + len)
                .ok_or_else(|| damage(format!("a value of {len} bytes overflows the page")))
        };
        match tree.kind {
            Kind::Values { .. } => {
                if node.flags != 0 || size != 0 {
                    return Err(damage(format!(
                        "a list value node with flags {:#x} and {size} data bytes",
                        node.flags
                    )));
                }
                counts.entries += 1;
            }
            Kind::Main => {
                counts.entries += 1;
                match node.flags {
                    node_flag::SUB_DATA => {
                        if size != DB_RECORD {
                            return Err(damage(format!("a table record of {size} bytes")));
                        }
                        let rec = DbRecord::parse(inline(size)?).expect("48 bytes");
                        let name = String::from_utf8_lossy(key).into_owned();
                        self.table(&name, &rec, pgno)?;
                    }
                    0 => {
                        inline(size)?;
                    }
                    f => return Err(damage(format!("node flags {f:#x} in the table of tables"))),
                }
            }
            Kind::Plain | Kind::Free => {
                counts.entries += 1;
                // Only the free list's data is read (to know which pages are free).
                let want = matches!(tree.kind, Kind::Free) && self.free.is_some();
                let data = match node.flags {
                    0 => {
                        let d = inline(size)?;
                        want.then(|| d.to_vec())
                    }
                    node_flag::BIG_DATA => {
                        let first = u64_at(inline(8)?, 0).expect("8 bytes");
                        self.overflow(tree, pgno, first, size, want, counts)?
                    }
                    f => return Err(damage(format!("node flags {f:#x} in a plain table"))),
                };
                if matches!(tree.kind, Kind::Free) {
                    if key.len() != 8 {
                        return Err(damage(format!("a free-list key of {} bytes", key.len())));
                    }
                    if let Some(ids) = data {
                        self.free_list(&ids, pgno)?;
                    }
                }
            }
            Kind::List { fixed } => match node.flags {
                0 => {
                    if size > MAX_KEY_BYTES {
                        return Err(damage(format!("a list value of {size} bytes")));
                    }
                    inline(size)?;
                    counts.entries += 1;
                }
                node_flag::DUP_DATA => {
                    let sub = inline(size)?;
                    counts.entries += self.subpage(tree, pgno, sub, fixed)?;
                }
                f if f == node_flag::DUP_DATA | node_flag::SUB_DATA => {
                    if size != DB_RECORD {
                        return Err(damage(format!("a value tree record of {size} bytes")));
                    }
                    let rec = DbRecord::parse(inline(size)?).expect("48 bytes");
                    if fixed {
                        self.fixed_width(rec.pad as usize, pgno, tree.name)?;
                    }
                    let values = Tree {
                        name: tree.name,
                        kind: Kind::Values { fixed },
                    };
                    self.tree(&values, &rec, pgno)?;
                    counts.entries += rec.entries;
                }
                f => return Err(damage(format!("node flags {f:#x} in a list table"))),
            },
        }
        Ok(())
    }

    /// A named table, found in the table of tables on page `pgno`.
    fn table(&mut self, name: &str, rec: &DbRecord, pgno: u64) -> Result<(), Refusal> {
        if rec.flags & (table_flag::FOREIGN_ORDER | table_flag::INTEGER_KEY) != 0 {
            return Err(Damage::at(
                pgno,
                "main",
                format!(
                    "table {name} has flags {:#x}, an order Datalith never uses",
                    rec.flags
                ),
            )
            .into());
        }
        let kind = match rec.flags & table_flag::DUP_SORT != 0 {
            true => Kind::List {
                fixed: rec.flags & table_flag::DUP_FIXED != 0,
            },
            false => Kind::Plain,
        };
        // Small tables (Datalith's own metadata, which every open reads) are walked even
        // when only the catalog is checked: a few pages.
        let small = rec.branch_pages + rec.leaf_pages + rec.overflow_pages <= SMALL_TABLE_PAGES;
        match self.reach {
            Verify::Catalog if !small => {
                let inside = (2..=self.last_page).contains(&rec.root) && rec.root < self.file.pages;
                if rec.root != NO_PAGE && !inside {
                    return Err(Damage::at(
                        pgno,
                        "main",
                        format!(
                            "the root of table {name} is page {}, outside the file's {} pages",
                            rec.root, self.file.pages
                        ),
                    )
                    .into());
                }
            }
            _ => {
                self.width = None;
                self.tree(&Tree { name, kind }, rec, pgno)?;
            }
        }
        self.tables.push(TableShape {
            name: name.to_string(),
            entries: rec.entries,
            root: (rec.root != NO_PAGE).then_some(rec.root),
        });
        Ok(())
    }

    /// The values of one list key kept inside its leaf node; returns their count.
    fn subpage(&mut self, tree: &Tree, pgno: u64, sub: &[u8], fixed: bool) -> Result<u64, Refusal> {
        let damage = |detail: String| {
            Refusal::Damaged(Damage::at(pgno, tree.name, format!("sub-page: {detail}")))
        };
        let h = PageHeader::parse(sub).ok_or_else(|| damage(format!("{} bytes", sub.len())))?;
        let want = page_flag::LEAF | page_flag::SUBPAGE | if fixed { page_flag::LEAF2 } else { 0 };
        if h.kind() != want {
            return Err(damage(format!("flags {:#x}, wanted {want:#x}", h.flags)));
        }
        let n = node_count(&h, sub.len()).map_err(damage)?;
        let values = Tree {
            name: tree.name,
            kind: Kind::Values { fixed },
        };
        if fixed {
            let width = self.fixed_width(h.pad as usize, pgno, tree.name)?;
            if PAGE_HEADER + n * width > sub.len() {
                return Err(damage(format!("{n} values of {width} bytes overflow it")));
            }
            let keys = (0..n).map(|i| &sub[PAGE_HEADER + i * width..][..width]);
            check_order(&values, keys, None, None).map_err(damage)?;
        } else {
            let mut keys = Vec::with_capacity(n);
            for i in 0..n {
                let (node, off, ks) = node_at(sub, &h, i, sub.len()).map_err(damage)?;
                if node.flags != 0 || node.data_bytes() != 0 {
                    return Err(damage(format!("value node flags {:#x}", node.flags)));
                }
                keys.push(&sub[off + NODE_HEADER..][..ks]);
            }
            check_order(&values, keys.into_iter(), None, None).map_err(damage)?;
        }
        Ok(n as u64)
    }

    /// Every value of a fixed-width list table has the width the first one had.
    fn fixed_width(&mut self, width: usize, pgno: u64, table: &str) -> Result<usize, Damage> {
        if width == 0 || width > MAX_KEY_BYTES {
            return Err(Damage::at(
                pgno,
                table,
                format!("fixed value width {width}"),
            ));
        }
        match self.width {
            Some(w) if w != width => Err(Damage::at(
                pgno,
                table,
                format!("values of {width} bytes in a table of {w}-byte values"),
            )),
            _ => {
                self.width = Some(width);
                Ok(width)
            }
        }
    }

    /// An overflow run holding a value of `size` bytes, named on page `from`; its bytes if
    /// `read` (only the free list's are needed).
    fn overflow(
        &mut self,
        tree: &Tree,
        from: u64,
        first: u64,
        size: usize,
        read: bool,
        counts: &mut Counts,
    ) -> Result<Option<Vec<u8>>, Refusal> {
        let psize = self.psize();
        let need = overflow_pages_for(size, psize);
        self.claim(first, from, tree.name)?;
        let head = self.file.read(first, 1, tree.name)?;
        let h = PageHeader::parse(&head).expect("a whole page");
        let damage = |detail: String| Refusal::Damaged(Damage::at(first, tree.name, detail));
        if h.pgno != first || h.kind() != page_flag::OVERFLOW {
            return Err(damage(format!(
                "not the overflow page a value names (header: page {}, flags {:#x})",
                h.pgno, h.flags
            )));
        }
        let run = h.overflow_pages as u64;
        if run < need {
            return Err(damage(format!(
                "an overflow run of {run} pages for a value of {size} bytes ({need} pages)"
            )));
        }
        for p in first + 1..first + run {
            self.claim(p, first, tree.name)?;
        }
        counts.overflow += run;
        if !read {
            return Ok(None);
        }
        let bytes = self.file.read(first, need, tree.name)?;
        Ok(Some(bytes[PAGE_HEADER..PAGE_HEADER + size].to_vec()))
    }

    /// One free-list entry (a page count, then the page numbers), found on page `pgno`.
    fn free_list(&mut self, ids: &[u8], pgno: u64) -> Result<(), Damage> {
        let damage = |detail: String| Damage::at(pgno, "free", detail);
        let count = u64_at(ids, 0).ok_or_else(|| damage("an empty free-list entry".into()))?;
        if ids.len() % 8 != 0 || count != (ids.len() / 8 - 1) as u64 {
            return Err(damage(format!(
                "a free-list entry of {} bytes says it lists {count} pages",
                ids.len()
            )));
        }
        let last = self.last_page;
        let free = self.free.as_mut().expect("read only when kept");
        for i in 1..=count as usize {
            let p = u64_at(ids, i * 8).expect("inside the entry");
            if !(2..=last).contains(&p) {
                return Err(damage(format!(
                    "lists page {p} free, outside pages 2..={last}"
                )));
            }
            if free.set(p) {
                return Err(damage(format!("lists page {p} free twice")));
            }
            self.free_count += 1;
        }
        Ok(())
    }

    /// After the walk: pages past the file's end must be free; with the whole file walked, no
    /// page may be both used and free, and every page must be one or the other.
    fn accounts(&self, short: bool) -> Result<(), Damage> {
        let Some(free) = &self.free else {
            return Ok(());
        };
        if short {
            if let Some(p) = (self.file.pages..=self.last_page).find(|&p| !free.get(p)) {
                return Err(Damage::file(format!(
                    "truncated: page {p} is in use (the last page is {}) but the file holds {} pages ({} bytes)",
                    self.last_page, self.file.pages, self.file.bytes
                )));
            }
        }
        if self.reach != Verify::Everything {
            return Ok(());
        }
        if let Some(p) = (2..=self.last_page.min(self.file.pages.saturating_sub(1)))
            .find(|&p| free.get(p) && self.seen.get(p))
        {
            return Err(Damage::at(p, "free", "page both in use and listed free"));
        }
        let accounted = self.pages + self.free_count + 2;
        if accounted != self.last_page + 1 {
            return Err(Damage::file(format!(
                "{} pages in use, {} free and 2 meta pages, but the last page is {}",
                self.pages, self.free_count, self.last_page
            )));
        }
        Ok(())
    }
}

/// Number of nodes of a page of `size` bytes, checking its free-space bounds.
fn node_count(h: &PageHeader, size: usize) -> Result<usize, String> {
    let (lower, upper) = (h.lower as usize, h.upper as usize);
    let n = h
        .keys()
        .filter(|_| lower <= upper && upper <= size)
        .ok_or_else(|| format!("free-space bounds {lower}..{upper} in a page of {size} bytes"))?;
    if n == 0 {
        return Err("a page with no entries".into());
    }
    Ok(n)
}

/// Node `i` of `page` (`size` bytes): the node, its offset and its key size, all inside.
fn node_at(
    page: &[u8],
    h: &PageHeader,
    i: usize,
    size: usize,
) -> Result<(Node, usize, usize), String> {
    let off = PageHeader::node_offset(page, i).ok_or("node pointer outside the page")?;
    if off < h.upper as usize || off + NODE_HEADER > size {
        return Err(format!(
            "node {i} at offset {off}, outside the page's node area {}..{size}",
            h.upper
        ));
    }
    let node = Node::parse(page, off).ok_or("node outside the page")?;
    let ks = node.key_bytes as usize;
    if ks > MAX_KEY_BYTES || off + NODE_HEADER + ks > size {
        return Err(format!("node {i}: a key of {ks} bytes overflows the page"));
    }
    Ok((node, off, ks))
}

/// Keys strictly ascending, and inside `[low, high)`.
fn check_order<'k>(
    tree: &Tree,
    keys: impl Iterator<Item = &'k [u8]>,
    low: Option<&[u8]>,
    high: Option<&[u8]>,
) -> Result<(), String> {
    let mut prev: Option<&[u8]> = None;
    for (i, k) in keys.enumerate() {
        if tree.integer_keys() && k.len() != 8 {
            return Err(format!("key {i} has {} bytes, not 8", k.len()));
        }
        if let Some(p) = prev {
            if tree.cmp(p, k) != Ordering::Less {
                return Err(format!("key {i} is not above the key before it"));
            }
        } else if let Some(l) = low {
            if tree.cmp(k, l) == Ordering::Less {
                return Err("the first key is below its parent's key".into());
            }
        }
        prev = Some(k);
    }
    if let (Some(p), Some(h)) = (prev, high) {
        if tree.cmp(p, h) != Ordering::Less {
            return Err("the last key is not below the next parent key".into());
        }
    }
    Ok(())
}
