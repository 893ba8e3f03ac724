//! A server and one of its databases.

use std::path::Path;

use datalith::edn::Edn;
use ureq::tls::{parse_pem, Certificate, ClientCert, PemItem};

use crate::db::RemoteDb;
use crate::error::ClientError;
use crate::http::{field, Http};
use crate::report::Report;

/// A server (`http://host:port`), with a bearer token or none.
#[derive(Clone)]
pub struct Client {
    http: Http,
}

impl Client {
    /// A client of the server at `url`, without a token.
    pub fn new(url: &str) -> Client {
        Client {
            http: Http::new(url, None, None, None),
        }
    }

    /// A client that sends `token` (`Authorization: Bearer`).
    pub fn with_token(url: &str, token: &str) -> Client {
        Client {
            http: Http::new(url, Some(token.to_string()), None, None),
        }
    }

    /// A client with more than a URL: a token, the certificates to trust over `https://`.
    pub fn builder(url: &str) -> ClientBuilder {
        ClientBuilder {
            url: url.to_string(),
            token: None,
            roots: None,
            client_cert: None,
        }
    }

    /// The names of the databases the server lets this client read (`GET /dbs`).
    pub fn databases(&self) -> Result<Vec<String>, ClientError> {
        let answer = self.http.get("/dbs")?;
        match field(&answer, ":databases") {
            Some(Edn::Vector(names)) => Ok(names
                .into_iter()
                .filter_map(|n| match n {
                    Edn::String(n) => Some(n),
                    _ => None,
                })
                .collect()),
            _ => Err(ClientError::transport(format!(
                "an answer without :databases: {answer}"
            ))),
        }
    }

    /// The database served as `name` (nothing is asked of the server until it is used).
    pub fn database(&self, name: &str) -> Connection {
        Connection {
            http: self.http.clone(),
            name: name.to_string(),
        }
    }
}

/// How to reach a server: [`Client::builder`].
#[derive(Clone)]
pub struct ClientBuilder {
    url: String,
    token: Option<String>,
    roots: Option<Vec<Certificate<'static>>>,
    client_cert: Option<ClientCert>,
}

impl ClientBuilder {
    /// Sends `token` (`Authorization: Bearer`).
    pub fn token(mut self, token: &str) -> ClientBuilder {
        self.token = Some(token.to_string());
        self
    }

    /// Over `https://`, trusts the certificates in `pem` (a CA, or the server's self-signed
    /// certificate from `datalith cert`) instead of the public web's roots; the server's
    /// certificate must chain to one of them and name the URL's host.
    pub fn cacert_pem(mut self, pem: &[u8]) -> Result<ClientBuilder, ClientError> {
        let mut certs = Vec::new();
        for item in parse_pem(pem) {
            match item {
                Ok(PemItem::Certificate(c)) => certs.push(c.to_owned()),
                Ok(_) => {}
                Err(e) => return Err(ClientError::config(format!("not PEM: {e}"))),
            }
        }
        if certs.is_empty() {
            return Err(ClientError::config(
                "no certificate in it (a PEM file with -----BEGIN CERTIFICATE-----)",
            ));
        }
        self.roots.get_or_insert_with(Vec::new).extend(certs);
        Ok(self)
    }

    /// [`cacert_pem`](Self::cacert_pem) of a file's contents.
    pub fn cacert_file(self, path: impl AsRef<Path>) -> Result<ClientBuilder, ClientError> {
        let path = path.as_ref();
        let pem = std::fs::read(path)
            .map_err(|e| ClientError::config(format!("{}: {e}", path.display())))?;
        self.cacert_pem(&pem).map_err(|e| ClientError {
            message: format!("{}: {}", path.display(), e.message),
            ..e
        })
    }

