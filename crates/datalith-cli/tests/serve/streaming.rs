//! Large `q` results: a million-row answer streamed by the real server while the test reads
//! its memory (`VmRSS`), and the pages of one value through the Rust client.

use std::io::Read;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use datalith::edn::{read_one, Edn};
use datalith_client::Client;

use crate::server;

/// A million rows of a number and a 40-byte string, made by the query itself: no data to
/// load.
const MILLION: &str = r#"{:query "[:find ?x ?s :where [(range 0 1000000) [?x ...]] [(str \"row-\" ?x \"-abcdefghijklmnopqrstuvwxyz\") ?s]]"}"#;

/// A line of `/proc/PID/status`, in bytes (`VmRSS`: resident now; `VmHWM`: the most
/// resident so far).
fn status_bytes(pid: u32, key: &str) -> u64 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap_or_default();
    status
        .lines()
        .find(|l| l.starts_with(key))
        .and_then(|l| l.split_whitespace().nth(1))
        .and_then(|kb| kb.parse::<u64>().ok())
        .map_or(0, |kb| kb * 1024)
}

fn mib(bytes: u64) -> f64 {
    bytes as f64 / (1 << 20) as f64
}

/// The most of a `/proc/PID/status` line seen while it runs, sampled by a thread of its own.
struct Most {
    done: Arc<AtomicBool>,
    sampler: std::thread::JoinHandle<u64>,
}

impl Most {
    /// Samples line `key` of process `pid` every `every`.
    fn sample(pid: u32, key: &'static str, every: Duration) -> Most {
        let done = Arc::new(AtomicBool::new(false));
        let sampler = {
            let done = done.clone();
            std::thread::spawn(move || {
                let mut most = 0;
                while !done.load(Ordering::Relaxed) {
                    most = most.max(status_bytes(pid, key));
                    std::thread::sleep(every);
                }
                most
            })
        };
        Most { done, sampler }
    }

    /// Stops sampling: the most seen.
    fn stop(self) -> u64 {
        self.done.store(true, Ordering::Relaxed);
        self.sampler.join().unwrap()
    }
}

/// A `q` request's answer, as it comes (a client patient enough for a large one).
fn post_q(s: &server::Server, body: &str) -> ureq::http::Response<ureq::Body> {
    let agent: ureq::Agent = ureq::Agent::config_builder()
        .timeout_global(Some(Duration::from_secs(600)))
        .build()
        .into();
    agent
        .post(s.url("/db/people/q"))
        .header("Content-Type", "application/edn")
        .send(body)
        .unwrap()
}

