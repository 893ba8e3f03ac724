//! TPC-H data, generated once per scale factor into dbgen's `.tbl` files (`|`-separated, a
//! trailing `|`, one row a line: what `dbgen` writes) by the `tpchgen` crate, and reused by
//! every later run: a `MARKER` file written last names the scale factor and the generator, so
//! a directory half-written by an interrupted run is generated again.

use std::fmt::Display;
use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};

use tpchgen::generators::{
    CustomerGenerator, LineItemGenerator, NationGenerator, OrderGenerator, PartGenerator,
    PartSuppGenerator, RegionGenerator, SupplierGenerator,
};

use super::tables::TABLES;
use crate::common::BenchError;

/// The generator, as the marker names it (bump when the crate's version changes).
pub const GENERATOR: &str = "tpchgen 3.0.0";

/// The `.tbl` file of `table` in `dir`.
pub fn tbl_path(dir: &Path, table: &str) -> PathBuf {
    dir.join(format!("{table}.tbl"))
}

/// What the marker of a complete directory says.
fn marker_text(sf: f64) -> String {
    format!("{GENERATOR} sf {sf}\n")
}

/// The data directory of scale factor `sf` under `root`, generated if it is not there yet.
/// Returns the directory and whether it was generated now.
pub fn ensure(root: &Path, sf: f64, log: impl Fn(&str)) -> Result<(PathBuf, bool), BenchError> {
    let dir = root.join(format!("sf{sf}"));
    let marker = dir.join("MARKER");
    if std::fs::read_to_string(&marker).ok().as_deref() == Some(marker_text(sf).as_str()) {
        return Ok((dir, false));
    }
    std::fs::create_dir_all(&dir).map_err(BenchError::io(&dir))?;
    let _ = std::fs::remove_file(&marker);
    for t in &TABLES {
        let path = tbl_path(&dir, t.sql);
        let start = std::time::Instant::now();
        let rows = write_table(&path, t.sql, sf)?;
        log(&format!(
            "generated {}: {rows} rows in {:.1} s",
            path.display(),
            start.elapsed().as_secs_f64()
        ));
    }
    std::fs::write(&marker, marker_text(sf)).map_err(BenchError::io(&marker))?;
    Ok((dir, true))
}

/// Writes one table's rows; returns how many.
fn write_table(path: &Path, table: &str, sf: f64) -> Result<u64, BenchError> {
    let file = std::fs::File::create(path).map_err(BenchError::io(path))?;
    let mut w = BufWriter::with_capacity(1 << 20, file);
    let n = match table {
        "region" => lines(&mut w, RegionGenerator::new(sf, 1, 1).iter()),
        "nation" => lines(&mut w, NationGenerator::new(sf, 1, 1).iter()),
        "part" => lines(&mut w, PartGenerator::new(sf, 1, 1).iter()),
        "supplier" => lines(&mut w, SupplierGenerator::new(sf, 1, 1).iter()),
        "partsupp" => lines(&mut w, PartSuppGenerator::new(sf, 1, 1).iter()),
        "customer" => lines(&mut w, CustomerGenerator::new(sf, 1, 1).iter()),
        "orders" => lines(&mut w, OrderGenerator::new(sf, 1, 1).iter()),
        "lineitem" => lines(&mut w, LineItemGenerator::new(sf, 1, 1).iter()),
        other => unreachable!("no generator for table {other}"),
    }
    .and_then(|n| w.flush().map(|_| n))
    .map_err(BenchError::io(path))?;
    Ok(n)
}

fn lines<R: Display>(w: &mut impl Write, rows: impl Iterator<Item = R>) -> std::io::Result<u64> {
    let mut n = 0;
    for r in rows {
        writeln!(w, "{r}")?;
        n += 1;
    }
    Ok(n)
}

/// Reads the rows of one `.tbl` file, calling `row` with each line's fields (the trailing `|`
/// dropped).
pub fn read_rows(
    path: &Path,
    mut row: impl FnMut(&[&str]) -> Result<(), BenchError>,
) -> Result<u64, BenchError> {
    use std::io::BufRead;
    let file = std::fs::File::open(path).map_err(BenchError::io(path))?;
    let mut r = std::io::BufReader::with_capacity(1 << 20, file);
    let mut line = String::new();
    let mut n = 0;
    loop {
        line.clear();
        if r.read_line(&mut line).map_err(BenchError::io(path))? == 0 {
            break;
        }
        let text = line.trim_end_matches('\n');
        let text = text.strip_suffix('|').unwrap_or(text);
        let fields: Vec<&str> = text.split('|').collect();
        row(&fields)?;
        n += 1;
    }
    Ok(n)
}
