//! Where a session's results go: the screen, or the file `.output FILE` named. Shared by the
//! local shell and the shell on a server.

use std::fs::File;
use std::io::Write;

use crate::error::{CliError, Result};

/// The screen, or a file.
#[derive(Default)]
pub struct Output {
    file: Option<(String, File)>,
}

impl Output {
    /// Writes `text` there; a failed write is said on standard error (the session goes on).
    pub fn write(&mut self, text: &str) {
        let written = match &mut self.file {
            Some((_, f)) => f.write_all(text.as_bytes()),
            None => {
                let mut o = std::io::stdout().lock();
                o.write_all(text.as_bytes()).and_then(|_| o.flush())
            }
        };
        if let Err(e) = written {
            eprintln!("error: writing output: {e}");
        }
    }

    /// `.output [FILE]`: FILE (created, or emptied), or the screen again with no argument,
    /// `stdout` or `-`.
    pub fn set(&mut self, args: &[&str]) -> Result<()> {
        self.file = match args {
            [] | ["stdout" | "-"] => None,
            [f] => {
                let file = File::create(f)
                    .map_err(|e| CliError::user(format!("cannot create {f}: {e}")))?;
                Some((f.to_string(), file))
            }
            _ => return Err(CliError::user("usage: .output [FILE]")),
        };
        Ok(())
    }
}
