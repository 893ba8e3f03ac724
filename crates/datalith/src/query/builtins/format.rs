//! `format`: Java's `String.format`, which Clojure's `format` is, for the conversions a
//! query uses: `%s %S` (the value as `str` shows it), `%d` (integers), `%f %e %g` (numbers,
//! default precision 6), `%x %X %o` (longs), `%b` (truthiness), `%c` (a one-character
//! string), `%%` and `%n`; flags `-` (left) `0` (zero-padded) `+` `,` (grouping) and a space;
//! a width and, for `%s %f %e %g`, a precision. A conversion Java refuses for the argument's
//! type (`%d` of a string) is an error, as Java's `IllegalFormatConversionException`.

use super::numbers::Num;
use super::printing::str_text;
use super::{Call, Out};
use crate::codec::Value;
use crate::limits::MAX_BUILT_STRING_BYTES;
use crate::query::error::{BuiltinProblem, QueryError};

/// One `%` directive, parsed.
#[derive(Default)]
struct Spec {
    left: bool,
    zero: bool,
    plus: bool,
    space: bool,
    group: bool,
    width: Option<usize>,
    precision: Option<usize>,
    conversion: char,
}

/// The widest field (and the longest precision) a directive may ask for: Java's formatter
/// takes any `int`, but `"%99999999999d"` would fill memory before any timeout could stop it.
pub const MAX_FORMAT_FIELD: usize = 1 << 20;

fn bad(c: &Call, message: String) -> QueryError {
    c.fail(BuiltinProblem::OutOfRange(message))
}

/// `format`
pub fn format(c: &Call) -> Out {
    c.arity(1, None, "at least 1")?;
    let pattern = super::strings::text(c, 0)?;
    let mut out = String::with_capacity(pattern.len() + 16);
    let mut next_arg = 1;
    let mut chars = pattern.chars().peekable();
    while let Some(ch) = chars.next() {
        if ch != '%' {
            out.push(ch);
            continue;
        }
        let mut spec = Spec::default();
        while let Some(&f) = chars.peek() {
            match f {
                '-' => spec.left = true,
                '0' => spec.zero = true,
                '+' => spec.plus = true,
                ' ' => spec.space = true,
                ',' => spec.group = true,
                _ => break,
            }
            chars.next();
        }
        spec.width = digits(&mut chars);
        if chars.peek() == Some(&'.') {
            chars.next();
            spec.precision = Some(digits(&mut chars).unwrap_or(0));
        }
        // A field is made whole in memory, in one call no timeout interrupts.
        if spec
            .width
            .max(spec.precision)
            .is_some_and(|n| n > MAX_FORMAT_FIELD)
        {
            return Err(bad(
                c,
                format!(
                    "format {pattern:?}: a width or precision past {MAX_FORMAT_FIELD} characters"
                ),
            ));
        }
        spec.conversion = chars
            .next()
            .ok_or_else(|| bad(c, format!("format {pattern:?} ends inside a directive")))?;
        match spec.conversion {
            '%' => pad(&mut out, "%".into(), &spec),
            'n' => out.push('\n'),
            conversion => {
                let arg = c.args.get(next_arg).ok_or_else(|| {
                    bad(
                        c,
                        format!("format {pattern:?}: no argument for %{conversion}"),
                    )
                })?;
                next_arg += 1;
                let text = convert(c, &spec, arg, next_arg - 1)?;
                // Many wide fields add up (`%1048576d` a thousand times): checked before
                // the field is made.
                let field = text.len().max(spec.width.unwrap_or(0));
                if out.len() + field > MAX_BUILT_STRING_BYTES {
                    return Err(bad(
                        c,
                        format!(
                            "format {pattern:?}: its result would pass {MAX_BUILT_STRING_BYTES} bytes"
                        ),
                    ));
                }
                pad(&mut out, text, &spec);
            }
        }
        if out.len() > MAX_BUILT_STRING_BYTES {
            return Err(bad(
                c,
                format!("format {pattern:?}: its result would pass {MAX_BUILT_STRING_BYTES} bytes"),
            ));
        }
    }
    Ok(Some(Value::string(&out)))
}

