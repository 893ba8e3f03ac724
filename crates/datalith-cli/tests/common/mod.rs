//! Running the built `datalith` (or another program) as a script does: arguments, standard
//! input, and the exit code and output it leaves. Shared by the CLI's test files.

use std::io::Write;
use std::path::Path;
use std::process::{Command, Stdio};

/// What a finished process left: its exit code (`None` when a signal ended it) and output.
pub struct Out {
    pub code: Option<i32>,
    pub stdout: String,
    pub stderr: String,
}

/// Runs `program` with `args` in `dir` (the current directory when `None`), feeding it
/// `stdin`; shell history goes nowhere.
pub fn run_in(dir: Option<&Path>, program: &str, args: &[&str], stdin: &str) -> Out {
    let mut cmd = Command::new(program);
    cmd.args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .env("DATALITH_HISTORY", "/dev/null");
    if let Some(d) = dir {
        cmd.current_dir(d);
    }
    let mut child = cmd.spawn().expect("run");
    child
        .stdin
        .take()
        .unwrap()
        .write_all(stdin.as_bytes())
        .unwrap();
    let o = child.wait_with_output().unwrap();
    Out {
        code: o.status.code(),
        stdout: String::from_utf8_lossy(&o.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&o.stderr).into_owned(),
    }
}
