//! Rules: bottom-up, semi-naive evaluation.
//!
//! A call evaluates the rule's relation over its head variables. Arguments bound at the call
//! site seed the evaluation (only head tuples reachable from those bindings are derived), and
//! recursion iterates to a fixpoint where each round feeds only the previous round's new
//! tuples (the delta) back into the recursive calls, so a linear recursion over a chain of n
//! edges takes n rounds of constant work instead of n rounds of growing work. Every round is a
//! plain loop: depth of recursion costs memory for tuples, never stack.

use rustc_hash::FxHashSet as HashSet;

use super::budget::{row_bytes, rows_bytes, FreeAfterStop};
use super::error::QueryError;
use super::exec::Ctx;
use super::ir::{Clause, RuleBody, Term, Var};
use super::relation::Relation;
use crate::codec::Value;
use crate::limits::MAX_RULE_DEPTH;

/// Evaluates `(name args...)` for the bindings in `rel`; returns a relation over the
/// variables among `args`.
pub fn call(
    ctx: &mut Ctx<'_>,
    name: &str,
    args: &[Term],
    rel: &Relation,
) -> Result<Relation, QueryError> {
    let bodies = ctx
        .rules
        .get(name)
        .cloned()
        .ok_or_else(|| QueryError::UnknownRule {
            name: name.to_string(),
        })?;
    let arity = bodies[0].head.len();
    if args.len() != arity {
        return Err(QueryError::BadArguments {
            name: name.to_string(),
            message: format!("rule takes {arity} arguments, got {}", args.len()),
        });
    }
    // Head positions bound at the call: constants, or variables `rel` binds.
    let bound_pos: Vec<usize> = (0..arity)
        .filter(|&i| match &args[i] {
            Term::Const(_) => true,
            Term::Var(v) => rel.binds(*v),
            Term::Blank => false,
        })
        .collect();
    for b in &bodies {
        if b.required > 0 && !(0..b.required).all(|i| bound_pos.contains(&i)) {
            return Err(QueryError::Unbound {
                var: format!("argument {} of rule {name}", b.required),
                clause: format!("({name} ...)"),
            });
        }
    }
    // Seeds: the distinct bound argument tuples.
    let mut seeds: Vec<Vec<Value>> = Vec::new();
    let mut seen = HashSet::default();
    // A seed is held in the list and in the set.
    let seed_bytes = 2 * row_bytes(bound_pos.len());
    for row in &rel.rows {
        ctx.budget.tick()?;
        let mut seed = Vec::with_capacity(bound_pos.len());
        for &i in &bound_pos {
            seed.push(match &args[i] {
                Term::Const(c) => c.clone(),
                Term::Var(v) => row[rel.col(*v).expect("bound")].clone(),
                Term::Blank => unreachable!("blank is never bound"),
            });
        }
        if seen.insert(seed.clone()) {
            ctx.budget.charge(seed_bytes)?;
            seeds.push(seed);
        }
    }
    if ctx.depth > MAX_RULE_DEPTH {
        return Err(QueryError::BadArguments {
            name: name.to_string(),
            message: "rules nested too deeply".into(),
        });
    }
    ctx.depth += 1;
    let result = evaluate(ctx, name, &bodies, &bound_pos, seeds);
    ctx.depth -= 1;
    let head_rel = result?;
    // Map head positions to the call's terms.
    super::exec::match_terms(&head_rel, args, &ctx.budget)
}

