//! `Db`: a database value (a consistent snapshot), read by queries, pulls, entities and index
//! walks; and the tx data a `Connection` takes.

use datalith::edn::{read_one, to_edn_string};
use datalith::query::QueryOptions;
use datalith::raw::{Components, Index};
use datalith::{Edn, Eid, Input};
use std::sync::Mutex;

use pyo3::exceptions::{PyKeyError, PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyList, PyString, PyTuple};

use crate::convert::{datom_list, to_edn, to_py, Place, ToEdn};
use crate::errors::to_pyerr;
use crate::interrupt::interruptible;

/// A database value: every read of it sees the same state, however others transact
/// meanwhile. From `Connection.db()`.
#[pyclass(frozen, module = "datalith")]
pub(crate) struct Db {
    /// Behind a lock because the library's `Db` is not `Sync`; each call takes a clone (a
    /// reference count) and reads outside the lock, so threads read one `Db` at once.
    db: Mutex<datalith::Db>,
}

impl Db {
    pub(crate) fn new(db: datalith::Db) -> Db {
        Db { db: Mutex::new(db) }
    }

    /// The value, to read without the lock (and without the GIL).
    fn value(&self) -> datalith::Db {
        self.db.lock().unwrap_or_else(|p| p.into_inner()).clone()
    }
}

#[pymethods]
impl Db {
    /// Runs a Datalog query (EDN text) with this database as `$` and `inputs` bound to the
    /// rest of its `:in` (Python values, or other `Db`s). Ctrl-C cancels it; `timeout_ms`
    /// stops it with `datalith.Timeout`.
    #[pyo3(signature = (query, *inputs, timeout_ms = None))]
    fn q(
        &self,
        py: Python<'_>,
        query: &str,
        inputs: &Bound<'_, PyTuple>,
        timeout_ms: Option<u64>,
    ) -> PyResult<Py<PyAny>> {
        run_query(py, query, Some(self.value()), inputs, timeout_ms)
    }

    /// Runs a query as `q`, calling `each` with every item of a result that comes in rows (a
    /// set of tuples, or `[?x ...]`; no aggregate, `:order-by`, `:limit`, `:offset` or
    /// `:keys`) as the engine makes it, and returns `None`: when the plan starts with an
    /// attribute scan, the rows are made a part at a time, so the result is never whole in
    /// memory. Any other result is returned whole and `each` is not called. An exception
    /// raised by `each` stops the query and is raised here.
    #[pyo3(signature = (query, each, *inputs, timeout_ms = None))]
    fn q_each(
        &self,
        py: Python<'_>,
        query: &str,
        each: &Bound<'_, PyAny>,
        inputs: &Bound<'_, PyTuple>,
        timeout_ms: Option<u64>,
    ) -> PyResult<Option<Py<PyAny>>> {
        let mut all: Vec<Input> = vec![Input::Db(self.value())];
        for input in inputs.iter() {
            all.push(match input.cast::<Db>() {
                Ok(db) => Input::Db(db.get().value()),
                Err(_) => Input::Value(to_edn(&input, Place::Value)?),
            });
        }
        let each = each.clone().unbind();
        let raised: Mutex<Option<PyErr>> = Mutex::new(None);
        let (each, raised_at) = (&each, &raised);
        let ran = interruptible(py, move |ask| {
            let mut options = QueryOptions::default().interrupt(ask);
            if let Some(ms) = timeout_ms {
                options = options.timeout_ms(ms);
            }
            let mut sink = CallEach {
                each,
                raised: raised_at,
                set: false,
            };
            datalith::api::q_each(query, &all, &options, &mut sink)
        })?;
        if let Some(e) = raised.lock().unwrap_or_else(|p| p.into_inner()).take() {
            return Err(e);
        }
        match ran.map_err(|e| to_pyerr(py, e))? {
            None => Ok(None),
            Some(whole) => Ok(Some(to_py(py, &whole.result)?.unbind())),
        }
    }

    /// The entity `eid` (an id, an ident, or a lookup ref `(attribute, value)`) as `pattern`
    /// (EDN text, or a list such as `["*"]`) selects it; `None` if `eid` names no entity.
    fn pull(
        &self,
        py: Python<'_>,
        pattern: &Bound<'_, PyAny>,
        eid: &Bound<'_, PyAny>,
    ) -> PyResult<Py<PyAny>> {
        let pattern = pattern_text(pattern)?;
        let eid = entity_ref(py, eid)?;
        let db = self.value();
        let pulled = py.detach(move || db.pull(&pattern, eid));
        let pulled = pulled.map_err(|e| to_pyerr(py, e))?;
        Ok(to_py(py, &pulled)?.unbind())
    }

