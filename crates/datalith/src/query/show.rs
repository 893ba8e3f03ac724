//! Lowered clauses printed back in query terms, for `explain` and error messages:
//! `[?e :person/name ?n]`, `[(> ?age 30)]`, `(not-join [?e] ...)`: variable names as written,
//! attribute idents, constants as EDN; never the engine's numbered structures.

use super::ir::{AttrTerm, Binding, Clause, Pattern, Term, Var};
use crate::store::schema::Schema;

/// Prints clauses with the names of one scope (the query's, or a rule body's).
pub struct ClauseText<'a> {
    /// Variable names by number.
    pub names: &'a [String],
    /// For attribute idents.
    pub schema: &'a Schema,
}

impl ClauseText<'_> {
    /// A variable's name. Variables the engine made itself (rule heads, demand seeds) have
    /// none: they print as `?_` and a number.
    pub fn var(&self, v: Var) -> String {
        match self.names.get(v) {
            Some(n) => n.clone(),
            None if v > usize::MAX / 2 => format!("?_h{}", usize::MAX - v),
            None => format!("?_{v}"),
        }
    }

    /// A term: a variable's name, a constant as EDN, or `_`.
    pub fn term(&self, t: &Term) -> String {
        match t {
            Term::Var(v) => self.var(*v),
            Term::Const(c) => c.to_string(),
            Term::Blank => "_".into(),
        }
    }

    fn terms(&self, ts: &[Term]) -> String {
        ts.iter()
            .map(|t| self.term(t))
            .collect::<Vec<_>>()
            .join(" ")
    }

    fn vars(&self, vs: &[Var]) -> String {
        vs.iter()
            .map(|v| self.var(*v))
            .collect::<Vec<_>>()
            .join(" ")
    }

    fn attr(&self, a: &AttrTerm) -> String {
        match a {
            AttrTerm::Attr(id) => self
                .schema
                .get(*id)
                .map_or_else(|| id.to_string(), |x| x.ident.to_string()),
            AttrTerm::Var(v) => self.var(*v),
            AttrTerm::Blank => "_".into(),
            AttrTerm::Unknown(k) => k.to_string(),
        }
    }

    /// A data pattern against source `src` (0 is `$`, which goes unwritten).
    pub fn pattern(&self, src: usize, p: &Pattern) -> String {
        let source = if src == 0 {
            String::new()
        } else {
            format!("${src} ")
        };
        format!(
            "[{source}{} {} {}]",
            self.term(&p.e),
            self.attr(&p.a),
            self.term(&p.v)
        )
    }

    fn binding(&self, b: &Binding) -> String {
        match b {
            Binding::Scalar(t) => self.term(t),
            Binding::Tuple(ts) => format!("[{}]", self.terms(ts)),
            Binding::Collection(t) => format!("[{} ...]", self.term(t)),
            Binding::Relation(ts) => format!("[[{}]]", self.terms(ts)),
        }
    }

    fn conjunction(&self, cs: &[Clause]) -> String {
        cs.iter()
            .map(|c| self.clause(c))
            .collect::<Vec<_>>()
            .join(" ")
    }

    /// One clause as a query writes it.
    pub fn clause(&self, c: &Clause) -> String {
        let call = |name: &str, args: &[Term]| {
            if args.is_empty() {
                format!("({name})")
            } else {
                format!("({name} {})", self.terms(args))
            }
        };
        match c {
            Clause::Pattern(src, p) => self.pattern(*src, p),
            Clause::Timed(src, t) => {
                let base = self.pattern(*src, &t.p);
                let extra: Vec<String> = [&t.tx, &t.added]
                    .into_iter()
                    .map(|x| self.terms(std::slice::from_ref(x)))
                    .collect();
                format!("{} {}]", &base[..base.len() - 1], extra.join(" "))
            }
            Clause::Pred { name, args } => format!("[{}]", call(name, args)),
            Clause::Fn {
                name,
                args,
                binding,
            } => format!("[{} {}]", call(name, args), self.binding(binding)),
            Clause::Or { vars, branches, .. } => {
                let branches: Vec<String> = branches
                    .iter()
                    .map(|b| match b.as_slice() {
                        [one] => self.clause(one),
                        many => format!("(and {})", self.conjunction(many)),
                    })
                    .collect();
                format!("(or-join [{}] {})", self.vars(vars), branches.join(" "))
            }
            Clause::Not { vars, clauses } => {
                format!(
                    "(not-join [{}] {})",
                    self.vars(vars),
                    self.conjunction(clauses)
                )
            }
            Clause::Rule { name, args, src: 0 } => call(name, args),
            Clause::Rule { name, args, src } => format!("(${src} {})", &call(name, args)[1..]),
            Clause::Source { src, terms } => format!("[${src} {}]", self.terms(terms)),
            Clause::Dollar { src, clause } => format!("(${src} {})", self.clause(clause)),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::codec::{Keyword, Value};

    #[test]
    fn clauses_print_as_the_query_wrote_them() {
        let schema = Schema::default();
        let ident = schema
            .by_ident(&Keyword::parse(":db/ident"))
            .expect("built in")
            .id;
        let names: Vec<String> = ["?e", "?n", "?x"].iter().map(|s| s.to_string()).collect();
        let show = ClauseText {
            names: &names,
            schema: &schema,
        };
        let pattern = |e, a, v| {
            Clause::Pattern(
                0,
                Pattern {
                    e,
                    a: AttrTerm::Attr(a),
                    v,
                },
            )
        };
        let cases = [
            (
                pattern(Term::Var(0), ident, Term::Var(1)),
                "[?e :db/ident ?n]",
            ),
            (
                pattern(Term::Blank, ident, Term::Const(Value::Long(3))),
                "[_ :db/ident 3]",
            ),
            (
                Clause::Pred {
                    name: ">".into(),
                    args: vec![Term::Var(1), Term::Const(Value::String("a\"b".into()))],
                },
                r#"[(> ?n "a\"b")]"#,
            ),
            (
                Clause::Fn {
                    name: "str".into(),
                    args: vec![Term::Var(0)],
                    binding: Binding::Collection(Term::Var(2)),
                },
                "[(str ?e) [?x ...]]",
            ),
            (
                Clause::Not {
                    vars: vec![0],
                    clauses: vec![pattern(Term::Var(0), ident, Term::Var(7))],
                },
                "(not-join [?e] [?e :db/ident ?_7])",
            ),
            (
                Clause::Rule {
                    name: "follows".into(),
                    args: vec![Term::Var(0), Term::Var(usize::MAX)],
                    src: 0,
                },
                "(follows ?e ?_h0)",
            ),
        ];
        for (clause, want) in cases {
            assert_eq!(show.clause(&clause), want);
        }
    }
}
