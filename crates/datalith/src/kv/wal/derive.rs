//! Writes a record need not hold: those its other writes determine. The Datalog store writes
//! each transaction's datoms three times (its log entry, its EAV and its AVE entries); the
//! log entry alone determines the other two, so a record that holds only it is a third of the
//! size, and a record's sync time grows with its bytes (about 4 us a KiB on this project's
//! machine, past the first few KiB).
//!
//! The layer above names the tables and rebuilds their writes ([`Derivation`]); this layer
//! checks, for every group, that the rebuilt writes are exactly the staged ones, in order, and
//! only then leaves them out of the record (a group they do not match, such as a bulk load, is
//! logged whole). Writes staged by the derivation itself (`Stage::put_deriving`, the Datalog
//! store's transactions) are exact by construction: the check then only makes sure that no
//! other write reached the derived tables and every source put was staged that way (comparing
//! write by write was ~20% of the committer's instructions at W batch 100). Replay rebuilds them right after the write they come from: the derived
//! tables see the same writes in the same order, and no other write of the group touches them.

use super::super::stage::{OpKind, Stage};
use super::body::LoggedOpKind;

/// Rebuilds writes of some tables from writes to a source table (see the module doc).
pub trait Derivation: Send + Sync + std::fmt::Debug {
    /// Names the rule in records: a record rebuilt under a name other than the one it was
    /// written under is refused at replay, not guessed at. Change it whenever what
    /// [`Derivation::derive`] produces changes.
    fn name(&self) -> &str;
    /// The table whose puts the derived writes come from.
    fn source(&self) -> &str;
    /// The tables of the derived writes; [`DerivedOp::table`] indexes this list.
    fn tables(&self) -> &[&str];
    /// Calls `emit` with every write derived from the source table's put of `key` and
    /// `value`, in the order the layer above stages them. An error says why the bytes are not
    /// a source value (at replay: damage).
    fn derive(
        &self,
        key: &[u8],
        value: &[u8],
        emit: &mut dyn FnMut(DerivedOp<'_>),
    ) -> Result<(), String>;
}

/// One derived write.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DerivedOp<'a> {
    /// Index into [`Derivation::tables`].
    pub table: usize,
    /// What it does.
    pub kind: LoggedOpKind,
    /// The key.
    pub key: &'a [u8],
    /// The value (empty for a delete).
    pub value: &'a [u8],
    /// For a list add or remove: the tally that counts the keys it creates or empties.
    pub tally: Option<u32>,
}

/// The table ids of a derivation's tables in one environment (`None` until opened).
#[derive(Debug, Clone, Default)]
pub(crate) struct DerivedIds {
    pub(crate) source: Option<u32>,
    pub(crate) tables: Vec<Option<u32>>,
}

impl DerivedIds {
    pub(crate) fn new(d: &dyn Derivation) -> DerivedIds {
        DerivedIds {
            source: None,
            tables: vec![None; d.tables().len()],
        }
    }

    /// Notes that table `name` has id `id`.
    pub(crate) fn name(&mut self, d: &dyn Derivation, id: u32, name: &str) {
        if name == d.source() {
            self.source = Some(id);
        }
        if let Some(i) = d.tables().iter().position(|t| *t == name) {
            self.tables[i] = Some(id);
        }
    }

    /// The index of table `id` among the derived tables.
    pub(crate) fn derived(&self, id: u32) -> Option<usize> {
        self.tables.iter().position(|t| *t == Some(id))
    }
}