    /// `pull` for each of `eids`, in order (`None` for each that names no entity).
    fn pull_many(
        &self,
        py: Python<'_>,
        pattern: &Bound<'_, PyAny>,
        eids: &Bound<'_, PyAny>,
    ) -> PyResult<Py<PyAny>> {
        let pattern = pattern_text(pattern)?;
        let eids: Vec<Eid> = eids
            .try_iter()?
            .map(|e| entity_ref(py, &e?))
            .collect::<PyResult<_>>()?;
        let db = self.value();
        let pulled = py.detach(move || db.pull_many(&pattern, &eids));
        let pulled = pulled.map_err(|e| to_pyerr(py, e))?;
        Ok(PyList::new(
            py,
            pulled
                .iter()
                .map(|p| to_py(py, p))
                .collect::<PyResult<Vec<_>>>()?,
        )?
        .into_any()
        .unbind())
    }

    /// The entity `eid` names as a lazy mapping from attribute to value (read when asked);
    /// `None` if it names none.
    fn entity(slf: Bound<'_, Self>, eid: &Bound<'_, PyAny>) -> PyResult<Option<Entity>> {
        let py = slf.py();
        let eid = entity_ref(py, eid)?;
        let db = slf.get().value();
        let id = py
            .detach(move || db.entid(eid))
            .map_err(|e| to_pyerr(py, e))?;
        Ok(id.map(|id| Entity {
            db: slf.clone().unbind(),
            id,
        }))
    }

    /// The datoms of `index` (":eavt", ":aevt" or ":avet") that begin with `components` (in
    /// the index's order: for ":avet" an attribute, then a value, then an entity), as
    /// `datalith.Datom(e, a, v, tx, added)`.
    #[pyo3(signature = (index, *components))]
    fn datoms(
        &self,
        py: Python<'_>,
        index: &str,
        components: &Bound<'_, PyTuple>,
    ) -> PyResult<Py<PyAny>> {
        let index = Index::parse(index).ok_or_else(|| {
            PyValueError::new_err(format!(
                "{index:?} is not an index (:eavt, :aevt, :avet or :vaet)"
            ))
        })?;
        if components.len() > 3 {
            return Err(PyValueError::new_err(format!(
                "an index walk takes at most 3 components (got {})",
                components.len()
            )));
        }
        let db = self.value();
        let c = components_of(&db, py, index, components)?;
        let found = py
            .detach({
                let db = db.clone();
                move || db.datoms(index, &c)
            })
            .map_err(|e| to_pyerr(py, e))?;
        let rows = datom_list(py, db.schema(), &found)?;
        Ok(rows.try_iter()?.into_any().unbind())
    }

    /// The entities whose `attr` has `value`, ascending: raw AVE access, the Rust API's
    /// `IndexReader::entities_with` (no `Datom` is made).
    fn entities_with(
        &self,
        py: Python<'_>,
        attr: &Bound<'_, PyAny>,
        value: &Bound<'_, PyAny>,
    ) -> PyResult<Vec<u64>> {
        let db = self.value();
        let given = PyTuple::new(py, [attr, value])?;
        let c = components_of(&db, py, Index::Ave, &given)?;
        let (Some(a), Some(v)) = (c.a, c.v) else {
            unreachable!("an attribute and a value were given")
        };
        py.detach(move || db.reader().entities_with(a, &v))
            .map_err(|e| to_pyerr(py, e))
    }

    /// The values of `attr` of each entity of `eids`, in order, as one list (an entity without
    /// one adds nothing; a cardinality-many attribute adds each): raw EAV access, the Rust
    /// API's `IndexReader::values_of_each`. Ascending ids read fastest.
    fn values_of_each(
        &self,
        py: Python<'_>,
        eids: Vec<u64>,
        attr: &Bound<'_, PyAny>,
    ) -> PyResult<Py<PyAny>> {
        let db = self.value();
        let given = PyTuple::new(py, [attr])?;
        let Some(a) = components_of(&db, py, Index::Aev, &given)?.a else {
            unreachable!("an attribute was given")
        };
        let out = py
            .detach(move || {
                let mut out = Vec::with_capacity(eids.len());
                db.reader().values_of_each(&eids, a, &mut out).map(|()| out)
            })
            .map_err(|e| to_pyerr(py, e))?;
        let list = PyList::empty(py);
        for v in &out {
            list.append(to_py(py, &datalith::edn::edn_from_value(v))?)?;
        }
        Ok(list.into_any().unbind())
    }

