//! Built-in predicates and functions: the ones Datomic's queries call (its own `/`, `<`, ...,
//! `ground`, `tuple`, and the `clojure.core` and `clojure.string` functions), with their
//! Datomic results (checked against Datomic 1.0.7075: see `tests/query_functions.rs`).
//!
//! A function returns `Ok(None)` for nil: a predicate that returns nil fails, and a function
//! clause whose result is nil binds nothing (Datomic drops the row).
//!
//! The table of contents (`lookup`) maps each name to its implementation, by family:
//! `compare` (equality and order), `numbers` (the numeric tower) and `decimal` (its
//! bigdecs), `arith` (arithmetic),
//! `strings` (`str`, printing, `clojure.string`), `format` (Java's `String.format`), `regex`
//! (`re-*`), `collections` (vectors, sets, maps, `count`, `get`, `nth`, `range`), `convert`
//! (coercions, `inst-ms`, `parse-*`, bit operations), `logic` (truth, `type`).

mod arith;
pub(crate) use arith::{plain_add, plain_value, Plain};
pub(crate) use collections::items as seq_items;
pub(crate) use numbers::Op as ArithOp;
mod collections;
mod compare;
mod convert;
mod decimal;
mod format;
mod logic;
mod numbers;
mod printing;
mod regex;
mod strings;
mod utf16;

pub use compare::{compare, equal};

use super::error::{BuiltinProblem, QueryError};
use crate::codec::Value;
use crate::edn::{edn_from_value, to_edn_string};

/// What a built-in returns: a value, or `None` for nil.
pub type Out = Result<Option<Value>, QueryError>;

/// One call of a built-in: its name as written and its arguments.
pub struct Call<'a> {
    /// The name as written in the query (for messages).
    pub name: &'a str,
    /// The argument values.
    pub args: &'a [Value],
}

impl Call<'_> {
    /// An error naming the call with its arguments as EDN.
    pub fn fail(&self, problem: BuiltinProblem) -> QueryError {
        let mut call = format!("({}", self.name);
        for a in self.args {
            call.push(' ');
            call.push_str(&edn(a));
        }
        call.push(')');
        QueryError::Builtin {
            name: self.name.to_string(),
            call,
            problem,
        }
    }

    /// Checks the argument count against `min..=max` (`max` `None`: no upper bound);
    /// `expected` says it in words for the message ("2", "1 or 2", "at least 1").
    pub fn arity(
        &self,
        min: usize,
        max: Option<usize>,
        expected: &'static str,
    ) -> Result<(), QueryError> {
        let n = self.args.len();
        if n < min || max.is_some_and(|m| n > m) {
            return Err(self.fail(BuiltinProblem::Arity { expected, got: n }));
        }
        Ok(())
    }

    /// An exact argument count.
    pub fn exactly(&self, n: usize) -> Result<(), QueryError> {
        const WORDS: [&str; 5] = ["0", "1", "2", "3", "4"];
        self.arity(n, Some(n), WORDS.get(n).copied().unwrap_or("more"))
    }

    /// A wrong argument type at `index` (from 0).
    pub fn wrong_type(&self, index: usize, expected: &'static str) -> QueryError {
        self.fail(BuiltinProblem::Type {
            position: index + 1,
            expected,
            got: self.args.get(index).map_or_else(|| "nothing".into(), edn),
        })
    }

    /// A position or count argument as Java reads one where its method takes an `int`: any
    /// number, by its `intValue()` (`(subs "abc" 1.5)` and `(nth "abc" 2N)` are accepted there;
    /// a double is cut toward zero and held within an int's range, a long keeps its low 32
    /// bits).
    pub fn java_int(&self, index: usize) -> Result<i64, QueryError> {
        let n = numbers::Num::of(&self.args[index])
            .ok_or_else(|| self.wrong_type(index, "a number"))?;
        Ok(match n {
            numbers::Num::Long(n) => i64::from(n as i32),
            numbers::Num::Big(n) => i64::from(n as i32),
            other => i64::from(other.to_f64() as i32),
        })
    }
}

/// The EDN text of a value.
pub fn edn(v: &Value) -> String {
    to_edn_string(&edn_from_value(v))
}

