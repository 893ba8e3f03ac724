//! A query's plan as EDN, for `q` with `:explain true`: what `explain` shows in the shell,
//! as data a client of any language reads (`datalith shell URL` prints it as a table).
//!
//! `{:query "..." :rows N :clauses [{:clause "[...]" :line L :column C} ...]
//!   :steps [{:step "[...]" :index "AVE" :estimated N :actual N :clauses [I ...]} ...]}`:
//! the clauses as written (their positions when the query came as text), the steps in the
//! order they ran, each naming the written clauses it ran by their place in `:clauses`.

use datalith::edn::Edn;
use datalith::query::Plan;

/// `plan` as the answer's `:plan`.
pub fn plan_edn(plan: &Plan) -> Edn {
    let count = |n: u64| Edn::Long(i64::try_from(n).unwrap_or(i64::MAX));
    let clauses = plan
        .clauses
        .iter()
        .map(|c| {
            let mut m = vec![(Edn::kw(":clause"), Edn::String(c.text.clone()))];
            if let Some(p) = c.position {
                m.push((Edn::kw(":line"), count(p.line as u64)));
                m.push((Edn::kw(":column"), count(p.column as u64)));
            }
            Edn::Map(m)
        })
        .collect();
    let steps = plan
        .steps
        .iter()
        .map(|s| {
            Edn::Map(vec![
                (Edn::kw(":step"), Edn::String(s.what.clone())),
                (Edn::kw(":index"), Edn::String(s.index.to_string())),
                (Edn::kw(":estimated"), count(s.estimated)),
                (Edn::kw(":actual"), count(s.actual)),
                (
                    Edn::kw(":clauses"),
                    Edn::Vector(s.clauses.iter().map(|&i| count(i as u64)).collect()),
                ),
            ])
        })
        .collect();
    Edn::Map(vec![
        (Edn::kw(":query"), Edn::String(plan.query.clone())),
        (Edn::kw(":rows"), count(plan.rows as u64)),
        (Edn::kw(":clauses"), Edn::Vector(clauses)),
        (Edn::kw(":steps"), Edn::Vector(steps)),
    ])
}
