#!/usr/bin/env bash
# Runs one peer harness with the runtime install.sh put in bench/peers/.cache/.
# Usage: bench/peers/run.sh PEER SCRIPT [ARGS...]
#   bench/peers/run.sh datalevin write  CONDITION DB_DIR TOTAL BATCH CSV [WINDOW]
#   bench/peers/run.sh datalevin mixed  CONDITION DB_DIR ITERATIONS SEED CSV [WINDOW] [KEY_MAX]
#   bench/peers/run.sh datalevin query  DATA.jsonl WORK_DIR [SECONDS] [TASKS]
#   bench/peers/run.sh datomic   query  DATA.jsonl WORK_DIR [SECONDS] [TASKS]
#   bench/peers/run.sh datomic   history DATA.jsonl WORK_DIR [SECONDS] [ROWS] [MIN_RUNS]
#   bench/peers/run.sh datascript query DATA.jsonl WORK_DIR [SECONDS] [TASKS]
#   bench/peers/run.sh lucene    search DOCS.tsv QUERIES.tsv WORK_DIR OUT.tsv BATCH ROUNDS WARM
#   bench/peers/run.sh datalevin search DOCS.tsv QUERIES.tsv WORK_DIR OUT.tsv BATCH ROUNDS WARM
#   bench/peers/run.sh datalevin complex DATA_DIR WORK_DIR QUERIES_DIR SECS TIMEOUT_SECS QUERIES OUT_DIR
#   bench/peers/run.sh duckdb    complex DATA_DIR WORK_DIR QUERIES_DIR SECS TIMEOUT_SECS QUERIES OUT_DIR
#                      (the complex workload, TPC-H: crates/datalith-bench/src/complex/external.rs)
#   bench/peers/run.sh datalevin query DATA.jsonl WORK_DIR SECONDS TASKS dtlv://USER:PW@HOST:PORT
#                      (over Datalevin's server: bench/peers/README.md, "Datalevin's server")
#   bench/peers/run.sh datalith-py|datalith-py-nosync|datalevin-py|sqlite3-py|sqlite3-py-nosync \
#                      query DATA.jsonl WORK_DIR SECONDS TASKS SPEC.json   (workload Q from Python)
# Exit code 69 when the peer's runtime is not installed (the bench reports it as skipped).
set -euo pipefail
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
CACHE="$HERE/.cache"
[[ $# -ge 2 ]] || { echo "usage: run.sh PEER SCRIPT [ARGS...]" >&2; exit 64; }
peer="$1"; script="$2"; shift 2
missing() { echo "SKIP peer $peer not installed: $* (run bench/peers/install.sh $peer)" >&2; exit 69; }
case "$peer" in
  datalevin)
    [[ -x "$CACHE/bin/java21" && -f "$CACHE/datalevin-runtime.jar" ]] || missing "java21 or runtime jar"
    [[ -f "$HERE/datalevin/$script.clj" ]] || { echo "no such harness datalevin/$script.clj" >&2; exit 64; }
    # AOT classes first, so the jar's Clojure sources are not recompiled at every start.
    exec "$CACHE/bin/java21" --enable-native-access=ALL-UNNAMED \
      --add-opens=java.base/java.nio=ALL-UNNAMED --add-opens=java.base/sun.nio.ch=ALL-UNNAMED \
      ${PEERS_JVM_OPTS:-} \
      -cp "$CACHE/datalevin-classes:$CACHE/datalevin-runtime.jar" \
      clojure.main "$HERE/datalevin/$script.clj" "$@" ;;
  datomic)
    [[ -s "$CACHE/datomic.classpath" ]] || missing "classpath"
    [[ -f "$HERE/datomic/$script.clj" ]] || { echo "no such harness datomic/$script.clj" >&2; exit 64; }
    java_bin="${DATOMIC_JAVA:-$(command -v java || true)}"
    [[ -n "$java_bin" ]] || java_bin="$CACHE/bin/java21"
    [[ -x "$java_bin" ]] || missing "java"
    exec "$java_bin" ${PEERS_JVM_OPTS:-} -cp "$(cat "$CACHE/datomic.classpath")" \
      clojure.main "$HERE/datomic/$script.clj" "$@" ;;
  lucene)
    [[ -s "$CACHE/lucene.classpath" && -f "$CACHE/lucene-classes/Search.class" ]] || missing "classpath or compiled Search.java"
    [[ "$script" == search ]] || { echo "no such harness lucene/$script (only search)" >&2; exit 64; }
    java_bin="$(command -v java || true)"
    [[ -n "$java_bin" ]] || missing "java"
    exec "$java_bin" ${PEERS_JVM_OPTS:-} -cp "$CACHE/lucene-classes:$(cat "$CACHE/lucene.classpath")" \
      Search "$@" ;;
  datascript)
    [[ -f "$CACHE/datascript/node_modules/datascript/package.json" ]] || missing "npm package"
    [[ -f "$HERE/datascript/$script.js" ]] || { echo "no such harness datascript/$script.js" >&2; exit 64; }
    command -v node >/dev/null || missing "node"
    exec node "$HERE/datascript/$script.js" "$@" ;;
  duckdb)
    [[ -x "$CACHE/pyvenv-duckdb/bin/python" ]] || missing "the duckdb venv"
    [[ -f "$HERE/duckdb/$script.py" ]] || { echo "no such harness duckdb/$script.py" >&2; exit 64; }
    exec "$CACHE/pyvenv-duckdb/bin/python" "$HERE/duckdb/$script.py" "$@" ;;
  datalith-py|datalith-py-nosync)
    [[ -x "$CACHE/pyvenv-datalith/bin/python" ]] || missing "the Datalith wheel's venv"
    [[ -f "$HERE/python/$script.py" ]] || { echo "no such harness python/$script.py" >&2; exit 64; }
    exec "$CACHE/pyvenv-datalith/bin/python" "$HERE/python/$script.py" "$peer" "$@" ;;
  datalevin-py)
    [[ -x "$CACHE/venv/bin/python" && -x "$CACHE/bin/java21" ]] || missing "the datalevin venv or java21"
    [[ -f "$HERE/python/$script.py" ]] || { echo "no such harness python/$script.py" >&2; exit 64; }
    # JPype finds the JVM through JAVA_HOME; the AOT classes first, as for the datalevin peer.
    JAVA_HOME="$(cd "$(dirname "$(readlink -f "$CACHE/bin/java21")")/.." && pwd)" \
    DATALEVIN_CLASSPATH="$CACHE/datalevin-classes:$CACHE/datalevin-runtime.jar" \
    DATALEVIN_JVM_ARGS="${PEERS_JVM_OPTS:-}" \
      exec "$CACHE/venv/bin/python" "$HERE/python/$script.py" "$peer" "$@" ;;
  sqlite3-py|sqlite3-py-nosync)
    [[ -f "$HERE/python/$script.py" ]] || { echo "no such harness python/$script.py" >&2; exit 64; }
    py="$CACHE/pyvenv-datalith/bin/python"
    [[ -x "$py" ]] || py="$(command -v python3 || true)"
    [[ -n "$py" ]] || missing "python3"
    exec "$py" "$HERE/python/$script.py" "$peer" "$@" ;;
  *) echo "unknown peer '$peer' (datalevin, datomic, datascript, lucene, duckdb, datalith-py, datalevin-py, sqlite3-py)" >&2; exit 64 ;;
esac
