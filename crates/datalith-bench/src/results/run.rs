//! The run of `datalith-bench results`.

use std::path::{Component, Path};
use std::process::ExitCode;

use super::args::ResultsArgs;
use super::catalog::Catalog;
use super::render;
use super::whole;
use crate::common::BenchError;

/// `datalith-bench results`.
pub fn run(a: ResultsArgs) -> Result<ExitCode, BenchError> {
    let catalog = Catalog::scan(&a.dir);
    let newest = catalog.newest();
    let results = render::results_md(&newest);
    let prefix = link_prefix(&a.readme, &a.dir);
    let block = render::readme_block(&newest, &prefix);
    let readme = std::fs::read_to_string(&a.readme).map_err(BenchError::io(&a.readme))?;
    let Some(new_readme) = render::splice(&readme, &block) else {
        return Err(BenchError::Arg {
            arg: "--readme",
            message: format!(
                "{} has no `{}` ... `{}` block",
                a.readme.display(),
                render::BEGIN,
                render::END
            ),
        });
    };
    let results_path = a.dir.join("RESULTS.md");
    if !a.check {
        std::fs::write(&results_path, &results).map_err(BenchError::io(&results_path))?;
        std::fs::write(&a.readme, &new_readme).map_err(BenchError::io(&a.readme))?;
        eprintln!(
            "written: {} and the block of {} ({} workloads)",
            results_path.display(),
            a.readme.display(),
            newest.len()
        );
    }
    let mut problems = Vec::new();
    for (folder, why) in &catalog.unrecorded {
        problems.push(format!("{folder}: no run record ({why})"));
    }
    for p in &catalog.published {
        for hole in whole::check(p).problems {
            problems.push(format!("{} ({}): {hole}", p.folder, p.run.workload));
        }
    }
    if a.check {
        let committed = std::fs::read_to_string(&results_path).unwrap_or_default();
        if committed != results {
            problems.push(format!(
                "{} differs from what the folders give: run `datalith-bench results`",
                results_path.display()
            ));
        }
        if new_readme != readme {
            problems.push(format!(
                "the results block of {} differs from what the folders give: run \
                 `datalith-bench results`",
                a.readme.display()
            ));
        }
    }
    for p in &newest {
        eprintln!("{}: {} ({})", p.run.workload, p.folder, p.record.date);
    }
    if problems.is_empty() {
        eprintln!(
            "results: {} folders, {} workloads, every one whole{}",
            catalog.published.len(),
            newest.len(),
            if a.check {
                "; RESULTS.md and the README match them"
            } else {
                ""
            }
        );
        Ok(ExitCode::SUCCESS)
    } else {
        for p in &problems {
            eprintln!("results: {p}");
        }
        Ok(ExitCode::FAILURE)
    }
}

/// The path from the README's directory to the results directory, for links (both given
/// relative to the same working directory).
fn link_prefix(readme: &Path, dir: &Path) -> String {
    let base = readme.parent().unwrap_or(Path::new(""));
    let rel = dir.strip_prefix(base).unwrap_or(dir);
    rel.components()
        .filter_map(|c| match c {
            Component::Normal(s) => Some(s.to_string_lossy().into_owned()),
            _ => None,
        })
        .collect::<Vec<_>>()
        .join("/")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn links_lead_from_the_readme_to_the_results() {
        let cases = [
            ("README.md", "bench/results", "bench/results"),
            ("./README.md", "./bench/results", "bench/results"),
            ("docs/x.md", "docs/results", "results"),
        ];
        for (readme, dir, want) in cases {
            assert_eq!(link_prefix(Path::new(readme), Path::new(dir)), want);
        }
    }
}
