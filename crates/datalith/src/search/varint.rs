//! LEB128 varints, the postings' and documents' number encoding.

/// Appends `v`.
#[inline]
pub fn put(out: &mut Vec<u8>, mut v: u64) {
    while v >= 0x80 {
        out.push((v as u8) | 0x80);
        v >>= 7;
    }
    out.push(v as u8);
}

/// Reads varints from bytes, checking every length.
#[derive(Debug, Clone)]
pub struct Reader<'a> {
    b: &'a [u8],
    at: usize,
}

impl<'a> Reader<'a> {
    /// A reader at the start of `b`.
    pub fn new(b: &'a [u8]) -> Reader<'a> {
        Reader { b, at: 0 }
    }

    /// The next varint; `None` at the end or on an overlong one.
    #[inline]
    pub fn varint(&mut self) -> Option<u64> {
        let mut v = 0u64;
        let mut shift = 0u32;
        loop {
            let byte = *self.b.get(self.at)?;
            self.at += 1;
            if shift == 63 && byte > 1 {
                return None;
            }
            v |= u64::from(byte & 0x7f) << shift;
            if byte < 0x80 {
                return Some(v);
            }
            shift += 7;
            if shift > 63 {
                return None;
            }
        }
    }

    /// The next byte.
    #[inline]
    pub fn byte(&mut self) -> Option<u8> {
        let b = *self.b.get(self.at)?;
        self.at += 1;
        Some(b)
    }

    /// The next `n` bytes.
    pub fn bytes(&mut self, n: usize) -> Option<&'a [u8]> {
        let s = self.b.get(self.at..self.at.checked_add(n)?)?;
        self.at += n;
        Some(s)
    }

    /// What is left.
    pub fn rest(&self) -> &'a [u8] {
        &self.b[self.at.min(self.b.len())..]
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn round_trips() {
        for v in [0, 1, 127, 128, 300, u32::MAX as u64, u64::MAX] {
            let mut b = Vec::new();
            super::put(&mut b, v);
            let mut r = super::Reader::new(&b);
            assert_eq!(r.varint(), Some(v));
            assert_eq!(r.varint(), None);
        }
        assert_eq!(super::Reader::new(&[0x80]).varint(), None);
    }
}