/// The rule's tuples (all head positions, in order) whose bound positions take a seed value.
fn evaluate(
    ctx: &mut Ctx<'_>,
    name: &str,
    bodies: &[RuleBody],
    bound_pos: &[usize],
    seeds: Vec<Vec<Value>>,
) -> Result<Relation, QueryError> {
    let arity = bodies[0].head.len();
    let head_vars: Vec<Var> = (0..arity).map(|i| usize::MAX - arity + i).collect();
    // Seeding is exact only when every recursive call keeps the seeded head arguments in
    // place (as in `(reach ?a ?b) :- (reach ?a ?c) [?c :next ?b]`); otherwise derive the
    // whole relation and keep the tuples that match the seeds.
    if !bound_pos.is_empty() && !bodies.iter().all(|b| keeps_seeds(b, name, bound_pos)) {
        if let Some(r) = right_linear(ctx, name, bodies, bound_pos, &seeds)? {
            return Ok(r);
        }
        let mut full = evaluate(ctx, name, bodies, &[], vec![Vec::new()])?;
        let wanted: HashSet<Vec<Value>> = seeds.into_iter().collect();
        let mut out = Relation::empty(std::mem::take(&mut full.vars));
        for r in full.into_rows() {
            ctx.budget.tick()?;
            if wanted.contains(&bound_pos.iter().map(|&i| r[i].clone()).collect::<Vec<_>>()) {
                out.rows.push(r);
            }
        }
        return Ok(out);
    }
    let mut total: FreeAfterStop<HashSet<Vec<Value>>> = FreeAfterStop::new(HashSet::default());
    let mut all = Relation::empty(head_vars.clone());
    // A derived tuple is held in `total`, `all` and one round's delta.
    let tuple_bytes = 3 * row_bytes(arity);
    let (base, recursive): (Vec<&RuleBody>, Vec<&RuleBody>) = bodies
        .iter()
        .partition(|b| !b.clauses.iter().any(|c| calls(c, name)));
    // Round 0: the bodies that do not call the rule itself.
    let mut delta = Relation::empty(head_vars.clone());
    for b in &base {
        let r = body(ctx, name, b, bound_pos, &seeds, None)?;
        let held = rows_bytes(r.rows.len(), arity);
        for row in r.into_rows() {
            ctx.budget.tick()?;
            if total.insert(row.clone()) {
                ctx.budget.charge(tuple_bytes)?;
                delta.rows.push(row);
            }
        }
        ctx.budget.release(held);
    }
    all.rows.extend(delta.rows.iter().cloned());
    // Later rounds: recursive bodies see the previous round's new tuples.
    let mut seeds = seeds;
    while !delta.rows.is_empty() && !recursive.is_empty() {
        ctx.budget.tick()?;
        ctx.rule_memo.clear();
        let mut next = Relation::empty(head_vars.clone());
        for b in &recursive {
            // The recursive call's own seeds come from the body, so evaluate with the
            // delta standing in for the rule, unrestricted by the original seeds except at
            // the head.
            // One recursive call reads the delta (semi-naive); several read everything
            // derived so far (naive for that body, still correct).
            let feed = if recursive_calls(b, name) == 1 {
                &delta
            } else {
                &all
            };
            let r = body(ctx, name, b, bound_pos, &seeds, Some(feed))?;
            let held = rows_bytes(r.rows.len(), arity);
            for row in r.into_rows() {
                ctx.budget.tick()?;
                if total.insert(row.clone()) {
                    ctx.budget.charge(tuple_bytes)?;
                    next.rows.push(row);
                }
            }
            ctx.budget.release(held);
        }
        all.rows.extend(next.rows.iter().cloned());
        delta = next;
        // Seeds stay the same: the head stays anchored on the caller's bindings.
        seeds.shrink_to_fit();
    }
    Ok(all)
}

fn recursive_calls(b: &RuleBody, name: &str) -> usize {
    b.clauses.iter().filter(|c| calls(c, name)).count()
}

/// Whether every recursive call in `b` passes the head's seeded variables at the same
/// positions.
fn keeps_seeds(b: &RuleBody, name: &str, bound_pos: &[usize]) -> bool {
    b.clauses.iter().all(|c| match c {
        Clause::Rule { name: n, args, .. } if n == name => bound_pos
            .iter()
            .all(|&i| args.get(i) == Some(&Term::Var(b.head[i]))),
        Clause::Or { branches, .. } => !branches.iter().flatten().any(|c| calls(c, name)),
        Clause::Not { clauses, .. } => !clauses.iter().any(|c| calls(c, name)),
        _ => true,
    })
}

fn calls(c: &Clause, name: &str) -> bool {
    match c {
        Clause::Rule { name: n, .. } => n == name,
        Clause::Or { branches, .. } => branches.iter().flatten().any(|c| calls(c, name)),
        Clause::Not { clauses, .. } => clauses.iter().any(|c| calls(c, name)),
        _ => false,
    }
}

