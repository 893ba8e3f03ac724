"""A program mypy --strict checks against the stubs (test_typing.py)."""

import tempfile

import datalith

with datalith.open(tempfile.mkdtemp(), schema={":n": {":db/valueType": ":db.type/long"}}) as conn:
    report: datalith.TxReport = conn.transact([{":n": 1}])
    db: datalith.Db = conn.db()
    n: int = db.q("[:find ?v . :where [_ :n ?v]]")
    print(report.tx, n, db.basis_t, list(db.datoms(":avet", ":n")))
    table: datalith.KvTable = conn.kv("t")
    table[b"k"] = b"v"
    value: bytes = table[b"k"]
    print(value, list(table.items()))


    local: datalith.TxReport = datalith.transact_async(conn, [{":n": 2}]).result()
    print(local.tx)


def remote_reads(url: str) -> int:
    remote: datalith.RemoteConnection = datalith.connect(url)
    db = remote.db()
    basis: int = db.basis_t
    entity = db.entity(1)
    if entity is not None:
        print(entity.get(":n"), entity.keys(), entity.touch())
    table: datalith.RemoteKvTable = remote.kv("t")
    table[b"k"] = b"v"
    value: bytes = table[b"k"]
    print(value, list(table.items(reverse=True)), len(table))
    report: datalith.RemoteTxReport = datalith.transact_async(remote, [{":n": 3}]).result()
    return basis + report.tx
