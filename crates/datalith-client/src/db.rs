//! One database value on the server: what `datalith::Db` is in a process.

use datalith::edn::{edn_from_value, Edn};
use datalith::query::ItemSink;
use datalith::Eid;

use crate::connection::Connection;
use crate::error::ClientError;
use crate::http::{field, take_field, take_fields};

/// A database value, named by its basis and kept by the server for a lease.
#[derive(Clone)]
pub struct RemoteDb {
    pub(crate) connection: Connection,
    pub(crate) basis: u64,
}

impl std::fmt::Debug for RemoteDb {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "RemoteDb({} at basis-t {})",
            self.connection.name, self.basis
        )
    }
}

/// An entity identifier as EDN: an id, an ident, or a lookup ref.
fn eid_edn(e: Eid) -> Edn {
    match e {
        Eid::Id(id) => Edn::Long(id as i64),
        Eid::Ident(k) => Edn::Keyword(k),
        Eid::Lookup(a, v) => Edn::Vector(vec![Edn::Keyword(a), edn_from_value(&v)]),
    }
}

impl RemoteDb {
    /// The id of the last transaction in this value (as `Db::basis_t`).
    pub fn basis_t(&self) -> u64 {
        self.basis
    }

    fn read(&self, op: &str, fields: Vec<(Edn, Edn)>) -> Result<Edn, ClientError> {
        let answer = self.answer(op, fields)?;
        Ok(take_field(answer, ":result").unwrap_or(Edn::Nil))
    }

    /// The whole answer map of a read of this value.
    fn answer(&self, op: &str, mut fields: Vec<(Edn, Edn)>) -> Result<Edn, ClientError> {
        fields.push((Edn::kw(":basis-t"), Edn::Long(self.basis as i64)));
        self.connection
            .http
            .post(&self.connection.path(op), &Edn::Map(fields))
    }

    /// This value as an input of a query on another database of the same server
    /// (`#datalith/db ["name" basis-t]`): the query reads this value, as `datalith::q` does
    /// with several `Db` inputs, while the server keeps it (this value's lease).
    pub fn as_input(&self) -> Edn {
        Edn::Tagged(
            datalith::Keyword::parse("datalith/db"),
            Box::new(Edn::Vector(vec![
                Edn::String(self.connection.name.clone()),
                Edn::Long(self.basis as i64),
            ])),
        )
    }

    /// Runs a query whose result is a collection and gives it `page` rows at a time, each
    /// page a request (`:limit`, `:offset`) of this same value, which each request keeps
    /// leased for [`crate::LEASE_MS`] more. The server runs the query whole for the first
    /// page (its engine has no cursor) and keeps the result for the next ones
    /// (`--page-cache-bytes`), which are slices of it.
    pub fn q_pages(&self, query: &str, inputs: &[Edn], page: u64) -> Pages {
        Pages {
            db: self.clone(),
            query: query.to_string(),
            inputs: inputs.to_vec(),
            page,
            next: Some(0),
        }
    }

    /// Runs a query; `inputs` bind to `:in` after `$` (as `Db::q`).
    pub fn q(&self, query: &str, inputs: &[Edn]) -> Result<Edn, ClientError> {
        self.read(
            "q",
            vec![
                (Edn::kw(":query"), Edn::String(query.to_string())),
                (Edn::kw(":args"), Edn::Vector(inputs.to_vec())),
            ],
        )
    }

    /// [`RemoteDb::q`], handing a collection result's items to `sink` as the answer
    /// arrives, as `Db::q_each` does in a process: when the query's result comes in rows
    /// (`datalith::query::QueryAst::comes_in_rows`: a relation or `[?x ...]`, no aggregate,
    /// `:order-by`, `:limit`, `:offset` or `:keys`), each item is read as soon as its text is
    /// whole and handed on, and `None` is returned; the server writes such an answer as its
    /// query runs, so neither side holds the whole result. Any other query's result comes
    /// whole (`Some`), and the sink sees nothing. A sink's error stops the reading (the
    /// connection is dropped) and is returned under its category.
    pub fn q_each(
        &self,
        query: &str,
        inputs: &[Edn],
        sink: &mut dyn ItemSink,
    ) -> Result<Option<Edn>, ClientError> {
        let in_rows = datalith::query::parse(query).is_ok_and(|ast| ast.comes_in_rows());
        if !in_rows {
            return self.q(query, inputs).map(Some);
        }
        let fields = vec![
            (Edn::kw(":query"), Edn::String(query.to_string())),
            (Edn::kw(":args"), Edn::Vector(inputs.to_vec())),
            (Edn::kw(":basis-t"), Edn::Long(self.basis as i64)),
        ];
        self.connection
            .http
            .post_each(&self.connection.path("q"), &Edn::Map(fields), sink)?;
        Ok(None)
    }

