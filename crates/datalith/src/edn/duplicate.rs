//! A map's keys must differ (EDN; Clojure's reader refuses `{:a 1 :a 2}` too): the first key
//! that repeats an earlier one. A few keys are compared pairwise; past that, each gets a
//! fingerprint and only keys that share one are compared.

use std::hash::{Hash, Hasher};

use rustc_hash::{FxHashMap, FxHasher};

use super::value::Edn;

/// Up to this many keys, pairwise comparison is cheaper than fingerprints.
const PAIRWISE_MAX: usize = 16;

/// The first key of `pairs` equal to an earlier one.
pub(super) fn repeated_key(pairs: &[(Edn, Edn)]) -> Option<&Edn> {
    if pairs.len() <= PAIRWISE_MAX {
        return pairs
            .iter()
            .enumerate()
            .find(|(i, (k, _))| pairs[..*i].iter().any(|(earlier, _)| earlier == k))
            .map(|(_, (k, _))| k);
    }
    let mut seen: FxHashMap<u64, Vec<usize>> = FxHashMap::default();
    for (i, (k, _)) in pairs.iter().enumerate() {
        let mut h = FxHasher::default();
        fingerprint(k, &mut h);
        let same = seen.entry(h.finish()).or_default();
        if same.iter().any(|&j| pairs[j].0 == *k) {
            return Some(k);
        }
        same.push(i);
    }
    None
}

/// Hashes what `==` compares (equal forms hash alike; a double by its bits, so that two
/// NaNs, never equal, may share a fingerprint and are then compared).
fn fingerprint(e: &Edn, h: &mut FxHasher) {
    std::mem::discriminant(e).hash(h);
    match e {
        Edn::Nil => {}
        Edn::Bool(b) => b.hash(h),
        Edn::Long(n) => n.hash(h),
        Edn::BigInt(n) => n.hash(h),
        Edn::Double(x) => x.to_bits().hash(h),
        Edn::String(s) | Edn::Regex(s) => s.hash(h),
        Edn::Char(c) => c.hash(h),
        Edn::Keyword(k) | Edn::Symbol(k) => k.to_string().hash(h),
        Edn::Inst(ms) => ms.hash(h),
        Edn::Uuid(b) => b.hash(h),
        Edn::List(items) | Edn::Vector(items) | Edn::Set(items) => {
            items.len().hash(h);
            for i in items {
                fingerprint(i, h);
            }
        }
        Edn::Map(pairs) => {
            pairs.len().hash(h);
            for (k, v) in pairs {
                fingerprint(k, h);
                fingerprint(v, h);
            }
        }
        Edn::Tagged(tag, inner) => {
            tag.to_string().hash(h);
            fingerprint(inner, h);
        }
        // Compared by `==` among the few that share this fingerprint.
        Edn::BigDec(_) | Edn::Ratio(_) => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::edn::read_one;

    #[test]
    fn finds_the_first_repeated_key_however_many_keys() {
        let cases: &[(&str, Option<&str>)] = &[
            ("{}", None),
            ("{:a 1 :b 2}", None),
            ("{:a 1 :a 2}", Some(":a")),
            ("{[1 2] 1 [1 2] 2}", Some("[1 2]")),
            ("{1 :x 1.0 :y}", None),
            ("{\"a\" 1 :a 2 a 3}", None),
        ];
        for (map, want) in cases {
            // Written as a map, read as a vector (the reader itself refuses repeated keys).
            let text = format!("[{}]", &map[1..map.len() - 1]);
            let Edn::Vector(items) = read_one(&text).unwrap() else {
                unreachable!()
            };
            let pairs: Vec<(Edn, Edn)> = items
                .chunks(2)
                .map(|kv| (kv[0].clone(), kv[1].clone()))
                .collect();
            let got = repeated_key(&pairs).map(crate::edn::to_edn_string);
            assert_eq!(got.as_deref(), *want, "{map}");
        }
        // Past the pairwise size, through fingerprints.
        let mut pairs: Vec<(Edn, Edn)> = (0..100).map(|i| (Edn::Long(i), Edn::Nil)).collect();
        assert!(repeated_key(&pairs).is_none());
        pairs.push((Edn::Long(57), Edn::Nil));
        assert_eq!(repeated_key(&pairs), Some(&Edn::Long(57)));
    }
}
