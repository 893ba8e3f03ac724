//! Values as text, the way Clojure on the JVM shows them: `str` (Java's `toString`: `1.0E10`,
//! a date as `Wed Jan 01 00:00:00 UTC 2020`, a keyword with its colon, a string as itself),
//! `pr-str` (readable EDN), `print-str` (EDN with strings bare, also inside collections), and
//! their `...ln` forms.
//!
//! Dates print in UTC (Datomic prints in the JVM's time zone); a bigdec prints without the
//! trailing zeros it was written with (`1.50M` is kept as `1.5`).

use crate::codec::{uuid_text, BigDec, Value};
use crate::edn::civil_from_days;

/// Java's `Double.toString`: plain between 10^-3 and 10^7, else `d.dddE±n`; always a digit
/// after the point.
pub fn java_double(x: f64) -> String {
    if x.is_nan() {
        return "NaN".into();
    }
    if x.is_infinite() {
        return if x > 0.0 { "Infinity" } else { "-Infinity" }.into();
    }
    if x == 0.0 {
        return if x.is_sign_negative() { "-0.0" } else { "0.0" }.into();
    }
    let a = x.abs();
    if (1e-3..1e7).contains(&a) {
        let t = format!("{x}");
        return if t.contains('.') { t } else { format!("{t}.0") };
    }
    // Shortest round-trip digits, then Java's layout of them.
    let e = format!("{x:e}");
    let (mantissa, exp) = e.split_once('e').unwrap_or((&e, "0"));
    let mantissa = if mantissa.contains('.') {
        mantissa.to_string()
    } else {
        format!("{mantissa}.0")
    };
    format!("{mantissa}E{exp}")
}

/// Java's `BigDecimal.toString` of a normalized decimal: plain, or for a very large or small
/// one `d.ddE±n` (Java's own layout for those).
fn java_bigdec(d: &BigDec) -> String {
    d.plain_text().unwrap_or_else(|| {
        let (negative, digits, exponent) = d.parts();
        let (first, rest) = digits.split_at(1);
        let dot = if rest.is_empty() { "" } else { "." };
        let sign = if negative { "-" } else { "" };
        format!("{sign}{first}{dot}{rest}E{:+}", i64::from(exponent) - 1)
    })
}

/// Java's `Date.toString`, in UTC: `Wed Jan 01 00:00:00 UTC 2020`.
fn java_date(ms: i64) -> String {
    const DAYS: [&str; 7] = ["Thu", "Fri", "Sat", "Sun", "Mon", "Tue", "Wed"];
    const MONTHS: [&str; 12] = [
        "Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec",
    ];
    let days = ms.div_euclid(86_400_000);
    let rem = ms.rem_euclid(86_400_000) / 1000;
    let (y, m, d) = civil_from_days(days);
    format!(
        "{} {} {d:02} {:02}:{:02}:{:02} UTC {y}",
        DAYS[days.rem_euclid(7) as usize],
        MONTHS[(m - 1) as usize],
        rem / 3600,
        rem / 60 % 60,
        rem % 60
    )
}

/// How `str` shows one value.
pub fn str_text(v: &Value) -> String {
    match v {
        Value::String(s) => s.to_string(),
        Value::Long(n) => n.to_string(),
        Value::Ref(e) => e.to_string(),
        Value::BigInt(n) => n.to_string(),
        Value::Double(x) => java_double(x.get()),
        Value::Float(x) => java_double(f64::from(x.get())),
        Value::BigDec(d) => java_bigdec(d),
        Value::Instant(ms) => java_date(*ms),
        Value::Uuid(u) => uuid_text(u),
        Value::Symbol(s) => s.to_symbol_text(),
        Value::Regex(r) => r.source().to_string(),
        Value::Ratio(r) => r.to_string(),
        Value::Char(c) => c.to_string(),
        other => pr_text(other),
    }
}

/// How `pr-str` shows one value: readable EDN.
pub fn pr_text(v: &Value) -> String {
    super::edn(v)
}

/// How `print-str` shows one value: as `pr-str`, but strings bare at every depth.
pub fn print_text(v: &Value) -> String {
    let item = |i: &Option<Value>| i.as_ref().map_or_else(|| "nil".into(), print_text);
    match v {
        Value::String(s) => s.to_string(),
        Value::Char(c) => c.to_string(),
        Value::Tuple(items) => {
            format!("[{}]", items.iter().map(item).collect::<Vec<_>>().join(" "))
        }
        Value::Set(items) => format!(
            "#{{{}}}",
            items.iter().map(print_text).collect::<Vec<_>>().join(" ")
        ),
        Value::Map(entries) => format!(
            "{{{}}}",
            entries
                .iter()
                .map(|(k, v)| format!("{} {}", print_text(k), print_text(v)))
                .collect::<Vec<_>>()
                .join(", ")
        ),
        other => pr_text(other),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers_and_dates_print_as_java_does() {
        let doubles = [
            (1.0, "1.0"),
            (6.2, "6.2"),
            (-0.5, "-0.5"),
            (1e7, "1.0E7"),
            (1.5e10, "1.5E10"),
            (1e-4, "1.0E-4"),
            (0.001, "0.001"),
            (1234567.0, "1234567.0"),
        ];
        for (x, want) in doubles {
            assert_eq!(java_double(x), want, "{x}");
        }
        let decs = [
            ("1.5M", "1.5"),
            ("100M", "100"),
            ("0.0012M", "0.0012"),
            ("-3M", "-3"),
        ];
        for (d, want) in decs {
            assert_eq!(java_bigdec(&BigDec::parse(d).unwrap()), want, "{d}");
        }
        // Checked against Datomic: (str #inst "2020-01-01") is "Wed Jan 01 00:00:00 UTC 2020".
        assert_eq!(java_date(1_577_836_800_000), "Wed Jan 01 00:00:00 UTC 2020");
        assert_eq!(java_date(-1), "Wed Dec 31 23:59:59 UTC 1969");
    }
}