    /// Over `https://`, presents the certificate chain in `cert_pem`, with its private key
    /// in `key_pem`, to a server that asks for client certificates (`datalith serve
    /// --tls-client-ca`: mutual TLS).
    pub fn client_cert_pem(
        mut self,
        cert_pem: &[u8],
        key_pem: &[u8],
    ) -> Result<ClientBuilder, ClientError> {
        let mut chain = Vec::new();
        for item in parse_pem(cert_pem) {
            match item {
                Ok(PemItem::Certificate(c)) => chain.push(c.to_owned()),
                Ok(_) => {}
                Err(e) => {
                    return Err(ClientError::config(format!(
                        "the certificate: not PEM: {e}"
                    )))
                }
            }
        }
        if chain.is_empty() {
            return Err(ClientError::config(
                "no certificate in the client certificate's file (a PEM file with -----BEGIN CERTIFICATE-----)",
            ));
        }
        let key = parse_pem(key_pem)
            .find_map(|item| match item {
                Ok(PemItem::PrivateKey(k)) => Some(k.to_owned()),
                _ => None,
            })
            .ok_or_else(|| {
                ClientError::config(
                    "no private key in the client key's file (PEM: PKCS#8, RSA or EC)",
                )
            })?;
        self.client_cert = Some(ClientCert::new_with_certs(&chain, key));
        Ok(self)
    }

    /// [`client_cert_pem`](Self::client_cert_pem) of two files' contents.
    pub fn client_cert_files(
        self,
        cert: impl AsRef<Path>,
        key: impl AsRef<Path>,
    ) -> Result<ClientBuilder, ClientError> {
        let read = |path: &Path| {
            std::fs::read(path).map_err(|e| ClientError::config(format!("{}: {e}", path.display())))
        };
        let (cert, key) = (cert.as_ref(), key.as_ref());
        self.client_cert_pem(&read(cert)?, &read(key)?)
            .map_err(|e| ClientError {
                message: format!("{} and {}: {}", cert.display(), key.display(), e.message),
                ..e
            })
    }

    /// The client.
    pub fn build(self) -> Client {
        Client {
            http: Http::new(&self.url, self.token, self.roots, self.client_cert),
        }
    }
}

/// One database on the server: what `datalith::Database` is in a process.
#[derive(Clone)]
pub struct Connection {
    pub(crate) http: Http,
    pub(crate) name: String,
}

impl std::fmt::Debug for Connection {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Connection({})", self.name)
    }
}

/// Tx data for [`Connection::transact`]: EDN text (`&str`), or EDN data.
pub trait IntoTxForm {
    /// The `:tx-data` field's value.
    fn into_form(self) -> Edn;
}

impl IntoTxForm for &str {
    fn into_form(self) -> Edn {
        Edn::String(self.to_string())
    }
}

impl IntoTxForm for &String {
    fn into_form(self) -> Edn {
        Edn::String(self.clone())
    }
}

impl IntoTxForm for Edn {
    fn into_form(self) -> Edn {
        self
    }
}

impl IntoTxForm for &Edn {
    fn into_form(self) -> Edn {
        self.clone()
    }
}

impl Connection {
    /// The database's name on the server.
    pub fn name(&self) -> &str {
        &self.name
    }

    pub(crate) fn path(&self, op: &str) -> String {
        format!("/db/{}/{op}", self.name)
    }

    /// Transacts and waits until the transaction is durable (as `Database::transact`).
    pub fn transact(&self, data: impl IntoTxForm) -> Result<Report, ClientError> {
        let body = Edn::Map(vec![(Edn::kw(":tx-data"), data.into_form())]);
        let (answer, unread) =
            self.http
                .post_write_deferring(&self.path("transact"), &body, ":tx-data")?;
        Report::from_answer(answer, unread)
    }

    /// The database's statistics (`GET /db/NAME/stat`): basis, datoms, attributes, sizes.
    pub fn stat(&self) -> Result<Edn, ClientError> {
        self.http.get(&self.path("stat"))
    }

