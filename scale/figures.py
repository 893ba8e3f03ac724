#!/usr/bin/env python3
"""Figures of the replicated log (issue "beyond one machine"), measured on this machine.

1. Write latency through Kafka (three brokers, acks=all, min.insync.replicas=2) against the
   local write-ahead log, at batch sizes 1, 10, 100 and 1000: one client, one call at a time,
   the same transactions, through `datalith serve` in both cases (so the HTTP and client costs
   are the same on both sides); p50 and p99 of each call.
2. Apply rate of a node catching up: a node started on a log that already holds --backlog
   transactions of workload W's records (of batch 1 and of batch 100), timed from its first
   applied record to lag 0 by its own `stat` (transactions/s and datoms/s), with no other
   node running (the writer stopped once its data file holds the backlog).
3. Query throughput of one node while it applies the log, against the same node idle: one
   client looping a unique-key lookup for --query-secs.

Usage: scale/figures.py [--datalith target/release/datalith] [--calls 300] [--backlog 5000]
                        [--query-secs 5] [--parts latency,catch-up,queries] [--value-index all|declared]
                        [--out FILE.json] [--keep]
Traffic on loopback only; every loop bounded by a count and a time.
"""

import argparse
import json
import os
import shutil
import tempfile
import threading
import uuid
import time

from cluster import ROOT, Node, kafka, percentiles, say

BATCHES = [1, 10, 100, 1000]
SCHEMA = """[{:db/ident :w/k :db/valueType :db.type/string :db/cardinality :db.cardinality/one
              :db/unique :db.unique/identity}
             {:db/ident :w/v :db/valueType :db.type/long :db/cardinality :db.cardinality/one}]"""


# Workload W's records, for the catch-up (its goal is a ratio to W's dl-sync rate): `:k` a
# long with a unique identity, keys the even integers in ascending order; `:v` a fresh
# random UUID's 36-character text.
W_SCHEMA = """[{:db/ident :k :db/valueType :db.type/long :db/cardinality :db.cardinality/one
                :db/unique :db.unique/identity}
               {:db/ident :v :db/valueType :db.type/string :db/cardinality :db.cardinality/one}]"""


def w_tx(i, n):
    """Transaction i of workload W at batch n: keys 2*(i*n+1) .. 2*(i*n+n)."""
    return "[" + " ".join(f'{{:k {2 * (i * n + j + 1)} :v "{uuid.uuid4()}"}}'
                          for j in range(n)) + "]"


def batch_tx(prefix, i, n):
    return "[" + " ".join(f'{{:w/k "{prefix}-{i}-{j}" :w/v {j}}}' for j in range(n)) + "]"


def transact(node, tx):
    status, body = node.request("POST", "/db/db/transact", {":tx-data": tx})
    if status != 200:
        raise RuntimeError(f"{node.name}: {status} {body}")
    return body


def latency(node, batch, calls, max_secs, prefix):
    """p50, p99 (ms) of `calls` sequential transactions of `batch` entities each."""
    xs = []
    deadline = time.time() + max_secs
    for i in range(calls):
        if time.time() > deadline:
            break
        tx = batch_tx(prefix, i, batch)
        start = time.perf_counter()
        transact(node, tx)
        xs.append(time.perf_counter() - start)
    p50, p99 = percentiles(xs)
    return {"calls": len(xs), "p50_ms": p50, "p99_ms": p99}


def stat(node):
    return node.stat()[":replica"]


