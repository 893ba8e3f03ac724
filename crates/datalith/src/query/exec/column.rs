//! One attribute's values for the numbered entities of a merge scan's column scan
//! (`star::scan_columns`): `Some` value per entity number, or none.
//!
//! A scan of a large attribute writes one cell per datom at a place its entity's number picks
//! (AVE order is value order, not entity order), so the column's size is the memory each
//! datom's write misses in, and the memory the kernel hands out zeroed page by page. Numbers,
//! instants and refs (every value of such an attribute the same kind) are kept as their 8
//! bytes with a bit for presence: a quarter of a column of `Option<Value>` (32 bytes a cell).
//! TPC-H Q1 at scale factor 1 reads seven attributes of 5.9M line items this way. Any other
//! kind, or a second kind in one column, keeps whole values.

use crate::codec::{Value, F64};

/// The kind of value a compact column holds (one per column).
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(super) enum Kind {
    Long,
    Instant,
    Ref,
    Double,
}

impl Kind {
    /// The kind and the 8 bytes of `v`, when it has a compact form.
    fn of(v: &Value) -> Option<(Kind, u64)> {
        Some(match v {
            Value::Long(n) => (Kind::Long, *n as u64),
            Value::Instant(n) => (Kind::Instant, *n as u64),
            Value::Ref(e) => (Kind::Ref, *e),
            Value::Double(x) => (Kind::Double, x.get().to_bits()),
            _ => return None,
        })
    }

    /// The value whose 8 bytes are `bits` (made by [`Kind::of`]).
    #[inline]
    fn value(self, bits: u64) -> Option<Value> {
        Some(match self {
            Kind::Long => Value::Long(bits as i64),
            Kind::Instant => Value::Instant(bits as i64),
            Kind::Ref => Value::Ref(bits),
            // The bits came from an `F64`, which is never NaN.
            Kind::Double => Value::Double(F64::new(f64::from_bits(bits))?),
        })
    }
}

/// An attribute's value for each of `n` entity numbers.
pub(super) enum Column {
    /// Nothing stored yet: the first value picks the form.
    Empty(usize),
    /// Values of one kind as 8 bytes each; `present` has bit `s % 64` of word `s / 64` set
    /// for each number `s` that has a value.
    Compact {
        kind: Kind,
        bits: Vec<u64>,
        present: Vec<u64>,
    },
    /// Any values.
    Values(Vec<Option<Value>>),
}

impl Column {
    /// A column for `n` entity numbers, none with a value.
    pub(super) fn new(n: usize) -> Column {
        Column::Empty(n)
    }

    /// Bytes a column of `n` cells may take, for the query's memory budget: the whole-value
    /// form (the compact one is smaller).
    pub(super) fn bytes(n: usize) -> u64 {
        (n as u64).saturating_mul(std::mem::size_of::<Option<Value>>() as u64)
    }

    /// The address `put(s, ..)` will write (a prefetch hint; may be null while empty).
    #[inline]
    pub(super) fn cell_addr(&self, s: usize) -> *const u8 {
        match self {
            Column::Empty(_) => std::ptr::null(),
            Column::Compact { bits, .. } => bits.as_ptr().wrapping_add(s) as *const u8,
            Column::Values(cells) => cells.as_ptr().wrapping_add(s) as *const u8,
        }
    }

    /// Asks for number `s`'s cell (and its presence bit) ahead of `has` and `get`.
    #[inline(always)]
    pub(super) fn prefetch(&self, s: usize) {
        use crate::query::prefetch::prefetch;
        match self {
            Column::Empty(_) => {}
            Column::Compact { bits, present, .. } => {
                prefetch(bits.as_ptr().wrapping_add(s));
                prefetch(present.as_ptr().wrapping_add(s / 64));
            }
            Column::Values(cells) => prefetch(cells.as_ptr().wrapping_add(s)),
        }
    }

    /// The bytes between two cells' addresses.
    pub(super) fn cell_stride(&self) -> usize {
        match self {
            Column::Compact { .. } => std::mem::size_of::<u64>(),
            _ => std::mem::size_of::<Option<Value>>(),
        }
    }

    /// Stores `v` as the value of number `s`; false (nothing stored) when `s` has one already.
    #[inline]
    pub(super) fn put(&mut self, s: usize, v: Value) -> bool {
        if let Column::Empty(n) = *self {
            *self = match Kind::of(&v) {
                Some((kind, _)) => Column::Compact {
                    kind,
                    // Zeroed allocations come straight from the system's zeroed pages.
                    bits: vec![0; n],
                    present: vec![0; n.div_ceil(64)],
                },
                None => Column::Values(vec![None; n]),
            };
        }
        match self {
            Column::Compact {
                kind,
                bits,
                present,
            } => match Kind::of(&v) {
                Some((k, b)) if k == *kind => {
                    let (word, bit) = (s / 64, 1u64 << (s % 64));
                    if present[word] & bit != 0 {
                        return false;
                    }
                    present[word] |= bit;
                    bits[s] = b;
                    true
                }
                // A second kind: whole values from here on.
                _ => {
                    self.widen();
                    self.put(s, v)
                }
            },
            Column::Values(cells) => {
                let cell = &mut cells[s];
                if cell.is_some() {
                    return false;
                }
                *cell = Some(v);
                true
            }
            Column::Empty(_) => unreachable!("an empty column takes a form above"),
        }
    }