    /// The database as it was at `t` (Datomic's `as-of`): `t` a transaction id (an `int`,
    /// as `basis_t` and a report's `tx` give it) or a `datetime`.
    fn as_of(&self, py: Python<'_>, t: &Bound<'_, PyAny>) -> PyResult<Db> {
        let t = time_point(t)?;
        let db = self.value();
        py.detach(move || db.as_of(t))
            .map(Db::new)
            .map_err(|e| to_pyerr(py, e))
    }

    /// Only what was asserted after `t` and is still there (Datomic's `since`).
    fn since(&self, py: Python<'_>, t: &Bound<'_, PyAny>) -> PyResult<Db> {
        let t = time_point(t)?;
        let db = self.value();
        py.detach(move || db.since(t))
            .map(Db::new)
            .map_err(|e| to_pyerr(py, e))
    }

    /// Every assertion and retraction (Datomic's `history`): patterns see each one with its
    /// transaction and `added` (`[?e ?a ?v ?tx ?added]`); `pull` and `entity` refuse it.
    fn history(&self) -> Db {
        Db::new(self.value().history())
    }

    /// The point this value is as of, if it is one.
    #[getter]
    fn as_of_t(&self) -> Option<u64> {
        self.value().as_of_t()
    }

    /// The point this value is since, if it is one.
    #[getter]
    fn since_t(&self) -> Option<u64> {
        self.value().since_t()
    }

    /// Whether this is a history value.
    #[getter]
    fn is_history(&self) -> bool {
        self.value().is_history()
    }

    /// The basis t of this value: the id of the last transaction it holds.
    #[getter]
    fn basis_t(&self, py: Python<'_>) -> PyResult<u64> {
        self.value().basis_t().map_err(|e| to_pyerr(py, e))
    }

    fn __repr__(&self) -> String {
        match self.value().basis_t() {
            Ok(t) => format!("<datalith.Db basis-t {t}>"),
            Err(_) => "<datalith.Db>".to_string(),
        }
    }
}

/// A point in time from Python: a transaction id, or a `datetime` (naive ones are UTC).
fn time_point(t: &Bound<'_, PyAny>) -> PyResult<datalith::TimePoint> {
    if let Ok(tx) = t.extract::<u64>() {
        return Ok(datalith::TimePoint::Tx(tx));
    }
    match to_edn(t, Place::Value) {
        Ok(Edn::Inst(ms)) => Ok(datalith::TimePoint::Instant(ms)),
        _ => Err(PyTypeError::new_err(
            "a point in time is a transaction id (int) or a datetime",
        )),
    }
}

/// `Db.q_each`'s sink: each item made into its Python value and given to the callable, with
/// the GIL taken for it; the callable's exception is kept and stops the query (as
/// cancelled).
struct CallEach<'a> {
    each: &'a Py<PyAny>,
    raised: &'a Mutex<Option<PyErr>>,
    /// The items make a set (each tuple a Python tuple, as in `q`'s set).
    set: bool,
}

impl datalith::query::ItemSink for CallEach<'_> {
    fn begin(&mut self, set: bool) -> Result<(), datalith::query::QueryError> {
        self.set = set;
        Ok(())
    }

    fn item(&mut self, item: &Edn) -> Result<(), datalith::query::QueryError> {
        let called = Python::attach(|py| {
            let value = crate::convert::item_to_py(py, item, self.set)?;
            self.each.call1(py, (value,)).map(drop)
        });
        called.map_err(|e| {
            *self.raised.lock().unwrap_or_else(|p| p.into_inner()) = Some(e);
            datalith::query::QueryError::Cancelled
        })
    }
}

/// Whether `query`'s result comes in rows (`Db.q_each` hands its items on): for the remote
/// client, which must know before it reads the answer.
#[pyfunction]
#[pyo3(name = "_comes_in_rows")]
pub(crate) fn comes_in_rows(query: &str) -> bool {
    datalith::query::parse(query).is_ok_and(|ast| ast.comes_in_rows())
}

