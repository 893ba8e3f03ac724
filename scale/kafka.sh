#!/usr/bin/env bash
# Runs Apache Kafka 4.x brokers on loopback for Datalith's shared transaction log
# (`datalith serve --log kafka://...`). KRaft mode: each broker is also a controller, so one
# broker or three form their own quorum; no ZooKeeper. The jars come from Maven Central
# (scale/pom.xml) and run on the machine's Java (17 or later).
#
# Usage: scale/kafka.sh up [1|3]      start 1 (default) or 3 brokers, wait until each listens
#        scale/kafka.sh down          stop them (SIGTERM, then SIGKILL after 30 s)
#        scale/kafka.sh kill N        SIGKILL broker N (1-based), for fault tests
#        scale/kafka.sh start N       start broker N again after a kill
#        scale/kafka.sh status        which brokers run, and the bootstrap address list
#        scale/kafka.sh bootstrap     print the bootstrap address list only
#
# Broker N listens on 127.0.0.1:$((KAFKA_PORT_BASE + N)) (clients) and
# 127.0.0.1:$((KAFKA_PORT_BASE + 100 + N)) (controllers); KAFKA_PORT_BASE defaults to 19090.
# Data and logs live under KAFKA_DIR (default /tmp/datalith-kafka); `up` starts from empty
# storage. Three brokers set min.insync.replicas=2 and replication factor 3, so a write acked
# with acks=all is on at least two brokers; one broker sets both to 1.
set -euo pipefail

HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
CACHE="$HERE/.cache"
KAFKA_DIR="${KAFKA_DIR:-/tmp/datalith-kafka}"
PORT_BASE="${KAFKA_PORT_BASE:-19090}"
HEAP="${KAFKA_HEAP:-512m}"

say() { printf '[kafka] %s\n' "$*" >&2; }
die() { printf '[kafka] ERROR: %s\n' "$*" >&2; exit 1; }

classpath() {
  if [[ ! -s "$CACHE/classpath.txt" ]]; then
    command -v mvn >/dev/null || die "mvn not found (Maven resolves the Kafka jars)"
    mkdir -p "$CACHE"
    say "resolving org.apache.kafka:kafka_2.13:4.4.0 from Maven Central"
    mvn -q -f "$HERE/pom.xml" dependency:build-classpath \
      -Dmdep.outputFile="$CACHE/classpath.txt" >&2 || die "mvn dependency:build-classpath failed"
  fi
  cat "$CACHE/classpath.txt"
}

brokers_file() { echo "$KAFKA_DIR/brokers"; }
count() { cat "$(brokers_file)" 2>/dev/null || echo 0; }
client_port() { echo $((PORT_BASE + $1)); }
controller_port() { echo $((PORT_BASE + 100 + $1)); }

bootstrap() {
  local n i out=""
  n="$(count)"
  for ((i = 1; i <= n; i++)); do out+="${out:+,}127.0.0.1:$(client_port "$i")"; done
  echo "$out"
}

write_properties() {
  local n="$1" i="$2" voters="" j
  for ((j = 1; j <= n; j++)); do voters+="${voters:+,}$j@127.0.0.1:$(controller_port "$j")"; done
  local isr=1
  ((n >= 3)) && isr=2
  cat > "$KAFKA_DIR/broker$i/server.properties" <<PROPS
process.roles=broker,controller
node.id=$i
controller.quorum.voters=$voters
listeners=PLAINTEXT://127.0.0.1:$(client_port "$i"),CONTROLLER://127.0.0.1:$(controller_port "$i")
advertised.listeners=PLAINTEXT://127.0.0.1:$(client_port "$i")
controller.listener.names=CONTROLLER
listener.security.protocol.map=PLAINTEXT:PLAINTEXT,CONTROLLER:PLAINTEXT
inter.broker.listener.name=PLAINTEXT
log.dirs=$KAFKA_DIR/broker$i/data
num.partitions=1
default.replication.factor=$n
min.insync.replicas=$isr
offsets.topic.replication.factor=$n
transaction.state.log.replication.factor=$n
transaction.state.log.min.isr=$isr
unclean.leader.election.enable=false
auto.create.topics.enable=false
group.initial.rebalance.delay.ms=0
log.retention.hours=-1
log.retention.bytes=-1
PROPS
}