#[test]
fn a_million_row_answer_streams_in_bounded_memory() {
    // One thread a query: spread over threads, the rows are made in each thread's own heap of
    // the allocator, and how much of the first query's freed memory the second reuses varied
    // by 30 MiB from run to run (the engine alone: +279 to +310 MiB in six runs), more than
    // the bound below can tell apart. Streaming is the same on any number of threads.
    //
    // Freed memory handed back at once (`MIMALLOC_PURGE_DELAY=0`): by default the allocator
    // keeps what a program frees for 10 s (`datalith_alloc::KEEP_FREED_MS`), so the answer's
    // text, written and freed chunk by chunk, would stay resident (+46 MiB here) although the
    // server no longer holds it; resident memory then counts what the server holds.
    let s = server::start_with_env(
        &["people"],
        &["--query-threads", "1"],
        &[("MIMALLOC_PURGE_DELAY", "0")],
    );
    let pid = s.pid();
    let baseline = status_bytes(pid, "VmRSS");
    // What the engine itself takes for this result: the same query answering one row of it
    // (a page), so that nothing but the engine's work is held.
    let one_row = MILLION.replace("]\"}", "]\" :limit 1}");
    let reply = crate::client::send(
        "POST",
        &s.url("/db/people/q"),
        &[("Content-Type", "application/edn")],
        Some(&one_row),
    );
    assert_eq!(reply.status, 200, "{}", reply.body);
    let engine = status_bytes(pid, "VmHWM").saturating_sub(baseline);
    // Sample the server's resident memory every 10 ms while the answer is produced and read.
    let sampler = Most::sample(pid, "VmRSS", Duration::from_millis(10));
    let start = Instant::now();
    let mut response = post_q(&s, MILLION);
    assert_eq!(response.status().as_u16(), 200);
    assert_eq!(
        response
            .headers()
            .get("transfer-encoding")
            .map(|v| v.to_str().unwrap()),
        Some("chunked"),
        "a large answer has no Content-Length: it is sent as it is written"
    );
    let headers_at = start.elapsed();
    // Read it as it comes, holding none of it: count the rows (each opens with `[`; the
    // strings hold none), keep the first and last bytes.
    let mut reader = response.body_mut().with_config().limit(u64::MAX).reader();
    let mut buf = vec![0u8; 64 * 1024];
    let (mut bytes, mut rows, mut first, mut last) = (0u64, 0u64, Vec::new(), Vec::new());
    loop {
        let n = reader.read(&mut buf).unwrap();
        if n == 0 {
            break;
        }
        if first.len() < 40 {
            first.extend_from_slice(&buf[..n.min(40)]);
        }
        last = buf[n.saturating_sub(60)..n].to_vec();
        rows += buf[..n].iter().filter(|b| **b == b'[').count() as u64;
        bytes += n as u64;
    }
    let took = start.elapsed();
    let most = sampler.stop();
    let peak = status_bytes(pid, "VmHWM");
    let first = String::from_utf8_lossy(&first);
    let last = String::from_utf8_lossy(&last);
    assert_eq!(rows, 1_000_000, "{first} ... {last}");
    assert!(first.starts_with("{:result #{["), "{first}");
    assert!(
        last.trim_end().ends_with('}') && last.contains(":basis-t"),
        "{last}"
    );
    let rise = most.saturating_sub(baseline);
    eprintln!(
        "1M rows, {:.1} MiB of EDN in {took:?} (headers after {headers_at:?}); server RSS \
         {:.1} MiB before, +{:.1} MiB for the engine alone (one row answered), +{:.1} MiB at \
         most while streaming, VmHWM {:.1} MiB",
        mib(bytes),
        mib(baseline),
        mib(engine),
        mib(rise),
        mib(peak)
    );
    // The bound. The engine alone, answering the query whole (its `:limit` asks for the
    // whole result), holds every row (+209 MiB here on 2026-12-06, about 200 bytes a row);
    // streamed, the range's elements wait as values (32 bytes each) and are made rows a part
    // at a time (`query::exec::elements`), each part written as EDN as it is made
    // (`Db::q_each`), the answer's text sent a chunk at a time (46.5 MiB whole): +57.9 MiB
    // (+64.8 with the elements held twice while taken from the range's vector). So: the
    // elements and 40 MiB, and at most half what the engine takes whole.
    let bound = (1_000_000 * 32 + (40 << 20)).min(engine / 2);
    assert!(
        rise < bound,
        "the server grew by {:.1} MiB streaming {:.1} MiB (bound {:.1} MiB), the engine \
         alone by {:.1} MiB",
        mib(rise),
        mib(bytes),
        mib(bound),
        mib(engine)
    );
    // Still serving.
    let reply = crate::client::send("GET", &s.url("/health"), &[], None);
    assert_eq!(reply.status, 200);
}

