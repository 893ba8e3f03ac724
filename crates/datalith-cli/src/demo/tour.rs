//! The guided tour printed by `datalith demo`: queries with their results and timings, a
//! pull, an explain, and how to go on in the shell.

use std::path::Path;
use std::sync::atomic::AtomicBool;
use std::time::Instant;

use datalith::edn::{read_one, to_edn_string, Edn};
use datalith::Database;

use crate::error::{CliError, Result};
use crate::render::{render, Format};

const RULES: &str = "[[(depends ?p ?d) [?e :project/name ?p] [?e :project/depends-on ?x] [?x :project/name ?d]]
  [(depends ?p ?d) [?e :project/name ?p] [?e :project/depends-on ?x] [?x :project/name ?m] (depends ?m ?d)]]";

/// Steps of the tour: (title, query, inputs).
const QUERIES: &[(&str, &str, &[&str])] = &[
    (
        "How many people are called Ivan?",
        "[:find (count ?e) . :where [?e :name \"Ivan\"]]",
        &[],
    ),
    (
        "Ivans by last name (clauses join on ?e, one merge scan of each entity)",
        "[:find ?last (count ?e) :where [?e :name \"Ivan\"] [?e :last-name ?last]]",
        &[],
    ),
    (
        "Salaries of people in their thirties, by sex (a range becomes an index scan)",
        "[:find ?sex (count ?e) (avg ?s) (max ?s) :with ?e\n :where [?e :age ?a] [(>= ?a 30)] [(< ?a 40)] [?e :sex ?sex] [?e :salary ?s]]",
        &[],
    ),
    (
        "Everything \"release\" depends on, transitively (a recursive rule; inputs bind to :in)",
        "[:find ?dep :in $ % ?project :where (depends ?project ?dep)]",
        &[RULES, "\"release\""],
    ),
    (
        "Open tasks and who leads their project (refs followed across entities)",
        "[:find ?project ?task ?lead :where [?p :project/tasks ?t] [?t :task/done false]\n [?t :task/title ?task] [?p :project/name ?project] [?p :project/lead ?l] [?l :name ?lead]]",
        &[],
    ),
];

const PULL: &str = "[:project/name :project/tags {:project/lead [:name :last-name]}\n {:project/tasks [:task/title :task/done]} {:project/depends-on [:project/name]}]";

const EXPLAIN: &str = "[:find ?e ?a :where [?e :age ?a] [?e :name \"Ivan\"]]";

fn ms(d: std::time::Duration) -> String {
    format!("{:.2} ms", d.as_secs_f64() * 1e3)
}

fn indent(text: &str) -> String {
    text.lines()
        .map(|l| format!("    {l}\n"))
        .collect::<String>()
}

fn shortened(text: &str, max_lines: usize) -> String {
    let lines: Vec<&str> = text.lines().collect();
    if lines.len() <= max_lines + 1 {
        return text.to_string();
    }
    let mut out: String = lines[..max_lines]
        .iter()
        .map(|l| format!("{l}\n"))
        .collect();
    out.push_str(&format!(
        "... ({} lines more)\n",
        lines.len() - max_lines - 1
    ));
    out.push_str(lines[lines.len() - 1]);
    out.push('\n');
    out
}

/// Prints the tour on the demo database at `path`.
pub fn print(db: &Database, path: &Path) -> Result<()> {
    let snapshot = db.db()?;
    let people = snapshot.q("[:find (count ?e) . :where [?e :name]]", &[])?;
    println!(
        "Datalith demo: {} people and 6 projects in {}\n",
        to_edn_string(&people),
        path.display()
    );
    let cancel = AtomicBool::new(false);
    for (i, (title, query, inputs)) in QUERIES.iter().enumerate() {
        let form = read_one(query).map_err(|e| CliError::read("tour", &e))?;
        let inputs = inputs
            .iter()
            .map(|t| read_one(t).map_err(|e| CliError::read("tour input", &e)))
            .collect::<Result<Vec<Edn>>>()?;
        // Run once to warm the page cache and the query cache, then time the second run:
        // that is what a long-running application sees.
        crate::exec::query(&snapshot, &form, &inputs, &cancel)?;
        let out = crate::exec::query(&snapshot, &form, &inputs, &cancel)?;
        println!("{}. {title}", i + 1);
        print!("{}", indent(query));
        if inputs.len() > 1 {
            println!("    inputs: the rules `depends`, and \"release\"");
        }
        let table = render(&out.result, &out.headers, Format::Table);
        println!("  => in {}", ms(out.elapsed));
        print!("{}", indent(&shortened(&table, 12)));
        println!();
    }

    println!(
        "{}. Pull a project with its lead, tasks (a component) and dependencies",
        QUERIES.len() + 1
    );
    print!(
        "{}",
        indent(&format!(
            "pattern {PULL}\n   on [:project/name \"benchmarks\"]"
        ))
    );
    let e = crate::commands::resolve_eid(&snapshot, "[:project/name \"benchmarks\"]")?;
    let start = Instant::now();
    let pulled = snapshot.pull(PULL, e)?;
    println!("  => in {}", ms(start.elapsed()));
    print!("{}", indent(&to_edn_string(&pulled)));
    println!();

    println!(
        "{}. Explain: the plan does not depend on clause order (here the selective clause comes last)",
        QUERIES.len() + 2
    );
    print!("{}", indent(EXPLAIN));
    let start = Instant::now();
    let (_, plan) = snapshot.explain(EXPLAIN, &[])?;
    println!("  => in {}", ms(start.elapsed()));
    print!("{}", indent(&crate::shell::session::explain_text(&plan)));
    println!();

    let exe = std::env::args().next().unwrap_or_else(|| "datalith".into());
    let shell_cmd = if exe.contains("target/") {
        format!("cargo run --release -p datalith-cli -- {}", path.display())
    } else {
        format!("datalith {}", path.display())
    };
    println!("Try it yourself in the shell:");
    println!("    {shell_cmd}");
    println!("then type a query (it may span lines), .help, .schema, .attrs, .timer on, .explain [:find ...]");
    println!(
        "Scripts: datalith query {} '[:find ?n (count ?e) :where [?e :name ?n]]' --format json",
        path.display()
    );
    Ok(())
}