fn digits(chars: &mut std::iter::Peekable<std::str::Chars<'_>>) -> Option<usize> {
    let mut n: Option<usize> = None;
    while let Some(d) = chars.peek().and_then(|c| c.to_digit(10)) {
        n = Some(n.unwrap_or(0).saturating_mul(10).saturating_add(d as usize));
        chars.next();
    }
    n
}

/// The text of one argument under its conversion, before the width's padding.
fn convert(c: &Call, spec: &Spec, arg: &Value, at: usize) -> Result<String, QueryError> {
    let wrong = |expected| c.wrong_type(at, expected);
    Ok(match spec.conversion {
        's' | 'S' => {
            let mut t = str_text(arg);
            if let Some(p) = spec.precision {
                t = t.chars().take(p).collect();
            }
            if spec.conversion == 'S' {
                t = t.to_uppercase();
            }
            t
        }
        'b' | 'B' => (!matches!(arg, Value::Boolean(false))).to_string(),
        'c' => match arg {
            Value::Char(c) => c.to_string(),
            Value::String(s) if s.chars().count() == 1 => s.to_string(),
            _ => return Err(wrong("a one-character string")),
        },
        'd' => {
            let n = match Num::of(arg) {
                Some(Num::Long(n)) => i128::from(n),
                Some(Num::Big(n)) => n,
                _ => return Err(wrong("an integer")),
            };
            signed(spec, n < 0, grouped(spec, &n.unsigned_abs().to_string()))
        }
        'x' | 'X' | 'o' => {
            let Value::Long(n) = arg else {
                return Err(wrong("a long"));
            };
            match spec.conversion {
                'x' => format!("{n:x}"),
                'X' => format!("{n:X}"),
                _ => format!("{n:o}"),
            }
        }
        'f' | 'e' | 'E' | 'g' | 'G' => {
            let x = match Num::of(arg) {
                Some(Num::Double(x)) => x,
                Some(n @ Num::Dec(_)) => n.to_f64(),
                _ => return Err(wrong("a double or a bigdec")),
            };
            if !x.is_finite() {
                return Ok(if x.is_nan() {
                    "NaN".into()
                } else if x > 0.0 {
                    "Infinity".into()
                } else {
                    "-Infinity".into()
                });
            }
            let p = spec.precision.unwrap_or(6);
            let body = match spec.conversion {
                'f' => grouped(spec, &format!("{:.p$}", x.abs())),
                'e' | 'E' => exponent(x.abs(), p, spec.conversion == 'E'),
                _ => general(x.abs(), p, spec.conversion == 'G'),
            };
            signed(spec, x.is_sign_negative() && x != 0.0, body)
        }
        other => return Err(bad(c, format!("unknown format conversion %{other}"))),
    })
}

/// A number's sign before its digits, as the flags ask.
fn signed(spec: &Spec, negative: bool, digits: String) -> String {
    let sign = match (negative, spec.plus, spec.space) {
        (true, _, _) => "-",
        (false, true, _) => "+",
        (false, false, true) => " ",
        _ => "",
    };
    format!("{sign}{digits}")
}

/// Digits grouped by threes before any decimal point, with `,` (the `,` flag).
fn grouped(spec: &Spec, digits: &str) -> String {
    if !spec.group {
        return digits.to_string();
    }
    let (whole, fraction) = digits.split_at(digits.find('.').unwrap_or(digits.len()));
    let mut out = String::new();
    for (i, d) in whole.chars().enumerate() {
        if i > 0 && (whole.len() - i) % 3 == 0 {
            out.push(',');
        }
        out.push(d);
    }
    out + fraction
}

/// Java's `%e`: one digit, the fraction, and a signed exponent of at least two digits.
fn exponent(x: f64, p: usize, upper: bool) -> String {
    let t = format!("{x:.p$e}");
    let (mantissa, exp) = t.split_once('e').unwrap_or((&t, "0"));
    let e: i32 = exp.parse().unwrap_or(0);
    let sign = if e < 0 { '-' } else { '+' };
    let out = format!("{mantissa}e{sign}{:02}", e.abs());
    if upper {
        out.to_uppercase()
    } else {
        out
    }
}

