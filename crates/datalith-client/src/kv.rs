//! A program's key-value table on the server: what `Database::kv_table` gives in a process.
//! The same table by the same name (`sessions` is the catalog's `py/sessions` on both sides),
//! so a table written in process is read through the client and the other way round. Where
//! the embedded API writes `KvOp`s through the environment and reads a snapshot's `View`,
//! a [`KvTable`] does each as a request: `get`, `put`, `delete`, `write` (puts and deletes in
//! one transaction), `range` (the `Bound`s and `Direction` of `View::range`, read a page at a
//! time), `len` and `count_range`.

use std::ops::Bound;

use datalith::codec::Keyword;
use datalith::edn::Edn;
use datalith::kv::Direction;

use crate::connection::Connection;
use crate::error::ClientError;
use crate::http::field;

/// Entries a page of [`KvTable::range`] asks for.
pub const KV_PAGE: u64 = 1000;

/// One key-value table of a database on the server ([`Connection::kv_table`]).
#[derive(Clone)]
pub struct KvTable {
    connection: Connection,
    name: String,
}

impl std::fmt::Debug for KvTable {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "KvTable({}/{})", self.connection.name, self.name)
    }
}

impl Connection {
    /// The key-value table `name` of this database (as `Database::kv_table`). Nothing is
    /// asked of the server until it is used; the first write creates it, and reads of a table
    /// never written read an empty one.
    pub fn kv_table(&self, name: &str) -> KvTable {
        KvTable {
            connection: self.clone(),
            name: name.to_string(),
        }
    }

    /// The names of the database's key-value tables (as `Database::kv_table_names`).
    pub fn kv_table_names(&self) -> Result<Vec<String>, ClientError> {
        let answer = self.http.get(&self.path("kv-tables"))?;
        match field(&answer, ":result") {
            Some(Edn::Vector(names)) => Ok(names
                .into_iter()
                .filter_map(|n| match n {
                    Edn::String(n) => Some(n),
                    _ => None,
                })
                .collect()),
            _ => Err(unexpected("kv-tables", &answer)),
        }
    }
}

impl KvTable {
    /// The table's name.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// A read of the table (sent again if its connection broke before the answer).
    fn call(&self, op: &str, fields: Vec<(Edn, Edn)>) -> Result<Edn, ClientError> {
        let (path, body) = self.request(op, fields);
        self.connection.http.post(&path, &body)
    }

    /// A write to the table (never sent twice).
    fn call_write(&self, op: &str, fields: Vec<(Edn, Edn)>) -> Result<Edn, ClientError> {
        let (path, body) = self.request(op, fields);
        self.connection.http.post_write(&path, &body)
    }

    fn request(&self, op: &str, mut fields: Vec<(Edn, Edn)>) -> (String, Edn) {
        fields.insert(0, (Edn::kw(":table"), Edn::String(self.name.clone())));
        (self.connection.path(op), Edn::Map(fields))
    }

    /// The value of `key` (as `View::get`), `None` when absent.
    pub fn get(&self, key: &[u8]) -> Result<Option<Vec<u8>>, ClientError> {
        let answer = self.call("kv-get", vec![(Edn::kw(":key"), bytes_edn(key))])?;
        match field(&answer, ":result") {
            None | Some(Edn::Nil) => Ok(None),
            Some(v) => bytes_of(&v)
                .map(Some)
                .ok_or_else(|| unexpected("kv-get", &answer)),
        }
    }

    /// Sets `key` to `value` in one durable transaction (as `KvOp::put`).
    pub fn put(&self, key: &[u8], value: &[u8]) -> Result<(), ClientError> {
        let fields = vec![
            (Edn::kw(":key"), bytes_edn(key)),
            (Edn::kw(":value"), bytes_edn(value)),
        ];
        self.call_write("kv-put", fields).map(drop)
    }

    /// Removes `key` in one durable transaction (as `KvOp::delete`; an absent key is no
    /// error).
    pub fn delete(&self, key: &[u8]) -> Result<(), ClientError> {
        self.call_write("kv-delete", vec![(Edn::kw(":key"), bytes_edn(key))])
            .map(drop)
    }

    /// The `puts`, then the `deletes`, in one durable transaction (as `transact_kv` of their
    /// `KvOp`s).
    pub fn write(&self, puts: &[(&[u8], &[u8])], deletes: &[&[u8]]) -> Result<(), ClientError> {
        let puts = puts
            .iter()
            .map(|(k, v)| Edn::Vector(vec![bytes_edn(k), bytes_edn(v)]))
            .collect();
        let deletes = deletes.iter().map(|k| bytes_edn(k)).collect();
        let fields = vec![
            (Edn::kw(":put"), Edn::Vector(puts)),
            (Edn::kw(":delete"), Edn::Vector(deletes)),
        ];
        self.call_write("kv-write", fields).map(drop)
    }

    /// The entries whose keys lie within the bounds, in `direction` (as `View::range`), read
    /// [`KV_PAGE`] at a time as the iterator is drawn. Each page reads the latest state (the
    /// server keeps no snapshot between requests): the walk yields, once and in order, every
    /// key that stays in the range throughout.
    pub fn range(
        &self,
        lower: Bound<&[u8]>,
        upper: Bound<&[u8]>,
        direction: Direction,
    ) -> KvEntries {
        KvEntries {
            table: self.clone(),
            lower: lower.map(<[u8]>::to_vec),
            upper: upper.map(<[u8]>::to_vec),
            reverse: direction == Direction::Backward,
            page: Vec::new().into_iter(),
            done: false,
        }
    }