/// A built-in's implementation.
pub type Builtin = fn(&Call) -> Out;

/// The name without the namespaces Datomic resolves unqualified (`clojure.core/inc` is
/// `inc`), with `clojure.string`'s functions under their `clojure.string/` name (`str/` is
/// accepted as its alias too, as Datascript does; Datomic needs the full name).
fn canonical(name: &str) -> std::borrow::Cow<'_, str> {
    if let Some(rest) = name.strip_prefix("str/") {
        return format!("clojure.string/{rest}").into();
    }
    // Unqualified names earlier Datalith versions accepted (Datomic does not resolve them).
    if let "starts-with?" | "ends-with?" | "includes?" | "lower-case" | "upper-case" = name {
        return format!("clojure.string/{name}").into();
    }
    match name.strip_prefix("clojure.core/") {
        // Clojure's own `/` (exact ratios), not Datomic's query `/` (integer quotient).
        Some("/") => "clojure.core//".into(),
        Some(rest) => rest.into(),
        None => name.into(),
    }
}

/// The operation of `name` when it is the built-in `+`, `-` or `*`: on two plain numbers a
/// function clause computes it in place ([`arith::plain_value`]) instead of calling it.
pub(crate) fn plain_op(name: &str) -> Option<ArithOp> {
    match &*canonical(name) {
        "+" => Some(ArithOp::Add),
        "-" => Some(ArithOp::Sub),
        "*" => Some(ArithOp::Mul),
        _ => None,
    }
}

/// Whether `name` is a built-in function or predicate.
pub fn is_builtin(name: &str) -> bool {
    lookup(name).is_some()
}

/// Names a thread remembers resolving: a function called once per row is resolved once, not
/// compared with every name of the table each time; past this many names it resolves anew.
const RESOLVED_NAMES: usize = 1024;

/// The built-in named `name`, through the thread's memory of names resolved before.
fn lookup(name: &str) -> Option<Builtin> {
    thread_local! {
        static RESOLVED: std::cell::RefCell<rustc_hash::FxHashMap<Box<str>, Option<Builtin>>> =
            Default::default();
    }
    RESOLVED.with(|cell| {
        if let Some(f) = cell.borrow().get(name) {
            return *f;
        }
        let f = resolve(name);
        let mut map = cell.borrow_mut();
        if map.len() < RESOLVED_NAMES {
            map.insert(name.into(), f);
        }
        f
    })
}