/// Runs a Datalog query with every input given (Datomic's `d/q`): the databases among them
/// are `Db`s, in the order of the query's `:in`.
#[pyfunction]
#[pyo3(signature = (query, *inputs, timeout_ms = None))]
pub(crate) fn q(
    py: Python<'_>,
    query: &str,
    inputs: &Bound<'_, PyTuple>,
    timeout_ms: Option<u64>,
) -> PyResult<Py<PyAny>> {
    run_query(py, query, None, inputs, timeout_ms)
}

/// A query with `first` (a `Db.q`'s own value) ahead of `inputs`, cancellable by Ctrl-C.
fn run_query(
    py: Python<'_>,
    query: &str,
    first: Option<datalith::Db>,
    inputs: &Bound<'_, PyTuple>,
    timeout_ms: Option<u64>,
) -> PyResult<Py<PyAny>> {
    let mut all: Vec<Input> = first.into_iter().map(Input::Db).collect();
    for input in inputs.iter() {
        all.push(match input.cast::<Db>() {
            Ok(db) => Input::Db(db.get().value()),
            Err(_) => Input::Value(to_edn(&input, Place::Value)?),
        });
    }
    let ran = interruptible(py, move |ask| {
        let mut options = QueryOptions::default().interrupt(ask);
        if let Some(ms) = timeout_ms {
            options = options.timeout_ms(ms);
        }
        datalith::api::q_with(query, &all, &options).map(|o| o.result)
    })?;
    let result = ran.map_err(|e| to_pyerr(py, e))?;
    Ok(to_py(py, &result)?.unbind())
}

/// The components of an index walk, resolved (attributes by ident, entities by id, ident or
/// lookup ref, a ref attribute's value as an entity).
fn components_of(
    db: &datalith::Db,
    py: Python<'_>,
    index: Index,
    given: &Bound<'_, PyTuple>,
) -> PyResult<Components> {
    let order: &[char] = match index {
        Index::Eav => &['e', 'a', 'v'],
        Index::Aev => &['a', 'e', 'v'],
        Index::Ave => &['a', 'v', 'e'],
        Index::Vae => &['v', 'a', 'e'],
    };
    let mut slots: [Option<Bound<'_, PyAny>>; 3] = [None, None, None];
    for (slot, form) in order.iter().zip(given.iter()) {
        let i = match slot {
            'e' => 0,
            'a' => 1,
            _ => 2,
        };
        slots[i] = Some(form);
    }
    let mut c = Components::default();
    if let Some(a) = &slots[1] {
        let Edn::Keyword(k) = to_edn(a, Place::Keyword)? else {
            return Err(PyTypeError::new_err("an attribute component is a keyword"));
        };
        let attr = db.attr(&k).ok_or_else(|| {
            PyKeyError::new_err(format!("{k} is not an attribute of this database"))
        })?;
        c.a = Some(attr.id);
    }
    let resolve = |form: &Bound<'_, PyAny>| -> PyResult<u64> {
        let eid = entity_ref(py, form)?;
        db.entid(eid).map_err(|e| to_pyerr(py, e))?.ok_or_else(|| {
            PyKeyError::new_err(format!(
                "{} names no entity",
                form.repr().map(|r| r.to_string()).unwrap_or_default()
            ))
        })
    };
    if let Some(e) = &slots[0] {
        c.e = Some(resolve(e)?);
    }
    if let Some(v) = &slots[2] {
        // `:vaet`'s value is an entity, whatever the attribute.
        let is_ref = index == Index::Vae
            || c.a
                .and_then(|a| db.schema().get(a))
                .is_some_and(|attr| attr.is_ref());
        c.v = Some(match is_ref {
            true => datalith::codec::Value::Ref(resolve(v)?),
            false => {
                let value =
                    datalith::edn::value_from_edn(&to_edn(v, Place::Value)?).ok_or_else(|| {
                        PyValueError::new_err(format!(
                            "{} is not a value",
                            v.repr().map(|r| r.to_string()).unwrap_or_default()
                        ))
                    })?;
                match c.a {
                    Some(a) => db.index_value(a, value),
                    None => value,
                }
            }
        });
    }
    Ok(c)
}

/// An entity as a lazy mapping (`Db.entity`): each attribute is read when asked; a reference
/// reads as another `Entity`.
#[pyclass(frozen, module = "datalith")]
pub(crate) struct Entity {
    db: Py<Db>,
    id: u64,
}