def catch_up(binary, root, log_url, name, expected, basis, max_secs, extra=()):
    """Starts a node on the log; the node's own account of its first catch-up (records
    applied from its first fetch until it first reached the log's end, and how long), and,
    timed from the node's start by this script, how long until its data file holds the last
    of them (`stat`'s basis t on a node that took no writes itself: the state LMDB holds;
    the node applies a transaction into its own write-ahead log first, and its LMDB writer
    follows)."""
    node = Node(name, binary, root, log_url, extra)
    started = time.time()
    node.start()
    deadline = started + max_secs
    row = None
    try:
        while time.time() < deadline:
            s = stat(node)
            done = s.get(":catch-up")
            if row is None and done and s[":next-offset"] >= expected:
                secs = done[":ms"] / 1000
                row = {"records": done[":records"], "seconds": secs,
                       "tx_per_s": round(done[":records"] / secs, 1) if secs else None}
            if row is not None and node.stat()[":basis-t"] >= basis:
                file_secs = time.time() - started
                row["file_seconds"] = round(file_secs, 3)
                row["file_tx_per_s"] = round(row["records"] / file_secs, 1)
                return node, row
            time.sleep(0.05)
        raise SystemExit(f"{name} did not catch up within {max_secs} s: {stat(node)}")
    except BaseException:
        node.stop()
        raise


def settled(node, max_secs):
    """Waits until `node` has applied the whole log and its data file holds it (its LMDB
    writer idle: the basis its file holds unchanged for a second), so that a node timed next
    does not share the cores with this one's backlog; the log's end and that basis."""
    deadline = time.time() + max_secs
    last = None
    while time.time() < deadline:
        s = stat(node)
        basis = node.stat()[":basis-t"]
        if s[":next-offset"] >= s[":high-watermark"] and basis == last:
            return s[":high-watermark"], basis
        last = basis
        time.sleep(1.0)
    raise SystemExit(f"{node.name} did not settle within {max_secs} s: {stat(node)}")


def query_rate(node, keys, secs, stop=None):
    """Unique-key lookups a second, one client, for `secs` (or until `stop` is set)."""
    n = 0
    start = time.perf_counter()
    deadline = start + secs
    while time.perf_counter() < deadline and not (stop and stop.is_set()):
        key = keys[n % len(keys)]
        body = {":query": "[:find ?v . :in $ ?k :where [?e :k ?k] [?e :v ?v]]",
                ":args": [key]}
        status, out = node.request("POST", "/db/db/q", body)
        if status != 200:
            raise RuntimeError(f"query: {status} {out}")
        n += 1
    return round(n / (time.perf_counter() - start), 1)


