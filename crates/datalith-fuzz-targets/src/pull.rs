//! Target `pull`: pull patterns on any text, against the sample database. Input: the pattern,
//! then (after a NUL byte) the entity as EDN (an id, an ident or a lookup ref); without one,
//! the pattern is pulled for every person of the sample.

use datalith::edn::read_one;
use datalith::pull::Eid;

/// Pulls the pattern in `data` (errors are fine; a panic is a finding).
pub fn run(data: &[u8]) {
    let Some(parts) = crate::text_parts(data) else {
        return;
    };
    let Some(pattern) = parts.first() else {
        return;
    };
    let db = crate::fixture::sample()
        .db()
        .expect("snapshot of the sample");
    match parts.get(1) {
        Some(eid) => {
            let Ok(form) = read_one(eid) else { return };
            let Ok(eid) = Eid::from_edn(&form) else {
                return;
            };
            let _ = db.pull(pattern, eid);
        }
        None => {
            let people: Vec<Eid> = ["Ann", "Bob", "Cid", "Dee", "Eve"]
                .iter()
                .filter_map(|n| Eid::from_edn(&read_one(&format!("[:name \"{n}\"]")).ok()?).ok())
                .collect();
            let _ = db.pull_many(pattern, &people);
        }
    }
}
