//! The interactive shell through a real terminal (a private tmux server): a multi-line query,
//! tab completion, an error that does not end the session, Ctrl-C that stops a running
//! query (its thread ends) and keeps the session, persistent history, Ctrl-D.
//! Skipped (with a note) where tmux is not installed.

use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant};

const BIN: &str = env!("CARGO_BIN_EXE_datalith");

struct Tmux {
    socket: String,
    session: String,
}

impl Tmux {
    fn cmd(&self, args: &[&str]) -> std::process::Output {
        Command::new("tmux")
            .args(["-L", &self.socket])
            .args(args)
            .output()
            .expect("run tmux")
    }

    fn keys(&self, keys: &[&str]) {
        let mut args = vec!["send-keys", "-t", &self.session];
        args.extend_from_slice(keys);
        assert!(self.cmd(&args).status.success());
    }

    /// Types `text` literally, then Enter.
    fn line(&self, text: &str) {
        assert!(self
            .cmd(&["send-keys", "-t", &self.session, "-l", text])
            .status
            .success());
        self.keys(&["Enter"]);
    }

    fn screen(&self) -> String {
        String::from_utf8_lossy(
            &self
                .cmd(&["capture-pane", "-p", "-t", &self.session])
                .stdout,
        )
        .into_owned()
    }

    /// Waits until the screen shows `text` `times` times.
    fn wait_for(&self, text: &str, times: usize) -> String {
        let start = Instant::now();
        loop {
            let s = self.screen();
            if s.matches(text).count() >= times {
                return s;
            }
            assert!(
                start.elapsed() < Duration::from_secs(20),
                "timed out waiting for {text:?}; screen:\n{s}"
            );
            std::thread::sleep(Duration::from_millis(30));
        }
    }

    fn alive(&self) -> bool {
        self.cmd(&["has-session", "-t", &self.session])
            .status
            .success()
    }
}

impl Drop for Tmux {
    fn drop(&mut self) {
        // Our own private server only.
        let _ = self.cmd(&["kill-server"]);
    }
}

fn transact(db: &Path, tx: &str) {
    let o = Command::new(BIN)
        .args(["transact", db.to_str().unwrap(), tx])
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
}

