//! The default map reserves a large range of address space; where a process may not have it
//! (`ulimit -v`, valgrind), opening falls back to a smaller map that grows, instead of failing.

use std::process::Command;

const BIN: &str = env!("CARGO_BIN_EXE_datalith");

#[test]
fn a_database_opens_and_grows_under_a_limited_address_space() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("db");
    let db = db.to_str().unwrap();
    // 6 GiB of address space: far less than the 256 GiB reservation.
    let limited = |args: &str| {
        Command::new("sh")
            .arg("-c")
            .arg(format!("ulimit -v 6291456; exec '{BIN}' {args}"))
            .env("DATALITH_HISTORY", "/dev/null")
            .output()
            .expect("run datalith")
    };
    let schema =
        "'[{:db/ident :n :db/valueType :db.type/long :db/cardinality :db.cardinality/one}]'";
    let out = limited(&format!("transact '{db}' {schema}"));
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let tx: String = (0..2000)
        .map(|i| format!("{{:n {i}}}"))
        .collect::<Vec<_>>()
        .join(" ");
    let out = limited(&format!("transact '{db}' '[{tx}]'"));
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let out = limited(&format!(
        "query '{db}' '[:find (count ?e) . :where [?e :n _]]'"
    ));
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(String::from_utf8_lossy(&out.stdout).trim(), "2000");
}
