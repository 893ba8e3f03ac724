//! The token file, authentication and roles.

use super::*;

fn tokens() -> Tokens {
    let served = vec!["people".to_string(), "films".to_string()];
    let h = |t: &str| hash::to_hex(&hash::sha256(t.as_bytes()));
    let text = format!(
        "# name role db hash\n\
         reader read people {}\n\
         writer write people {}\n\
         writer read films {}  # the same token, another database\n\
         root admin * {}\n",
        h("r-token"),
        h("w-token"),
        h("w-token"),
        h("a-token"),
    );
    Tokens::from_grants(file::parse(&text, &served, false).unwrap())
}

#[test]
fn roles_per_database() {
    let t = tokens();
    let cases: &[(&str, &str, Option<Role>)] = &[
        ("Bearer r-token", "people", Some(Role::Read)),
        ("Bearer r-token", "films", None),
        ("Bearer w-token", "people", Some(Role::Write)),
        ("Bearer w-token", "films", Some(Role::Read)),
        ("Bearer a-token", "films", Some(Role::Admin)),
        ("bearer a-token", "people", Some(Role::Admin)),
    ];
    for (header, db, want) in cases {
        let access = t.authenticate(Some(header)).unwrap();
        assert_eq!(access.role_on(db), *want, "{header} {db}");
    }
    let access = t.authenticate(Some("Bearer r-token")).unwrap();
    assert!(access.require("people", Role::Read).is_ok());
    let e = access.require("people", Role::Write).unwrap_err();
    assert_eq!(e.category, codes::FORBIDDEN);
    assert!(e.message.contains("\"reader\" has read"), "{}", e.message);
}

#[test]
fn missing_wrong_and_malformed_tokens_are_unauthorized() {
    let t = tokens();
    for header in [
        None,
        Some("Bearer nope"),
        Some("Basic abc"),
        Some("Bearer "),
    ] {
        let e = t.authenticate(header).unwrap_err();
        assert_eq!(e.category, codes::UNAUTHORIZED, "{header:?}");
    }
}

#[test]
fn wrong_lines_are_refused_with_their_number() {
    let served = vec!["people".to_string()];
    let ok = hash::to_hex(&hash::sha256(b"t"));
    let cases = [
        (format!("a read people {ok} extra"), "line 1: 5 words"),
        (format!("\n\na boss people {ok}"), "line 3: role \"boss\""),
        (
            format!("a read films {ok}"),
            "database \"films\" is not served",
        ),
        ("a read people abc".to_string(), "64 hex digits"),
        (format!("a read people {}", "g".repeat(64)), "64 hex digits"),
    ];
    for (text, want) in cases {
        let e = file::parse(&text, &served, false).unwrap_err();
        assert!(e.contains(want), "{text}: {e}");
    }
}

#[test]
fn hashes_compare_whole() {
    let a = hash::sha256(b"x");
    let mut b = a;
    assert!(hash::same(&a, &b));
    b[31] ^= 1;
    assert!(!hash::same(&a, &b));
    assert_eq!(hash::from_hex(&hash::to_hex(&a)), Some(a));
    assert_eq!(
        hash::to_hex(&hash::sha256(b"abc")),
        "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
    );
}
