//! `--connect URL`: `query`, `transact` and `pull` against a server (`datalith serve`)
//! instead of a directory; the DB argument is then the database's name on the server. The
//! token, if the server wants one, comes from `$DATALITH_TOKEN` (an argument would show in
//! `ps`); over `https://`, `--cacert FILE` names the certificates to trust. Answers print as
//! the local commands print them.

use std::path::Path;

use datalith::edn::{read_one, Edn};
use datalith::error as lib;
use datalith_client::{Client, ClientError, Connection, Report};

use crate::commands::read_eid;
use crate::error::{CliError, Result};
use crate::exec;
use crate::input::text_arg;
use crate::render::{find_headers, render, Format};

/// A server to connect to: its URL, the token from `$DATALITH_TOKEN`, the certificates of
/// `--cacert`.
pub struct Remote {
    client: Client,
    url: String,
}

impl Remote {
    /// The server at `url`, trusting the certificates in `cacert` over `https://`.
    pub fn new(url: &str, cacert: Option<&Path>) -> Result<Remote> {
        let mut builder = Client::builder(url);
        if let Ok(token) = std::env::var("DATALITH_TOKEN") {
            if !token.is_empty() {
                builder = builder.token(&token);
            }
        }
        if let Some(path) = cacert {
            builder = builder.cacert_file(path)?;
        }
        // Mutual TLS, as the token: from the environment, for every command that connects.
        match (
            std::env::var_os("DATALITH_CLIENT_CERT"),
            std::env::var_os("DATALITH_CLIENT_KEY"),
        ) {
            (Some(cert), Some(key)) => builder = builder.client_cert_files(cert, key)?,
            (None, None) => {}
            _ => {
                return Err(CliError::user(
                    "DATALITH_CLIENT_CERT and DATALITH_CLIENT_KEY go together: set both or neither",
                ))
            }
        }
        Ok(Remote {
            client: builder.build(),
            url: url.to_string(),
        })
    }

    /// The server's URL.
    pub fn url(&self) -> &str {
        &self.url
    }

    /// The client.
    pub fn client(&self) -> &Client {
        &self.client
    }

    /// The database served as `name`.
    pub fn database(&self, name: &str) -> Connection {
        self.client.database(name)
    }
}

/// The database `db` names on the server.
fn connect(remote: &Remote, db: &Path) -> Result<Connection> {
    let name = db
        .to_str()
        .ok_or_else(|| CliError::user(format!("{}: not a database name", db.display())))?;
    Ok(remote.database(name))
}

/// `query --connect URL DB QUERY [INPUT...]`.
pub fn query(
    url: &Remote,
    db: &Path,
    query: &str,
    inputs: &[String],
    format: Format,
) -> Result<String> {
    let (source, text) = text_arg(query)?;
    let form = read_one(&text).map_err(|e| CliError::read(&source, &e))?;
    if !exec::is_query(&form) {
        return Err(CliError::user(format!(
            "{source}: not a query (a query is a vector or map starting with :find)"
        )));
    }
    let mut all = Vec::new();
    let form = match exec::query_with_args(&form) {
        Some((q, args)) => {
            all.extend(args);
            q.clone()
        }
        None => form,
    };
    for (i, s) in inputs.iter().enumerate() {
        let (src, t) = text_arg(s)?;
        all.push(
            read_one(&t).map_err(|e| CliError::read(&format!("input {} ({src})", i + 1), &e))?,
        );
    }
    let result = connect(url, db)?.db()?.q(&form.to_string(), &all)?;
    Ok(render(&result, &find_headers(&form), format))
}

/// `transact --connect URL DB TXDATA`: each form one transaction, in order, as locally.
pub fn transact(url: &Remote, db: &Path, txdata: &str, format: Format) -> Result<String> {
    let (source, text) = text_arg(txdata)?;
    let forms = exec::forms(&source, &text)?;
    if forms.is_empty() {
        return Err(CliError::user(format!("{source}: no tx data")));
    }
    let connection = connect(url, db)?;
    let mut out = String::new();
    for form in &forms {
        let report = connection.transact(form)?;
        out.push_str(&render(&report_edn(&report)?, &[], format));
    }
    Ok(out)
}

/// `pull --connect URL DB PATTERN EID`.
pub fn pull(url: &Remote, db: &Path, pattern: &str, eid: &str, format: Format) -> Result<String> {
    let (source, text) = text_arg(pattern)?;
    read_one(&text).map_err(|e| CliError::read(&source, &e))?;
    let result = connect(url, db)?.db()?.pull(&text, read_eid(eid)?)?;
    Ok(render(&result, &[], format))
}

/// `copy --connect URL NAME DST`: the server's copy of its database `NAME` into the new
/// directory `DST`, then checked as `datalith check` checks (every page, then EAV against
/// AVE): a copy that does not check is removed and the command fails.
pub fn copy(url: &Remote, name: &Path, dst: &Path) -> Result<String> {
    if crate::open::exists(dst) {
        return Err(CliError::user(format!(
            "{} already holds a database; copy into a new directory",
            dst.display()
        )));
    }
    let created = !dst.exists();
    let pb = crate::progress::spinner("copying");
    pb.enable_steady_tick(std::time::Duration::from_millis(100));
    let bytes = connect(url, name)?.copy_to(dst);
    pb.finish_and_clear();
    let bytes = bytes?;
    let checked = crate::commands::check(dst);
    let unchecked = match &checked {
        Ok((_, true)) => None,
        Ok((report, false)) => Some(report.clone()),
        Err(e) => Some(e.to_string()),
    };
    if let Some(why) = unchecked {
        let _ = std::fs::remove_file(dst.join("data.mdb"));
        if created {
            let _ = std::fs::remove_dir_all(dst);
        }
        return Err(CliError::user(format!(
            "the copy of {} from {} did not check, and was removed: {why}",
            name.display(),
            url.url()
        )));
    }
    Ok(format!(
        "copied {} from {} ({bytes} bytes) to {}, checked\n",
        name.display(),
        url.url(),
        dst.display()
    ))
}

/// A report as the local `transact` prints one: `{:tx id :datoms n :tempids {...}}`.
pub fn report_edn(report: &Report) -> Result<Edn> {
    let datoms = report.tx_data()?.len();
    let tempids = report
        .tempids
        .iter()
        .map(|(k, v)| (Edn::String(k.clone()), Edn::Long(*v as i64)))
        .collect();
    Ok(Edn::Map(vec![
        (Edn::kw(":tx"), Edn::Long(report.tx as i64)),
        (Edn::kw(":datoms"), Edn::Long(datoms as i64)),
        (Edn::kw(":tempids"), Edn::Map(tempids)),
    ]))
}

impl From<ClientError> for CliError {
    fn from(e: ClientError) -> Self {
        // The server's code travels as a field: the command's categories are the library's.
        let category = match e.anomaly.as_deref() {
            Some(":cognitect.anomalies/incorrect")
            | Some(":cognitect.anomalies/not-found")
            | Some(":cognitect.anomalies/conflict") => lib::INVALID_ARGUMENT,
            Some(":cognitect.anomalies/forbidden") => lib::IO_FORBIDDEN,
            _ => lib::IO,
        };
        let mut fields = vec![("status", Edn::Long(e.status as i64))];
        if let Some(code) = &e.code {
            fields.push(("server-error", Edn::kw(code)));
        }
        CliError::categorized(category, e.to_string(), fields)
    }
}
