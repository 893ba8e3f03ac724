//! Markdown tables of the summaries.

use std::fmt::Write;

/// The header of a table with one column per peer after `first` (numbers, right-aligned).
pub fn peer_table_header(s: &mut String, first: &str, peers: &[String]) {
    let _ = write!(s, "| {first} |");
    for p in peers {
        let _ = write!(s, " {p} |");
    }
    let _ = write!(s, "\n|---|");
    for _ in peers {
        let _ = write!(s, "---:|");
    }
    let _ = writeln!(s);
}

#[cfg(test)]
mod tests {
    #[test]
    fn a_header_has_a_column_per_peer() {
        let mut s = String::new();
        super::peer_table_header(&mut s, "row", &["a".into(), "b".into()]);
        assert_eq!(s, "| row | a | b |\n|---|---:|---:|\n");
    }
}
