//! `copy` and `export` write their target whole or not at all, and a copy keeps the source
//! file's permissions. A failure mid-way is made real with a file-size limit (`ulimit -f`,
//! with SIGXFSZ ignored so that the write fails with EFBIG instead of killing the process).

use std::os::unix::fs::PermissionsExt;
use std::path::Path;
use std::process::Command;

const BIN: &str = env!("CARGO_BIN_EXE_datalith");

/// Runs the command under a shell with a file-size limit of `limit_kb` (or none).
fn datalith(args: &[&str], limit_kb: Option<u64>) -> std::process::Output {
    let limit = limit_kb.map_or(String::new(), |kb| format!("ulimit -f {}; ", kb * 2));
    let quoted: Vec<String> = args.iter().map(|a| format!("'{a}'")).collect();
    Command::new("sh")
        .arg("-c")
        .arg(format!(
            "trap '' XFSZ; {limit}exec '{BIN}' {}",
            quoted.join(" ")
        ))
        .env("DATALITH_HISTORY", "/dev/null")
        .output()
        .expect("run datalith")
}

fn database_of_about_two_megabytes(dir: &Path) -> String {
    let db = dir.join("db").to_str().unwrap().to_string();
    let schema =
        "[{:db/ident :text :db/valueType :db.type/string :db/cardinality :db.cardinality/one}]";
    assert!(datalith(&["transact", &db, schema], None).status.success());
    let body: String = "x".repeat(400);
    let tx: String = (0..5000)
        .map(|i| format!("{{:text \"{i} {body}\"}}"))
        .collect::<Vec<_>>()
        .join(" ");
    let file = dir.join("data.edn");
    std::fs::write(&file, format!("[{tx}]")).unwrap();
    let out = datalith(&["import", &db, file.to_str().unwrap()], None);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    db
}

fn names_in(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .map(|d| {
            d.map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
                .collect()
        })
        .unwrap_or_default();
    names.sort();
    names
}

#[test]
fn a_copy_keeps_the_source_mode_and_leaves_no_temporary_file() {
    let dir = tempfile::tempdir().unwrap();
    let db = database_of_about_two_megabytes(dir.path());
    let source = Path::new(&db).join("data.mdb");
    for mode in [0o600, 0o640] {
        std::fs::set_permissions(&source, std::fs::Permissions::from_mode(mode)).unwrap();
        let copy = dir.path().join(format!("copy-{mode:o}"));
        let out = datalith(&["copy", &db, copy.to_str().unwrap()], None);
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let got = std::fs::metadata(copy.join("data.mdb"))
            .unwrap()
            .permissions()
            .mode();
        assert_eq!(got & 0o777, mode, "mode of the copy");
        assert_eq!(names_in(&copy), vec!["data.mdb"]);
        let check = datalith(&["check", copy.to_str().unwrap()], None);
        assert!(
            check.status.success(),
            "{}",
            String::from_utf8_lossy(&check.stdout)
        );
    }
}

#[test]
fn a_copy_or_export_that_fails_midway_leaves_no_target() {
    let dir = tempfile::tempdir().unwrap();
    let db = database_of_about_two_megabytes(dir.path());
    let size = std::fs::metadata(Path::new(&db).join("data.mdb"))
        .unwrap()
        .len();
    assert!(size > 1 << 20, "the source must be larger than the limit");
    // Into a directory that does not exist: the copy creates it and must remove it again.
    let copy = dir.path().join("copy");
    let out = datalith(&["copy", &db, copy.to_str().unwrap()], Some(256));
    assert!(
        !out.status.success(),
        "the copy must fail under a 256 KiB limit"
    );
    assert!(!copy.exists(), "a failed copy left {:?}", names_in(&copy));
    // Into an existing empty directory: it stays, empty.
    std::fs::create_dir(&copy).unwrap();
    let out = datalith(&["copy", &db, copy.to_str().unwrap()], Some(256));
    assert!(!out.status.success());
    assert_eq!(names_in(&copy), Vec::<String>::new());
    // An export over an existing file: the old file stays as it was, nothing else appears.
    let export = dir.path().join("out").join("dump.edn");
    std::fs::create_dir(export.parent().unwrap()).unwrap();
    std::fs::write(&export, "old").unwrap();
    let out = datalith(&["export", &db, export.to_str().unwrap()], Some(256));
    assert!(
        !out.status.success(),
        "the export must fail under a 256 KiB limit"
    );
    assert_eq!(std::fs::read_to_string(&export).unwrap(), "old");
    assert_eq!(names_in(export.parent().unwrap()), vec!["dump.edn"]);
    // Without the limit both succeed.
    let out = datalith(&["export", &db, export.to_str().unwrap()], None);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(std::fs::metadata(&export).unwrap().len() > 1 << 20);
    assert_eq!(names_in(export.parent().unwrap()), vec!["dump.edn"]);
}
