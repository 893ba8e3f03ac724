//! Progress bars for long work, drawn on standard error only when it is a terminal.

use std::io::IsTerminal;

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};

/// A bar of `total` units named `what`; hidden when standard error is not a terminal.
pub fn bar(total: u64, what: &str) -> ProgressBar {
    let pb = ProgressBar::with_draw_target(Some(total), target());
    if let Ok(style) =
        ProgressStyle::with_template("{msg:>10} [{bar:30}] {pos}/{len} ({elapsed}, {eta} left)")
    {
        pb.set_style(style.progress_chars("=> "));
    }
    pb.set_message(what.to_string());
    pb
}

/// A spinner counting units of work of unknown total.
pub fn spinner(what: &str) -> ProgressBar {
    let pb = ProgressBar::with_draw_target(None, target());
    if let Ok(style) = ProgressStyle::with_template("{spinner} {msg} {pos} ({elapsed})") {
        pb.set_style(style);
    }
    pb.set_message(what.to_string());
    pb
}

fn target() -> ProgressDrawTarget {
    if std::io::stderr().is_terminal() {
        ProgressDrawTarget::stderr()
    } else {
        ProgressDrawTarget::hidden()
    }
}