def fill(nodes, first, count, batch, threads=8):
    """Writes W's transactions `first`..`first+count` of `batch` entities through `nodes`,
    several clients."""
    lock = threading.Lock()
    state = {"next": first}

    def work(w):
        node = nodes[w % len(nodes)]
        while True:
            with lock:
                i = state["next"]
                if i >= first + count:
                    return
                state["next"] += 1
            transact(node, w_tx(i, batch))

    ts = [threading.Thread(target=work, args=(w,)) for w in range(threads)]
    for t in ts:
        t.start()
    for t in ts:
        t.join()


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--datalith", default=os.path.join(ROOT, "target", "release", "datalith"))
    ap.add_argument("--calls", type=int, default=300, help="calls per batch size (1000: a third)")
    ap.add_argument("--backlog", type=int, default=5000, help="transactions to catch up on")
    ap.add_argument("--query-secs", type=float, default=5)
    ap.add_argument("--max-secs", type=float, default=300, help="bound on each step")
    ap.add_argument("--parts", default="latency,catch-up,queries",
                    help="which figures, comma-separated (queries needs catch-up)")
    ap.add_argument("--value-index", choices=["all", "declared"], default="all",
                    help="the layout of every node's database (`datalith serve --value-index`)")
    ap.add_argument("--out")
    ap.add_argument("--keep", action="store_true",
                    help="keep the nodes' directories (a run leaves ~3 GB; removed by default)")
    args = ap.parse_args()
    parts = set(args.parts.split(","))
    unknown = parts - {"latency", "catch-up", "queries"}
    if unknown or ("queries" in parts and "catch-up" not in parts):
        raise SystemExit(f"--parts: {args.parts}: latency, catch-up, queries (queries needs catch-up)")
    if not os.access(args.datalith, os.X_OK):
        raise SystemExit(f"{args.datalith} is not built (cargo build --release -p datalith-cli)")
    out = {"machine": os.uname().nodename, "date": time.strftime("%Y-%m-%d %H:%M:%S UTC",
                                                                  time.gmtime())}
    root = tempfile.mkdtemp(prefix="datalith-figures-")
    bootstrap = kafka("up", "3")
    topic = f"figures-{int(time.time())}"
    log_url = f"kafka://{bootstrap}/{topic}"
    layout = ["--value-index", args.value_index]
    out["value_index"] = args.value_index
    local = Node("local", args.datalith, root, None, layout)
    node1 = Node("node1", args.datalith, root, log_url, layout)
    others = []
    try:
        local.start()
        node1.start()
        for n in (local, node1):
            transact(n, SCHEMA)

        # 1. Latency, one call at a time, alternating the two servers batch by batch.
        rows = []
        for b in BATCHES if "latency" in parts else []:
            calls = args.calls if b < 1000 else max(1, args.calls // 3)
            wal = latency(local, b, calls, args.max_secs, f"lat{b}")
            log = latency(node1, b, calls, args.max_secs, f"lat{b}")
            rows.append({"batch": b, "local_wal": wal, "kafka": log,
                         "p50_ratio": round(log["p50_ms"] / wal["p50_ms"], 2)})
            say(json.dumps(rows[-1]))
        out["latency"] = rows
        # The nodes timed next share the machine with the brokers alone: an idle node still
        # polls its topic (a fetch every 20 ms), which the brokers answer on the same cores.
        local.stop()
        node1.stop()

        # 2. Catching up: a backlog of one batch size written through a writer node on a
        # topic of its own, then a new node applies it all.
        catch = []
        for b in (1, 100) if "catch-up" in parts else []:
            for n in others:
                n.stop()
            own_log = f"{log_url}-catchup{b}"
            writer = Node(f"writer{b}", args.datalith, root, own_log, layout)
            writer.start()
            others.append(writer)
            transact(writer, W_SCHEMA)
            fill([writer], 0, args.backlog, b)
            end, basis = settled(writer, args.max_secs)
            writer.stop()
            node, row = catch_up(args.datalith, root, own_log, f"catchup{b}", end, basis,
                                 args.max_secs, layout)
            others.append(node)
            row = dict(row or {}, batch=b)
            if row.get("tx_per_s"):
                row["datoms_per_s"] = round(row["tx_per_s"] * (2 * b + 3), 1)
            catch.append(row)
            say(json.dumps(row))
        out["catch_up"] = catch

        # 3. Queries on a node idle, then while it applies a backlog written meanwhile.
        if "queries" in parts:
            # The catch-up node of batch 100 and the writer of its topic: the backlog written
            # while the reader is down is what it applies while it answers.
            writer, reader = others[-2], others[-1]
            keys = [2 * k for k in range(1, 100 * args.backlog, 997)]
            idle = query_rate(reader, keys, args.query_secs)
            reader.stop()
            writer.start()
            fill([writer], args.backlog, args.backlog, 100)
            reader.start()
            busy_stop = threading.Event()
            busy = query_rate(reader, keys, args.query_secs, busy_stop)
            still = stat(reader)[":lag-tx"]
            out["queries"] = {"idle_per_s": idle, "applying_per_s": busy,
                              "lag_at_end": still, "ratio": round(busy / idle, 2)}
            say(json.dumps(out["queries"]))
    finally:
        for n in [local, node1, *others]:
            n.stop()
        kafka("down")
        if args.keep:
            say(f"the nodes' directories are kept in {root}")
        else:
            shutil.rmtree(root, ignore_errors=True)
    print(json.dumps(out, indent=1))
    if args.out:
        with open(args.out, "w") as f:
            json.dump(out, f, indent=1)


if __name__ == "__main__":
    main()
