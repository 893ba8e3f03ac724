//! Command-line text arguments: literal text, `-` for standard input, `@file` for a file.

use std::io::Read;

use crate::error::{CliError, Result};

/// The text an argument denotes, with a name for error messages (`input`, `stdin`, the file).
pub fn text_arg(arg: &str) -> Result<(String, String)> {
    if arg == "-" {
        let mut s = String::new();
        std::io::stdin()
            .read_to_string(&mut s)
            .map_err(|e| CliError::env(format!("reading standard input: {e}")))?;
        return Ok(("stdin".into(), s));
    }
    if let Some(path) = arg.strip_prefix('@') {
        let s = std::fs::read_to_string(path)
            .map_err(|e| CliError::user(format!("cannot read {path}: {e}")))?;
        return Ok((path.to_string(), s));
    }
    Ok(("input".into(), arg.to_string()))
}

/// Reads a file as text (a missing file is the user's mistake).
pub fn read_file(path: &str) -> Result<String> {
    std::fs::read_to_string(path).map_err(|e| CliError::user(format!("cannot read {path}: {e}")))
}
