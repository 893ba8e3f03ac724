//! The body of a group record: the group's writes as the stage held them, in staged order,
//! with tables named (a name survives reopening; the process-local table ids do not).
//!
//! Layout (little-endian): `tables u16`, then per table `name_len u16 | name`; `ops u32`, then
//! per op `kind u8 | table u16 | [tally u32] | key_len u32 | value_len u32 | key | value`,
//! where the tally is there only when the kind byte has bit `0x10` (a list add or remove that
//! counts the keys it creates or empties, `kv::tally`). Replaying the ops
//! in order through a [`Stage`] gives exactly the writes the group made, so a replica or a
//! recovery applies the same bytes the committer did. In a `Derived` record the body leaves
//! out the writes of the derivation's tables, which replay rebuilds (`super::derive`).

use super::super::stage::{OpKind, Stage};

/// Appends the body of `stage`'s ops on the tables `keep` accepts to `out` (the others are
/// rebuilt at replay, `derive`); `name_of` names a table id. Returns `None` if an op's table
/// has no name (a table the environment did not open: never written here).
pub(crate) fn encode(
    stage: &Stage,
    name_of: impl Fn(u32) -> Option<std::sync::Arc<str>>,
    keep: impl Fn(u32) -> bool,
    out: &mut Vec<u8>,
) -> Option<()> {
    let mut tables: Vec<(u32, std::sync::Arc<str>)> = Vec::new();
    let mut missing = false;
    let mut kept = 0usize;
    stage.for_each_op(|_, id, _, _, _| {
        if !keep(id) {
            return;
        }
        kept += 1;
        if !tables.iter().any(|(t, _)| *t == id) {
            match name_of(id) {
                Some(name) => tables.push((id, name)),
                None => missing = true,
            }
        }
    });
    if missing || tables.len() > u16::MAX as usize {
        return None;
    }
    out.extend_from_slice(&(tables.len() as u16).to_le_bytes());
    for (_, name) in &tables {
        out.extend_from_slice(&(name.len() as u16).to_le_bytes());
        out.extend_from_slice(name.as_bytes());
    }
    out.extend_from_slice(&(kept as u32).to_le_bytes());
    out.reserve(stage.staged_bytes() + 11 * kept);
    stage.for_each_op_tallied(|kind, id, tally, key, value| {
        if !keep(id) {
            return;
        }
        let table = tables.iter().position(|(t, _)| *t == id).unwrap_or(0) as u16;
        match tally {
            None => out.push(kind_byte(kind)),
            Some(_) => out.push(kind_byte(kind) | TALLIED),
        }
        out.extend_from_slice(&table.to_le_bytes());
        if let Some(t) = tally {
            out.extend_from_slice(&t.to_le_bytes());
        }
        out.extend_from_slice(&(key.len() as u32).to_le_bytes());
        out.extend_from_slice(&(value.len() as u32).to_le_bytes());
        out.extend_from_slice(key);
        out.extend_from_slice(value);
    });
    Some(())
}

/// Set in the kind byte of a list add or remove that counts under a tally (`kv::tally`): the
/// tally (`u32`) follows the table index, so that replaying the record counts it too.
const TALLIED: u8 = 0x10;

fn kind_byte(kind: OpKind) -> u8 {
    match kind {
        OpKind::Put => 1,
        OpKind::Delete => 2,
        OpKind::ListAdd => 3,
        OpKind::ListRemove => 4,
    }
}

/// One write of a record.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LoggedOp<'a> {
    /// What it does.
    pub kind: LoggedOpKind,
    /// The table's name.
    pub table: &'a str,
    /// The key.
    pub key: &'a [u8],
    /// The value (empty for a delete).
    pub value: &'a [u8],
    /// For a list add or remove: the tally that counts the keys it creates or empties
    /// (`kv::tally`).
    pub tally: Option<u32>,
}

/// What a logged write does.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum LoggedOpKind {
    /// Plain table: set the key's value.
    Put,
    /// Remove the key (in a list table, with all its values).
    Delete,
    /// List table: add the value to the key's set.
    ListAdd,
    /// List table: remove the value from the key's set.
    ListRemove,
}