#[test]
fn a_multi_line_query_in_a_real_terminal() {
    if Command::new("tmux").arg("-V").output().is_err() {
        eprintln!("tmux is not installed: skipping the terminal test");
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("db");
    let history = dir.path().join("history");
    transact(
        &db,
        "[{:db/ident :name :db/valueType :db.type/string :db/cardinality :db.cardinality/one} {:db/ident :age :db/valueType :db.type/long :db/cardinality :db.cardinality/one}]",
    );
    transact(&db, r#"[{:name "Ann" :age 30} {:name "Bob" :age 25}]"#);
    // A chain of 3000 links: its transitive closure takes over a minute in a debug build, so
    // a query thread that ends soon after Ctrl-C was stopped by it.
    transact(
        &db,
        "[{:db/ident :next :db/valueType :db.type/ref :db/cardinality :db.cardinality/one}]",
    );
    // (The last link's target is an entity of its own: a tempid used only as a value is
    // refused, as in Datomic.)
    let chain: Vec<String> = (0..3000)
        .map(|i| format!("{{:db/id \"n{i}\" :next \"n{}\"}}", i + 1))
        .chain(["{:db/id \"n3000\" :age 0}".to_string()])
        .collect();
    transact(&db, &format!("[{}]", chain.join(" ")));

    let t = Tmux {
        socket: format!("datalith-test-{}", std::process::id()),
        session: "shell".into(),
    };
    let command = format!(
        "env DATALITH_HISTORY={} {} {}",
        history.display(),
        BIN,
        db.display()
    );
    let o = t.cmd(&[
        "new-session",
        "-d",
        "-s",
        &t.session,
        "-x",
        "100",
        "-y",
        "40",
        &command,
    ]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    t.wait_for("datalith>", 1);

    // A query over three lines: the prompt continues until the form is complete.
    // (Each line waits for its prompt: the line editor discards keys typed before it
    // switches the terminal to raw mode.)
    t.line("[:find ?n ?a");
    t.wait_for("...>", 1);
    t.line(" :where [?e :name ?n]");
    t.wait_for("...>", 2);
    t.line("        [?e :age ?a]]");
    let screen = t.wait_for("(2 rows)", 1);
    let expected = [
        "datalith> [:find ?n ?a",
        "     ...>  :where [?e :name ?n]",
        "     ...>         [?e :age ?a]]",
        "?n  | ?a",
        "----+---",
        "Ann | 30",
        "Bob | 25",
        "(2 rows)",
    ];
    let lines: Vec<&str> = screen.lines().map(str::trim_end).collect();
    let at = lines
        .iter()
        .position(|l| *l == expected[0])
        .unwrap_or_else(|| panic!("screen:\n{screen}"));
    assert_eq!(
        &lines[at..at + expected.len()],
        &expected,
        "screen:\n{screen}"
    );

    // An error names line and column, and the session goes on.
    t.wait_for("datalith>", 2);
    t.line("[:find ?n :where [?e :name ?n]]]");
    t.wait_for("error: input:1:32: unbalanced ]", 1);
    t.wait_for("datalith>", 3);

    // Tab completion of a dot-command and of an attribute.
    t.keys(&["-l", ".mo"]);
    t.keys(&["Tab"]);
    t.keys(&["-l", " ed"]);
    t.keys(&["Tab", "Enter"]);
    t.wait_for("datalith>", 4);
    t.keys(&["-l", "[:find ?a . :where [?e :na"]);
    t.keys(&["Tab"]);
    t.line(" \"Bob\"] [?e :age ?a]]");
    let screen = t.wait_for("datalith>", 5);
    assert!(
        screen.contains("datalith> .mode edn")
            && screen.contains("datalith> [:find ?a . :where [?e :name \"Bob\"] [?e :age ?a]]\n25"),
        "screen:\n{screen}"
    );

    // Ctrl-C cancels a running query and the session goes on.
    t.wait_for("datalith>", 5);
    t.line("{:query [:find (count ?b) . :in $ % :where (reach ?a ?b)] :args [[[(reach ?a ?b) [?a :next ?b]] [(reach ?a ?b) [?a :next ?x] (reach ?x ?b)]]]}");
    std::thread::sleep(Duration::from_millis(300));
    let started = Instant::now();
    t.keys(&["C-c"]);
    t.wait_for("error: query cancelled", 1);
    assert!(started.elapsed() < Duration::from_secs(5));
    // The prompt comes back at once; the query itself must stop too (the flag reaches
    // `q_cancellable`), not run on in the background: its thread ends.
    let pid = String::from_utf8_lossy(
        &t.cmd(&["display", "-p", "-t", &t.session, "#{pane_pid}"])
            .stdout,
    )
    .trim()
    .to_string();
    let query_threads = || {
        std::fs::read_dir(format!("/proc/{pid}/task"))
            .map(|tasks| {
                tasks
                    .filter_map(|t| std::fs::read_to_string(t.ok()?.path().join("comm")).ok())
                    .filter(|comm| comm.trim() == "datalith-query")
                    .count()
            })
            .unwrap_or(0)
    };
    let cancelled_at = Instant::now();
    while query_threads() > 0 {
        // Generous: only tells a query that never stops from a slow machine.
        assert!(
            cancelled_at.elapsed() < Duration::from_secs(30),
            "the cancelled query still runs"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    t.wait_for("datalith>", 6);
    t.line("[:find ?a . :where [?e :name \"Ann\"] [?e :age ?a]]");
    t.wait_for("\n30\n", 1);

    // Ctrl-D quits; the history kept the multi-line query.
    t.wait_for("datalith>", 7);
    t.keys(&["C-d"]);
    let start = Instant::now();
    while t.alive() {
        assert!(
            start.elapsed() < Duration::from_secs(10),
            "the shell did not quit"
        );
        std::thread::sleep(Duration::from_millis(30));
    }
    let h = std::fs::read_to_string(&history).unwrap();
    assert!(h.contains("[:find ?n ?a"), "{h}");
    assert!(h.contains("[?e :age ?a]]"), "{h}");
}
