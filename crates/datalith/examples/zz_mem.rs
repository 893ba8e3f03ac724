use datalith::{Database, DbOptions};
fn anon() -> u64 {
    let s = std::fs::read_to_string("/proc/self/status").unwrap();
    s.lines()
        .find(|l| l.starts_with("RssAnon"))
        .unwrap()
        .split_whitespace()
        .nth(1)
        .unwrap()
        .parse::<u64>()
        .unwrap()
        / 1024
}
static PEAK: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
fn hwm() -> u64 {
    PEAK.load(std::sync::atomic::Ordering::Relaxed)
}
fn main() {
    let dir = std::path::PathBuf::from("/tmp/zzmem-db");
    let fresh = !dir.exists();
    let db = Database::open(&dir, DbOptions::default()).unwrap();
    if fresh {
        db.transact(r#"[{:db/ident :k :db/valueType :db.type/long :db/cardinality :db.cardinality/one :db/unique :db.unique/identity} {:db/ident :v :db/valueType :db.type/string :db/cardinality :db.cardinality/one}]"#).unwrap();
        for b in 0..100 {
            let maps: Vec<String> = (0..10000)
                .map(|j| {
                    let k = b * 10000 + j;
                    format!(
                        "{{:k {k} :v \"{:036}\"}}",
                        k as u64 * 2654435761u64 % 1000000007
                    )
                })
                .collect();
            db.transact(format!("[{}]", maps.join(" ")).as_str())
                .unwrap();
        }
        println!("loaded");
    }
    let which = std::env::args().nth(1).unwrap();
    let q = match which.as_str() {
        "scan2" => "[:find ?e ?v :where [?e :v ?v]]",
        "scan1" => "[:find ?e :where [?e :v]]",
        "join" => "[:find ?k ?v :where [?e :k ?k] [?e :v ?v]]",
        "count" => "[:find (count ?e) :where [?e :v]]",
        _ => panic!(),
    };
    std::thread::spawn(|| loop {
        PEAK.fetch_max(anon(), std::sync::atomic::Ordering::Relaxed);
        std::thread::sleep(std::time::Duration::from_millis(1));
    });
    std::thread::sleep(std::time::Duration::from_millis(20));
    let before = hwm();
    let d = db.db().unwrap();
    let t = std::time::Instant::now();
    let r = d.q(q, &[]).unwrap();
    let el = t.elapsed();
    std::thread::sleep(std::time::Duration::from_millis(5));
    let after = hwm();
    let n = match &r {
        datalith::edn::Edn::Set(s) => s.len(),
        other => other.to_string().len(),
    };
    println!(
        "{which}: HWM before {before} MiB after {after} MiB (+{}) items {n} in {el:?}",
        after - before
    );
}