    /// Whether number `s` has a value.
    #[inline]
    pub(super) fn has(&self, s: usize) -> bool {
        match self {
            Column::Empty(_) => false,
            Column::Compact { present, .. } => present[s / 64] & (1u64 << (s % 64)) != 0,
            Column::Values(cells) => cells[s].is_some(),
        }
    }

    /// The value of number `s`, left in place.
    #[inline]
    pub(super) fn get(&self, s: usize) -> Option<Value> {
        match self {
            Column::Compact { kind, bits, .. } if self.has(s) => kind.value(bits[s]),
            Column::Values(cells) => cells[s].clone(),
            _ => None,
        }
    }

    /// The value of number `s`, moved out when it is a whole value (each number read once).
    #[inline]
    pub(super) fn take(&mut self, s: usize) -> Option<Value> {
        match self {
            Column::Values(cells) => cells[s].take(),
            other => other.get(s),
        }
    }

    /// Turns a compact column into one of whole values.
    fn widen(&mut self) {
        if let Column::Compact {
            kind,
            bits,
            present,
        } = self
        {
            let cells: Vec<Option<Value>> = (0..bits.len())
                .map(|s| {
                    (present[s / 64] & (1u64 << (s % 64)) != 0)
                        .then(|| kind.value(bits[s]))
                        .flatten()
                })
                .collect();
            *self = Column::Values(cells);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn d(x: f64) -> Value {
        Value::double(x).unwrap()
    }

    /// Each row: the values put (number, value, whether the put is accepted), then what each
    /// number reads back.
    #[test]
    fn a_column_reads_back_what_was_put_in_any_form() {
        let cases: Vec<(Vec<(usize, Value, bool)>, Vec<Option<Value>>)> = vec![
            // Longs, compact; a second value for a number is refused.
            (
                vec![
                    (2, Value::Long(-7), true),
                    (0, Value::Long(i64::MAX), true),
                    (2, Value::Long(1), false),
                ],
                vec![Some(Value::Long(i64::MAX)), None, Some(Value::Long(-7))],
            ),
            // Doubles (infinities too), instants, refs.
            (
                vec![(1, d(-1.5), true), (0, d(f64::INFINITY), true)],
                vec![Some(d(f64::INFINITY)), Some(d(-1.5)), None],
            ),
            (
                vec![(0, Value::Instant(-1), true)],
                vec![Some(Value::Instant(-1)), None, None],
            ),
            (
                vec![(2, Value::Ref(u64::MAX), true)],
                vec![None, None, Some(Value::Ref(u64::MAX))],
            ),
            // Strings: whole values.
            (
                vec![
                    (1, Value::string("a"), true),
                    (1, Value::string("b"), false),
                ],
                vec![None, Some(Value::string("a")), None],
            ),
            // A second kind in a compact column widens it, keeping what was there.
            (
                vec![
                    (0, Value::Long(3), true),
                    (1, Value::string("x"), true),
                    (0, d(1.0), false),
                ],
                vec![Some(Value::Long(3)), Some(Value::string("x")), None],
            ),
            (
                vec![(0, Value::Long(3), true), (2, d(2.5), true)],
                vec![Some(Value::Long(3)), None, Some(d(2.5))],
            ),
        ];
        for (puts, expected) in cases {
            let mut c = Column::new(3);
            for (s, v, ok) in &puts {
                assert_eq!(c.put(*s, v.clone()), *ok, "put {s} {v} in {puts:?}");
            }
            let got: Vec<Option<Value>> = (0..3).map(|s| c.get(s)).collect();
            assert_eq!(got, expected, "{puts:?}");
            let has: Vec<bool> = (0..3).map(|s| c.has(s)).collect();
            let want: Vec<bool> = expected.iter().map(Option::is_some).collect();
            assert_eq!(has, want, "{puts:?}");
            let taken: Vec<Option<Value>> = (0..3).map(|s| c.take(s)).collect();
            assert_eq!(taken, expected, "{puts:?}");
        }
    }

    /// Presence bits of numbers in different words and at a word's last bit.
    #[test]
    fn presence_bits_are_per_number() {
        let mut c = Column::new(200);
        for s in [0, 63, 64, 127, 199] {
            assert!(c.put(s, Value::Ref(s as u64)));
        }
        for s in 0..200 {
            let want = [0, 63, 64, 127, 199].contains(&s);
            assert_eq!(c.has(s), want, "{s}");
            assert_eq!(c.get(s), want.then_some(Value::Ref(s as u64)), "{s}");
        }
    }
}
