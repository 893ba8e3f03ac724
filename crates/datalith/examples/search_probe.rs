//! Indexes a TSV (`id TAB text`) into a KV search index and prints the bytes each table holds.
use datalith::kv::{Direction, Durability, EnvOptions, Environment};
use datalith::search::{AnalyzerConfig, DocChange, SearchTables};
use std::io::BufRead;
use std::time::Instant;

fn main() {
    let mut args = std::env::args().skip(1);
    let tsv = args.next().unwrap();
    let dir = args.next().unwrap();
    let _ = std::fs::remove_dir_all(&dir);
    let mut opts = EnvOptions::with_durability(Durability::NoSync);
    opts.initial_map_bytes = 4 << 30;
    let env = Environment::open(std::path::Path::new(&dir), opts).unwrap();
    let ix = env
        .search_index("corpus", AnalyzerConfig::default())
        .unwrap();
    let f = std::io::BufReader::new(std::fs::File::open(tsv).unwrap());
    let mut batch = Vec::new();
    let t = Instant::now();
    let mut n = 0;
    for line in f.lines() {
        let line = line.unwrap();
        let (id, text) = line.split_once('\t').unwrap();
        batch.push(DocChange::Put {
            id: id.parse().unwrap(),
            text: text.to_string(),
        });
        n += 1;
        if batch.len()
            == std::env::var("BATCH")
                .ok()
                .and_then(|b| b.parse().ok())
                .unwrap_or(10_000)
        {
            ix.write(std::mem::take(&mut batch)).unwrap();
        }
    }
    ix.write(batch).unwrap();
    let secs = t.elapsed().as_secs_f64();
    println!("{n} docs in {secs:.2}s = {:.0} docs/s", n as f64 / secs);
    let t = SearchTables::open(&env).unwrap().unwrap();
    let read = env.read().unwrap();
    let v = read.view();
    for (name, table) in [
        ("terms", &t.terms),
        ("term_stats", &t.term_stats),
        ("postings", &t.postings),
        ("docs", &t.docs),
        ("meta", &t.meta),
    ] {
        let (mut k, mut val, mut c) = (0u64, 0u64, 0u64);
        for e in v.prefix(table, &[], Direction::Forward).unwrap() {
            let (a, b) = e.unwrap();
            k += a.len() as u64;
            val += b.len() as u64;
            c += 1;
        }
        println!(
            "{name:12} {c:>9} entries {:>8.1} MB keys {:>8.1} MB values",
            k as f64 / 1e6,
            val as f64 / 1e6
        );
    }
    let (mut postings, mut positions, mut tf1) = (0u64, 0u64, 0u64);
    for e in v.prefix(&t.postings, &[], Direction::Forward).unwrap() {
        let (k, b) = e.unwrap();
        let first = u64::from_be_bytes(k[8..16].try_into().unwrap());
        for p in datalith::search::block::postings(first, b).unwrap() {
            postings += 1;
            positions += p.positions.len() as u64;
            tf1 += (p.positions.len() == 1) as u64;
        }
    }
    println!("postings {postings} positions {positions} tf=1 {tf1}");
    drop(read);
    println!(
        "free pages {} x {}",
        env.free_pages().unwrap(),
        env.page_bytes().unwrap()
    );
    let c = format!("{dir}-compact");
    let _ = std::fs::remove_dir_all(&c);
    let t = Instant::now();
    env.copy_compacted(&c).unwrap();
    println!("compacted in {:.2}s", t.elapsed().as_secs_f64());
    for e in std::fs::read_dir(&c).unwrap() {
        let e = e.unwrap();
        println!(
            "compact {:?} {:.1} MB",
            e.file_name(),
            e.metadata().unwrap().len() as f64 / 1e6
        );
    }
    drop(ix);
    drop(env);
    for e in std::fs::read_dir(&dir).unwrap() {
        let e = e.unwrap();
        println!(
            "{:?} {:.1} MB",
            e.file_name(),
            e.metadata().unwrap().len() as f64 / 1e6
        );
    }
}