/// Whether every write of `stage` to a derived table is, in order, exactly what `d` rebuilds
/// from the stage's source puts (then the record may leave them out): so by construction when
/// `Stage::put_deriving` staged all of them with `d`, else compared write by write. `scratch`
/// keeps the positions of the derived writes between calls.
pub(crate) fn rebuilds_exactly(
    stage: &Stage,
    d: &dyn Derivation,
    ids: &DerivedIds,
    scratch: &mut Vec<usize>,
) -> bool {
    let Some(source) = ids.source else {
        return false;
    };
    if stage.derived_by_construction(d.name(), source, &ids.tables) {
        return true;
    }
    scratch.clear();
    let mut sources = 0;
    let mut i = 0;
    stage.for_each_op_tallied(|kind, table, _, _, _| {
        if ids.derived(table).is_some() {
            scratch.push(i);
        } else if table == source && kind == OpKind::Put {
            sources += 1;
        }
        i += 1;
    });
    if sources == 0 {
        return false;
    }
    let (mut next, mut same) = (0, true);
    stage.for_each_op_tallied(|kind, table, _, key, value| {
        if !same || table != source || kind != OpKind::Put {
            return;
        }
        let derived = d.derive(key, value, &mut |op| {
            same = same
                && scratch.get(next).is_some_and(|&at| {
                    let (kind, table, tally, key, value) = stage.op(at);
                    ids.tables.get(op.table).copied().flatten() == Some(table)
                        && logged_kind(kind) == op.kind
                        && tally == op.tally
                        && key == op.key
                        && value == op.value
                });
            next += 1;
        });
        same &= derived.is_ok();
    });
    same && next == scratch.len()
}