    /// Runs a query and answers its result with the plan the engine followed (as
    /// `Db::explain`), the plan as the server gives it: `{:query .. :rows N :clauses [..]
    /// :steps [{:step .. :index "AVE" :estimated N :actual N :clauses [..]} ..]}`.
    pub fn explain(&self, query: &str, inputs: &[Edn]) -> Result<(Edn, Edn), ClientError> {
        let answer = self.answer(
            "q",
            vec![
                (Edn::kw(":query"), Edn::String(query.to_string())),
                (Edn::kw(":args"), Edn::Vector(inputs.to_vec())),
                (Edn::kw(":explain"), Edn::Bool(true)),
            ],
        )?;
        let [result, plan] = take_fields(answer, [":result", ":plan"]);
        Ok((result.unwrap_or(Edn::Nil), plan.unwrap_or(Edn::Nil)))
    }

    /// Pulls `pattern` for the entity `e` names; nil when it names none (as `Db::pull`).
    pub fn pull(&self, pattern: &str, e: impl Into<Eid>) -> Result<Edn, ClientError> {
        self.read(
            "pull",
            vec![
                (Edn::kw(":selector"), Edn::String(pattern.to_string())),
                (Edn::kw(":eid"), eid_edn(e.into())),
            ],
        )
    }

    /// Pulls `pattern` for several entities (as `Db::pull_many`).
    pub fn pull_many<E: Into<Eid> + Clone>(
        &self,
        pattern: &str,
        es: &[E],
    ) -> Result<Vec<Edn>, ClientError> {
        let eids = es.iter().map(|e| eid_edn(e.clone().into())).collect();
        match self.read(
            "pull-many",
            vec![
                (Edn::kw(":selector"), Edn::String(pattern.to_string())),
                (Edn::kw(":eids"), Edn::Vector(eids)),
            ],
        )? {
            Edn::Vector(items) => Ok(items),
            other => Err(ClientError::transport(format!(
                "pull-many answered {other}, not a vector"
            ))),
        }
    }
}

/// The pages of a query's result: [`RemoteDb::q_pages`].
pub struct Pages {
    db: RemoteDb,
    query: String,
    inputs: Vec<Edn>,
    page: u64,
    /// The offset of the next page; `None` after the last.
    next: Option<u64>,
}

impl Iterator for Pages {
    type Item = Result<Vec<Edn>, ClientError>;

    fn next(&mut self) -> Option<Self::Item> {
        let offset = self.next.take()?;
        let fields = vec![
            (Edn::kw(":query"), Edn::String(self.query.clone())),
            (Edn::kw(":args"), Edn::Vector(self.inputs.clone())),
            (Edn::kw(":limit"), Edn::Long(self.page as i64)),
            (Edn::kw(":offset"), Edn::Long(offset as i64)),
            (Edn::kw(":lease-ms"), Edn::Long(crate::LEASE_MS as i64)),
        ];
        let answer = match self.db.answer("q", fields) {
            Ok(answer) => answer,
            Err(e) => return Some(Err(e)),
        };
        if let Some(Edn::Long(next)) = field(&answer, ":next-offset") {
            // A server that does not move on would page forever.
            if next as u64 > offset {
                self.next = Some(next as u64);
            }
        }
        match take_field(answer, ":result") {
            Some(Edn::Set(rows) | Edn::Vector(rows) | Edn::List(rows)) => Some(Ok(rows)),
            other => Some(Err(ClientError::transport(format!(
                "a page that is not a collection: {}",
                other.unwrap_or(Edn::Nil)
            )))),
        }
    }
}
