#!/usr/bin/env bash
# Prints where bench/peers/install.sh put each peer runtime, one KEY=VALUE per line, so the
# Rust bench (or a person) can find them. A peer that is not installed has <PEER>_STATUS=missing.
# Usage: bench/peers/env.sh        (source-able: eval "$(bench/peers/env.sh)")
set -uo pipefail
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
CACHE="$HERE/.cache"
echo "PEERS_DIR=$HERE"
echo "PEERS_CACHE=$CACHE"
echo "PEERS_RUN=$HERE/run.sh"

if [[ -x "$CACHE/bin/java21" && -f "$CACHE/datalevin-runtime.jar" ]]; then
  echo "DATALEVIN_STATUS=ok"
else
  echo "DATALEVIN_STATUS=missing"
fi
echo "DATALEVIN_JAVA=$CACHE/bin/java21"
echo "DATALEVIN_JAR=$(readlink -f "$CACHE/datalevin-runtime.jar" 2>/dev/null || echo "$CACHE/datalevin-runtime.jar")"
echo "DATALEVIN_CP=$CACHE/datalevin-classes:$CACHE/datalevin-runtime.jar"
echo "DATALEVIN_JVM_OPTS=--enable-native-access=ALL-UNNAMED --add-opens=java.base/java.nio=ALL-UNNAMED --add-opens=java.base/sun.nio.ch=ALL-UNNAMED"

if [[ -s "$CACHE/datomic.classpath" ]]; then
  echo "DATOMIC_STATUS=ok"
  echo "DATOMIC_CP=$(cat "$CACHE/datomic.classpath")"
else
  echo "DATOMIC_STATUS=missing"
  echo "DATOMIC_CP="
fi
echo "DATOMIC_JAVA=${DATOMIC_JAVA:-$(command -v java || echo "$CACHE/bin/java21")}"

if [[ -f "$CACHE/datascript/node_modules/datascript/package.json" ]] && command -v node >/dev/null; then
  echo "DATASCRIPT_STATUS=ok"
else
  echo "DATASCRIPT_STATUS=missing"
fi
echo "NODE=$(command -v node || true)"
echo "DATASCRIPT_MODULE=$CACHE/datascript/node_modules/datascript"
