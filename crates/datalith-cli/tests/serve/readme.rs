//! The documents' server examples run as written: every `curl` line of the user guide's server
//! page (section "Requests"), and of the server README's "Examples", in order, each answered
//! 200.

use std::process::Command;

use crate::server;

/// The `curl` lines of a document's section.
fn examples(document: &str, heading: &str) -> Vec<String> {
    let root = datalith_testdata::doc_commands::workspace_root(env!("CARGO_MANIFEST_DIR"));
    let text = std::fs::read_to_string(root.join(document)).unwrap();
    let section = text
        .split(&format!("\n## {heading}\n"))
        .nth(1)
        .unwrap_or_else(|| panic!("{document} has no {heading} section"));
    let section = section.split("\n## ").next().unwrap();
    section
        .lines()
        .filter(|l| l.starts_with("curl "))
        .map(str::to_string)
        .collect()
}

#[test]
fn the_guide_curl_examples_run_as_written() {
    let examples = examples("docs/guide/server.md", "Requests");
    assert!(examples.len() >= 8, "{examples:?}");
    let s = server::start(&["people", "films"], &[]);
    run(&s, &examples);
}

#[test]
fn the_server_readme_examples_run_as_written() {
    let examples = examples("crates/datalith-server/README.md", "Examples");
    assert!(examples.len() >= 15, "{examples:?}");
    let dir = tempfile::tempdir().unwrap();
    let created = dir.path().join("dbs");
    std::fs::create_dir(&created).unwrap();
    let s = server::start(
        &["people", "films"],
        &["--create-in", created.to_str().unwrap()],
    );
    run(&s, &examples);
}

fn run(s: &server::Server, examples: &[String]) {
    // Files an example writes (a copy's `-o FILE`) land in a directory of the test's own.
    let cwd = tempfile::tempdir().unwrap();
    for example in examples {
        // The README's address is the default one; this server got a free port.
        let command = example.replace("127.0.0.1:7171", &s.addr());
        let out = Command::new("sh")
            .current_dir(cwd.path())
            .arg("-c")
            .arg(format!("{command} -w '\\n%{{http_code}}'"))
            .output()
            .unwrap();
        let text = String::from_utf8_lossy(&out.stdout).to_string();
        let (body, status) = text.rsplit_once('\n').unwrap_or(("", &text));
        assert_eq!(status, "200", "{example}\n{text}");
        assert!(!body.trim().is_empty(), "{example}");
    }
}
