"""The complex workload (TPC-H's 22 queries) on DuckDB, one harness run per pass.

Usage (bench/peers/README.md; the protocol is crates/datalith-bench/src/complex/external.rs):

    complex.py DATA_DIR WORK_DIR QUERIES_DIR SECS TIMEOUT_SECS QUERIES OUT_DIR

- DATA_DIR: dbgen's `.tbl` files and their `MARKER` (generator and scale factor);
- WORK_DIR: the DuckDB database file `tpch.duckdb` and its `LOADED` marker: a load is reused
  when the marker names the same data (the data's MARKER), this layout and DuckDB's version;
- QUERIES_DIR: `qNN.sql`, PostgreSQL's text (parameters put in), run as it is;
- SECS, TIMEOUT_SECS: per query one warm-up run (its answer written to OUT_DIR/qN.tsv), then
  timed runs for SECS (at least one), the median; a run past TIMEOUT_SECS is interrupted
  (`con.interrupt()` from a timer thread) and reported `"timeout":true`;
- QUERIES: `q1,q2,...`.

Prints `RESULT {json}` lines: one for the load when it loads, one per query.
Types: keys, refs and integers BIGINT, money and quantities DECIMAL(15,2) (the spec's type,
as PostgreSQL, the reference, has it), dates DATE, text VARCHAR. No indexes or constraints
(DuckDB joins by hashing). DuckDB runs with `threads` set to THREADS (2: the machine's cores).
"""

import datetime
import decimal
import json
import os
import shutil
import sys
import threading
import time

import duckdb

THREADS = 2
LAYOUT = "duckdb-complex 1"

# The eight tables in load order: (name, [(column, type)]), in the .tbl files' column order
# (crates/datalith-bench/src/complex/tables.rs).
K, I, D, T, S = "BIGINT", "BIGINT", "DECIMAL(15,2)", "DATE", "VARCHAR"
TABLES = [
    ("region", [("r_regionkey", K), ("r_name", S), ("r_comment", S)]),
    ("nation", [("n_nationkey", K), ("n_name", S), ("n_regionkey", K), ("n_comment", S)]),
    ("part", [("p_partkey", K), ("p_name", S), ("p_mfgr", S), ("p_brand", S), ("p_type", S),
              ("p_size", I), ("p_container", S), ("p_retailprice", D), ("p_comment", S)]),
    ("supplier", [("s_suppkey", K), ("s_name", S), ("s_address", S), ("s_nationkey", K),
                  ("s_phone", S), ("s_acctbal", D), ("s_comment", S)]),
    ("partsupp", [("ps_partkey", K), ("ps_suppkey", K), ("ps_availqty", I),
                  ("ps_supplycost", D), ("ps_comment", S)]),
    ("customer", [("c_custkey", K), ("c_name", S), ("c_address", S), ("c_nationkey", K),
                  ("c_phone", S), ("c_acctbal", D), ("c_mktsegment", S), ("c_comment", S)]),
    ("orders", [("o_orderkey", K), ("o_custkey", K), ("o_orderstatus", S), ("o_totalprice", D),
                ("o_orderdate", T), ("o_orderpriority", S), ("o_clerk", S),
                ("o_shippriority", I), ("o_comment", S)]),
    ("lineitem", [("l_orderkey", K), ("l_partkey", K), ("l_suppkey", K), ("l_linenumber", I),
                  ("l_quantity", D), ("l_extendedprice", D), ("l_discount", D), ("l_tax", D),
                  ("l_returnflag", S), ("l_linestatus", S), ("l_shipdate", T),
                  ("l_commitdate", T), ("l_receiptdate", T), ("l_shipinstruct", S),
                  ("l_shipmode", S), ("l_comment", S)]),
]


def result(**fields):
    print("RESULT " + json.dumps({"peer": "duckdb", "workload": "complex", **fields}), flush=True)


def log(*xs):
    print("duckdb:", *xs, flush=True)


def die(code, msg):
    print(f"ERROR: {msg}", file=sys.stderr, flush=True)
    sys.exit(code)


def sql_str(s):
    return "'" + s.replace("'", "''") + "'"