/// Decodes a body; `None` if the bytes are not one (bounds are checked, nothing trusted).
pub(crate) fn decode(b: &[u8]) -> Option<Vec<LoggedOp<'_>>> {
    let mut r = Reader { b, at: 0 };
    let n_tables = r.u16()? as usize;
    let mut names = Vec::with_capacity(n_tables);
    for _ in 0..n_tables {
        let len = r.u16()? as usize;
        names.push(std::str::from_utf8(r.bytes(len)?).ok()?);
    }
    let n_ops = r.u32()? as usize;
    // Each op takes at least 11 bytes: a count past what is left is damage, not a reason to
    // reserve memory.
    if n_ops > (b.len() - r.at) / 11 {
        return None;
    }
    let mut ops = Vec::with_capacity(n_ops);
    for _ in 0..n_ops {
        let byte = r.u8()?;
        let kind = match byte & !TALLIED {
            1 => LoggedOpKind::Put,
            2 => LoggedOpKind::Delete,
            3 => LoggedOpKind::ListAdd,
            4 => LoggedOpKind::ListRemove,
            _ => return None,
        };
        let tallied = byte & TALLIED != 0;
        if tallied && !matches!(kind, LoggedOpKind::ListAdd | LoggedOpKind::ListRemove) {
            return None;
        }
        let table = *names.get(r.u16()? as usize)?;
        let tally = match tallied {
            true => Some(r.u32()?),
            false => None,
        };
        let (klen, vlen) = (r.u32()? as usize, r.u32()? as usize);
        let key = r.bytes(klen)?;
        let value = r.bytes(vlen)?;
        ops.push(LoggedOp {
            kind,
            table,
            key,
            value,
            tally,
        });
    }
    (r.at == b.len()).then_some(ops)
}

struct Reader<'a> {
    b: &'a [u8],
    at: usize,
}

impl<'a> Reader<'a> {
    fn bytes(&mut self, n: usize) -> Option<&'a [u8]> {
        let s = self.b.get(self.at..self.at.checked_add(n)?)?;
        self.at += n;
        Some(s)
    }
    fn u8(&mut self) -> Option<u8> {
        Some(self.bytes(1)?[0])
    }
    fn u16(&mut self) -> Option<u16> {
        Some(u16::from_le_bytes(self.bytes(2)?.try_into().ok()?))
    }
    fn u32(&mut self) -> Option<u32> {
        Some(u32::from_le_bytes(self.bytes(4)?.try_into().ok()?))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::kv::table::{Table, TableKind};

    fn table(name: &str, id: u32, kind: TableKind) -> Table {
        Table::for_test(name, id, kind)
    }

    #[test]
    fn a_body_decodes_to_its_ops_in_order_and_every_cut_is_refused() {
        let (a, b) = (
            table("a", 1, TableKind::Plain),
            table("b", 2, TableKind::List),
        );
        let mut stage = Stage::default();
        stage.put(&a, b"k1", b"v1");
        stage.list_add(&b, b"k2", b"x");
        stage.delete(&a, b"k3");
        stage.list_remove(&b, b"k2", b"y");
        stage.list_change_tallied(true, &b, b"k4", b"z", Some(7));
        stage.list_change_tallied(false, &b, b"k4", b"w", Some(70_000));
        let mut body = Vec::new();
        encode(
            &stage,
            |id| Some(if id == 1 { "a" } else { "b" }.into()),
            |_| true,
            &mut body,
        )
        .unwrap();
        let op = |kind, table, key: &'static [u8], value: &'static [u8]| LoggedOp {
            kind,
            table,
            key,
            value,
            tally: None,
        };
        let tallied = |kind, key, value, tally| LoggedOp {
            tally: Some(tally),
            ..op(kind, "b", key, value)
        };
        assert_eq!(
            decode(&body).unwrap(),
            vec![
                op(LoggedOpKind::Put, "a", b"k1", b"v1"),
                op(LoggedOpKind::ListAdd, "b", b"k2", b"x"),
                op(LoggedOpKind::Delete, "a", b"k3", b""),
                op(LoggedOpKind::ListRemove, "b", b"k2", b"y"),
                tallied(LoggedOpKind::ListAdd, b"k4", b"z", 7),
                tallied(LoggedOpKind::ListRemove, b"k4", b"w", 70_000),
            ]
        );
        for cut in 0..body.len() {
            assert_eq!(decode(&body[..cut]), None, "cut at {cut}");
        }
        // The tally bit on a put (the first op, right after the table names) is damage.
        let first_op = 2 + 2 * (2 + 1) + 4;
        assert_eq!(body[first_op], kind_byte(OpKind::Put));
        let mut damaged = body.clone();
        damaged[first_op] |= TALLIED;
        assert_eq!(decode(&damaged), None);
        // An op naming a table the body does not list.
        assert!(encode(
            &stage,
            |id| (id == 1).then(|| "a".into()),
            |_| true,
            &mut Vec::new()
        )
        .is_none());
    }
}
