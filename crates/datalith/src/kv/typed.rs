//! Typed keys and values: `Value`s encoded with the order-preserving codec, so a range scan
//! over typed keys walks them in value order (longs numerically, strings by UTF-8, tuples
//! element by element).

use std::ops::Bound;

use super::api::KvOp;
use super::error::KvError;
use super::table::Table;
use super::view::{Direction, View};
use crate::codec::{self, Value};

fn typed_err(table: &Table, e: codec::CodecError) -> KvError {
    KvError::WrongType {
        table: table.name().to_string(),
        expected: "a typed value",
        found: e.to_string(),
    }
}

impl KvOp {
    /// Sets typed `key` to typed `value` in a plain table.
    pub fn put_typed(table: &Table, key: &Value, value: &Value) -> KvOp {
        KvOp::put(
            table,
            codec::encode_to_vec(key),
            codec::encode_to_vec(value),
        )
    }

    /// Removes typed `key`.
    pub fn delete_typed(table: &Table, key: &Value) -> KvOp {
        KvOp::delete(table, codec::encode_to_vec(key))
    }

    /// Adds typed `value` to the set of typed `key` in a list table.
    pub fn list_add_typed(table: &Table, key: &Value, value: &Value) -> KvOp {
        KvOp::list_add(
            table,
            codec::encode_to_vec(key),
            codec::encode_to_vec(value),
        )
    }
}

impl View<'_> {
    /// The typed value under typed `key`; a value that was not written typed is a
    /// [`KvError::WrongType`].
    pub fn get_typed(&self, table: &Table, key: &Value) -> Result<Option<Value>, KvError> {
        match self.get(table, &codec::encode_to_vec(key))? {
            None => Ok(None),
            Some(b) => Ok(Some(
                codec::decode_exact(b).map_err(|e| typed_err(table, e))?,
            )),
        }
    }

    /// Typed entries with keys within the bounds, in value order (or reversed).
    pub fn range_typed(
        &self,
        table: &Table,
        lower: Bound<&Value>,
        upper: Bound<&Value>,
        direction: Direction,
    ) -> Result<Vec<(Value, Value)>, KvError> {
        let enc = |b: Bound<&Value>| b.map(codec::encode_to_vec);
        let (lo, hi) = (enc(lower), enc(upper));
        let lo_b: Bound<&[u8]> = match &lo {
            Bound::Included(v) => Bound::Included(v),
            Bound::Excluded(v) => Bound::Excluded(v),
            Bound::Unbounded => Bound::Unbounded,
        };
        let hi_b: Bound<&[u8]> = match &hi {
            Bound::Included(v) => Bound::Included(v),
            Bound::Excluded(v) => Bound::Excluded(v),
            Bound::Unbounded => Bound::Unbounded,
        };
        let mut out = Vec::new();
        for entry in self.range(table, lo_b, hi_b, direction)? {
            let (k, v) = entry?;
            let k = codec::decode_exact(k).map_err(|e| typed_err(table, e))?;
            let v = codec::decode_exact(v).map_err(|e| typed_err(table, e))?;
            out.push((k, v));
        }
        Ok(out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::kv::{EnvOptions, Environment, TableKind};

    #[test]
    fn typed_keys_scan_in_value_order() {
        let dir = tempfile::tempdir().unwrap();
        let env = Environment::open(dir.path(), EnvOptions::default()).unwrap();
        let t = env.table("typed", TableKind::Plain).unwrap();
        let keys = [-5i64, 3, -1000, 0, 42, i64::MIN, i64::MAX];
        env.transact_kv(
            keys.iter()
                .map(|k| KvOp::put_typed(&t, &Value::Long(*k), &Value::string(&k.to_string())))
                .collect(),
        )
        .unwrap();
        let txn = env.read().unwrap();
        let v = txn.view();
        let all = v
            .range_typed(&t, Bound::Unbounded, Bound::Unbounded, Direction::Forward)
            .unwrap();
        let got: Vec<i64> = all
            .iter()
            .map(|(k, _)| match k {
                Value::Long(n) => *n,
                _ => panic!(),
            })
            .collect();
        let mut want = keys.to_vec();
        want.sort();
        assert_eq!(got, want);
        let mid = v
            .range_typed(
                &t,
                Bound::Excluded(&Value::Long(-5)),
                Bound::Included(&Value::Long(42)),
                Direction::Backward,
            )
            .unwrap();
        let got: Vec<i64> = mid
            .iter()
            .map(|(k, _)| match k {
                Value::Long(n) => *n,
                _ => panic!(),
            })
            .collect();
        assert_eq!(got, vec![42, 3, 0]);
        assert_eq!(
            v.get_typed(&t, &Value::Long(3)).unwrap(),
            Some(Value::string("3"))
        );
        assert_eq!(
            v.count_range(&t, Bound::Unbounded, Bound::Unbounded)
                .unwrap(),
            7
        );
    }
}
