//! Durability of Datalog transactions for real: a child process transacts with `transact`,
//! `transact_async` and the callback form, printing every `:k` acknowledged as durable; the
//! parent kills it with SIGKILL at random moments, reopens, and finds every acknowledged
//! entity, with its value, through the AVE index.

use datalith::codec::{Keyword, Value};
use datalith::tx::{EntityMap, EntityRef, Tempid, TxData, TxValue};
use datalith::{Database, DbOptions};
use rand::RngExt;
use std::collections::HashMap;
use std::io::{BufRead, BufReader, Write};
use std::process::{Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::Duration;

const DIR_VAR: &str = "DATALITH_DL_CRASH_DIR";
const CYCLE_VAR: &str = "DATALITH_DL_CRASH_CYCLE";

fn kw(s: &str) -> Keyword {
    Keyword::parse(s)
}

fn schema(db: &Database) {
    let attr = |name: &str, ty: &str, unique: bool| {
        let mut m = EntityMap::default()
            .set(kw(":db/ident"), TxValue::Value(Value::keyword(name)))
            .set(kw(":db/valueType"), TxValue::Value(Value::keyword(ty)))
            .set(
                kw(":db/cardinality"),
                TxValue::Value(Value::keyword(":db.cardinality/one")),
            );
        if unique {
            m = m.set(
                kw(":db/unique"),
                TxValue::Value(Value::keyword(":db.unique/identity")),
            );
        }
        m
    };
    db.transact(
        TxData::default()
            .map(attr(":k", ":db.type/long", true))
            .map(attr(":v", ":db.type/string", false)),
    )
    .unwrap();
}

fn entity(k: i64) -> TxData {
    TxData::default().map(
        EntityMap::with_id(EntityRef::Temp(Tempid::Named("e".into())))
            .set(kw(":k"), TxValue::Value(Value::Long(k)))
            .set(kw(":v"), TxValue::Value(Value::string(&format!("v{k}")))),
    )
}

#[test]
#[ignore = "the child process of kill_9_never_loses_an_acknowledged_transaction"]
fn dl_crash_child() {
    let dir = std::env::var(DIR_VAR).expect("run by the crash test");
    let cycle: i64 = std::env::var(CYCLE_VAR).unwrap().parse().unwrap();
    let db = Database::open(&dir, DbOptions::default()).unwrap();
    if cycle == 0 {
        schema(&db);
    }
    let out = Arc::new(Mutex::new(std::io::stdout()));
    let ack = |out: &Arc<Mutex<std::io::Stdout>>, k: i64| {
        let mut o = out.lock().unwrap();
        writeln!(o, "ACK {k}").unwrap();
        o.flush().unwrap();
    };
    let mut pending = std::collections::VecDeque::new();
    for i in 0i64.. {
        let k = cycle * 10_000_000 + i;
        match i % 3 {
            0 => {
                db.transact(entity(k)).unwrap();
                ack(&out, k);
            }
            1 => {
                pending.push_back((k, db.transact_async(entity(k))));
                if pending.len() > 64 {
                    let (k, h) = pending.pop_front().unwrap();
                    h.wait().unwrap();
                    ack(&out, k);
                }
            }
            _ => {
                let out = out.clone();
                db.transact_with_callback(entity(k), move |r| {
                    r.unwrap();
                    ack(&out, k);
                });
            }
        }
    }
}

#[test]
fn kill_9_never_loses_an_acknowledged_transaction() {
    let dir = tempfile::tempdir().unwrap();
    let exe = std::env::current_exe().unwrap();
    let mut rng = rand::rng();
    let mut acked: Vec<i64> = Vec::new();
    let cycles: i64 = std::env::var("DATALITH_CRASH_CYCLES")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(20);
    for cycle in 0..cycles {
        let mut child = Command::new(&exe)
            .args([
                "--exact",
                "dl_crash_child",
                "--ignored",
                "--nocapture",
                "--test-threads=1",
            ])
            .env(DIR_VAR, dir.path())
            .env(CYCLE_VAR, cycle.to_string())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let stdout = child.stdout.take().unwrap();
        let got = Arc::new(Mutex::new(Vec::new()));
        let reader = {
            let got = got.clone();
            std::thread::spawn(move || {
                for line in BufReader::new(stdout).lines() {
                    let Ok(line) = line else { break };
                    if let Some(k) = line.strip_prefix("ACK ") {
                        got.lock().unwrap().push(k.parse::<i64>().unwrap());
                    }
                }
            })
        };
        // Kill at a random moment after the child is writing (startup time varies with load).
        let started = std::time::Instant::now();
        while got.lock().unwrap().is_empty() && started.elapsed() < Duration::from_secs(20) {
            std::thread::sleep(Duration::from_millis(5));
        }
        std::thread::sleep(Duration::from_millis(rng.random_range(0..250)));
        child.kill().unwrap();
        child.wait().unwrap();
        reader.join().unwrap();
        acked.extend(std::mem::take(&mut *got.lock().unwrap()));

        let db = Database::open(dir.path(), DbOptions::default()).expect("reopens cleanly");
        let snap = db.db().unwrap();
        let (Some(k), Some(v)) = (
            snap.attr(&kw(":k")).map(|a| a.id),
            snap.attr(&kw(":v")).map(|a| a.id),
        ) else {
            assert!(
                acked.is_empty(),
                "acknowledged writes but the schema is gone"
            );
            continue;
        };
        let r = snap.reader();
        let mut missing = HashMap::new();
        for key in &acked {
            match r.first_entity_with(k, &Value::Long(*key)).unwrap() {
                None => {
                    missing.insert(*key, "no entity".to_string());
                }
                Some(e) => {
                    let vals = r.values(e, v).unwrap();
                    if vals != vec![Value::string(&format!("v{key}"))] {
                        missing.insert(*key, format!("{vals:?}"));
                    }
                }
            }
        }
        assert!(
            missing.is_empty(),
            "cycle {cycle}: {} acknowledged transactions lost: {:?}",
            missing.len(),
            missing.iter().next()
        );
    }
    assert!(
        acked.len() > 100,
        "too few transactions to mean anything: {}",
        acked.len()
    );
}