    /// How many entries the table holds (as `View::len`).
    pub fn len(&self) -> Result<u64, ClientError> {
        self.count_range(Bound::Unbounded, Bound::Unbounded)
    }

    /// Whether the table holds no entry.
    pub fn is_empty(&self) -> Result<bool, ClientError> {
        Ok(self.len()? == 0)
    }

    /// How many entries lie within the bounds (as `View::count_range`).
    pub fn count_range(
        &self,
        lower: Bound<&[u8]>,
        upper: Bound<&[u8]>,
    ) -> Result<u64, ClientError> {
        let answer = self.call("kv-count", bound_fields(&lower, &upper))?;
        match field(&answer, ":result") {
            Some(Edn::Long(n)) if n >= 0 => Ok(n as u64),
            _ => Err(unexpected("kv-count", &answer)),
        }
    }
}

/// The entries of [`KvTable::range`].
pub struct KvEntries {
    table: KvTable,
    lower: Bound<Vec<u8>>,
    upper: Bound<Vec<u8>>,
    reverse: bool,
    page: std::vec::IntoIter<(Vec<u8>, Vec<u8>)>,
    /// No page follows the one held.
    done: bool,
}

impl KvEntries {
    /// Reads the next page; its bound moves past it.
    fn fetch(&mut self) -> Result<(), ClientError> {
        let mut fields = bound_fields(
            &self.lower.as_ref().map(Vec::as_slice),
            &self.upper.as_ref().map(Vec::as_slice),
        );
        fields.push((Edn::kw(":limit"), Edn::Long(KV_PAGE as i64)));
        fields.push((Edn::kw(":reverse"), Edn::Bool(self.reverse)));
        let answer = self.table.call("kv-range", fields)?;
        let Some(Edn::Vector(rows)) = field(&answer, ":result") else {
            return Err(unexpected("kv-range", &answer));
        };
        let entries = rows
            .iter()
            .map(|row| match row {
                Edn::Vector(kv) if kv.len() == 2 => Some((bytes_of(&kv[0])?, bytes_of(&kv[1])?)),
                _ => None,
            })
            .collect::<Option<Vec<_>>>()
            .ok_or_else(|| unexpected("kv-range", &answer))?;
        let next = match self.reverse {
            false => field(&answer, ":next-start"),
            true => field(&answer, ":next-through"),
        };
        match next.as_ref().and_then(bytes_of) {
            // An empty page that names a next one would walk forever.
            Some(k) if !entries.is_empty() => match self.reverse {
                false => self.lower = Bound::Included(k),
                true => self.upper = Bound::Included(k),
            },
            _ => self.done = true,
        }
        self.page = entries.into_iter();
        Ok(())
    }
}

impl Iterator for KvEntries {
    type Item = Result<(Vec<u8>, Vec<u8>), ClientError>;

    fn next(&mut self) -> Option<Self::Item> {
        loop {
            if let Some(entry) = self.page.next() {
                return Some(Ok(entry));
            }
            if self.done {
                return None;
            }
            if let Err(e) = self.fetch() {
                self.done = true;
                return Some(Err(e));
            }
        }
    }
}

/// The request's fields for two bounds: `:start`/`:after` below, `:end`/`:through` above.
fn bound_fields(lower: &Bound<&[u8]>, upper: &Bound<&[u8]>) -> Vec<(Edn, Edn)> {
    let mut fields = Vec::new();
    match lower {
        Bound::Included(k) => fields.push((Edn::kw(":start"), bytes_edn(k))),
        Bound::Excluded(k) => fields.push((Edn::kw(":after"), bytes_edn(k))),
        Bound::Unbounded => {}
    }
    match upper {
        Bound::Included(k) => fields.push((Edn::kw(":through"), bytes_edn(k))),
        Bound::Excluded(k) => fields.push((Edn::kw(":end"), bytes_edn(k))),
        Bound::Unbounded => {}
    }
    fields
}

/// Bytes as the server takes them: `#bytes [...]`.
fn bytes_edn(bytes: &[u8]) -> Edn {
    Edn::Tagged(
        Keyword::new(None, "bytes"),
        Box::new(Edn::Vector(
            bytes.iter().map(|b| Edn::Long(*b as i64)).collect(),
        )),
    )
}

/// The bytes of a `#bytes [...]` answer.
fn bytes_of(form: &Edn) -> Option<Vec<u8>> {
    match form {
        Edn::Tagged(tag, inner) if tag.namespace().is_none() && tag.name() == "bytes" => {
            match &**inner {
                Edn::Vector(items) => items
                    .iter()
                    .map(|i| match i {
                        Edn::Long(n) => u8::try_from(*n).ok(),
                        _ => None,
                    })
                    .collect(),
                _ => None,
            }
        }
        _ => None,
    }
}

fn unexpected(op: &str, answer: &Edn) -> ClientError {
    ClientError::transport(format!("{op} answered what it does not answer: {answer}"))
}