/// The table of contents: every built-in by name.
fn resolve(name: &str) -> Option<Builtin> {
    use strings as s;
    use {arith as a, collections as c, compare as cmp, convert as cv, logic as l, regex as r};
    Some(match canonical(name).as_ref() {
        "=" => cmp::eq,
        "==" => cmp::num_eq,
        "not=" | "!=" => cmp::not_eq,
        "<" => cmp::lt,
        ">" => cmp::gt,
        "<=" => cmp::le,
        ">=" => cmp::ge,
        "compare" => cmp::compare_fn,
        "identical?" => cmp::identical,
        "-differ?" => cmp::differ,
        "+" => a::add,
        "-" => a::sub,
        "*" => a::mul,
        "/" => a::datomic_div,
        "clojure.core//" => a::clojure_div,
        "quot" => a::quot,
        "rem" => a::rem,
        "mod" => a::modulo,
        "inc" => a::inc,
        "dec" => a::dec,
        "max" => a::max,
        "min" => a::min,
        "abs" => a::abs,
        "zero?" => a::is_zero,
        "pos?" => a::is_pos,
        "neg?" => a::is_neg,
        "even?" => a::is_even,
        "odd?" => a::is_odd,
        "rand" => a::rand,
        "rand-int" => a::rand_int,
        "true?" => l::is_true,
        "false?" => l::is_false,
        "nil?" => l::is_nil,
        "some?" => l::is_some,
        "not" => l::not,
        "and" => l::and,
        "or" => l::or,
        "identity" | "ground" | "untuple" => l::identity,
        "type" => l::type_of,
        "meta" => l::meta,
        "vector" | "tuple" | "list" => c::vector,
        "set" => c::set,
        "hash-set" => c::hash_set,
        "hash-map" | "array-map" => c::hash_map,
        "count" => c::count,
        "range" => c::range,
        "not-empty" => c::not_empty,
        "empty?" => c::is_empty,
        "contains?" => c::contains,
        "get" => c::get,
        "nth" => c::nth,
        "first" => c::first,
        "seq" => c::seq,
        "vec" => c::vec,
        "second" => c::second,
        "last" => c::last,
        "double" => cv::double,
        "float" => cv::float,
        "long" => cv::long,
        "int" => cv::int,
        "num" => cv::num,
        "bigint" | "biginteger" => cv::bigint,
        "bigdec" => cv::bigdec,
        "boolean" => cv::boolean,
        "inst-ms" => cv::inst_ms,
        "parse-long" => cv::parse_long,
        "parse-double" => cv::parse_double,
        "parse-boolean" => cv::parse_boolean,
        "parse-uuid" => cv::parse_uuid_fn,
        "bit-and" => cv::bit_and,
        "bit-or" => cv::bit_or,
        "bit-xor" => cv::bit_xor,
        "bit-not" => cv::bit_not,
        "bit-shift-left" => cv::bit_shift_left,
        "bit-shift-right" => cv::bit_shift_right,
        "unsigned-bit-shift-right" => cv::unsigned_bit_shift_right,
        "format" => format::format,
        "clojure.set/union" => c::union,
        "clojure.set/intersection" => c::intersection,
        "clojure.set/difference" => c::difference,
        "clojure.set/subset?" => c::is_subset,
        "clojure.set/superset?" => c::is_superset,
        "str" => s::str,
        "subs" => s::subs,
        "pr-str" => s::pr_str,
        "prn-str" => s::prn_str,
        "print-str" => s::print_str,
        "println-str" => s::println_str,
        "keyword" => s::keyword,
        "symbol" => s::symbol,
        "name" => s::name,
        "namespace" => s::namespace,
        "clojure.string/blank?" => s::blank,
        "clojure.string/starts-with?" => s::starts_with,
        "clojure.string/ends-with?" => s::ends_with,
        "clojure.string/includes?" => s::includes,
        "clojure.string/lower-case" => s::lower_case,
        "clojure.string/upper-case" => s::upper_case,
        "clojure.string/capitalize" => s::capitalize,
        "clojure.string/trim" => s::trim,
        "clojure.string/triml" => s::triml,
        "clojure.string/trimr" => s::trimr,
        "clojure.string/trim-newline" => s::trim_newline,
        "clojure.string/reverse" => s::reverse,
        "clojure.string/index-of" => s::index_of,
        "clojure.string/last-index-of" => s::last_index_of,
        "clojure.string/join" => s::join,
        "clojure.string/split-lines" => s::split_lines,
        "clojure.string/split" => r::split,
        "clojure.string/replace" => r::replace,
        "clojure.string/replace-first" => r::replace_first,
        "re-pattern" => r::re_pattern,
        "re-find" => r::re_find,
        "re-matches" => r::re_matches,
        "re-seq" => r::re_seq,
        // Java method calls on strings, which Datomic's queries allow (`(.startsWith ?n "A")`):
        // the common ones, on the functions that already do the same, but only on a string
        // (Java has no such method on a keyword or a vector, where the function prints it).
        ".startsWith" => |c| s::on_string(c, s::starts_with),
        ".endsWith" => |c| s::on_string(c, s::ends_with),
        ".contains" => |c| s::on_string(c, s::includes),
        ".toUpperCase" => |c| s::on_string(c, s::upper_case),
        ".toLowerCase" => |c| s::on_string(c, s::lower_case),
        ".trim" => |c| s::on_string(c, s::trim),
        ".isEmpty" => c::is_empty,
        ".length" => c::count,
        ".substring" => |c| s::on_string(c, s::subs),
        ".indexOf" => s::java_index_of,
        ".equals" => cmp::eq,
        _ => return None,
    })
}

/// The built-in named `name`, resolved once for a clause that calls it on every row.
pub fn resolve_builtin(name: &str) -> Option<Builtin> {
    lookup(name)
}

