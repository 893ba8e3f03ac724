//! Raw index access (`IndexReader`) against a model: entity lists of AVE, and the values of
//! many entities through `values_of_each` (both its routes: one AVE scan for dense entity
//! sets, cursor lookups otherwise) equal per-entity `values`.

use datalith::codec::{Keyword, Value};
use datalith::tx::{EntityMap, EntityRef, Tempid, TxData};
use datalith::{Database, DbOptions};
use proptest::prelude::*;
use std::sync::Arc;

fn schema(db: &Database) {
    let text = r#"[{:db/ident :k :db/valueType :db.type/long :db/cardinality :db.cardinality/one}
        {:db/ident :tags :db/valueType :db.type/string :db/cardinality :db.cardinality/many}]"#;
    let data = datalith::TxData::from_edn(&datalith::edn::read_one(text).unwrap()).unwrap();
    db.transact(data).unwrap();
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(24))]

    #[test]
    fn values_of_each_equals_values_per_entity(
        people in prop::collection::vec((0i64..5, prop::collection::vec(0u8..4, 0..3)), 1..300),
        picks in prop::collection::vec(any::<prop::sample::Index>(), 0..300),
        sorted in any::<bool>(),
    ) {
        let dir = tempfile::tempdir().unwrap();
        let db = Database::open(dir.path(), DbOptions::default()).unwrap();
        schema(&db);
        let (k, tags) = (Keyword::new(None, "k"), Keyword::new(None, "tags"));
        let mut data = TxData::default();
        for (i, (n, ts)) in people.iter().enumerate() {
            let id = EntityRef::Temp(Tempid::Named(Arc::from(format!("p{i}").as_str())));
            let mut m = EntityMap::with_id(id).set(k.clone(), Value::Long(*n));
            for t in ts {
                m = m.set(tags.clone(), Value::string(&format!("t{t}")));
            }
            data = data.map(m);
        }
        db.transact(data).unwrap();
        let snap = db.db().unwrap();
        let r = snap.reader();
        let a_k = snap.attr(&k).unwrap().id;
        let a_tags = snap.attr(&tags).unwrap().id;
        // Every entity with each value of :k, from AVE, ascending.
        let mut all = Vec::new();
        for n in 0..5 {
            let es = r.entities_with(a_k, &Value::Long(n)).unwrap();
            prop_assert!(es.windows(2).all(|w| w[0] < w[1]));
            prop_assert_eq!(es.len(), people.iter().filter(|(x, _)| *x == n).count());
            all.extend(es);
        }
        all.sort_unstable();
        // Dense (every entity, maybe repeated) and sparse selections.
        let mut chosen: Vec<u64> = picks.iter().map(|p| all[p.index(all.len())]).collect();
        if sorted {
            chosen.sort_unstable();
        }
        for es in [&all, &chosen] {
            for a in [a_k, a_tags] {
                let mut want = Vec::new();
                for &e in es.iter() {
                    want.extend(r.values(e, a).unwrap());
                }
                let mut got = Vec::new();
                r.values_of_each(es, a, &mut got).unwrap();
                prop_assert_eq!(got, want);
            }
        }
    }
}
