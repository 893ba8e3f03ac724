//! Target `query`: the query parser, planner and engine on any text, against the sample
//! database. Input: the query, then (after NUL bytes) EDN inputs for its `:in`.

use datalith::edn::read_one;

use crate::deadline::{flag_after, QUERY_LIMIT};

/// Parses and runs the query in `data` (errors are fine; a panic or hang is a finding).
pub fn run(data: &[u8]) {
    let Some(parts) = crate::text_parts(data) else {
        return;
    };
    let Some((query, inputs)) = parts.split_first() else {
        return;
    };
    let Ok(inputs) = inputs
        .iter()
        .map(|t| read_one(t))
        .collect::<Result<Vec<_>, _>>()
    else {
        return;
    };
    let db = crate::fixture::sample()
        .db()
        .expect("snapshot of the sample");
    let cancel = flag_after(QUERY_LIMIT);
    let _ = db.q_cancellable(query, &inputs, &cancel);
    // The planner's explain path too (it runs the query; only when it was quick).
    if !cancel.load(std::sync::atomic::Ordering::Relaxed) && query.len() % 2 == 0 {
        let _ = db.explain(query, &inputs);
    }
}