/// Evaluates one body with the head's bound positions seeded; a recursive call to `name`
/// reads `delta` instead of recursing.
fn body(
    ctx: &mut Ctx<'_>,
    name: &str,
    b: &RuleBody,
    bound_pos: &[usize],
    seeds: &[Vec<Value>],
    delta: Option<&Relation>,
) -> Result<Relation, QueryError> {
    let seed_vars: Vec<Var> = bound_pos.iter().map(|&i| b.head[i]).collect();
    let input = if bound_pos.is_empty() {
        Relation::unit()
    } else {
        let mut r = Relation::empty(Vec::new());
        // A head variable may repeat; keep seeds consistent with it.
        let mut vars: Vec<Var> = Vec::new();
        for v in &seed_vars {
            if !vars.contains(v) {
                vars.push(*v);
            }
        }
        r.vars = vars.clone();
        let bytes = row_bytes(vars.len());
        'seeds: for s in seeds {
            ctx.budget.charge(bytes)?;
            let mut row: Vec<Option<Value>> = vec![None; vars.len()];
            for (k, v) in seed_vars.iter().enumerate() {
                let c = vars.iter().position(|x| x == v).expect("listed");
                match &row[c] {
                    Some(prev) if *prev != s[k] => continue 'seeds,
                    _ => row[c] = Some(s[k].clone()),
                }
            }
            r.rows
                .push(row.into_iter().map(|x| x.expect("set")).collect());
        }
        r
    };
    let clauses: Vec<Clause> = match delta {
        None => b.clauses.clone(),
        Some(d) => {
            let src = usize::MAX - ctx.depth as usize;
            ctx.sources.insert(src, d.clone());
            b.clauses
                .iter()
                .map(|c| replace_call(c, name, src))
                .collect()
        }
    };
    let r = ctx.with_names(&b.var_names, |ctx| ctx.conj(&clauses, input, &b.head))?;
    if delta.is_some() {
        ctx.sources.remove(&(usize::MAX - ctx.depth as usize));
    }
    // Columns in head order.
    let mut out = Relation::empty(Vec::new());
    out.vars = (0..b.head.len())
        .map(|i| usize::MAX - b.head.len() + i)
        .collect();
    let bytes = row_bytes(b.head.len());
    for row in &r.rows {
        ctx.budget.charge(bytes)?;
        let mut o = Vec::with_capacity(b.head.len());
        for v in &b.head {
            match r.col(*v) {
                Some(c) => o.push(row[c].clone()),
                None => {
                    return Err(QueryError::Unbound {
                        var: format!("#{v}"),
                        clause: format!("head of rule {name}"),
                    })
                }
            }
        }
        out.rows.push(o);
    }
    Ok(out)
}

fn replace_call(c: &Clause, name: &str, src: usize) -> Clause {
    match c {
        Clause::Rule { name: n, args, .. } if n == name => Clause::Source {
            src,
            terms: args.clone(),
        },
        Clause::Or {
            vars,
            required,
            branches,
        } => Clause::Or {
            vars: vars.clone(),
            required: required.clone(),
            branches: branches
                .iter()
                .map(|b| b.iter().map(|c| replace_call(c, name, src)).collect())
                .collect(),
        },
        other => other.clone(),
    }
}

