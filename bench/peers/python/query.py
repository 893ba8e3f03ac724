#!/usr/bin/env python3
"""Workload Q from Python (`datalith-bench query --python`): the same tasks, data and timing
as the Rust harness, through one Python library per peer.

Usage (run by bench/peers/run.sh, which picks the Python that has the library):
    query.py PEER DATA.jsonl WORK_DIR SECONDS TASKS SPEC.json

    PEER       datalith-py | datalith-py-nosync   the Datalith wheel (`import datalith`)
               datalevin-py                        Datalevin's PyPI package (JPype to its JVM)
               sqlite3-py | sqlite3-py-nosync      Python's own `sqlite3`
    SPEC.json  written by datalith-bench: the timing plan, every task's Datalog and SQL text
               and input, the schema, the SQL statements of the write tasks. Nothing here
               restates them, so every peer runs exactly what the Rust peers run.

Prints one `RESULT {json}` line per task (bench/peers/README.md, "Output protocol").
The timing is the Rust harness's (`query/timing.rs`): reads warm up for two thirds of
SECONDS (at least `read_warm_min` calls), writes run once untimed; then the task repeats for
SECONDS (at least `min_runs` times) and the median is reported. A write task run that passes
`cap_secs` is reported skipped with its cost per commit.
"""

import json
import os
import shutil
import sys
import time


def log(*parts):
    print(*parts, file=sys.stderr, flush=True)


def result(**fields):
    print("RESULT " + json.dumps(fields), flush=True)


class OverCap(Exception):
    """One run of a many-commit write task passed the cap."""


class Cap:
    def __init__(self, secs):
        self.start = time.perf_counter()
        self.limit = secs

    def check(self, done, total):
        t = time.perf_counter() - self.start
        if done and t > self.limit:
            raise OverCap(
                f"one run passed the {self.limit:.0f} s cap after {done} of {total} commits "
                f"({t * 1e3 / done:.3f} ms per commit: a full run would take "
                f"{t * total / done:.0f} s)"
            )


def median(xs):
    xs = sorted(xs)
    if not xs:
        return 0.0
    m = len(xs) // 2
    return xs[m] if len(xs) % 2 else (xs[m - 1] + xs[m]) / 2


def measure(spec, kind, setup, body, count_of):
    """The Rust harness's `measure`: warm-up, then timed runs; the count must not change."""
    secs = spec["secs"]
    warm_secs = secs * 2 / 3 if kind == "read" else 0.0
    warm_min = spec["read_warm_min"] if kind == "read" else 1
    state = {"count": None}

    def once(acc):
        s = setup()
        t0 = time.perf_counter()
        out = body(s)
        acc.append((time.perf_counter() - t0) * 1e3)
        n = count_of(out)
        if state["count"] is not None and state["count"] != n:
            raise RuntimeError(f"count changed between runs: {state['count']} then {n}")
        state["count"] = n

    discard = []
    start = time.perf_counter()
    while len(discard) < warm_min or time.perf_counter() - start < warm_secs:
        once(discard)
    timed = []
    start = time.perf_counter()
    while len(timed) < max(spec["min_runs"], 1) or time.perf_counter() - start < secs:
        once(timed)
        if len(timed) == 1 and secs > 0 and time.perf_counter() - start >= secs:
            break
    return {"median_ms": median(timed), "runs": len(timed), "count": state["count"] or 0}


def read_people(path):
    with open(path) as f:
        return [json.loads(line) for line in f if line.strip()]


class Dirs:
    """A fresh directory per run, under WORK_DIR."""

    def __init__(self, work, label):
        self.work, self.label, self.n = work, label, 0

    def fresh(self):
        self.n += 1
        path = os.path.join(self.work, f"{self.label}-{self.n}")
        shutil.rmtree(path, ignore_errors=True)
        os.makedirs(path)
        return path


ATTRS = ("name", "last-name", "sex", "age", "salary")


