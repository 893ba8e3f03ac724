//! The README's server examples run as written: its first `datalith serve` command's
//! databases, then every `curl` line of its "Server" section, in order, each answered 200.

use std::process::Command;

use crate::server;

/// The `curl` lines of the README's "Server" section.
fn examples() -> Vec<String> {
    let root = datalith_testdata::doc_commands::workspace_root(env!("CARGO_MANIFEST_DIR"));
    let readme = std::fs::read_to_string(root.join("README.md")).unwrap();
    let section = readme
        .split("\n## Server\n")
        .nth(1)
        .expect("the README has a Server section");
    let section = section.split("\n## ").next().unwrap();
    section
        .lines()
        .filter(|l| l.starts_with("curl "))
        .map(str::to_string)
        .collect()
}

#[test]
fn the_readme_curl_examples_run_as_written() {
    let examples = examples();
    assert!(examples.len() >= 8, "{examples:?}");
    let s = server::start(&["people", "films"], &[]);
    for example in &examples {
        // The README's address is the default one; this server got a free port.
        let command = example.replace("127.0.0.1:7171", &s.addr());
        let out = Command::new("sh")
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