#[test]
fn pages_of_one_value_add_up_to_its_result() {
    let s = server::start(&["people"], &[]);
    let people = Client::new(&s.base).database("people");
    people
        .transact(
            "[{:db/ident :n :db/valueType :db.type/long :db/cardinality :db.cardinality/one}]",
        )
        .unwrap();
    let batch = |from: i64, to: i64| {
        let items: Vec<String> = (from..to).map(|i| format!("{{:n {i}}}")).collect();
        format!("[{}]", items.join(" "))
    };
    people.transact(batch(0, 2500).as_str()).unwrap();
    let db = people.db().unwrap();
    let query = "[:find ?e ?n :where [?e :n ?n]]";
    let whole = match db.q(query, &[]).unwrap() {
        Edn::Set(rows) => rows,
        other => panic!("not a set: {}", other.to_string().len()),
    };
    assert_eq!(whole.len(), 2500);
    let mut pages = db.q_pages(query, &[], 1000);
    let first = pages.next().unwrap().unwrap();
    // A write between pages changes nothing: every page reads the first page's value.
    people.transact(batch(2500, 2600).as_str()).unwrap();
    let mut rows = first;
    let mut sizes = vec![rows.len()];
    for page in pages {
        let page = page.unwrap();
        sizes.push(page.len());
        rows.extend(page);
    }
    assert_eq!(sizes, [1000, 1000, 500]);
    assert!(rows == whole, "the pages, in order, are the whole result");
    // A new value has the new rows.
    let count = people
        .db()
        .unwrap()
        .q("[:find (count ?e) . :where [?e :n]]", &[])
        .unwrap();
    assert_eq!(count, read_one("2600").unwrap());
    // A page of a result that is one value is refused, saying why.
    let e = db
        .q_pages("[:find (count ?e) . :where [?e :n]]", &[], 10)
        .next()
        .unwrap()
        .unwrap_err();
    assert!(e.message.contains("page a collection result"), "{e}");
}

/// What a `q` answer cost the server while a client read it.
struct Watched {
    /// The answer's bytes.
    bytes: u64,
    /// How often `marker` occurs in it.
    count: u64,
    /// Its first and last 40 bytes.
    first: String,
    last: String,
    /// The most the server's anonymous memory grew while it answered.
    rise: u64,
}

impl Watched {
    /// The bound of an answer written as it is made: the server grew by less than half the
    /// answer's text (made whole first, its values alone are larger than the text).
    fn held_less_than_half_the_text(&self) {
        assert!(
            self.rise < self.bytes / 2,
            "the server grew by {:.1} MiB answering {:.1} MiB",
            mib(self.rise),
            mib(self.bytes)
        );
    }
}

/// Asks `body` of the server and reads the answer to its end while sampling the server's
/// anonymous memory (the data file's pages the answer reads count in `VmRSS` too), counting
/// `marker` in it.
fn watch_answer(s: &server::Server, body: &str, marker: &[u8]) -> Watched {
    let pid = s.pid();
    let baseline = status_bytes(pid, "RssAnon");
    let sampler = Most::sample(pid, "RssAnon", Duration::from_millis(5));
    let mut response = post_q(s, body);
    assert_eq!(response.status().as_u16(), 200);
    let mut reader = response.body_mut().with_config().limit(u64::MAX).reader();
    let mut buf = vec![0u8; 64 * 1024];
    let (mut bytes, mut count, mut first, mut last) = (0u64, 0u64, String::new(), Vec::new());
    // The end of the previous read, so that a marker split between reads counts.
    let mut carry: Vec<u8> = Vec::new();
    loop {
        let n = reader.read(&mut buf).unwrap();
        if n == 0 {
            break;
        }
        if first.is_empty() {
            first = String::from_utf8_lossy(&buf[..n.min(40)]).into_owned();
        }
        carry.extend_from_slice(&buf[..n]);
        count += carry.windows(marker.len()).filter(|w| *w == marker).count() as u64;
        carry.drain(..carry.len().saturating_sub(marker.len() - 1));
        last = buf[n.saturating_sub(40)..n].to_vec();
        bytes += n as u64;
    }
    let most = sampler.stop();
    eprintln!(
        "{:.1} MiB of EDN; server anonymous memory {:.1} MiB before, +{:.1} MiB at most while \
         answering",
        mib(bytes),
        mib(baseline),
        mib(most.saturating_sub(baseline)),
    );
    Watched {
        bytes,
        count,
        first,
        last: String::from_utf8_lossy(&last).into_owned(),
        rise: most.saturating_sub(baseline),
    }
}