start_one() {
  local i="$1" cp
  cp="$(classpath)"
  local dir="$KAFKA_DIR/broker$i"
  [[ -f "$dir/server.properties" ]] || die "broker $i was never set up (run: up)"
  if [[ -f "$dir/pid" ]] && kill -0 "$(cat "$dir/pid")" 2>/dev/null; then
    say "broker $i already runs (pid $(cat "$dir/pid"))"
    return
  fi
  nohup java "-Xmx$HEAP" "-Xms$HEAP" -XX:+UseG1GC \
    -Dlog4j2.configurationFile="$HERE/log4j2.properties" -Dkafka.logs.dir="$dir" \
    -cp "$cp" kafka.Kafka "$dir/server.properties" > "$dir/broker.log" 2>&1 &
  echo $! > "$dir/pid"
}

wait_listening() {
  local i="$1" port deadline
  port="$(client_port "$i")"
  deadline=$((SECONDS + 90))
  until (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null; do
    kill -0 "$(cat "$KAFKA_DIR/broker$i/pid")" 2>/dev/null \
      || die "broker $i exited; see $KAFKA_DIR/broker$i/broker.log"
    ((SECONDS < deadline)) || die "broker $i not listening on $port after 90 s"
    sleep 0.5
  done
}

up() {
  local n="${1:-1}" i cp
  [[ "$n" == 1 || "$n" == 3 ]] || die "up takes 1 or 3 brokers, not $n"
  command -v java >/dev/null || die "java not found (Kafka needs Java 17+)"
  if [[ "$(count)" != 0 ]]; then down; fi
  rm -rf "$KAFKA_DIR"
  mkdir -p "$KAFKA_DIR"
  cp="$(classpath)"
  local cluster
  cluster="$(java -cp "$cp" kafka.tools.StorageTool random-uuid 2>/dev/null | tail -1)"
  [[ -n "$cluster" ]] || die "StorageTool random-uuid printed nothing"
  for ((i = 1; i <= n; i++)); do
    mkdir -p "$KAFKA_DIR/broker$i"
    write_properties "$n" "$i"
    java -Dlog4j2.configurationFile="$HERE/log4j2.properties" -cp "$cp" kafka.tools.StorageTool format \
      --cluster-id "$cluster" --config "$KAFKA_DIR/broker$i/server.properties" --ignore-formatted \
      > "$KAFKA_DIR/broker$i/format.log" 2>&1 \
      || die "formatting broker $i failed; see $KAFKA_DIR/broker$i/format.log"
  done
  echo "$n" > "$(brokers_file)"
  for ((i = 1; i <= n; i++)); do start_one "$i"; done
  for ((i = 1; i <= n; i++)); do wait_listening "$i"; done
  say "$n broker(s) up: $(bootstrap)"
  bootstrap
}

down() {
  local n i pid deadline
  n="$(count)"
  for ((i = 1; i <= n; i++)); do
    pid="$(cat "$KAFKA_DIR/broker$i/pid" 2>/dev/null || true)"
    [[ -n "$pid" ]] && kill "$pid" 2>/dev/null || true
  done
  deadline=$((SECONDS + 30))
  for ((i = 1; i <= n; i++)); do
    pid="$(cat "$KAFKA_DIR/broker$i/pid" 2>/dev/null || true)"
    [[ -n "$pid" ]] || continue
    while kill -0 "$pid" 2>/dev/null; do
      if ((SECONDS >= deadline)); then kill -9 "$pid" 2>/dev/null || true; break; fi
      sleep 0.2
    done
  done
  echo 0 > "$(brokers_file)" 2>/dev/null || true
  say "down"
}

kill_one() {
  local i="$1" pid
  pid="$(cat "$KAFKA_DIR/broker$i/pid" 2>/dev/null)" || die "no broker $i"
  kill -9 "$pid" 2>/dev/null || true
  say "broker $i (pid $pid) killed"
}

status() {
  local n i pid
  n="$(count)"
  for ((i = 1; i <= n; i++)); do
    pid="$(cat "$KAFKA_DIR/broker$i/pid" 2>/dev/null || true)"
    if [[ -n "$pid" ]] && kill -0 "$pid" 2>/dev/null; then
      echo "broker $i: running (pid $pid) on 127.0.0.1:$(client_port "$i")"
    else
      echo "broker $i: stopped"
    fi
  done
  echo "bootstrap: $(bootstrap)"
}

case "${1:-}" in
  up) up "${2:-1}" ;;
  down) down ;;
  kill) kill_one "${2:?broker number}" ;;
  start) start_one "${2:?broker number}"; wait_listening "$2" ;;
  status) status ;;
  bootstrap) bootstrap ;;
  *) die "usage: scale/kafka.sh up [1|3] | down | kill N | start N | status | bootstrap" ;;
esac
