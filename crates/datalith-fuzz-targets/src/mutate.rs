//! A small deterministic mutator for the stable replay: the seed corpus plus a few thousand
//! variations of it, the same every run (a failure replays exactly), biased toward the
//! tokens the targets' grammars use so that mutations stay mostly parseable.

/// A splitmix64 generator: tiny, fast and good enough to pick mutations.
#[derive(Debug, Clone)]
pub struct Rng(u64);

impl Rng {
    /// A generator from a seed.
    pub fn new(seed: u64) -> Rng {
        Rng(seed)
    }

    /// The next 64 random bits.
    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    /// A number below `n` (`n` > 0).
    pub fn below(&mut self, n: usize) -> usize {
        (self.next_u64() % n as u64) as usize
    }
}

/// Tokens of EDN, queries, pull patterns and tx data that mutations splice in.
pub const TOKENS: &[&str] = &[
    "[",
    "]",
    "(",
    ")",
    "{",
    "}",
    "#{",
    " ",
    "\"",
    "\\",
    ":find",
    ":where",
    ":in",
    ":with",
    ":keys",
    "?e",
    "?x",
    "_",
    "$",
    "%",
    "...",
    ".",
    ":name",
    ":age",
    ":friend",
    ":tag",
    ":db/id",
    ":db/add",
    ":db/retract",
    ":db/retractEntity",
    ":db.fn/cas",
    ":db/ident",
    "-1",
    "0",
    "9223372036854775807",
    "1.5",
    "##NaN",
    "1N",
    "2M",
    "1/3",
    "nil",
    "true",
    "#inst \"2020-01-01\"",
    "#uuid \"6f0c2b4a-1d1e-4c6b-9b3f-0a1b2c3d4e5f\"",
    "#_",
    "*",
    "(count ?e)",
    "(pull ?e [*])",
    "[(> ?a 1)]",
    "(not [?e :age])",
    "(or [?e :tag :a])",
    "(rule ?e)",
    "{:limit 2}",
    ":as",
    ":default",
    "\"ann\"",
    "[:name \"Ann\"]",
    "\u{e9}",
    ";",
    "\n",
    ",",
];

/// A variation of `input`: one to four byte flips, inserted or deleted runs, spliced tokens
/// or duplicated chunks.
pub fn mutate(input: &[u8], rng: &mut Rng) -> Vec<u8> {
    let mut out = input.to_vec();
    for _ in 0..=rng.below(4) {
        let at = if out.is_empty() {
            0
        } else {
            rng.below(out.len() + 1)
        };
        match rng.below(6) {
            0 if !out.is_empty() => {
                let i = rng.below(out.len());
                out[i] ^= 1 << rng.below(8);
            }
            1 if !out.is_empty() => {
                let end = (at + 1 + rng.below(8)).min(out.len());
                out.drain(at.min(end)..end);
            }
            2 => out.insert(at, rng.next_u64() as u8),
            3 if !out.is_empty() => {
                let start = rng.below(out.len());
                let end = (start + 1 + rng.below(16)).min(out.len());
                let chunk = out[start..end].to_vec();
                out.splice(at..at, chunk);
            }
            _ => {
                let token = TOKENS[rng.below(TOKENS.len())].as_bytes();
                out.splice(at..at, token.iter().copied());
            }
        }
    }
    out
}
