//! The bulk-load phase in the terminal and in `summary.md`: a table and the ratio line
//! "init_db faster than Datalevin init-db".

use std::fmt::Write as _;

use super::result::InitResult;
use super::{InitCondition, WARMUP};

/// One line per condition for the terminal.
pub fn one_line(r: &InitResult) -> String {
    let head = format!("{:<28} init ", r.condition);
    if let Some(why) = &r.skipped {
        return format!("{head} skipped: {why}");
    }
    if !r.measured() {
        return format!("{head} FAILED: {}", r.error.as_deref().unwrap_or("?"));
    }
    let mut s = format!(
        "{head} {:>8} entities ({} items) {:>8.3} s  (data built in {:.2} s, untimed)  count {}",
        r.entities,
        r.items,
        r.seconds,
        r.prep_seconds,
        if r.count_ok { "ok" } else { "WRONG" }
    );
    if let Some(e) = &r.error {
        let _ = write!(s, "  ERROR: {e}");
    }
    s
}

fn find(results: &[InitResult], c: InitCondition) -> Option<&InitResult> {
    results
        .iter()
        .find(|r| r.condition == c.name() && r.measured() && r.seconds > 0.0)
}

/// The `## Bulk load` section of `summary.md` (empty when the phase did not run).
pub fn markdown(results: &[InitResult]) -> String {
    let mut s = String::new();
    if results.is_empty() {
        return s;
    }
    let w = &mut s;
    let entities = results.first().map_or(0, |r| r.entities);
    let _ = writeln!(
        w,
        "\n## Bulk load (init): {entities} entities into an empty durable database\n"
    );
    let _ = writeln!(
        w,
        "Timed, for each condition: from the call that creates the database until it is closed \
         with the data durable (below). Not timed: building the data (datoms with their entity \
         ids, or rows, UUID strings included: \"data s\"), a warm-up load of {WARMUP} entities \
         into a throwaway directory (the JVM's JIT; every condition does it), and the count \
         check on the reopened database. SQLite indexes only its primary key `k`; Datalith and \
         Datalevin index every datom both ways (EAV and AVE).\n"
    );
    let _ = writeln!(
        w,
        "| condition | timed | items | seconds | min-max s (passes) | entities/s | user s | sys s | peak RSS MB | data s | count ok |"
    );
    let _ = writeln!(w, "|---|---|--:|--:|--:|--:|--:|--:|--:|--:|---|");
    for r in results.iter().filter(|r| r.measured()) {
        let _ = writeln!(
            w,
            "| {} | `{}` | {} | {:.3} | {} | {:.0} | {:.2} | {:.2} | {:.1} | {:.2} | {} |",
            r.condition,
            r.timed,
            r.items,
            r.seconds,
            r.seconds_spread.as_ref().map_or("-".into(), |s| format!(
                "{} ({})",
                s.range_text(|x| format!("{x:.3}")),
                s.passes.len()
            )),
            r.entities as f64 / r.seconds.max(1e-9),
            r.user_s,
            r.sys_s,
            r.peak_rss_mb,
            r.prep_seconds,
            if r.count_ok { "ok" } else { "**WRONG**" }
        );
    }
    for r in results.iter().filter(|r| r.skipped.is_some()) {
        let _ = writeln!(
            w,
            "\n- `{}` skipped: {}",
            r.condition,
            r.skipped.as_deref().unwrap_or("")
        );
    }
    let _ = writeln!(
        w,
        "\n| ratio (seconds) | Datalith s | other s | speed-up | target | met |"
    );
    let _ = writeln!(w, "|---|--:|--:|--:|---|---|");
    let dl = find(results, InitCondition::Datalith);
    for (label, other, target) in [
        (
            "init_db faster than Datalevin init-db",
            InitCondition::Datalevin,
            "> 1x",
        ),
        (
            "init_db against SQLite (reference)",
            InitCondition::Sqlite,
            "-",
        ),
    ] {
        let o = find(results, other);
        let cell = |r: Option<&InitResult>| r.map_or("n/a".into(), |r| format!("{:.3}", r.seconds));
        let (q, met) = match (dl, o) {
            (Some(d), Some(o)) => {
                let q = o.seconds / d.seconds;
                let met = match target {
                    "> 1x" if q > 1.0 => "yes",
                    "> 1x" => "**NO**",
                    _ => "",
                };
                (format!("{q:.2}x"), met)
            }
            _ => ("n/a (not run)".into(), ""),
        };
        let _ = writeln!(
            w,
            "| {label} | {} | {} | {q} | {target} | {met} |",
            cell(dl),
            cell(o)
        );
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    fn measured(c: InitCondition, secs: f64) -> InitResult {
        InitResult {
            seconds: secs,
            count_ok: true,
            count: Some(10),
            ..InitResult::new(c, 10)
        }
    }

    #[test]
    fn ratio_line_says_whether_init_db_beat_datalevin() {
        let cases = [
            (1.0, 2.0, "| 2.00x | > 1x | yes |"),
            (2.0, 1.0, "| 0.50x | > 1x | **NO** |"),
        ];
        for (dl, dlv, expected) in cases {
            let md = markdown(&[
                measured(InitCondition::Datalith, dl),
                measured(InitCondition::Datalevin, dlv),
            ]);
            let line = md
                .lines()
                .find(|l| l.starts_with("| init_db faster than Datalevin init-db"))
                .unwrap();
            assert!(line.ends_with(expected), "{line}");
        }
        let md = markdown(&[measured(InitCondition::Datalith, 1.0)]);
        assert!(md.contains("n/a (not run)"));
        assert!(markdown(&[]).is_empty());
    }
}