/// Right-linear recursion with the free head arguments passed through unchanged, as in
/// `(reach ?a ?b) :- [?a :next ?c] (reach ?c ?b)` called with `?a` bound. Such a call's
/// answers are the base bodies' answers for every binding the recursion demands, so instead of
/// deriving the rule for all pairs (quadratic on a chain) this walks the demanded bindings
/// (the "magic set", kept per original binding) and evaluates the base bodies on them: linear
/// work and memory on a chain. Returns `None` when the rule does not have this shape.
fn right_linear(
    ctx: &mut Ctx<'_>,
    name: &str,
    bodies: &[RuleBody],
    bound_pos: &[usize],
    seeds: &[Vec<Value>],
) -> Result<Option<Relation>, QueryError> {
    let arity = bodies[0].head.len();
    let free_pos: Vec<usize> = (0..arity).filter(|i| !bound_pos.contains(i)).collect();
    // For each recursive body: the rest of its clauses and the recursive call's arguments.
    let mut steps: Vec<(&RuleBody, Vec<Clause>, Vec<Term>)> = Vec::new();
    let mut base: Vec<&RuleBody> = Vec::new();
    for b in bodies {
        let calls_here: Vec<usize> = (0..b.clauses.len())
            .filter(|&i| calls(&b.clauses[i], name))
            .collect();
        match calls_here.as_slice() {
            [] => base.push(b),
            [i] => {
                let Clause::Rule { args, .. } = &b.clauses[*i] else {
                    return Ok(None);
                };
                let rest: Vec<Clause> = b
                    .clauses
                    .iter()
                    .enumerate()
                    .filter(|(j, _)| j != i)
                    .map(|(_, c)| c.clone())
                    .collect();
                for &p in &free_pos {
                    let head_var = b.head[p];
                    if args.get(p) != Some(&Term::Var(head_var))
                        || rest.iter().any(|c| c.vars().contains(&head_var))
                    {
                        return Ok(None);
                    }
                }
                steps.push((b, rest, args.clone()));
            }
            _ => return Ok(None),
        }
    }
    // Demanded bindings, per original seed.
    let mut seen: HashSet<(Vec<Value>, Vec<Value>)> =
        seeds.iter().map(|s| (s.clone(), s.clone())).collect();
    let mut delta: Vec<(Vec<Value>, Vec<Value>)> = seen.iter().cloned().collect();
    // A demanded pair is held in `seen` and in one round's delta.
    let pair_bytes = 4 * row_bytes(bound_pos.len());
    while !delta.is_empty() {
        ctx.budget.tick()?;
        let mut next = Vec::new();
        for (b, rest, args) in &steps {
            let origin_vars: Vec<Var> = (0..bound_pos.len()).map(|k| b.var_count + k).collect();
            let cur_vars: Vec<Var> = bound_pos.iter().map(|&p| b.head[p]).collect();
            let input = pairs_relation(&origin_vars, &cur_vars, &delta);
            let mut keep = origin_vars.clone();
            keep.extend(bound_pos.iter().filter_map(|&p| args[p].var()));
            let r = match ctx.with_names(&b.var_names, |ctx| ctx.conj(rest, input, &keep)) {
                Ok(r) => r,
                // The rest of the body needs a variable only the recursive call binds
                // (`[(inc ?d0) ?d]` after `(depth ?p ?d0)`, with `?d` seeded): the rule is
                // not right-linear in its seeded positions; derive it whole instead.
                Err(QueryError::Unbound { .. }) => return Ok(None),
                Err(e) => return Err(e),
            };
            let held = rows_bytes(r.rows.len(), r.vars.len());
            for row in &r.rows {
                ctx.budget.tick()?;
                let origin: Vec<Value> = origin_vars
                    .iter()
                    .map(|v| row[r.col(*v).expect("kept")].clone())
                    .collect();
                let mut cur = Vec::with_capacity(bound_pos.len());
                for &p in bound_pos {
                    cur.push(match &args[p] {
                        Term::Const(c) => c.clone(),
                        Term::Var(v) => match r.col(*v) {
                            Some(c) => row[c].clone(),
                            None => return Ok(None),
                        },
                        Term::Blank => return Ok(None),
                    });
                }
                let pair = (origin, cur);
                if seen.insert(pair.clone()) {
                    ctx.budget.charge(pair_bytes)?;
                    next.push(pair);
                }
            }
            ctx.budget.release(held);
        }
        delta = next;
    }
    let all: Vec<(Vec<Value>, Vec<Value>)> = seen.into_iter().collect();
    // Answers: the base bodies at every demanded binding, reported for the original one.
    let head_vars: Vec<Var> = (0..arity).map(|i| usize::MAX - arity + i).collect();
    let mut out = Relation::empty(head_vars);
    let mut dedup: FreeAfterStop<HashSet<Vec<Value>>> = FreeAfterStop::new(HashSet::default());
    for b in base {
        let origin_vars: Vec<Var> = (0..bound_pos.len()).map(|k| b.var_count + k).collect();
        let cur_vars: Vec<Var> = bound_pos.iter().map(|&p| b.head[p]).collect();
        let input = pairs_relation(&origin_vars, &cur_vars, &all);
        let mut keep = origin_vars.clone();
        keep.extend(free_pos.iter().map(|&p| b.head[p]));
        let r = ctx.with_names(&b.var_names, |ctx| ctx.conj(&b.clauses, input, &keep))?;
        for row in &r.rows {
            ctx.budget.charge(2 * row_bytes(arity))?;
            let mut t = vec![Value::Boolean(false); arity];
            for (k, &p) in bound_pos.iter().enumerate() {
                t[p] = row[r.col(origin_vars[k]).expect("kept")].clone();
            }
            for &p in &free_pos {
                match r.col(b.head[p]) {
                    Some(c) => t[p] = row[c].clone(),
                    None => return Ok(None),
                }
            }
            if dedup.insert(t.clone()) {
                out.rows.push(t);
            }
        }
    }
    Ok(Some(out))
}

/// A relation binding `origin_vars` to the first and `cur_vars` to the second tuple of each
/// pair (a variable listed twice keeps rows where both agree).
fn pairs_relation(
    origin_vars: &[Var],
    cur_vars: &[Var],
    pairs: &[(Vec<Value>, Vec<Value>)],
) -> Relation {
    let mut vars: Vec<Var> = origin_vars.to_vec();
    for v in cur_vars {
        if !vars.contains(v) {
            vars.push(*v);
        }
    }
    let mut out = Relation::empty(vars.clone());
    'pairs: for (o, c) in pairs {
        let mut row: Vec<Option<Value>> = vec![None; vars.len()];
        for (i, v) in origin_vars.iter().enumerate() {
            row[i] = Some(o[i].clone());
            let _ = v;
        }
        for (k, v) in cur_vars.iter().enumerate() {
            let col = vars.iter().position(|x| x == v).expect("listed");
            match &row[col] {
                Some(prev) if *prev != c[k] => continue 'pairs,
                _ => row[col] = Some(c[k].clone()),
            }
        }
        out.rows
            .push(row.into_iter().map(|x| x.expect("set")).collect());
    }
    out
}
