//! A Datalog port made of several queries, and how the harness composes them.
//!
//! A port file holds one query (a vector `[:find ...]`), or a map `{:steps [...]}` whose
//! steps run in order on the same database value, the last one's result being the answer:
//!
//! - `{:name avg :query [:find ...]}`: a query; with `:args [a b]` the results of the earlier
//!   steps `a` and `b` are its inputs after `$`, in that order, as they came (a relation as
//!   a relation, a scalar as a scalar): the query's `:in` binds them (`:in $ [[?p ?avg]]`).
//! - `{:name all :union [a b]}`: the rows of relations `a` and `b` together (SQL's `UNION
//!   ALL`), for an outer join's two halves (Q13).
//!
//! That is all the harness does between queries: it passes values along, it computes
//! nothing. `PORTS.md` says for each query why it takes steps (a subquery's aggregate that
//! the outer query compares or joins on, an order by an aggregate, arithmetic on aggregates).

use datalith::edn::{read_one, Edn};

/// One step of a port.
#[derive(Debug, Clone, PartialEq)]
pub enum Step {
    Query {
        name: String,
        text: String,
        args: Vec<String>,
    },
    Union {
        name: String,
        parts: Vec<String>,
    },
}

impl Step {
    pub fn name(&self) -> &str {
        match self {
            Step::Query { name, .. } | Step::Union { name, .. } => name,
        }
    }
}

/// A port: its steps (one for a single query).
#[derive(Debug, Clone, PartialEq)]
pub struct Port {
    pub steps: Vec<Step>,
}

fn key(k: &str) -> Edn {
    Edn::Keyword(datalith::codec::Keyword::new(None, k))
}

fn get<'a>(map: &'a [(Edn, Edn)], k: &str) -> Option<&'a Edn> {
    let k = key(k);
    map.iter().find(|(x, _)| *x == k).map(|(_, v)| v)
}

fn names(v: Option<&Edn>, what: &str) -> Result<Vec<String>, String> {
    match v {
        None => Ok(Vec::new()),
        Some(Edn::Vector(items)) => items
            .iter()
            .map(|i| match i {
                Edn::Symbol(s) | Edn::Keyword(s) => {
                    Ok(s.to_string().trim_start_matches(':').to_string())
                }
                other => Err(format!("{what}: {other} is not a step's name")),
            })
            .collect(),
        Some(other) => Err(format!("{what}: {other} is not a vector of step names")),
    }
}

/// Reads a port file.
pub fn parse(text: &str) -> Result<Port, String> {
    let edn = read_one(text).map_err(|e| e.to_string())?;
    match &edn {
        Edn::Vector(_) => Ok(Port {
            steps: vec![Step::Query {
                name: "answer".into(),
                text: text.to_string(),
                args: Vec::new(),
            }],
        }),
        Edn::Map(m) => {
            let Some(Edn::Vector(steps)) = get(m, "steps") else {
                return Err("a port map needs :steps [...]".into());
            };
            let mut out: Vec<Step> = Vec::new();
            for s in steps {
                let Edn::Map(s) = s else {
                    return Err(format!("step {s} is not a map"));
                };
                let name = match get(s, "name") {
                    Some(Edn::Symbol(n) | Edn::Keyword(n)) => {
                        n.to_string().trim_start_matches(':').to_string()
                    }
                    _ => format!("step{}", out.len() + 1),
                };
                let step = if let Some(q) = get(s, "query") {
                    Step::Query {
                        name,
                        text: q.to_string(),
                        args: names(get(s, "args"), "args")?,
                    }
                } else if get(s, "union").is_some() {
                    Step::Union {
                        name,
                        parts: names(get(s, "union"), "union")?,
                    }
                } else {
                    return Err(format!("step {name} has neither :query nor :union"));
                };
                let uses = match &step {
                    Step::Query { args, .. } => args,
                    Step::Union { parts, .. } => parts,
                };
                for u in uses {
                    if !out.iter().any(|p| p.name() == u) {
                        return Err(format!(
                            "step {} uses {u}, not an earlier step",
                            step.name()
                        ));
                    }
                }
                out.push(step);
            }
            if out.is_empty() {
                return Err("a port needs at least one step".into());
            }
            Ok(Port { steps: out })
        }
        other => Err(format!("a port is a query or a map of steps, not {other}")),
    }
}

/// Runs `port`, each query through `q(text, inputs after $)`; the last step's result.
pub fn run<E>(port: &Port, mut q: impl FnMut(&str, &[Edn]) -> Result<Edn, E>) -> Result<Edn, E> {
    let uses = |step: &Step| -> Vec<String> {
        match step {
            Step::Query { args, .. } => args.clone(),
            Step::Union { parts, .. } => parts.clone(),
        }
    };
    // The last step that reads each result: there it is moved, not copied (a result can be
    // a million rows, and copying it is no part of the query).
    let last_use = |name: &str| -> Option<usize> {
        port.steps
            .iter()
            .rposition(|s| uses(s).iter().any(|n| n == name))
    };
    let mut done: Vec<(&str, Edn)> = Vec::new();
    for (i, step) in port.steps.iter().enumerate() {
        let mut value = |n: &String| -> Edn {
            let Some((_, v)) = done.iter_mut().find(|(d, _)| d == n) else {
                return Edn::Nil;
            };
            if last_use(n) == Some(i) && uses(step).iter().filter(|x| *x == n).count() == 1 {
                std::mem::replace(v, Edn::Nil)
            } else {
                v.clone()
            }
        };
        let result = match step {
            Step::Query { text, args, .. } => {
                let inputs: Vec<Edn> = args.iter().map(&mut value).collect();
                q(text, &inputs)?
            }
            Step::Union { parts, .. } => {
                let mut rows = Vec::new();
                for p in parts {
                    match value(p) {
                        Edn::Set(r) | Edn::Vector(r) => rows.extend(r),
                        Edn::Nil => {}
                        other => rows.push(other),
                    }
                }
                Edn::Vector(rows)
            }
        };
        done.push((step.name(), result));
    }
    Ok(done.pop().map_or(Edn::Nil, |(_, v)| v))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn single_and_steps() {
        let one = parse("[:find ?x :where [?x :a/b 1]]").unwrap();
        assert_eq!(one.steps.len(), 1);
        let many = parse(
            r#"{:steps [{:name a :query [:find ?x :where [?x :a/b 1]]}
                        {:name b :query [:find ?y :where [?y :a/c 2]]}
                        {:name ab :union [a b]}
                        {:name n :args [ab] :query [:find (count ?x) . :in $ [[?x]]]}]}"#,
        )
        .unwrap();
        assert_eq!(many.steps.len(), 4);
        let got: Result<Edn, ()> = run(&many, |text, inputs| {
            Ok(if text.contains(":a/b") {
                read_one("#{[1] [2]}").unwrap()
            } else if text.contains(":a/c") {
                read_one("#{[3]}").unwrap()
            } else {
                match &inputs[0] {
                    Edn::Vector(r) => Edn::Long(r.len() as i64),
                    other => panic!("{other}"),
                }
            })
        });
        assert_eq!(got, Ok(Edn::Long(3)));
        assert!(parse("{:steps [{:name a :args [z] :query [:find ?x]}]}").is_err());
        assert!(parse("{:steps []}").is_err());
        assert!(parse("42").is_err());
    }
}