def transact_each(conn, txs, total, cap_secs):
    """Commits each of `txs` (`total` of them) in its own transaction, under the cap."""
    cap = Cap(cap_secs)
    for i, tx in enumerate(txs):
        cap.check(i, total)
        conn.transact(tx)


def entity_maps(peer, task):
    """add-5 (one entity map per transaction) and add-all (every map in one), the same for
    the two Datalog peers: `peer` has `fresh()`, `entity(person)`, `people` and `spec`."""
    def setup():
        conn, path = peer.fresh()
        return conn, path, [peer.entity(p) for p in peer.people]

    def body(s):
        conn, _, maps = s
        if task == "add-all":
            conn.transact(maps)
        else:
            transact_each(conn, ([m] for m in maps), len(maps), peer.spec["cap_secs"])
        return s

    return setup, body


class Peer:
    """What every peer shares: the loaded store of the read tasks, `(connection, directory,
    ...)`, closed and removed at the end."""

    loaded = None

    def close(self):
        if self.loaded:
            self.loaded[0].close()
            shutil.rmtree(self.loaded[1], ignore_errors=True)


# --- Datalith ------------------------------------------------------------------------------


class DatalithPeer(Peer):
    """The wheel, as `query/datalith.rs` uses the Rust API: tempids, entity maps,
    `retractEntity`, the bulk loader (`fill_db`) for init, `entities_with` and
    `values_of_each` for lookup-raw."""

    def __init__(self, label, durability, people, work, spec):
        import datalith

        self.dl = datalith
        self.durability = durability
        self.people = people
        self.spec = spec
        self.dirs = Dirs(work, label)
        self.sex = {s: datalith.Keyword(s) for s in {p["sex"] for p in people}}
        log(f"{label}: datalith from {datalith.__file__}")

    def value(self, p, a):
        return self.sex[p["sex"]] if a == "sex" else p[a]

    def entity(self, p):
        m = {":db/id": f"p{p['id']}"}
        for a in ATTRS:
            m[":" + a] = self.value(p, a)
        return m

    def fresh(self):
        path = self.dirs.fresh()
        conn = self.dl.open(path, durability=self.durability)
        conn.transact(self.spec["schema_edn"])
        return conn, path

    def count(self, conn):
        db = conn.db()
        return sum(sum(1 for _ in db.datoms("ave", ":" + a)) for a in ATTRS)

    def finish(self, state):
        conn, path = state[0], state[1]
        n = self.count(conn)
        conn.close()
        shutil.rmtree(path, ignore_errors=True)
        return n

    def write(self, task):
        cap_secs = self.spec["cap_secs"]
        if task == "init":
            base = self.spec["user_partition_start"]

            def setup():
                datoms = [
                    (base + p["id"], ":" + a, self.value(p, a)) for p in self.people for a in ATTRS
                ]
                return self.dirs.fresh(), datoms

            def body(s):
                # Open, install the schema, bulk-load: `Database::init_db`'s steps.
                path, datoms = s
                conn = self.dl.open(path, durability=self.durability)
                conn.transact(self.spec["schema_edn"])
                conn.fill_db(datoms)
                return conn, path

            return setup, body
        if task == "add-1":

            def body(s):
                conn = s[0]
                cap, total = Cap(cap_secs), len(self.people) * 5
                for i, p in enumerate(self.people):
                    cap.check(i * 5, total)
                    r = conn.transact([[":db/add", "p", ":name", p["name"]]])
                    e = r.tempids["p"]
                    for a in ATTRS[1:]:
                        conn.transact([[":db/add", e, ":" + a, self.value(p, a)]])
                return s

            return self.fresh, body
        if task in ("add-5", "add-all"):
            return entity_maps(self, task)
        if task == "retract-5":

            def setup():
                conn, path = self.fresh()
                r = conn.transact([self.entity(p) for p in self.people])
                ids = [r.tempids[f"p{p['id']}"] for p in self.people]
                return conn, path, list(reversed(ids))

            def body(s):
                transact_each(s[0], ([[":db/retractEntity", e]] for e in s[2]), len(s[2]), cap_secs)
                return s

            return setup, body
        raise ValueError(f"{task} is not a write task")

    def reading(self):
        if self.loaded is None:
            conn, path = self.fresh()
            conn.transact([self.entity(p) for p in self.people])
            self.loaded = (conn, path, conn.db())
        return self.loaded[2]

    def query(self, task):
        db = self.reading()
        text, inputs = task["query"], task["input_value"]
        return lambda: db.q(text, *inputs)

    def lookup_raw(self):
        db = self.reading()

        # The Rust harness's route: `entities_with`, then `values_of_each`.
        def run():
            return db.values_of_each(db.entities_with(":name", "Ivan"), ":last-name")

        return run