fn logged_kind(kind: OpKind) -> LoggedOpKind {
    match kind {
        OpKind::Put => LoggedOpKind::Put,
        OpKind::Delete => LoggedOpKind::Delete,
        OpKind::ListAdd => LoggedOpKind::ListAdd,
        OpKind::ListRemove => LoggedOpKind::ListRemove,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::kv::table::{Table, TableKind};

    /// Source `s`: a put of `k` to `v` derives an add of `k` under key `v` in list table `d`;
    /// an empty value is not a source value.
    #[derive(Debug)]
    struct Reverse;

    impl Derivation for Reverse {
        fn name(&self) -> &str {
            "test.reverse/1"
        }
        fn source(&self) -> &str {
            "s"
        }
        fn tables(&self) -> &[&str] {
            &["d"]
        }
        fn derive(
            &self,
            key: &[u8],
            value: &[u8],
            emit: &mut dyn FnMut(DerivedOp<'_>),
        ) -> Result<(), String> {
            if value.is_empty() {
                return Err("empty".into());
            }
            emit(DerivedOp {
                table: 0,
                kind: LoggedOpKind::ListAdd,
                key: value,
                value: key,
                tally: None,
            });
            Ok(())
        }
    }

    fn derive_into(st: &mut Stage, s: &Table, d: &Table, key: &[u8], value: &[u8]) {
        st.put_deriving(s, key, value, &Reverse, &[d]).unwrap();
    }

    fn table(name: &str, id: u32, kind: TableKind) -> Table {
        Table::for_test(name, id, kind)
    }

    #[test]
    fn a_stage_is_rebuilt_only_when_its_derived_writes_are_exactly_the_derivation_in_order() {
        let (s, d, other) = (
            table("s", 1, TableKind::Plain),
            table("d", 2, TableKind::List),
            table("o", 3, TableKind::Plain),
        );
        type Step = fn(&mut Stage, &Table, &Table, &Table);
        let cases: &[(&str, Step, bool)] = &[
            (
                "one source and its write",
                |st, s, d, _| {
                    st.list_add(d, b"v1", b"k1");
                    st.put(s, b"k1", b"v1");
                },
                true,
            ),
            (
                "other tables between",
                |st, s, d, o| {
                    st.put(o, b"x", b"y");
                    st.list_add(d, b"v1", b"k1");
                    st.put(o, b"x", b"z");
                    st.put(s, b"k1", b"v1");
                    st.list_add(d, b"v2", b"k2");
                    st.put(s, b"k2", b"v2");
                },
                true,
            ),
            (
                "no source put",
                |st, _, d, _| st.list_add(d, b"v1", b"k1"),
                false,
            ),
            (
                "a derived write differs",
                |st, s, d, _| {
                    st.list_add(d, b"v1", b"k2");
                    st.put(s, b"k1", b"v1");
                },
                false,
            ),
            (
                "a derived write of its own kind",
                |st, s, d, _| {
                    st.list_remove(d, b"v1", b"k1");
                    st.put(s, b"k1", b"v1");
                },
                false,
            ),
            (
                "a derived write no source explains",
                |st, s, d, _| {
                    st.list_add(d, b"v1", b"k1");
                    st.list_add(d, b"v9", b"k9");
                    st.put(s, b"k1", b"v1");
                },
                false,
            ),
            (
                "a write the derivation makes is missing",
                |st, s, d, _| {
                    st.list_add(d, b"v1", b"k1");
                    st.put(s, b"k1", b"v1");
                    st.put(s, b"k2", b"v2");
                },
                false,
            ),
            (
                "two sources' writes swapped",
                |st, s, d, _| {
                    st.list_add(d, b"v2", b"k2");
                    st.list_add(d, b"v1", b"k1");
                    st.put(s, b"k1", b"v1");
                    st.put(s, b"k2", b"v2");
                },
                false,
            ),
            (
                "a source value the derivation refuses",
                |st, s, _, _| st.put(s, b"k1", b""),
                false,
            ),
            // Staged by the derivation itself (`Stage::put_deriving`): exact by construction,
            // unless another write to its tables, or a source put of its own, came in.
            (
                "staged by the derivation",
                |st, s, d, o| {
                    st.put(o, b"x", b"y");
                    derive_into(st, s, d, b"k1", b"v1");
                    derive_into(st, s, d, b"k2", b"v2");
                },
                true,
            ),
            (
                "staged by the derivation, and a derived write of its own",
                |st, s, d, _| {
                    derive_into(st, s, d, b"k1", b"v1");
                    st.list_add(d, b"v9", b"k9");
                },
                false,
            ),
            (
                "staged by the derivation, and a source put of its own with its write",
                |st, s, d, _| {
                    derive_into(st, s, d, b"k1", b"v1");
                    st.list_add(d, b"v2", b"k2");
                    st.put(s, b"k2", b"v2");
                },
                true,
            ),
            (
                "staged by the derivation, and a source put of its own without its write",
                |st, s, d, _| {
                    derive_into(st, s, d, b"k1", b"v1");
                    st.put(s, b"k2", b"v2");
                },
                false,
            ),
            (
                "staged by the derivation and rolled back, then written by hand wrongly",
                |st, s, d, _| {
                    let mark = st.mark();
                    derive_into(st, s, d, b"k1", b"v1");
                    st.rollback(mark);
                    st.list_add(d, b"v9", b"k9");
                    st.put(s, b"k1", b"v1");
                },
                false,
            ),
            (
                "a source value the derivation refuses, staged by it",
                |st, s, d, _| {
                    let refused = st.put_deriving(s, b"k1", b"", &Reverse, &[d]);
                    assert!(refused.is_err() && st.is_empty(), "nothing staged");
                },
                false,
            ),
        ];
        let mut ids = DerivedIds::new(&Reverse);
        for t in [&s, &d, &other] {
            ids.name(&Reverse, t.id, &t.name);
        }
        let mut scratch = Vec::new();
        for &(what, fill, expected) in cases {
            let mut stage = Stage::default();
            fill(&mut stage, &s, &d, &other);
            assert_eq!(
                rebuilds_exactly(&stage, &Reverse, &ids, &mut scratch),
                expected,
                "{what}"
            );
        }
        // Until the source table is named, nothing is rebuilt.
        let mut stage = Stage::default();
        stage.list_add(&d, b"v1", b"k1");
        stage.put(&s, b"k1", b"v1");
        let unnamed = DerivedIds::new(&Reverse);
        assert!(!rebuilds_exactly(&stage, &Reverse, &unnamed, &mut scratch));
    }
}
