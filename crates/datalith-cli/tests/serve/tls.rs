//! TLS: a pair made by `datalith cert`, served with `--tls-cert`/`--tls-key`; the Rust
//! client and curl (HTTP/1.1 and HTTP/2 by ALPN) verify the server against it; a client
//! trusting another certificate is refused with a clear error, plain HTTP on the TLS port
//! gets a 400 that says so, and the server keeps serving through all of it.

use std::path::{Path, PathBuf};
use std::process::Command;

use datalith::edn::{read_one, Edn};
use datalith_client::Client;

use crate::client::raw;
use crate::server;

/// `datalith cert --out DIR`; returns DIR/cert.pem.
fn make_pair(dir: &Path) -> PathBuf {
    let out = Command::new(env!("CARGO_BIN_EXE_datalith"))
        .args(["cert", "--out", dir.to_str().unwrap()])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    dir.join("cert.pem")
}

/// The server on `people` over TLS with `cert` and `key`, and `extra` options.
fn tls_server(cert: &Path, key: &Path, extra: &[&str]) -> server::Server {
    let mut args = vec![
        "--tls-cert",
        cert.to_str().unwrap(),
        "--tls-key",
        key.to_str().unwrap(),
    ];
    args.extend(extra);
    server::start(&["people"], &args)
}

/// `curl` over TLS trusting `cacert`: (exit code, HTTP version and status, body).
fn curl(cacert: &Path, args: &[&str], url: &str) -> (i32, String, String) {
    let out = Command::new("curl")
        .args(["-sS", "--cacert", cacert.to_str().unwrap()])
        .args(args)
        .args(["-w", "\n%{http_version} %{http_code}", url])
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout).to_string();
    let (body, status) = text.rsplit_once('\n').unwrap_or(("", &text));
    (
        out.status.code().unwrap_or(-1),
        status.to_string(),
        format!("{body}{}", String::from_utf8_lossy(&out.stderr)),
    )
}

