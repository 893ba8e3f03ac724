//! One heap setting for every JVM and Node peer: `--heap` (default [`DEFAULT_HEAP`]) becomes
//! `-Xms` and `-Xmx` of the same size for each JVM (through `PEERS_JVM_OPTS`, which
//! `bench/peers/run.sh` passes to `java`) and `--max-old-space-size` for Node (through
//! `NODE_OPTIONS`), so no peer grows or collects its heap differently from another.

use std::process::Command;

/// The heap every JVM and Node peer gets unless `--heap` says otherwise.
pub const DEFAULT_HEAP: &str = "4g";

/// The heap size in MiB of a `4g` / `512m` setting, or `None` when it does not parse.
pub fn heap_mib(heap: &str) -> Option<u64> {
    let h = heap.trim().to_ascii_lowercase();
    let (digits, unit) = h.split_at(h.find(|c: char| !c.is_ascii_digit()).unwrap_or(h.len()));
    let n: u64 = digits.parse().ok()?;
    match unit {
        "g" => Some(n * 1024),
        "m" | "" => Some(n),
        _ => None,
    }
}

/// Sets the peer heap environment on `cmd` (a `run.sh` invocation).
pub fn set_heap(cmd: &mut Command, heap: &str) {
    if let Some(mib) = heap_mib(heap) {
        cmd.env("PEERS_JVM_OPTS", format!("-Xms{mib}m -Xmx{mib}m"));
        cmd.env("NODE_OPTIONS", format!("--max-old-space-size={mib}"));
    }
}

/// One line for summaries: what heap the peers ran with.
pub fn describe(heap: &str) -> String {
    match heap_mib(heap) {
        Some(mib) => {
            format!("JVM peers `-Xms{mib}m -Xmx{mib}m`, Node `--max-old-space-size={mib}`")
        }
        None => format!("peer heap setting `{heap}` not understood: runtime defaults"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn heap_sizes() {
        let cases = [
            ("4g", Some(4096)),
            ("512m", Some(512)),
            ("512", Some(512)),
            (" 2G ", Some(2048)),
            ("4t", None),
            ("g", None),
        ];
        for (text, want) in cases {
            assert_eq!(heap_mib(text), want, "{text}");
        }
    }
}