def load(con, data):
    """Creates and fills the tables from the .tbl files; returns the seconds it took."""
    start = time.perf_counter()
    for name, cols in TABLES:
        t0 = time.perf_counter()
        con.execute(f"CREATE TABLE {name} ({', '.join(f'{c} {t}' for c, t in cols)})")
        # Each line ends with a '|': one more (empty) column, read and dropped.
        spec = ", ".join(f"{sql_str(c)}: {sql_str(t)}" for c, t in cols)
        path = os.path.join(data, f"{name}.tbl")
        con.execute(
            f"INSERT INTO {name} SELECT {', '.join(c for c, _ in cols)} FROM read_csv("
            f"{sql_str(path)}, delim='|', header=false, quote='', escape='', "
            f"columns={{{spec}, 'trailing_': 'VARCHAR'}}, dateformat='%Y-%m-%d')"
        )
        n = con.execute(f"SELECT count(*) FROM {name}").fetchone()[0]
        log(f"loaded {name}: {n} rows in {time.perf_counter() - t0:.1f} s")
    con.execute("CHECKPOINT")
    return time.perf_counter() - start


def open_or_load(data, work):
    """The database in WORK_DIR, loaded now unless a complete load of the same data is there."""
    try:
        with open(os.path.join(data, "MARKER")) as f:
            data_marker = f.read()
    except OSError as e:
        die(1, f"{data}: no MARKER ({e}): generate the data with datalith-bench complex first")
    want = f"{data_marker.strip()} {LAYOUT} duckdb {duckdb.__version__}\n"
    marker = os.path.join(work, "LOADED")
    path = os.path.join(work, "tpch.duckdb")
    config = {"threads": THREADS}
    try:
        with open(marker) as f:
            if f.read() == want:
                log("reusing", path)
                return duckdb.connect(path, config=config), None
    except OSError:
        pass
    if os.path.isdir(work):
        shutil.rmtree(work)
    os.makedirs(work)
    con = duckdb.connect(path, config=config)
    secs = load(con, data)
    with open(marker, "w") as f:
        f.write(want)
    return con, secs


def cell(v):
    if v is None:
        return "\\N"
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, decimal.Decimal):
        return format(v, "f")
    if isinstance(v, float):
        return repr(v)
    if isinstance(v, (datetime.date, datetime.datetime)):
        return v.strftime("%Y-%m-%d")
    return str(v)


class Timeout(Exception):
    pass


def run_once(con, sql, timeout):
    """Runs `sql` to its last row; raises Timeout when it ran past `timeout` seconds."""
    fired = threading.Event()

    def stop():
        fired.set()
        con.interrupt()

    timer = threading.Timer(timeout, stop)
    timer.start()
    try:
        return con.execute(sql).fetchall()
    except duckdb.InterruptException:
        if fired.is_set():
            raise Timeout()
        raise
    finally:
        timer.cancel()


def median(xs):
    v = sorted(xs)
    n = len(v)
    return v[n // 2] if n % 2 else (v[n // 2 - 1] + v[n // 2]) / 2


def stem(name):
    return f"q{int(name.lstrip('q')):02d}"


def main(argv):
    if len(argv) != 7:
        die(64, "usage: complex.py DATA_DIR WORK_DIR QUERIES_DIR SECS TIMEOUT_SECS QUERIES OUT_DIR")
    data, work, qdir, secs, timeout, queries, out = argv
    try:
        secs, timeout = float(secs), float(timeout)
    except ValueError:
        die(64, "SECS and TIMEOUT_SECS must be numbers")
    os.makedirs(out, exist_ok=True)
    con, load_secs = open_or_load(data, work)
    if load_secs is not None:
        result(query="load", seconds=round(load_secs, 3), threads=THREADS)
    log(f"duckdb {duckdb.__version__}, threads",
        con.execute("SELECT current_setting('threads')").fetchone()[0])
    for name in [q for q in queries.split(",") if q]:
        try:
            with open(os.path.join(qdir, f"{stem(name)}.sql")) as f:
                sql = f.read()
        except OSError as e:
            result(query=name, error=f"query file: {e}")
            continue
        try:
            rows = run_once(con, sql, timeout)
            with open(os.path.join(out, f"{name}.tsv"), "w") as f:
                for r in rows:
                    f.write("\t".join(cell(v) for v in r) + "\n")
            times = []
            start = time.perf_counter()
            while not times or time.perf_counter() - start < secs:
                t0 = time.perf_counter()
                again = run_once(con, sql, timeout)
                times.append((time.perf_counter() - t0) * 1e3)
                if len(again) != len(rows):
                    raise RuntimeError(
                        f"a timed run gave {len(again)} rows, the warm-up run {len(rows)}")
            result(query=name, median_ms=round(median(times), 6), runs=len(times),
                   rows=len(rows), threads=THREADS)
        except Timeout:
            result(query=name, timeout=True)
        except Exception as e:  # the query failed: reported, the next one runs
            result(query=name, error=f"{type(e).__name__}: {e}".splitlines()[0][:500])
    con.close()


if __name__ == "__main__":
    main(sys.argv[1:])
