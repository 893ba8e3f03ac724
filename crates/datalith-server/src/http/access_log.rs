//! The request log (`--log-requests`): one EDN map a line on standard error, so that a log
//! reads back as data (`datalith::edn::read_one` on each line).

use std::io::Write;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use datalith::edn::{to_edn_string, Edn};

/// One line on standard error, an EDN map: `{:at #inst "...", :op :q, :db "people", :status
/// 200, :ms 1.25, :token "reader"}` (`:op`: the operation's name, as `Op::name` gives it;
/// `:token`: the token's name, nil without tokens).
pub fn line(op: &str, db: &str, status: u16, took: Duration, token: Option<&str>) {
    let at = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_millis() as i64);
    let line = Edn::Map(vec![
        (Edn::kw(":at"), Edn::Inst(at)),
        (Edn::kw(":op"), Edn::kw(op)),
        (Edn::kw(":db"), Edn::String(db.to_string())),
        (Edn::kw(":status"), Edn::Long(status as i64)),
        (
            Edn::kw(":ms"),
            Edn::Double((took.as_secs_f64() * 1e6).round() / 1e3),
        ),
        (
            Edn::kw(":token"),
            token.map_or(Edn::Nil, |t| Edn::String(t.to_string())),
        ),
    ]);
    let _ = writeln!(std::io::stderr().lock(), "{}", to_edn_string(&line));
}
