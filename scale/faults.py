#!/usr/bin/env python3
"""Faults against a replicated Datalith database: three Kafka brokers, three nodes.

Each scenario writes transactions through every live node from several client threads while
one thing goes wrong, then checks that the nodes agree:

  node-kill     SIGKILL one node in the middle of the writes, start it again on its files
  broker-kill   SIGKILL the broker that leads the log's partition during the writes, start
                it again later
  node-pause    SIGSTOP one node (its consumer and all) for --pause-secs, then SIGCONT

After each: every node reaches the same basis t and applies the whole log (lag 0); a digest
of every datom (EAVT order) is the same on every node; every transaction a client was told
succeeded is there on every node; `datalith check` is clean on each node's files. A client
whose node died mid-request does not know the outcome: such transactions are counted apart
and may be present or not (never half).

Usage: scale/faults.py [--datalith target/release/datalith] [--txs 10000] [--threads 8]
                       [--pause-secs 30] [--out FILE.json] [--keep]
Needs scale/kafka.sh (Maven, Java 17+); traffic stays on loopback; every wait is bounded.
"""

import argparse
import http.client
import json
import os
import shutil
import signal
import subprocess
import tempfile
import threading
import time

from cluster import ROOT, Node, kafka, partition_leader, percentiles, say

class Writers:
    """Client threads writing one transaction each time, through the live nodes in turn."""

    def __init__(self, nodes, threads, prefix):
        self.nodes = nodes
        self.threads = threads
        self.prefix = prefix
        self.lock = threading.Lock()
        self.next = 0
        self.acked = set()
        self.unknown = set()
        self.refused = []
        self.latencies = []

    def _take(self, total):
        with self.lock:
            if self.next >= total:
                return None
            self.next += 1
            return self.next - 1

    def run(self, total, deadline):
        def work(w):
            while time.time() < deadline:
                i = self._take(total)
                if i is None:
                    return
                key = f"{self.prefix}-{i}"
                live = [n for n in self.nodes if n.alive() and not n.paused]
                node = live[(i + w) % len(live)]
                tx = f'[{{:fault/key "{key}" :fault/n {i}}}]'
                start = time.time()
                try:
                    status, body = node.request("POST", "/db/db/transact", {":tx-data": tx})
                except (OSError, http.client.HTTPException):
                    with self.lock:
                        self.unknown.add(key)
                    continue
                with self.lock:
                    if status == 200:
                        self.acked.add(key)
                        self.latencies.append(time.time() - start)
                    elif status in (503, 504):
                        self.unknown.add(key)
                    else:
                        self.refused.append((key, status, body))

        ts = [threading.Thread(target=work, args=(w,)) for w in range(self.threads)]
        for t in ts:
            t.start()
        return ts


def converge(nodes, patience=180):
    """Waits until every node applied the whole log and all are at one basis; that basis."""
    deadline = time.time() + patience
    while True:
        stats = [n.stat() for n in nodes]
        bases = {s[":basis-t"] for s in stats}
        lags = [s[":replica"][":lag-tx"] for s in stats]
        ends = {s[":replica"][":high-watermark"] for s in stats}
        if len(bases) == 1 and all(l == 0 for l in lags) and len(ends) == 1:
            return bases.pop(), stats
        if time.time() > deadline:
            raise SystemExit(f"no convergence in {patience} s: bases {bases}, lags {lags}")
        time.sleep(0.2)


