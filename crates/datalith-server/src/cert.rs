//! `datalith cert --out DIR [--name NAME...]`: a self-signed certificate and its key, to try
//! TLS with (`datalith serve --tls-cert DIR/cert.pem --tls-key DIR/key.pem`, clients
//! `--cacert DIR/cert.pem`). A certificate for a service others rely on comes from a
//! certificate authority; this one is trusted only by clients told to trust it.

use std::io::Write;
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};

use datalith::edn::{inst_text, Edn};
use rcgen::{CertificateParams, DistinguishedName, DnType, KeyPair};

use crate::error::{Result, ServerError};

/// `datalith cert`.
#[derive(Debug, Clone, clap::Args)]
pub struct CertArgs {
    /// Directory to write `cert.pem` and `key.pem` in (created if missing; existing files
    /// are never overwritten).
    #[arg(long, value_name = "DIR")]
    pub out: PathBuf,
    /// A host name or IP address the certificate is for (repeatable; default localhost,
    /// 127.0.0.1 and ::1). Clients check the name they connect to against these.
    #[arg(long = "name", value_name = "NAME")]
    pub names: Vec<String>,
}

/// The names a certificate is made for when none is given.
const LOOPBACK_NAMES: [&str; 3] = ["localhost", "127.0.0.1", "::1"];

/// Writes `cert.pem` and `key.pem` into `args.out`; returns what to tell the user.
pub fn make(args: &CertArgs) -> Result<String> {
    let names: Vec<String> = match args.names.is_empty() {
        true => LOOPBACK_NAMES.iter().map(|n| n.to_string()).collect(),
        false => args.names.clone(),
    };
    let (cert, key) = self_signed(&names)?;
    std::fs::create_dir_all(&args.out).map_err(|e| file_error(&args.out, e))?;
    let cert_path = args.out.join("cert.pem");
    let key_path = args.out.join("key.pem");
    for path in [&cert_path, &key_path] {
        if path.exists() {
            return Err(ServerError::invalid(format!(
                "{} exists: not overwritten (remove it, or give another --out)",
                path.display()
            ))
            .with("path", Edn::String(path.display().to_string())));
        }
    }
    write_new(&key_path, &key, 0o600)?;
    write_new(&cert_path, &cert, 0o644)?;
    Ok(format!(
        "wrote {cert} (a self-signed certificate for {names}, valid a year) and {key} (its \
         private key, readable by you alone)\n\
         serve:   datalith serve DB --tls-cert {cert} --tls-key {key}\n\
         connect: datalith query --connect https://localhost:7171 --cacert {cert} DB QUERY\n",
        cert = cert_path.display(),
        key = key_path.display(),
        names = names.join(", "),
    ))
}

/// A self-signed certificate for `names` and its key, both PEM.
pub fn self_signed(names: &[String]) -> Result<(String, String)> {
    // rcgen takes any ASCII as a DNS name; a client checks the name it connects to by the
    // rules of host names, so a name no client could match is refused here.
    for name in names {
        if rustls::pki_types::ServerName::try_from(name.as_str()).is_err() {
            return Err(ServerError::invalid(format!(
                "--name {}: not a host name or IP address",
                datalith::edn::to_edn_string(&Edn::String(name.clone()))
            ))
            .with("name", Edn::String(name.clone())));
        }
    }
    let mut params = CertificateParams::new(names.to_vec()).map_err(|e| {
        ServerError::invalid(format!(
            "--name {}: not a host name or IP address ({e})",
            names.join(" ")
        ))
    })?;
    let mut subject = DistinguishedName::new();
    subject.push(DnType::CommonName, format!("{} (datalith cert)", names[0]));
    params.distinguished_name = subject;
    let (year, month) = this_month();
    // From the first of this month, for a year and a month: at least a year from today.
    params.not_before = rcgen::date_time_ymd(year, month, 1);
    params.not_after = match month {
        12 => rcgen::date_time_ymd(year + 2, 1, 1),
        m => rcgen::date_time_ymd(year + 1, m + 1, 1),
    };
    let key =
        KeyPair::generate().map_err(|e| ServerError::invalid(format!("making a key: {e}")))?;
    let cert = params
        .self_signed(&key)
        .map_err(|e| ServerError::invalid(format!("making the certificate: {e}")))?;
    Ok((cert.pem(), key.serialize_pem()))
}

/// The year and month now, in UTC.
fn this_month() -> (i32, u8) {
    let ms = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_millis() as i64);
    // `inst_text` writes `YYYY-MM-DDT...`.
    let text = inst_text(ms);
    let year = text.get(0..4).and_then(|y| y.parse().ok()).unwrap_or(2026);
    let month = text.get(5..7).and_then(|m| m.parse().ok()).unwrap_or(1);
    (year, month)
}

/// Writes a file that must not exist yet, with `mode`.
fn write_new(path: &Path, text: &str, mode: u32) -> Result<()> {
    let mut file = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(mode)
        .open(path)
        .map_err(|e| file_error(path, e))?;
    file.write_all(text.as_bytes())
        .and_then(|_| file.sync_all())
        .map_err(|e| file_error(path, e))
}

fn file_error(path: &Path, e: std::io::Error) -> ServerError {
    let e = ServerError::from(e);
    ServerError {
        message: format!("{}: {}", path.display(), e.message),
        ..e
    }
    .with("path", Edn::String(path.display().to_string()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_made_pair_serves_and_bad_names_are_refused() {
        let dir = tempfile::tempdir().unwrap();
        let args = CertArgs {
            out: dir.path().join("tls"),
            names: vec![],
        };
        let said = make(&args).unwrap();
        assert!(said.contains("localhost, 127.0.0.1, ::1"), "{said}");
        let (cert, key) = (args.out.join("cert.pem"), args.out.join("key.pem"));
        crate::tls::acceptor(&cert, &key, None, None).unwrap();
        let mode = std::fs::metadata(&key).unwrap().permissions();
        assert_eq!(
            std::os::unix::fs::PermissionsExt::mode(&mode) & 0o777,
            0o600
        );
        // A second run leaves the pair alone.
        let again = make(&args).unwrap_err();
        assert!(
            again.message.contains("not overwritten"),
            "{}",
            again.message
        );
        let cases: &[(&[&str], bool)] = &[
            // names, accepted
            (&["db.example"], true),
            (&["10.0.0.7", "db.example"], true),
            (&["not a name"], false),
            (&["db..example"], false),
            (&["-db.example"], false),
        ];
        for (names, accepted) in cases {
            let names: Vec<String> = names.iter().map(|n| n.to_string()).collect();
            assert_eq!(self_signed(&names).is_ok(), *accepted, "{names:?}");
        }
    }
}