    /// Writes a consistent copy of the database's data file into the new directory `dir`
    /// (`GET /db/NAME/copy`, for the admin role), as `datalith copy` does on the server's
    /// machine: `dir` then holds a database that opens as the server's did when the copy
    /// began (with `--log`, a node that joins from it applies only the log after it). The
    /// file comes in under a temporary name, is synced, then renamed to `data.mdb` and the
    /// directory synced: a copy that fails leaves no `data.mdb` behind. Returns its bytes.
    pub fn copy_to(&self, dir: impl AsRef<std::path::Path>) -> Result<u64, ClientError> {
        let dir = dir.as_ref();
        let io = |what: &str, e: std::io::Error| {
            ClientError::transport(format!("{}: {what}: {e}", dir.display()))
        };
        let target = dir.join("data.mdb");
        if target.exists() {
            return Err(ClientError::transport(format!(
                "{} already exists: copy into a new directory",
                target.display()
            )));
        }
        let created = !dir.exists();
        std::fs::create_dir_all(dir).map_err(|e| io("cannot create it", e))?;
        let temp = dir.join(format!(".data.mdb.copy-{}", std::process::id()));
        let written = (|| {
            // A database is private to its owner, as the server's own files are.
            let mut file = std::os::unix::fs::OpenOptionsExt::mode(
                std::fs::OpenOptions::new().write(true).create_new(true),
                0o600,
            )
            .open(&temp)
            .map_err(|e| io("cannot write the copy", e))?;
            let mut buffered = std::io::BufWriter::with_capacity(1 << 20, &mut file);
            let bytes = self.http.get_to(&self.path("copy"), &mut buffered)?;
            std::io::Write::flush(&mut buffered).map_err(|e| io("cannot write the copy", e))?;
            drop(buffered);
            file.sync_all().map_err(|e| io("cannot sync the copy", e))?;
            std::fs::rename(&temp, &target).map_err(|e| io("cannot name the copy", e))?;
            std::fs::File::open(dir)
                .and_then(|d| d.sync_all())
                .map_err(|e| io("cannot sync the directory", e))?;
            Ok(bytes)
        })();
        if written.is_err() {
            let _ = std::fs::remove_file(&temp);
            if created {
                let _ = std::fs::remove_dir_all(dir);
            }
        }
        written
    }

    /// The database's latest value, kept on the server for [`crate::LEASE_MS`] so that
    /// every read through it answers from that one value (as `Database::db`).
    pub fn db(&self) -> Result<RemoteDb, ClientError> {
        let body = Edn::Map(vec![
            (Edn::kw(":query"), Edn::String("[:find ?x . :in ?x]".into())),
            (Edn::kw(":args"), Edn::Vector(vec![Edn::Long(1)])),
            (Edn::kw(":lease-ms"), Edn::Long(crate::LEASE_MS as i64)),
        ]);
        let answer = self.http.post(&self.path("q"), &body)?;
        match field(&answer, ":basis-t") {
            Some(Edn::Long(basis)) => Ok(RemoteDb {
                connection: self.clone(),
                basis: basis as u64,
            }),
            _ => Err(ClientError::transport(format!(
                "an answer without :basis-t: {answer}"
            ))),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A client certificate's files that are not a certificate and its key are refused,
    /// saying which part is wrong; a real pair is taken.
    #[test]
    fn a_client_pair_that_is_not_one_is_refused_saying_why() {
        let pair = rcgen::generate_simple_self_signed(vec!["ann".to_string()]).unwrap();
        let (cert, key) = (pair.cert.pem(), pair.signing_key.serialize_pem());
        let cases: &[(&str, &str, Option<&str>)] = &[
            // certificate PEM, key PEM, the error's words (None: taken)
            (&cert, &key, None),
            ("", &key, Some("no certificate")),
            (
                "-----BEGIN CERTIFICATE-----\nnot base64!\n",
                &key,
                Some("not PEM"),
            ),
            (&cert, "", Some("no private key")),
            (&cert, &cert, Some("no private key")),
        ];
        for (c, k, want) in cases {
            let got =
                Client::builder("https://localhost:1").client_cert_pem(c.as_bytes(), k.as_bytes());
            match (got, want) {
                (Ok(_), None) => {}
                (Err(e), Some(words)) => assert!(e.message.contains(words), "{}", e.message),
                (Ok(_), Some(words)) => panic!("taken, wanted {words}"),
                (Err(e), None) => panic!("{}", e.message),
            }
        }
        let Err(e) = Client::builder("https://localhost:1")
            .client_cert_files("/no/such/cert.pem", "/no/such/key.pem")
        else {
            panic!("files that do not exist taken")
        };
        assert!(e.message.contains("/no/such/cert.pem"), "{}", e.message);
    }
}