# --- Datalevin -----------------------------------------------------------------------------


class DatalevinPeer(Peer):
    """Datalevin's Python package, as `bench/peers/datalevin/query.clj` uses Datalevin: the
    seed's flags (no fsync), entity ids as the people's ids, `init_db` for init, the query
    result cache off."""

    def __init__(self, label, people, work, spec):
        import datalevin
        import jpype

        self.dlv = datalevin
        self.people = people
        self.spec = spec
        self.dirs = Dirs(work, label)
        kw = datalevin.Keyword
        types = {"name": "string", "last-name": "string", "sex": "keyword", "age": "long",
                 "salary": "long"}
        self.schema = {kw(":" + a): {kw(":db/valueType"): kw(":db.type/" + t)}
                       for a, t in types.items()}
        self.schema[kw(":follows")] = {kw(":db/valueType"): kw(":db.type/ref"),
                                       kw(":db/cardinality"): kw(":db.cardinality/many")}
        self.opts = {kw(":kv-opts"): {kw(":flags"): {kw(f":{f}") for f in
                                                     ("nordahead", "notls", "writemap", "nosync")}}}
        self.attr = {a: kw(":" + a) for a in ATTRS}
        self.sex = {s: kw(":" + s) for s in {p["sex"] for p in people}}
        datalevin.start_jvm()
        # Seed 003: without this Datalevin answers repeated queries from its result cache.
        # (`Clojure.read` reads EDN: no quote or var-quote reader macros.)
        clj = jpype.JClass("clojure.java.api.Clojure")
        clj.var("clojure.core", "eval").invoke(clj.read(
            "(do (require (quote datalevin.query) (quote datalevin.query.cache))"
            " (alter-var-root (var datalevin.query/*cache?*) (constantly false))"
            " (alter-var-root (var datalevin.query.cache/*cache?*) (constantly false)))"))
        log(f"{label}: datalevin from {datalevin.__file__}")

    def value(self, p, a):
        return self.sex[p["sex"]] if a == "sex" else p[a]

    def entity(self, p):
        m = {self.dlv.Keyword(":db/id"): p["id"]}
        for a in ATTRS:
            m[self.attr[a]] = self.value(p, a)
        return m

    def fresh(self):
        path = self.dirs.fresh()
        return self.dlv.connect(path, self.schema, self.opts), path

    def count(self, conn):
        return sum(conn.count_datoms(None, self.attr[a], None) for a in ATTRS)

    def finish(self, state):
        conn, path = state[0], state[1]
        n = self.count(conn)
        conn.close()
        shutil.rmtree(path, ignore_errors=True)
        return n

    def write(self, task):
        cap_secs = self.spec["cap_secs"]
        add = self.dlv.Keyword(":db/add")
        if task == "init":

            def setup():
                datoms = [self.dlv.datom(p["id"], self.attr[a], self.value(p, a))
                          for p in self.people for a in ATTRS]
                return self.dirs.fresh(), datoms

            def body(s):
                path, datoms = s
                return self.dlv.init_db(datoms, path, self.schema, self.opts), path

            return setup, body
        if task == "add-1":

            def body(s):
                conn = s[0]
                cap, total = Cap(cap_secs), len(self.people) * 5
                for i, p in enumerate(self.people):
                    cap.check(i * 5, total)
                    for a in ATTRS:
                        conn.transact([[add, p["id"], self.attr[a], self.value(p, a)]])
                return s

            return self.fresh, body
        if task in ("add-5", "add-all"):
            return entity_maps(self, task)
        if task == "retract-5":
            retract = self.dlv.Keyword(":db/retractEntity")

            def setup():
                conn, path = self.fresh()
                conn.transact([self.entity(p) for p in self.people])
                return conn, path, [p["id"] for p in reversed(self.people)]

            def body(s):
                transact_each(s[0], ([[retract, e]] for e in s[2]), len(s[2]), cap_secs)
                return s

            return setup, body
        raise ValueError(f"{task} is not a write task")

    def reading(self):
        if self.loaded is None:
            conn, path = self.fresh()
            conn.transact([self.entity(p) for p in self.people])
            self.loaded = (conn, path)
        return self.loaded[0]

    def query(self, task):
        conn = self.reading()
        text, inputs = task["query"], task["input_value"]
        return lambda: conn.query(text, *inputs)

    def lookup_raw(self):
        conn = self.reading()
        ave, eav, name, last = (self.dlv.Keyword(":ave"), self.dlv.Keyword(":eav"),
                                self.attr["name"], self.attr["last-name"])
        e_of, v_of = self.dlv.datom_e, self.dlv.datom_v

        def run():
            out = []
            for d in conn.datoms(ave, name, "Ivan"):
                out.extend(v_of(x) for x in conn.datoms(eav, e_of(d), last))
            return out

        return run