#[test]
fn a_pulled_answer_is_made_as_it_is_written() {
    // As above: one query thread, freed memory handed back at once.
    let s = server::start_with_env(
        &["people"],
        &["--query-threads", "1"],
        &[("MIMALLOC_PURGE_DELAY", "0")],
    );
    let people = Client::new(&s.base).database("people");
    people
        .transact(
            "[{:db/ident :bio :db/valueType :db.type/string :db/cardinality :db.cardinality/one}]",
        )
        .unwrap();
    const ENTITIES: usize = 100_000;
    let bio = "x".repeat(200);
    for chunk in 0..10 {
        let maps: Vec<String> = (0..ENTITIES / 10)
            .map(|i| format!("{{:bio \"{bio}{}\"}}", chunk * ENTITIES / 10 + i))
            .collect();
        people
            .transact(format!("[{}]", maps.join(" ")).as_str())
            .unwrap();
    }
    // The writes reach the data file first (an answer read over writes still waiting for it
    // would hold their overlay too).
    std::thread::sleep(Duration::from_secs(2));
    // Each pulled map opens with `{:bio`; the answer itself with `{:result`.
    let w = watch_answer(
        &s,
        r#"{:query "[:find [(pull ?e [:bio]) ...] :where [?e :bio]]"}"#,
        b"{:bio",
    );
    assert_eq!(w.count, ENTITIES as u64, "...{}", w.last);
    assert!(w.last.contains(":basis-t"), "{}", w.last);
    // The engine's rows are one entity id each (~56 bytes a row, 5.3 MiB); the pulled maps
    // are made a chunk at a time as they are written. Made whole first, the maps alone are
    // larger than their text (~21 MiB): so the server holds less than half the text.
    w.held_less_than_half_the_text();
}

#[test]
fn a_scanned_answer_is_made_a_part_at_a_time() {
    scanned_answer_in_parts(true);
}

/// The same scan of an attribute without AVE entries (the default layout's undeclared
/// attribute): its list walked in entity order, a part at a time. Sorted whole first, as
/// until 2026-12-08, the server held +24.1 MiB for this answer's 16.1 MiB.
#[test]
fn a_scanned_answer_of_an_undeclared_attribute_is_made_a_part_at_a_time() {
    scanned_answer_in_parts(false);
}

/// A million entities of one number, bulk-loaded before the server opens them (`indexed`:
/// `:db/index true`, so in AVE), then scanned whole by a query the server streams.
fn scanned_answer_in_parts(indexed: bool) {
    const ENTITIES: u64 = 1_000_000;
    let temp = tempfile::tempdir().unwrap();
    let schema = datalith::TxData::from_edn(
        &read_one(
            if indexed {
                "[{:db/ident :n :db/valueType :db.type/long :db/cardinality :db.cardinality/one :db/index true}]"
            } else {
                "[{:db/ident :n :db/valueType :db.type/long :db/cardinality :db.cardinality/one}]"
            },
        )
        .unwrap(),
    )
    .unwrap();
    let n = datalith::codec::Keyword::parse(":n");
    let datoms: Vec<_> = (0..ENTITIES)
        .map(|i| {
            let e = datalith::raw::USER_PARTITION_START + i;
            (e, n.clone(), datalith::codec::Value::Long(i as i64))
        })
        .collect();
    let path = temp.path().join("people");
    drop(
        datalith::Database::init_db(&path, datalith::DbOptions::default(), schema, &datoms)
            .unwrap(),
    );
    drop(datoms);
    // As above: one query thread, freed memory handed back at once.
    let s = server::start_in_env(
        temp.path(),
        &["people"],
        &["--query-threads", "1"],
        &[("MIMALLOC_PURGE_DELAY", "0")],
    )
    .expect("the server starts");
    // Each row is a tuple `[e n]`.
    let w = watch_answer(&s, r#"{:query "[:find ?e ?n :where [?e :n ?n]]"}"#, b"[");
    assert_eq!(w.count, ENTITIES, "{} ... {}", w.first, w.last);
    assert!(w.first.starts_with("{:result #{["), "{}", w.first);
    assert!(w.last.contains(":basis-t"), "{}", w.last);
    // Made whole, the rows alone (two values each, ~100 bytes a row: +85 MiB on 2026-12-06)
    // are five times their text (16 MiB); a part's (32,768 datoms of the scan) are ~3 MiB,
    // written and sent before the next part is read. So: less than half the text.
    w.held_less_than_half_the_text();
}