/// Calls a built-in; `Ok(None)` is nil.
pub fn call(name: &str, args: &[Value]) -> Out {
    let f = lookup(name).ok_or_else(|| QueryError::UnknownFunction {
        name: name.to_string(),
    })?;
    f(&Call { name, args })
}

/// Whether a test holds, for the tests that answer from borrowed arguments (a test runs once
/// per row, and copying a string argument touches its shared count; a regular expression's
/// match would be a new string where only its presence counts); `None` for the others, which
/// [`call`] answers.
pub fn holds(name: &str, args: &[&Value]) -> Option<bool> {
    holds_canonical(&canonical(name), args)
}

/// A test resolved once for a clause that runs it on every row: its name made canonical
/// once, and a literal set of texts (`[(contains? #{"13" "31"} ?code)]`, SQL's `IN`) held
/// as a hash set, where each row's membership was a binary search comparing values.
pub struct Test<'a> {
    name: std::borrow::Cow<'a, str>,
    texts: Option<rustc_hash::FxHashSet<&'a str>>,
}

impl<'a> Test<'a> {
    /// The test `name`, whose first argument is `first` when that is a constant.
    pub fn new(name: &'a str, first: Option<&'a Value>) -> Test<'a> {
        let name = canonical(name);
        let texts = match first {
            Some(Value::Set(items)) if name == "contains?" => items
                .iter()
                .map(|x| match x {
                    Value::String(s) => Some(&**s),
                    _ => None,
                })
                .collect(),
            _ => None,
        };
        Test { name, texts }
    }

    /// As [`holds`].
    pub fn holds(&self, args: &[&Value]) -> Option<bool> {
        if let (Some(texts), [_, Value::String(s)]) = (&self.texts, args) {
            return Some(texts.contains(&**s));
        }
        holds_canonical(&self.name, args)
    }
}

fn holds_canonical(name: &str, args: &[&Value]) -> Option<bool> {
    // The comparisons of two values (a range test on every row), as `compare`'s functions
    // answer them.
    if let [a, b] = args {
        let o = || compare::compare(a, b);
        match name {
            "<" => return Some(o() == std::cmp::Ordering::Less),
            ">" => return Some(o() == std::cmp::Ordering::Greater),
            "<=" => return Some(o() != std::cmp::Ordering::Greater),
            ">=" => return Some(o() != std::cmp::Ordering::Less),
            "=" => return Some(compare::equal(a, b)),
            "not=" | "!=" => return Some(!compare::equal(a, b)),
            // Membership in a literal set (`IN (...)`), without copying the set per row.
            "contains?" => {
                if let Value::Set(items) = a {
                    // A text is equal only to the same text, which the set's order finds
                    // (its items are sorted and distinct); numbers are equal across types.
                    if let Value::String(_) = b {
                        return Some(items.binary_search(b).is_ok());
                    }
                    return Some(items.iter().any(|x| compare::equal(x, b)));
                }
            }
            _ => {}
        }
    }
    let [a, Value::String(s)] = args else {
        return None;
    };
    match (name, a) {
        ("re-find", Value::Regex(re)) => Some(re.anywhere().is_match(s)),
        ("re-matches", Value::Regex(re)) => Some(re.whole().is_match(s)),
        _ => {
            // `(clojure.string/starts-with? s prefix)`: the text first, then the part.
            let Value::String(text) = a else {
                return None;
            };
            match name {
                "clojure.string/starts-with?" => Some(text.starts_with(&**s)),
                "clojure.string/ends-with?" => Some(text.ends_with(&**s)),
                "clojure.string/includes?" => Some(text.contains(&**s)),
                _ => None,
            }
        }
    }
}