#[test]
fn tls_round_trips_and_refuses_what_it_must() {
    let dir = tempfile::tempdir().unwrap();
    let cert = make_pair(&dir.path().join("tls"));
    let other = make_pair(&dir.path().join("other"));
    let key = dir.path().join("tls/key.pem");
    let s = tls_server(&cert, &key, &[]);
    assert!(s.base.starts_with("https://127.0.0.1:"), "{}", s.base);

    // The Rust client, trusting the server's certificate.
    let people = Client::builder(&s.base)
        .cacert_file(&cert)
        .unwrap()
        .build()
        .database("people");
    people
        .transact(
            "[{:db/ident :person/name :db/valueType :db.type/string \
              :db/cardinality :db.cardinality/one}]",
        )
        .unwrap();
    people.transact(r#"[{:person/name "Ann"}]"#).unwrap();
    let names = people
        .db()
        .unwrap()
        .q("[:find [?n ...] :where [_ :person/name ?n]]", &[])
        .unwrap();
    assert_eq!(names, read_one(r#"["Ann"]"#).unwrap());

    // Raw HTTP through curl: HTTP/1.1, and HTTP/2 chosen by ALPN.
    let q = s.url("/db/people/q");
    let body = r#"{:query "[:find ?n . :where [_ :person/name ?n]]"}"#;
    let cases: &[(&str, &str)] = &[
        // curl's protocol flag, the HTTP version and status it must report
        ("--http1.1", "1.1 200"),
        ("--http2", "2 200"),
    ];
    for (protocol, want) in cases {
        let (code, status, text) = curl(
            &cert,
            &[protocol, "-H", "Content-Type: application/edn", "-d", body],
            &q,
        );
        assert_eq!((code, status.as_str()), (0, *want), "{protocol}: {text}");
        let answer = read_one(text.trim()).unwrap();
        assert_eq!(
            field(&answer, ":result"),
            Edn::String("Ann".into()),
            "{protocol}"
        );
    }

    // Trusting another certificate: refused, saying why, in the client and in curl.
    let stranger = Client::builder(&s.base)
        .cacert_file(&other)
        .unwrap()
        .build()
        .database("people");
    let e = stranger.db().unwrap_err();
    assert_eq!(e.code.as_deref(), Some(datalith_client::TLS), "{e}");
    assert!(e.message.contains("certificate is not trusted"), "{e}");
    let (code, _, text) = curl(&other, &[], &s.url("/health"));
    assert_eq!(
        code, 60,
        "curl's 'peer certificate cannot be authenticated': {text}"
    );
    // The CLI says the same, as a user error.
    let out = Command::new(env!("CARGO_BIN_EXE_datalith"))
        .args(["query", "--connect", &s.base, "--cacert"])
        .arg(&other)
        .args(["people", "[:find ?x . :in ?x]", "1"])
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(stderr.contains("certificate is not trusted"), "{stderr}");

    // Plain HTTP on the TLS port: a 400 that says to use https://.
    let (status, text) = raw(
        &s.addr(),
        "GET /health HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n",
    );
    assert_eq!(status, 400, "{text}");
    assert!(text.contains(":datalith.error/tls-required"), "{text}");
    let plain = Client::new(&s.base.replace("https://", "http://")).database("people");
    let e = plain.db().unwrap_err();
    assert_eq!(
        (e.status, e.code.as_deref()),
        (400, Some(":datalith.error/tls-required")),
        "{e}"
    );
    // A broken handshake (a TLS record header, then nonsense) just closes.
    let (status, _) = raw(&s.addr(), b"\x16\x03\x01\x00\x05hello");
    assert_eq!(status, 0);

    // Still serving.
    assert_eq!(
        people
            .db()
            .unwrap()
            .q("[:find ?x . :in ?x]", &[read_one("7").unwrap()])
            .unwrap(),
        read_one("7").unwrap()
    );

    // https:// to a server without TLS: a TLS error, not a hang or a garbled answer.
    let cleartext = server::start(&["people"], &[]);
    let https = cleartext.base.replace("http://", "https://");
    let e = Client::builder(&https)
        .cacert_file(&cert)
        .unwrap()
        .build()
        .database("people")
        .db()
        .unwrap_err();
    assert_eq!(e.code.as_deref(), Some(datalith_client::TLS), "{e}");
    assert!(e.message.contains("TLS handshake failed"), "{e}");
}

/// The value under `key` in a map.
fn field(m: &Edn, key: &str) -> Edn {
    match m {
        Edn::Map(pairs) => pairs
            .iter()
            .find(|(k, _)| *k == Edn::kw(key))
            .map_or(Edn::Nil, |(_, v)| v.clone()),
        _ => Edn::Nil,
    }
}

/// Mutual TLS (`--tls-client-ca`): a client presenting a certificate that chains to the
/// given one is served (the Rust client, curl, the CLI through DATALITH_CLIENT_CERT/KEY); one
/// presenting none, or another, is refused in the handshake; the server keeps serving.
#[test]
fn client_certificates_are_required_with_a_client_ca() {
    let dir = tempfile::tempdir().unwrap();
    let cert = make_pair(&dir.path().join("tls"));
    let key = dir.path().join("tls/key.pem");
    // Two clients' own self-signed pairs: one trusted by the server, one not.
    let ann = make_pair(&dir.path().join("ann"));
    let ann_key = dir.path().join("ann/key.pem");
    let eve = make_pair(&dir.path().join("eve"));
    let eve_key = dir.path().join("eve/key.pem");
    let s = tls_server(&cert, &key, &["--tls-client-ca", ann.to_str().unwrap()]);
    let client = |pair: Option<(&Path, &Path)>| {
        let mut b = Client::builder(&s.base).cacert_file(&cert).unwrap();
        if let Some((c, k)) = pair {
            b = b.client_cert_files(c, k).unwrap();
        }
        b.build().database("people")
    };
    let seven = || read_one("7").unwrap();
    let q = "[:find ?x . :in ?x]";
    // Ann's certificate is let in.
    let ann_answers = || {
        assert_eq!(
            client(Some((&ann, &ann_key)))
                .db()
                .unwrap()
                .q(q, &[seven()])
                .unwrap(),
            seven()
        )
    };
    ann_answers();
    for (who, pair) in [
        ("no certificate", None),
        ("eve's", Some((eve.as_path(), eve_key.as_path()))),
    ] {
        // Refused in the handshake: no answer comes. Under TLS 1.3 the client may learn it as
        // the TLS alert or, having sent its request first, as the connection closed under it.
        let e = client(pair).db().unwrap_err();
        assert_eq!(e.status, 0, "{who}: {e}");
        assert!(
            e.code.as_deref() == Some(datalith_client::TLS)
                || e.message.contains("Broken pipe")
                || e.message.contains("reset")
                || e.message.contains("closed"),
            "{who}: {e}"
        );
    }
    // curl with and without the client's pair.
    let health = s.url("/health");
    let (code, status, text) = curl(
        &cert,
        &[
            "--cert",
            ann.to_str().unwrap(),
            "--key",
            ann_key.to_str().unwrap(),
        ],
        &health,
    );
    assert!(
        code == 0 && status.ends_with(" 200"),
        "{code} {status}: {text}"
    );
    let (code, _, text) = curl(&cert, &[], &health);
    assert_ne!(code, 0, "without a client certificate: {text}");
    // The CLI takes the pair from the environment, as it takes the token.
    let cli = |pair: Option<(&Path, &Path)>| {
        let mut c = Command::new(env!("CARGO_BIN_EXE_datalith"));
        c.args(["query", "--connect", &s.base, "--cacert"])
            .arg(&cert)
            .args(["people", q, "7"]);
        if let Some((cert, key)) = pair {
            c.env("DATALITH_CLIENT_CERT", cert)
                .env("DATALITH_CLIENT_KEY", key);
        }
        c.output().unwrap()
    };
    let out = cli(Some((&ann, &ann_key)));
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(String::from_utf8_lossy(&out.stdout).trim(), "7");
    // Refused: a TLS error (exit 1) or the connection closed under the request (exit 2), as
    // above; no answer printed.
    let out = cli(None);
    assert!(
        matches!(out.status.code(), Some(1 | 2)) && out.stdout.is_empty(),
        "{:?}: {}",
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
    // A refused client leaves the server serving.
    ann_answers();
}

/// Sends the server SIGHUP and waits (at most 20 s) until its log says every one of
/// `lines`; answers what it logged meanwhile.
fn hang_up_and_wait_for(s: &server::Server, lines: &[&str]) -> String {
    let log = || std::fs::read_to_string(s.dir.join("stderr.txt")).unwrap_or_default();
    let before = log().len();
    // SAFETY: a signal to the server process this test started.
    unsafe { libc::kill(s.pid() as i32, libc::SIGHUP) };
    let start = std::time::Instant::now();
    loop {
        let new = log()[before..].to_string();
        if lines.iter().all(|l| new.contains(l)) {
            return new;
        }
        assert!(
            start.elapsed() < std::time::Duration::from_secs(20),
            "no {lines:?} after SIGHUP: {new}"
        );
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
}

/// SIGHUP reads the certificate, its key and the token file again: new connections get the
/// renewed certificate and new requests the new tokens; files that do not read cleanly are
/// logged and the server keeps serving what it had.
#[test]
fn sighup_reloads_the_certificate_and_the_tokens_and_keeps_them_when_the_files_are_bad() {
    let dir = tempfile::tempdir().unwrap();
    let first = make_pair(&dir.path().join("first"));
    let second = make_pair(&dir.path().join("second"));
    let live = dir.path().join("live");
    std::fs::create_dir_all(&live).unwrap();
    let (cert, key, tokens) = (
        live.join("cert.pem"),
        live.join("key.pem"),
        live.join("tokens"),
    );
    let install = |pair: &Path| {
        std::fs::copy(pair, &cert).unwrap();
        std::fs::copy(pair.with_file_name("key.pem"), &key).unwrap();
    };
    let grant = |name: &str| {
        let line = format!("{name} admin * {}\n", crate::auth::sha256_hex(name));
        std::fs::write(&tokens, line).unwrap();
    };
    install(&first);
    grant("ann-secret");
    let s = tls_server(&cert, &key, &["--tokens", tokens.to_str().unwrap()]);
    let dbs = s.url("/dbs");
    let get = |trust: &Path, token: &str| {
        let bearer = format!("Authorization: Bearer {token}");
        let (code, status, text) = curl(trust, &["-H", &bearer], &dbs);
        (
            code,
            status.rsplit(' ').next().unwrap_or_default().to_string(),
            text,
        )
    };
    let hang_up_and_wait_for = |lines: &[&str]| hang_up_and_wait_for(&s, lines);
    // Rows: (trusted certificate, token) -> curl's exit code and the HTTP status.
    let expect = |rows: &[(&Path, &str, i32, &str)], when: &str| {
        for (trust, token, code, status) in rows {
            let (c, st, text) = get(trust, token);
            assert_eq!(
                (c, st.as_str()),
                (*code, *status),
                "{when}: trusting {}, {token}: {text}",
                trust.display()
            );
        }
    };
    expect(
        &[
            (&first, "ann-secret", 0, "200"),
            (&first, "bob-secret", 0, "401"),
            (&second, "ann-secret", 60, "000"),
        ],
        "at start",
    );

    install(&second);
    grant("bob-secret");
    let said = hang_up_and_wait_for(&["reloaded the TLS certificate", "reloaded the tokens"]);
    assert!(!said.contains("kept the previous"), "{said}");
    expect(
        &[
            (&second, "bob-secret", 0, "200"),
            (&second, "ann-secret", 0, "401"),
            (&first, "bob-secret", 60, "000"),
        ],
        "after the reload",
    );

    // Broken files: a certificate that is not PEM, a token line without a hash.
    std::fs::write(&cert, "not a certificate\n").unwrap();
    std::fs::write(&tokens, "carl admin *\n").unwrap();
    let said = hang_up_and_wait_for(&[
        "kept the previous TLS certificate",
        "kept the previous tokens",
    ]);
    assert!(said.contains(cert.to_str().unwrap()), "{said}");
    expect(
        &[
            (&second, "bob-secret", 0, "200"),
            (&second, "carl", 0, "401"),
        ],
        "after a failed reload",
    );
    // A key that does not go with the certificate is refused too.
    std::fs::copy(&first, &cert).unwrap();
    std::fs::copy(second.with_file_name("key.pem"), &key).unwrap();
    let said = hang_up_and_wait_for(&["kept the previous TLS certificate"]);
    assert!(said.contains("do not go together"), "{said}");
    expect(
        &[(&second, "bob-secret", 0, "200")],
        "after a mismatched pair",
    );
    // Three SIGHUPs of two sources: two reloaded at the first, both kept at the others (the
    // token file stayed broken).
    let (code, _, text) = curl(
        &second,
        &["-H", "Authorization: Bearer bob-secret"],
        &s.url("/metrics"),
    );
    assert_eq!(code, 0, "{text}");
    for want in [
        "datalith_reloads_total 2\n",
        "datalith_reload_failures_total 4\n",
    ] {
        assert!(text.contains(want), "{want}: {text}");
    }
    let (status, stderr) = s.stop();
    assert!(status.success(), "{stderr}");
}

/// A certificate authority of the test's own: its certificate, its key and its parameters
/// (to sign with).
struct Authority {
    params: rcgen::CertificateParams,
    key: rcgen::KeyPair,
    pem: String,
}

impl Authority {
    fn new() -> Authority {
        let key = rcgen::KeyPair::generate().unwrap();
        let mut params = rcgen::CertificateParams::new(Vec::<String>::new()).unwrap();
        params.is_ca = rcgen::IsCa::Ca(rcgen::BasicConstraints::Unconstrained);
        params.key_usages = vec![
            rcgen::KeyUsagePurpose::KeyCertSign,
            rcgen::KeyUsagePurpose::CrlSign,
        ];
        let pem = params.self_signed(&key).unwrap().pem();
        Authority { params, key, pem }
    }

    /// A client certificate of serial number `serial`, written as DIR/NAME.pem with its key
    /// as DIR/NAME-key.pem; returns both paths.
    fn issue(&self, dir: &Path, name: &str, serial: u64) -> (PathBuf, PathBuf) {
        let key = rcgen::KeyPair::generate().unwrap();
        let mut params = rcgen::CertificateParams::new(vec![name.to_string()]).unwrap();
        params.serial_number = Some(rcgen::SerialNumber::from(serial));
        params.extended_key_usages = vec![rcgen::ExtendedKeyUsagePurpose::ClientAuth];
        let issuer = rcgen::Issuer::from_params(&self.params, &self.key);
        let cert = params.signed_by(&key, &issuer).unwrap();
        let (c, k) = (
            dir.join(format!("{name}.pem")),
            dir.join(format!("{name}-key.pem")),
        );
        std::fs::write(&c, cert.pem()).unwrap();
        std::fs::write(&k, key.serialize_pem()).unwrap();
        (c, k)
    }

    /// Its revocation list number `number`, revoking the certificates of `serials` (PEM).
    fn revoking(&self, number: u64, serials: &[u64]) -> String {
        let revoked = serials
            .iter()
            .map(|s| rcgen::RevokedCertParams {
                serial_number: rcgen::SerialNumber::from(*s),
                revocation_time: rcgen::date_time_ymd(2026, 1, 2),
                reason_code: Some(rcgen::RevocationReason::KeyCompromise),
                invalidity_date: None,
            })
            .collect();
        rcgen::CertificateRevocationListParams {
            this_update: rcgen::date_time_ymd(2026, 1, 1),
            next_update: rcgen::date_time_ymd(2036, 1, 1),
            crl_number: rcgen::SerialNumber::from(number),
            issuing_distribution_point: None,
            revoked_certs: revoked,
            key_identifier_method: rcgen::KeyIdMethod::Sha256,
        }
        .signed_by(&rcgen::Issuer::from_params(&self.params, &self.key))
        .unwrap()
        .pem()
        .unwrap()
    }
}

/// Revocation lists (`--tls-client-crl`): a client certificate its issuer's list revokes is
/// refused in the handshake, one it does not revoke is served, one whose issuer has no list
/// is refused (its status unknown); a list replaced and read again on SIGHUP revokes from
/// then on.
#[test]
fn revoked_client_certificates_are_refused_and_the_list_is_read_again_on_sighup() {
    let dir = tempfile::tempdir().unwrap();
    let cert = make_pair(&dir.path().join("tls"));
    let key = dir.path().join("tls/key.pem");
    let (ours, other) = (Authority::new(), Authority::new());
    let ann = ours.issue(dir.path(), "ann", 1);
    let bob = ours.issue(dir.path(), "bob", 2);
    let carl = other.issue(dir.path(), "carl", 3);
    // Both authorities are trusted; only ours has a list, revoking bob.
    let (cas, crl) = (dir.path().join("cas.pem"), dir.path().join("crl.pem"));
    std::fs::write(&cas, format!("{}{}", ours.pem, other.pem)).unwrap();
    std::fs::write(&crl, ours.revoking(1, &[2])).unwrap();
    let s = tls_server(
        &cert,
        &key,
        &[
            "--tls-client-ca",
            cas.to_str().unwrap(),
            "--tls-client-crl",
            crl.to_str().unwrap(),
        ],
    );
    let health = s.url("/health");
    let served = |(c, k): &(PathBuf, PathBuf)| {
        let (code, status, text) = curl(
            &cert,
            &["--cert", c.to_str().unwrap(), "--key", k.to_str().unwrap()],
            &health,
        );
        let ok = code == 0 && status.ends_with(" 200");
        // Refused in the handshake, never with an HTTP status.
        assert!(ok || !status.ends_with(" 200"), "{code} {status}: {text}");
        ok
    };
    let rows = |want: &[(&str, &(PathBuf, PathBuf), bool)], when: &str| {
        for (who, pair, ok) in want {
            assert_eq!(served(pair), *ok, "{when}: {who}");
        }
    };
    rows(
        &[
            ("ann", &ann, true),
            ("bob", &bob, false),
            ("carl", &carl, false),
        ],
        "at start",
    );
    // A new list revoking ann as well, read on SIGHUP.
    std::fs::write(&crl, ours.revoking(2, &[1, 2])).unwrap();
    hang_up_and_wait_for(&s, &["reloaded the TLS certificate"]);
    rows(
        &[("ann", &ann, false), ("bob", &bob, false)],
        "after the reload",
    );
    // A list that is not one is refused by the reload, and the last one stays.
    std::fs::write(&crl, "not a list\n").unwrap();
    let said = hang_up_and_wait_for(&s, &["kept the previous TLS certificate"]);
    assert!(said.contains("no revocation list"), "{said}");
    rows(&[("ann", &ann, false)], "after a failed reload");
    let (status, stderr) = s.stop();
    assert!(status.success(), "{stderr}");
}