#[pymethods]
impl Entity {
    /// The entity id.
    #[getter]
    fn id(&self) -> u64 {
        self.id
    }

    fn __getitem__(&self, py: Python<'_>, attr: &Bound<'_, PyAny>) -> PyResult<Py<PyAny>> {
        let key = attribute_text(attr)?;
        let pulled = self.pull(py, &format!("[{key}]"))?;
        let found = match pulled {
            Edn::Map(pairs) => pairs.into_iter().find(|(k, _)| to_edn_string(k) == key),
            _ => None,
        };
        match found {
            Some((_, v)) => self.navigable(py, &v),
            None => Err(PyKeyError::new_err(key)),
        }
    }

    /// The value of `attr`, or `default` when the entity has none.
    #[pyo3(signature = (attr, default = None))]
    fn get(
        &self,
        py: Python<'_>,
        attr: &Bound<'_, PyAny>,
        default: Option<Py<PyAny>>,
    ) -> PyResult<Py<PyAny>> {
        match self.__getitem__(py, attr) {
            Err(e) if e.is_instance_of::<PyKeyError>(py) => {
                Ok(default.unwrap_or_else(|| py.None()))
            }
            other => other,
        }
    }

    fn __contains__(&self, py: Python<'_>, attr: &Bound<'_, PyAny>) -> PyResult<bool> {
        Ok(self
            .keys(py)?
            .iter()
            .any(|k| *k == attribute_text(attr).unwrap_or_default()))
    }

    /// The attributes the entity has, as keywords.
    fn keys(&self, py: Python<'_>) -> PyResult<Vec<String>> {
        let Edn::Map(pairs) = self.pull(py, "[*]")? else {
            return Ok(Vec::new());
        };
        Ok(pairs
            .iter()
            .map(|(k, _)| to_edn_string(k))
            .filter(|k| k != ":db/id")
            .collect())
    }

    /// Every attribute and value at once, as a dict (Datomic's `touch`).
    fn touch(&self, py: Python<'_>) -> PyResult<Py<PyAny>> {
        Ok(to_py(py, &self.pull(py, "[*]")?)?.unbind())
    }

    fn __eq__(&self, other: &Bound<'_, PyAny>) -> bool {
        other.cast::<Entity>().is_ok_and(|o| o.get().id == self.id)
    }

    fn __hash__(&self) -> u64 {
        self.id
    }

    fn __repr__(&self) -> String {
        format!("<datalith.Entity {}>", self.id)
    }
}

impl Entity {
    fn pull(&self, py: Python<'_>, pattern: &str) -> PyResult<Edn> {
        let db = self.db.get().value();
        let id = self.id;
        let pattern = pattern.to_string();
        py.detach(move || db.pull(&pattern, id))
            .map_err(|e| to_pyerr(py, e))
    }

    /// A pulled value where every `{:db/id n}` alone is an `Entity`.
    fn navigable(&self, py: Python<'_>, v: &Edn) -> PyResult<Py<PyAny>> {
        let as_entity = |e: &Edn| match e {
            Edn::Map(pairs) if pairs.len() == 1 && to_edn_string(&pairs[0].0) == ":db/id" => {
                match pairs[0].1 {
                    Edn::Long(id) if id >= 0 => Some(id as u64),
                    _ => None,
                }
            }
            _ => None,
        };
        let entity = |id| -> PyResult<Py<PyAny>> {
            Ok(Py::new(
                py,
                Entity {
                    db: self.db.clone_ref(py),
                    id,
                },
            )?
            .into_any())
        };
        match v {
            e if as_entity(e).is_some() => entity(as_entity(e).unwrap_or_default()),
            Edn::Vector(items) | Edn::Set(items) | Edn::List(items)
                if !items.is_empty() && items.iter().all(|i| as_entity(i).is_some()) =>
            {
                let list = PyList::empty(py);
                for i in items {
                    list.append(entity(as_entity(i).unwrap_or_default())?)?;
                }
                Ok(list.into_any().unbind())
            }
            other => Ok(to_py(py, other)?.unbind()),
        }
    }
}

/// A pull pattern as EDN text: given as text, or as Python data (`["*"]`, where strings that
/// begin with `:` are attributes and `"*"` is the wildcard).
fn pattern_text(pattern: &Bound<'_, PyAny>) -> PyResult<String> {
    if let Ok(text) = pattern.cast::<PyString>() {
        return Ok(text.to_cow()?.into_owned());
    }
    let edn = to_edn(pattern, Place::Pattern)?;
    Ok(to_edn_string(&wildcards(edn)))
}