/// Java's `%g`: `%e` outside 10^-4 <= x < 10^precision after rounding, else `%f` with
/// `precision` significant digits in all.
fn general(x: f64, p: usize, upper: bool) -> String {
    let p = p.max(1);
    if x != 0.0 && (x < 1e-4 || x >= 10f64.powi(p as i32)) {
        return exponent(x, p - 1, upper);
    }
    let magnitude = if x == 0.0 {
        0
    } else {
        x.log10().floor() as i32
    };
    let decimals = (p as i32 - 1 - magnitude).max(0) as usize;
    format!("{x:.decimals$}")
}

/// `text` padded to the width: spaces on the left (right with `-`), or zeros after the sign
/// with `0`.
fn pad(out: &mut String, text: String, spec: &Spec) {
    let len = text.chars().count();
    let fill = spec.width.unwrap_or(0).saturating_sub(len);
    if fill == 0 {
        out.push_str(&text);
    } else if spec.left {
        out.push_str(&text);
        out.push_str(&" ".repeat(fill));
    } else if spec.zero && spec.conversion != 's' {
        let sign_len = usize::from(text.starts_with(['-', '+', ' ']));
        out.push_str(&text[..sign_len]);
        out.push_str(&"0".repeat(fill));
        out.push_str(&text[sign_len..]);
    } else {
        out.push_str(&" ".repeat(fill));
        out.push_str(&text);
    }
}

#[cfg(test)]
mod tests {
    use super::super::call;
    use super::MAX_FORMAT_FIELD;
    use crate::codec::Value;

    #[test]
    fn format_answers_as_java() {
        let d = |x: f64| Value::double(x).unwrap();
        let s = Value::string;
        let table: Vec<(Vec<Value>, &str)> = vec![
            (vec![s("%s-%d"), s("Ann"), Value::Long(31)], "Ann-31"),
            (
                vec![
                    s("%5d|%-5d|%05d"),
                    Value::Long(42),
                    Value::Long(42),
                    Value::Long(-42),
                ],
                "   42|42   |-0042",
            ),
            (vec![s("%.2f"), d(1.23456)], "1.23"),
            (vec![s("%f"), d(2.5)], "2.500000"),
            (vec![s("%,d"), Value::Long(1234567)], "1,234,567"),
            (
                vec![
                    s("%+d %x %X %o"),
                    Value::Long(5),
                    Value::Long(255),
                    Value::Long(255),
                    Value::Long(8),
                ],
                "+5 ff FF 10",
            ),
            (vec![s("%e"), d(12345.678)], "1.234568e+04"),
            (vec![s("%s %S"), Value::keyword("a/b"), s("x")], ":a/b X"),
            (vec![s("100%% %b"), Value::Boolean(false)], "100% false"),
            (vec![s("%.3s"), s("abcdef")], "abc"),
            (vec![s("%g"), d(0.5)], "0.500000"),
        ];
        for (args, want) in table {
            let got = call("format", &args).map_err(|e| e.to_string());
            assert_eq!(got, Ok(Some(s(want))), "{args:?}");
        }
        for args in [
            vec![s("%d"), s("x")],
            vec![s("%d")],
            vec![s("%q"), Value::Long(1)],
            vec![s("%f"), Value::Long(1)],
            // Fields past the limit, which would fill memory (one call, no timeout).
            vec![s("%99999999999d"), Value::Long(1)],
            vec![s("%.99999999999f"), d(1.5)],
            vec![s("%1048577s"), s("x")],
        ] {
            assert!(call("format", &args).is_err(), "{args:?} must fail");
        }
        // 300 fields of a mebibyte pass the 256 MiB a result may take.
        let wide = format!("%{MAX_FORMAT_FIELD}d").repeat(300);
        let args: Vec<Value> = std::iter::once(s(&wide))
            .chain((0..300).map(Value::Long))
            .collect();
        assert!(call("format", &args).is_err(), "300 wide fields must fail");
        let widest = format!("%{MAX_FORMAT_FIELD}d");
        let Ok(Some(Value::String(text))) = call("format", &[s(&widest), Value::Long(7)]) else {
            panic!("{widest}")
        };
        assert_eq!(text.len(), MAX_FORMAT_FIELD);
    }
}