/// Clojure's truth: everything but nil and false.
pub fn truthy(v: Option<&Value>) -> bool {
    !matches!(v, None | Some(Value::Boolean(false)))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::codec::Regex;

    /// `holds` answers exactly as the call does, wherever it answers.
    #[test]
    fn holds_agrees_with_the_call() {
        let re = |s: &str| Value::Regex(Regex::parse(s).unwrap());
        let s = Value::string;
        // (name, arguments, whether `holds` answers)
        let cases: Vec<(&str, Vec<Value>, bool)> = vec![
            ("re-find", vec![re("spe.*ial"), s("a special one")], true),
            ("re-find", vec![re("^x"), s("a special one")], true),
            ("re-matches", vec![re("a.*e"), s("a special one")], true),
            ("re-matches", vec![re("special"), s("a special one")], true),
            (
                "clojure.core/re-find",
                vec![re("one"), s("a special one")],
                true,
            ),
            ("clojure.string/starts-with?", vec![s("abc"), s("ab")], true),
            ("clojure.string/starts-with?", vec![s("abc"), s("b")], true),
            ("starts-with?", vec![s("abc"), s("ab")], true),
            ("str/ends-with?", vec![s("abc"), s("bc")], true),
            ("clojure.string/includes?", vec![s("abc"), s("d")], true),
            ("clojure.string/includes?", vec![s("abc"), s("")], true),
            // Comparisons of two values, across types as `compare` orders them.
            ("=", vec![s("a"), s("a")], true),
            ("=", vec![Value::Long(1), Value::double(1.0).unwrap()], true),
            ("not=", vec![Value::Long(1), Value::Long(2)], true),
            ("!=", vec![s("a"), s("a")], true),
            ("<", vec![Value::Long(1), Value::double(1.5).unwrap()], true),
            ("<", vec![Value::double(2.0).unwrap(), Value::Long(2)], true),
            (">", vec![s("b"), s("a")], true),
            ("<=", vec![Value::Long(2), Value::Long(2)], true),
            (">=", vec![Value::Long(1), Value::Long(2)], true),
            ("clojure.core/<", vec![Value::Long(1), Value::Long(2)], true),
            ("<", vec![Value::Long(1), s("a")], true),
            // Not answered: other names, other arities, other types (the call says what is
            // wrong).
            (
                "<",
                vec![Value::Long(1), Value::Long(2), Value::Long(3)],
                false,
            ),
            ("=", vec![s("a")], false),
            (
                "clojure.string/includes?",
                vec![Value::Long(1), s("1")],
                false,
            ),
            ("re-find", vec![s("x"), s("x")], false),
            // Membership in a set, by Clojure's equality; a map or a vector is the call's.
            (
                "contains?",
                vec![Value::set(vec![s("13"), s("31")]), s("31")],
                true,
            ),
            (
                "contains?",
                vec![Value::set(vec![s("13"), s("31")]), s("3")],
                true,
            ),
            (
                "contains?",
                vec![
                    Value::set(vec![Value::Long(1)]),
                    Value::double(1.0).unwrap(),
                ],
                true,
            ),
            ("contains?", vec![Value::set(vec![]), Value::Long(1)], true),
            // A text looked for in a sorted set: present, absent, among other kinds.
            (
                "contains?",
                vec![
                    Value::set(vec![s("13"), s("31"), s("23"), s("29")]),
                    s("23"),
                ],
                true,
            ),
            (
                "contains?",
                vec![
                    Value::set(vec![s("13"), s("31"), s("23"), s("29")]),
                    s("24"),
                ],
                true,
            ),
            (
                "contains?",
                vec![
                    Value::set(vec![Value::Long(1), s("a"), Value::keyword("k"), s("")]),
                    s("a"),
                ],
                true,
            ),
            (
                "contains?",
                vec![
                    Value::set(vec![Value::Long(1), Value::keyword("a")]),
                    s("a"),
                ],
                true,
            ),
            (
                "contains?",
                vec![Value::Tuple(vec![Some(Value::Long(5))]), Value::Long(0)],
                false,
            ),
            ("contains?", vec![s("abc"), Value::Long(1)], false),
        ];
        for (name, args, answers) in cases {
            let refs: Vec<&Value> = args.iter().collect();
            let got = holds(name, &refs);
            assert_eq!(got.is_some(), answers, "{name} {args:?}");
            if let Some(b) = got {
                let called = truthy(call(name, &args).unwrap().as_ref());
                assert_eq!(b, called, "{name} {args:?}");
            }
            // Resolved once for a clause whose first argument is this constant: the same.
            let test = Test::new(name, args.first());
            assert_eq!(test.holds(&refs), got, "{name} {args:?} as a Test");
        }
    }
}
