//! The data of workload W: keys 2, 4, ..., 2N ascending; values random UUIDs (36 characters)
//! drawn from a seeded SplitMix64 (`datalith-testdata`), as `bench/peers/clj/common.clj` draws
//! them: every condition, Datalevin's included, writes the same keys and the same values in the
//! pure write, and picks the same mixed-phase keys from the same printed seed.

use datalith_testdata::SplitMix64;

use super::condition::Record;

/// Key of the `i`-th write (0-based): the even integers from 2.
pub fn key(i: u64) -> u64 {
    2 * (i + 1)
}

/// Fresh random UUID strings (version 4 layout) from a seed.
pub struct Values {
    rng: SplitMix64,
}

impl Values {
    pub fn new(seed: u64) -> Values {
        Values {
            rng: SplitMix64::new(seed),
        }
    }

    /// The next UUID, hyphenated lower case (`java.util.UUID`'s text of the same draws).
    pub fn next_uuid(&mut self) -> String {
        uuid::Uuid::from_bytes(self.rng.uuid_bytes())
            .hyphenated()
            .to_string()
    }

    /// Records for writes `first .. first + len`.
    pub fn batch(&mut self, first: u64, len: u64) -> Vec<Record> {
        (first..first + len)
            .map(|i| Record {
                key: key(i),
                value: self.next_uuid(),
            })
            .collect()
    }
}

/// The stream of mixed-phase keys is seeded with `seed ^ MIXED_STREAM` (the same in
/// `bench/peers/clj/common.clj`), a different stream from the values' of the same seed.
pub const MIXED_STREAM: u64 = 0x6d69_7865_645f_6b65;

/// The mixed phase's key choice: uniform in 1..=2N.
pub struct MixedKeys {
    rng: SplitMix64,
    max: u64,
}

impl MixedKeys {
    pub fn new(seed: u64, n: u64) -> MixedKeys {
        MixedKeys {
            rng: SplitMix64::new(seed ^ MIXED_STREAM),
            max: (2 * n).max(1),
        }
    }

    pub fn next_key(&mut self) -> u64 {
        1 + self.rng.below(self.max)
    }
}

/// Which keys exist, to compute the expected count after the mixed phase.
pub struct KeySet {
    bits: Vec<u64>,
    len: u64,
}

impl KeySet {
    /// Room for keys 0..=max.
    pub fn new(max: u64) -> KeySet {
        KeySet {
            bits: vec![0; (max / 64 + 1) as usize],
            len: 0,
        }
    }

    pub fn insert(&mut self, key: u64) {
        let (w, b) = ((key / 64) as usize, key % 64);
        if let Some(word) = self.bits.get_mut(w) {
            if *word & (1 << b) == 0 {
                *word |= 1 << b;
                self.len += 1;
            }
        }
    }

    pub fn len(&self) -> u64 {
        self.len
    }

    /// Whether `key` was inserted.
    pub fn contains(&self, key: u64) -> bool {
        let (w, b) = ((key / 64) as usize, key % 64);
        self.bits.get(w).is_some_and(|word| word & (1 << b) != 0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_are_even_from_two() {
        let cases = [(0, 2), (1, 4), (999_999, 2_000_000)];
        for (i, k) in cases {
            assert_eq!(key(i), k);
        }
    }

    #[test]
    fn values_are_uuid_strings_and_seeded() {
        let a: Vec<String> = (0..5).map(|_| Values::new(7).next_uuid()).collect();
        assert!(a.iter().all(|v| v == &a[0]), "same seed, same first value");
        let mut g = Values::new(7);
        let b = g.batch(0, 3);
        assert_eq!(b.iter().map(|r| r.key).collect::<Vec<_>>(), vec![2, 4, 6]);
        for r in &b {
            assert_eq!(r.value.len(), 36);
            assert!(uuid::Uuid::parse_str(&r.value).is_ok());
        }
        assert_ne!(b[0].value, b[1].value);
        // Pinned: the Datalevin harness draws the same text (`java.util.UUID` of the same two
        // longs), so a change here must change `bench/peers/clj/common.clj` too.
        assert_eq!(Values::new(0).next_uuid(), PINNED_UUID);
        let keys: Vec<u64> = {
            let mut k = MixedKeys::new(0, 1_000_000);
            (0..3).map(|_| k.next_key()).collect()
        };
        assert_eq!(keys, PINNED_KEYS);
    }

    const PINNED_UUID: &str = "e220a839-7b1d-4daf-ae78-9e6aa1b965f4";
    const PINNED_KEYS: [u64; 3] = [1_437_672, 1_401_569, 171_981];

    #[test]
    fn mixed_keys_stay_in_range_and_key_set_counts_distinct() {
        let mut k = MixedKeys::new(1, 10);
        let mut set = KeySet::new(20);
        for _ in 0..1000 {
            let key = k.next_key();
            assert!((1..=20).contains(&key));
            set.insert(key);
        }
        assert_eq!(set.len(), 20);
        set.insert(20);
        assert_eq!(set.len(), 20);
    }
}