# --- sqlite3 -------------------------------------------------------------------------------


class SqlitePeer(Peer):
    """Python's `sqlite3`, with the SQL of `query/sqlite.rs` (WAL; synchronous FULL or OFF)."""

    def __init__(self, label, durable, people, work, spec):
        import sqlite3

        self.sqlite3 = sqlite3
        self.sync = "FULL" if durable else "OFF"
        self.people = people
        self.spec = spec
        self.sql = spec["sql"]
        self.dirs = Dirs(work, label)
        self.rows = [(p["id"], p["name"], p["last-name"], p["sex"], p["age"], p["salary"])
                     for p in people]
        log(f"{label}: sqlite3 module, SQLite {sqlite3.sqlite_version}")

    def fresh(self):
        path = self.dirs.fresh()
        # Autocommit: each statement outside BEGIN is its own transaction, as in rusqlite.
        conn = self.sqlite3.connect(os.path.join(path, "people.sqlite"), isolation_level=None)
        conn.execute("PRAGMA journal_mode=WAL")
        conn.execute(f"PRAGMA synchronous={self.sync}")
        conn.executescript(self.sql["schema"])
        return conn, path

    def insert_all(self, conn):
        conn.execute("BEGIN")
        conn.executemany(self.sql["insert"], self.rows)
        conn.execute("COMMIT")

    def finish(self, state):
        conn, path = state[0], state[1]
        n = conn.execute(self.sql["count"]).fetchone()[0]
        conn.close()
        shutil.rmtree(path, ignore_errors=True)
        return n

    def write(self, task):
        cap_secs = self.spec["cap_secs"]
        if task == "init":

            def body(_):
                conn, path = self.fresh()
                self.insert_all(conn)
                return conn, path

            return (lambda: None), body
        if task == "add-all":

            def body(s):
                self.insert_all(s[0])
                return s

            return self.fresh, body
        if task == "add-1":
            ins, updates = self.sql["add1_insert"], self.sql["add1_updates"]

            def body(s):
                conn = s[0]
                cap, total = Cap(cap_secs), len(self.rows) * 5
                for i, r in enumerate(self.rows):
                    cap.check(i * 5, total)
                    conn.execute(ins, (r[0], r[1]))
                    for st, v in zip(updates, r[2:]):
                        conn.execute(st, (r[0], v))
                return s

            return self.fresh, body
        if task == "add-5":

            def body(s):
                conn = s[0]
                cap = Cap(cap_secs)
                for i, r in enumerate(self.rows):
                    cap.check(i, len(self.rows))
                    conn.execute(self.sql["insert"], r)
                return s

            return self.fresh, body
        if task == "retract-5":

            def setup():
                conn, path = self.fresh()
                self.insert_all(conn)
                return conn, path

            def body(s):
                conn = s[0]
                cap = Cap(cap_secs)
                for i, p in enumerate(reversed(self.people)):
                    cap.check(i, len(self.people))
                    conn.execute(self.sql["delete"], (p["id"],))
                return s

            return setup, body
        raise ValueError(f"{task} is not a write task")

    def reading(self):
        if self.loaded is None:
            conn, path = self.fresh()
            self.insert_all(conn)
            conn.execute("ANALYZE")
            self.loaded = (conn, path)
        return self.loaded[0]

    def query(self, task):
        conn = self.reading()
        text, param = task["sql"], task["sql_param"]
        args = () if param is None else (param,)
        return lambda: conn.execute(text, args).fetchall()

    def lookup_raw(self):
        return self.query(self.lookup_task)