def verify(scenario, nodes, writers, binary, all_acked):
    t, stats = converge(nodes)
    digests = [n.digest(t) for n in nodes]
    same = len({d for d, _ in digests}) == 1
    keysets = [n.keys(t) for n in nodes]
    missing = [len(all_acked - k) for k in keysets]
    checks = []
    for n in nodes:
        r = subprocess.run([binary, "check", os.path.join(n.dir, "db")], capture_output=True,
                           text=True)
        checks.append(r.returncode == 0)
        if r.returncode != 0:
            say(f"{n.name} check failed: {r.stdout} {r.stderr}")
    p50, p99 = percentiles(writers.latencies)
    row = {
        "scenario": scenario, "basis_t": t, "datoms": digests[0][1],
        "digest": digests[0][0][:16], "same_digest": same, "acked": len(writers.acked),
        "unknown": len(writers.unknown), "refused": len(writers.refused),
        "acked_missing_per_node": missing, "check_clean": checks,
        "p50_ms": p50, "p99_ms": p99,
        "applied": [s[":replica"][":applied"] for s in stats],
    }
    ok = same and all(m == 0 for m in missing) and all(checks) and not writers.refused
    row["ok"] = ok
    say(json.dumps(row))
    return row


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--datalith", default=os.path.join(ROOT, "target", "release", "datalith"))
    ap.add_argument("--txs", type=int, default=10000)
    ap.add_argument("--threads", type=int, default=8)
    ap.add_argument("--pause-secs", type=float, default=30)
    ap.add_argument("--max-secs", type=float, default=600, help="bound on each scenario")
    ap.add_argument("--out", help="write the rows as JSON here")
    ap.add_argument("--keep", action="store_true",
                    help="keep the nodes' directories (kept anyway when a scenario fails)")
    args = ap.parse_args()
    if not os.access(args.datalith, os.X_OK):
        raise SystemExit(f"{args.datalith} is not built (cargo build --release -p datalith-cli)")

    kafka("up", "3")
    root = tempfile.mkdtemp(prefix="datalith-faults-")
    topic = f"faults-{int(time.time())}"
    log_url = f"kafka://{kafka('bootstrap')}/{topic}"
    nodes = [Node(f"node{i}", args.datalith, root, log_url) for i in (1, 2, 3)]
    rows = []
    all_acked = set()
    try:
        for n in nodes:
            n.start()
        status, body = nodes[0].request("POST", "/db/db/transact", {":tx-data": """[
            {:db/ident :fault/key :db/valueType :db.type/string
             :db/cardinality :db.cardinality/one :db/unique :db.unique/identity}
            {:db/ident :fault/n :db/valueType :db.type/long :db/cardinality :db.cardinality/one}]"""})
        assert status == 200, body

        def scenario(name, fault):
            w = Writers(nodes, args.threads, name)
            deadline = time.time() + args.max_secs
            threads = w.run(args.txs, deadline)
            fault(w)
            for t in threads:
                t.join()
            all_acked.update(w.acked)
            rows.append(verify(name, nodes, w, args.datalith, all_acked))

        def when_done(w, fraction):
            limit = time.time() + args.max_secs
            while w.next < fraction * args.txs and time.time() < limit:
                time.sleep(0.01)

        def node_kill(w):
            when_done(w, 0.3)
            nodes[1].kill()
            time.sleep(2)
            nodes[1].start()

        def broker_kill(w):
            when_done(w, 0.3)
            leader = partition_leader(topic)
            say(f"partition leader is broker {leader}")
            kafka("kill", str(leader))
            when_done(w, 0.7)
            kafka("start", str(leader))

        def node_pause(w):
            when_done(w, 0.2)
            nodes[2].paused = True
            nodes[2].proc.send_signal(signal.SIGSTOP)
            say(f"node3 paused for {args.pause_secs} s")
            time.sleep(args.pause_secs)
            nodes[2].proc.send_signal(signal.SIGCONT)
            nodes[2].paused = False
            say("node3 resumed")

        scenario("node-kill", node_kill)
        scenario("broker-kill", broker_kill)
        scenario("node-pause", node_pause)
    finally:
        for n in nodes:
            n.stop()
        kafka("down")
    if args.out:
        with open(args.out, "w") as f:
            json.dump(rows, f, indent=1)
    bad = [r["scenario"] for r in rows if not r["ok"]]
    if bad or len(rows) < 3 or args.keep:
        say(f"the nodes' directories are kept in {root}")
    else:
        shutil.rmtree(root, ignore_errors=True)
    print(json.dumps(rows, indent=1))
    if bad or len(rows) != 3:
        raise SystemExit(f"failed: {bad or 'not every scenario ran'}")
    say("every scenario: same datoms on every node, every acknowledged transaction present")


if __name__ == "__main__":
    main()
