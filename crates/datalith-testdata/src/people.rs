//! Seed 003's people: `:name` uniform over [`NAMES`], `:last-name` over [`LAST_NAMES`], `:sex`
//! male or female, `:age` 0..99 and `:salary` 0..99,999, five datoms per person.

use serde::{Deserialize, Serialize};

use crate::SplitMix64;

/// First names, uniform (seed 003).
pub const NAMES: [&str; 8] = [
    "Ivan", "Petr", "Sergei", "Oleg", "Yuri", "Dmitry", "Fedor", "Denis",
];

/// Last names, uniform (seed 003).
pub const LAST_NAMES: [&str; 6] = [
    "Ivanov",
    "Petrov",
    "Sidorov",
    "Kovalev",
    "Kuznetsov",
    "Voronoi",
];

/// One person: five attributes. Serialized as the benchmark's JSON line,
/// `{"id":N,"name":"Ivan","last-name":"Ivanov","sex":"male","age":23,"salary":12345}`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Person {
    /// The person's number (1-based, before shuffling): a user may make a tempid or an entity
    /// id of it; it promises nothing about the ids a database assigns.
    pub id: u64,
    /// One of [`NAMES`].
    pub name: String,
    /// One of [`LAST_NAMES`].
    #[serde(rename = "last-name")]
    pub last_name: String,
    /// `male` or `female` (a keyword in Datalog: see [`Person::sex_keyword`]).
    pub sex: String,
    /// 0..=99.
    pub age: i64,
    /// 0..=99,999.
    pub salary: i64,
}

/// An attribute value of a person, typed as the Datalog schema declares it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AttrValue<'a> {
    /// `:db.type/string`.
    String(&'a str),
    /// `:db.type/keyword`, as keyword text (`:male`).
    Keyword(&'static str),
    /// `:db.type/long`.
    Long(i64),
}

impl Person {
    /// The five attributes as `(ident, value)`, in schema order: `:name`, `:last-name`,
    /// `:sex`, `:age`, `:salary`.
    pub fn attributes(&self) -> [(&'static str, AttrValue<'_>); 5] {
        [
            (":name", AttrValue::String(&self.name)),
            (":last-name", AttrValue::String(&self.last_name)),
            (":sex", AttrValue::Keyword(self.sex_keyword())),
            (":age", AttrValue::Long(self.age)),
            (":salary", AttrValue::Long(self.salary)),
        ]
    }

    /// The `:sex` value as keyword text, `:male` or `:female`.
    pub fn sex_keyword(&self) -> &'static str {
        if self.sex == "male" {
            ":male"
        } else {
            ":female"
        }
    }
}

/// `n` people from `seed`, with ids 1..=n, in shuffled order (Fisher-Yates): the load order of
/// the benchmark, so no index sees its keys in ascending order.
pub fn generate(n: u64, seed: u64) -> Vec<Person> {
    let mut rng = SplitMix64::new(seed);
    let mut people: Vec<Person> = (1..=n)
        .map(|id| Person {
            id,
            name: NAMES[rng.below(NAMES.len() as u64) as usize].to_string(),
            last_name: LAST_NAMES[rng.below(LAST_NAMES.len() as u64) as usize].to_string(),
            sex: if rng.below(2) == 0 { "male" } else { "female" }.to_string(),
            age: rng.below(100) as i64,
            salary: rng.below(100_000) as i64,
        })
        .collect();
    for i in (1..people.len()).rev() {
        let j = rng.below(i as u64 + 1) as usize;
        people.swap(i, j);
    }
    people
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn generation_is_fixed_and_in_range() {
        let a = generate(2_000, 7);
        assert_eq!(a, generate(2_000, 7));
        assert_ne!(a, generate(2_000, 8));
        let mut ids: Vec<u64> = a.iter().map(|p| p.id).collect();
        assert_ne!(ids, (1..=2_000).collect::<Vec<_>>(), "shuffled");
        ids.sort_unstable();
        assert_eq!(ids, (1..=2_000).collect::<Vec<_>>());
        for p in &a {
            assert!(NAMES.contains(&p.name.as_str()));
            assert!(LAST_NAMES.contains(&p.last_name.as_str()));
            assert!(p.sex == "male" || p.sex == "female");
            assert!((0..100).contains(&p.age));
            assert!((0..100_000).contains(&p.salary));
        }
        // Uniform enough: every name appears about n/8 times.
        for n in NAMES {
            let c = a.iter().filter(|p| p.name == n).count();
            assert!((150..350).contains(&c), "{n}: {c}");
        }
    }

    /// The first person of a fixed seed, pinned: a change to the generator changes every
    /// benchmark's data and must be deliberate.
    #[test]
    fn the_generator_is_pinned() {
        let p = &generate(20_000, 20_031_120)[0];
        let line = serde_json::to_string(p).unwrap();
        assert!(line.contains("\"last-name\":"), "{line}");
        assert_eq!(
            p.sex_keyword(),
            if p.sex == "male" { ":male" } else { ":female" }
        );
        assert_eq!(line, PINNED);
        let attrs = p.attributes();
        assert_eq!(attrs[0], (":name", AttrValue::String("Ivan")));
        assert_eq!(attrs[2], (":sex", AttrValue::Keyword(":female")));
        assert_eq!(attrs[4], (":salary", AttrValue::Long(61_716)));
    }

    const PINNED: &str =
        r#"{"id":7760,"name":"Ivan","last-name":"Petrov","sex":"female","age":33,"salary":61716}"#;
}