/// `"*"` in a pattern given as Python data is the wildcard symbol.
fn wildcards(e: Edn) -> Edn {
    match e {
        Edn::String(s) if s == "*" => Edn::Symbol(datalith::codec::Keyword::new(None, "*")),
        Edn::Vector(items) => Edn::Vector(items.into_iter().map(wildcards).collect()),
        Edn::Map(pairs) => Edn::Map(
            pairs
                .into_iter()
                .map(|(k, v)| (wildcards(k), wildcards(v)))
                .collect(),
        ),
        other => other,
    }
}

/// An attribute given as a `Keyword` or a `str` (":person/name"), as EDN text.
fn attribute_text(attr: &Bound<'_, PyAny>) -> PyResult<String> {
    match to_edn(attr, Place::Keyword)? {
        Edn::Keyword(k) => Ok(k.to_string()),
        _ => Err(PyTypeError::new_err(
            "an attribute is a keyword such as \":person/name\"",
        )),
    }
}

/// An entity reference: an id, an ident (a `Keyword` or a ":..." string), or a lookup ref
/// `(attribute, value)`.
fn entity_ref(py: Python<'_>, e: &Bound<'_, PyAny>) -> PyResult<Eid> {
    let edn = match e.cast::<PyTuple>().ok().filter(|t| t.len() == 2) {
        Some(t) => Edn::Vector(vec![
            to_edn(&t.get_item(0)?, Place::Keyword)?,
            to_edn(&t.get_item(1)?, Place::Value)?,
        ]),
        None => match e.cast::<PyList>().ok().filter(|l| l.len() == 2) {
            Some(l) => Edn::Vector(vec![
                to_edn(&l.get_item(0)?, Place::Keyword)?,
                to_edn(&l.get_item(1)?, Place::Value)?,
            ]),
            None => to_edn(e, Place::Keyword)?,
        },
    };
    Eid::from_edn(&edn).map_err(|err| to_pyerr(py, err))
}

/// Tx data as `Connection.transact` takes it: EDN text, or a list of statements, each an
/// entity dict or an `[op, e, a, v]` list (whose op and attribute may be plain ":..." strings,
/// and whose entity may be a lookup ref `(attribute, value)`).
pub(crate) fn tx_data(py: Python<'_>, data: &Bound<'_, PyAny>) -> PyResult<Edn> {
    if let Ok(text) = data.cast::<PyString>() {
        return read_one(&text.to_cow()?).map_err(|e| to_pyerr(py, datalith::Error::from(e)));
    }
    // One conversion for the whole data: each attribute's keyword is read once.
    let mut conv = ToEdn::default();
    let mut statements = Vec::new();
    for statement in data.try_iter()? {
        let statement = statement?;
        let is_list = statement.is_instance_of::<PyList>() || statement.is_instance_of::<PyTuple>();
        if !is_list {
            statements.push(conv.edn(&statement, Place::Value)?);
            continue;
        }
        let mut items = Vec::new();
        for (i, item) in statement.try_iter()?.enumerate() {
            let item = item?;
            items.push(match i {
                0 | 2 => conv.edn(&item, Place::Keyword)?,
                1 if item.is_instance_of::<PyTuple>() || item.is_instance_of::<PyList>() => {
                    match entity_ref_edn(&mut conv, &item)? {
                        Some(lookup) => lookup,
                        None => conv.edn(&item, Place::Value)?,
                    }
                }
                _ => conv.edn(&item, Place::Value)?,
            });
        }
        statements.push(Edn::Vector(items));
    }
    Ok(Edn::Vector(statements))
}

/// A two-element sequence as a lookup ref's EDN (its attribute a keyword).
fn entity_ref_edn(conv: &mut ToEdn, item: &Bound<'_, PyAny>) -> PyResult<Option<Edn>> {
    let parts: Vec<Bound<'_, PyAny>> = item.try_iter()?.collect::<PyResult<_>>()?;
    if parts.len() != 2 {
        return Ok(None);
    }
    Ok(Some(Edn::Vector(vec![
        conv.edn(&parts[0], Place::Keyword)?,
        conv.edn(&parts[1], Place::Value)?,
    ])))
}