# --- the run -------------------------------------------------------------------------------


def make_peer(label, people, work, spec):
    if label == "datalith-py":
        return DatalithPeer(label, "durable", people, work, spec)
    if label == "datalith-py-nosync":
        return DatalithPeer(label, "nosync", people, work, spec)
    if label == "datalevin-py":
        return DatalevinPeer(label, people, work, spec)
    if label == "sqlite3-py":
        return SqlitePeer(label, True, people, work, spec)
    if label == "sqlite3-py-nosync":
        return SqlitePeer(label, False, people, work, spec)
    raise ValueError(f"unknown peer {label}")


def main(argv):
    if len(argv) != 7:
        log("usage: query.py PEER DATA.jsonl WORK_DIR SECONDS TASKS SPEC.json")
        return 64
    label, data, work, seconds, names, spec_path = argv[1:]
    with open(spec_path) as f:
        spec = json.load(f)
    spec["secs"] = float(seconds)
    tasks = {t["name"]: t for t in spec["tasks"]}
    wanted = [n for n in names.split(",") if n]
    for n in wanted:
        if n not in tasks:
            log(f"ERROR: unknown task {n}")
            return 64
    people = read_people(data)
    os.makedirs(work, exist_ok=True)
    log(f"{label}: {len(people)} people from {data}, {spec['secs']} s per task, "
        f"Python {sys.version.split()[0]}")
    try:
        peer = make_peer(label, people, work, spec)
    except ImportError as e:
        log(f"SKIP {label}: {e}")
        return 69
    if isinstance(peer, SqlitePeer):
        peer.lookup_task = tasks.get("lookup-raw")
    for n in wanted:
        t = tasks[n]
        head = {"peer": label, "workload": "Q", "task": n}
        try:
            if t["kind"] == "write":
                setup, body = peer.write(n)
                r = measure(spec, "write", setup, body, peer.finish)
            else:
                run = peer.lookup_raw() if n == "lookup-raw" else peer.query(t)
                r = measure(spec, "read", lambda: None, lambda _: run(), len)
            result(**head, **r)
        except OverCap as e:
            result(**head, skipped=str(e))
        except Exception as e:  # one task's failure is its cell's, not the run's
            log(f"ERROR: {n}: {type(e).__name__}: {e}")
            result(**head, error=f"{type(e).__name__}: {e}")
    peer.close()
    return 0


if __name__ == "__main__":
    code = main(sys.argv)
    sys.stdout.flush()
    sys.stderr.flush()
    # Not `sys.exit`: JPype's shutdown waits for Datalevin's non-daemon JVM threads, which
    # never end (the JVM harness ends with `System/exit` for the same reason).
    os._exit(code)
