//! String positions as Java counts them: in UTF-16 units, so that `count`, `subs`, `get`,
//! `nth` and `index-of` answer as in Datomic for every text. A character outside the Basic
//! Multilingual Plane (an emoji, many CJK extensions) is two units there; everywhere else a
//! unit is a character. ASCII text, the common case, needs no walk.

/// The length of `s` in UTF-16 units.
pub fn len(s: &str) -> usize {
    if s.is_ascii() {
        s.len()
    } else {
        s.chars().map(char::len_utf16).sum()
    }
}

/// The byte offset where UTF-16 unit `unit` begins (`unit == len(s)`: the end), or `None`
/// past the end or inside a character of two units (Java would cut it in half: an unpaired
/// surrogate, which a Rust string cannot hold).
pub fn byte_at(s: &str, unit: usize) -> Option<usize> {
    if s.is_ascii() {
        return (unit <= s.len()).then_some(unit);
    }
    let mut at = 0;
    for (b, ch) in s.char_indices() {
        if at == unit {
            return Some(b);
        }
        at += ch.len_utf16();
        if at > unit {
            return None;
        }
    }
    (at == unit).then_some(s.len())
}

/// The UTF-16 unit at which byte offset `b` (a character boundary) begins.
pub fn unit_of(s: &str, b: usize) -> usize {
    len(&s[..b])
}

/// The characters of `s` as Java's `charAt` gives them, one a UTF-16 unit: either half of a
/// character of two units (a surrogate, which a Rust `char` cannot be) is U+FFFD.
pub fn units(s: &str) -> impl Iterator<Item = char> + '_ {
    s.chars().flat_map(|ch| {
        let pair = ch.len_utf16() == 2;
        let first = if pair {
            char::REPLACEMENT_CHARACTER
        } else {
            ch
        };
        std::iter::once(first).chain(pair.then_some(char::REPLACEMENT_CHARACTER))
    })
}

/// The character at UTF-16 unit `unit` as Java's `charAt` gives it (see [`units`]).
pub fn unit_at(s: &str, unit: usize) -> Option<char> {
    if s.is_ascii() {
        return s.as_bytes().get(unit).map(|b| char::from(*b));
    }
    units(s).nth(unit)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn units_are_javas() {
        let s = "a🙂é";
        assert_eq!(len(s), 4);
        assert_eq!(byte_at(s, 0), Some(0));
        assert_eq!(byte_at(s, 1), Some(1));
        assert_eq!(byte_at(s, 2), None, "inside the emoji's pair");
        assert_eq!(byte_at(s, 3), Some(5));
        assert_eq!(byte_at(s, 4), Some(7));
        assert_eq!(byte_at(s, 5), None);
        assert_eq!(unit_of(s, 5), 3);
        assert_eq!(units(s).collect::<String>(), "a\u{FFFD}\u{FFFD}é");
        assert_eq!(unit_at(s, 3), Some('é'));
        assert_eq!(unit_at(s, 2), Some('\u{FFFD}'));
        assert_eq!(unit_at(s, 4), None);
        assert_eq!(len("abc"), 3);
        assert_eq!(byte_at("abc", 3), Some(3));
    }

    #[test]
    fn string_functions_count_units() {
        use super::super::call;
        use crate::codec::Value;
        let (s, l) = (Value::string, Value::Long);
        let ok = |name: &str, args: &[Value]| call(name, args).unwrap();
        assert_eq!(ok("count", &[s("a🙂b")]), Some(l(4)));
        assert_eq!(ok("subs", &[s("a🙂b"), l(1), l(3)]), Some(s("🙂")));
        assert_eq!(ok("subs", &[s("a🙂b"), l(3)]), Some(s("b")));
        assert_eq!(
            ok("clojure.string/index-of", &[s("a🙂b"), s("b")]),
            Some(l(3))
        );
        assert_eq!(
            ok("clojure.string/last-index-of", &[s("🙂a🙂a"), s("a"), l(9)]),
            Some(l(5))
        );
        assert_eq!(ok("get", &[s("a🙂b"), l(3)]), Some(Value::Char('b')));
        assert!(
            call("subs", &[s("a🙂b"), l(2)]).is_err(),
            "splits the emoji"
        );
        assert_eq!(
            ok(
                "clojure.string/index-of",
                &[s("ab"), s("b"), l(1_000_000_000)]
            ),
            None
        );
    }
}
