//! The cheap part of validation, done on every open before LMDB maps the file: both meta pages
//! read with plain reads, their magic, version and page size checked, the newer one chosen
//! (as LMDB does: the higher transaction id; on a tie the first).

use std::fs::File;

use super::damage::{Damage, Refusal};
use super::layout::{
    page_flag, Meta, PageHeader, DATA_VERSION, MAGIC, MAX_PAGE_BYTES, META_BYTES, META_OFFSET,
    MIN_PAGE_BYTES, NO_PAGE,
};
use super::pages::read_prefix;

/// The meta pages of a data file.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Header {
    /// The meta LMDB will use (the newer).
    pub(crate) current: Meta,
    /// Which meta page that is (0 or 1).
    pub(crate) current_page: u64,
    pub(crate) page_bytes: usize,
}

const META_PAGE_PREFIX: usize = META_OFFSET + META_BYTES;

/// Reads and checks both meta pages of `file` (`bytes` long).
pub(crate) fn read_header(file: &File, bytes: u64) -> Result<Header, Refusal> {
    if bytes == 0 {
        return Err(Refusal::NotADatabase("the file is empty (0 bytes)".into()));
    }
    let mut buf = [0u8; META_PAGE_PREFIX];
    if !read_prefix(file, 0, &mut buf)? {
        return Err(Refusal::NotADatabase(format!(
            "{bytes} bytes, shorter than an LMDB meta page"
        )));
    }
    let Some(first) = meta_of(&buf) else {
        return Err(damaged_first_meta(file, bytes)?);
    };
    if first.version != DATA_VERSION {
        return Err(Refusal::NotADatabase(format!(
            "LMDB data format version {}, this build reads {DATA_VERSION}",
            first.version
        )));
    }
    let page_bytes = first.page_bytes();
    if !page_bytes.is_power_of_two() || !(MIN_PAGE_BYTES..=MAX_PAGE_BYTES).contains(&page_bytes) {
        return Err(Damage::at(0, "meta", format!("implausible page size {page_bytes}")).into());
    }
    let page_bytes = page_bytes as usize;
    if bytes < 2 * page_bytes as u64 {
        return Err(Damage::file(format!(
            "the file is truncated: {bytes} bytes, shorter than its two meta pages ({} bytes)",
            2 * page_bytes
        ))
        .into());
    }
    if !read_prefix(file, page_bytes as u64, &mut buf)? {
        return Err(Damage::file("the file is shorter than its second meta page").into());
    }
    let second = meta_of(&buf).ok_or_else(|| Damage::at(1, "meta", "not a meta page"))?;
    if second.version != DATA_VERSION || second.page_bytes() as usize != page_bytes {
        return Err(Damage::at(
            1,
            "meta",
            format!(
                "version {} and page size {} differ from the first meta page's",
                second.version,
                second.page_bytes()
            ),
        )
        .into());
    }
    let (current, current_page) = if second.txnid > first.txnid {
        (second, 1)
    } else {
        (first, 0)
    };
    check_meta(&current, current_page)?;
    // Pages past the file's end must all be listed free, and the free list lives inside the
    // file: a last page further out than that is damage (and would make LMDB map, and the
    // walk allocate, far more than the file).
    let pages = bytes / page_bytes as u64;
    if current.last_page.saturating_add(1) > pages.saturating_add(bytes / 8) {
        return Err(Damage::at(
            current_page,
            "meta",
            format!(
                "last page {} lies far past the end of the file ({pages} pages)",
                current.last_page
            ),
        )
        .into());
    }
    Ok(Header {
        current,
        current_page,
        page_bytes,
    })
}

/// The meta of a page prefix, if it is a meta page with LMDB's magic.
fn meta_of(buf: &[u8]) -> Option<Meta> {
    let header = PageHeader::parse(buf)?;
    let meta = Meta::parse(buf)?;
    (header.flags & page_flag::META != 0 && meta.magic == MAGIC).then_some(meta)
}

/// The page numbers a meta names must be possible ones.
fn check_meta(meta: &Meta, page: u64) -> Result<(), Damage> {
    if meta.last_page < 1 {
        return Err(Damage::at(page, "meta", "last page number below 1"));
    }
    for (name, db) in [("free", &meta.free), ("main", &meta.main)] {
        if db.root != NO_PAGE && !(2..=meta.last_page).contains(&db.root) {
            return Err(Damage::at(
                page,
                "meta",
                format!(
                    "root of table {name} is page {}, outside pages 2..={}",
                    db.root, meta.last_page
                ),
            ));
        }
    }
    Ok(())
}

/// The first meta page is not one: a damaged LMDB file if a second meta page follows at one of
/// the page sizes LMDB uses, else not an LMDB file at all.
fn damaged_first_meta(file: &File, bytes: u64) -> Result<Refusal, std::io::Error> {
    let mut buf = [0u8; META_PAGE_PREFIX];
    let mut size = MIN_PAGE_BYTES as u64;
    while size <= MAX_PAGE_BYTES as u64 && size + META_PAGE_PREFIX as u64 <= bytes {
        if read_prefix(file, size, &mut buf)?
            && meta_of(&buf).is_some_and(|m| m.page_bytes() as u64 == size)
        {
            return Ok(Damage::at(
                0,
                "meta",
                "the first meta page is damaged (the second is intact)",
            )
            .into());
        }
        size *= 2;
    }
    Ok(Refusal::NotADatabase(
        "no LMDB meta page at the start (wrong magic)".into(),
    ))
}
