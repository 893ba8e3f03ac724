//! What the examples share: workload Q's people (20,000 from seed 42) as bulk-load datoms,
//! and the schema of their five attributes.

use datalith::codec::{Keyword, Value};
use datalith::raw::{EntityId, USER_PARTITION_START};
use datalith::TxData;
use datalith_testdata::AttrValue;

/// The five attributes of a generated person, all cardinality one.
pub fn people_schema() -> TxData {
    let text =
        "[{:db/ident :name :db/valueType :db.type/string :db/cardinality :db.cardinality/one}
      {:db/ident :last-name :db/valueType :db.type/string :db/cardinality :db.cardinality/one}
      {:db/ident :sex :db/valueType :db.type/keyword :db/cardinality :db.cardinality/one}
      {:db/ident :age :db/valueType :db.type/long :db/cardinality :db.cardinality/one}
      {:db/ident :salary :db/valueType :db.type/long :db/cardinality :db.cardinality/one}]";
    TxData::from_edn(&text.parse().unwrap()).unwrap()
}

/// Every datom of `n` generated people, person `p` as entity `USER_PARTITION_START + p.id`.
pub fn people_datoms(n: u64) -> Vec<(EntityId, Keyword, Value)> {
    let mut datoms = Vec::new();
    for p in datalith_testdata::generate(n, 42) {
        let e = USER_PARTITION_START + p.id;
        for (a, v) in p.attributes() {
            let v = match v {
                AttrValue::String(s) => Value::string(s),
                AttrValue::Keyword(s) => Value::keyword(s),
                AttrValue::Long(n) => Value::Long(n),
            };
            datoms.push((e, Keyword::parse(a), v));
        }
    }
    datoms
}
