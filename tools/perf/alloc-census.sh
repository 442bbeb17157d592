#!/usr/bin/env bash
# alloc-census.sh [--size BYTES] [--calls N] [--warmup-calls N] [--out DIR] — every object a unary gRPC echo
# call allocates on the server, counted, for this checkout's `serve` against plain grpc-java: where the
# "heap per call" of compare-serve.sh goes, by thread, type and allocation site. Builds nothing; needs
#   examples/target/yarpc-examples.jar                      mvn -B -ntp -q package -DskipTests -pl examples -am
#   tools/perf/baseline-server/target/baseline-server.jar   mvn -q -f tools/perf/baseline-server/pom.xml package
#   tools/perf/alloc-census/target/alloc-census.jar         mvn -q -f tools/perf/alloc-census/pom.xml package
# Each server runs alone under Google's allocation instrumenter and the census agent (many times slower:
# counts only, never timings): h2load sends --warmup-calls calls (default 60000), then --calls calls (default
# 20000, 4 connections x 16 streams, the request and headers of perf-compare.sh) with the census on. The
# report (stdout and DIR/census.md) gives bytes per call of each, and B - A by thread, by type and by site.
# Not counted: what the instrumenter cannot see (instances of capturing lambdas, whose classes are hidden;
# arrays made through Unsafe, as behind string concatenation; the JVM's own). Totals match the JFR heap
# per call of compare-serve.sh within a few per cent.
set -uo pipefail
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
ROOT="$(cd "$HERE/../.." && pwd)"
SERVE_JAR=${SERVE_JAR:-$ROOT/examples/target/yarpc-examples.jar}
BASELINE_JAR=${BASELINE_JAR:-$HERE/baseline-server/target/baseline-server.jar}
AGENT_DIR=$HERE/alloc-census/target
PROG=alloc-census
SIZE=350 CALLS=20000 WARMUP=60000 OUT=""
while [ $# -gt 0 ]; do
  case "$1" in
    --size) SIZE="$2"; shift 2 ;;
    --calls) CALLS="$2"; shift 2 ;;
    --warmup-calls) WARMUP="$2"; shift 2 ;;
    --out) OUT="$2"; shift 2 ;;
    -h|--help) sed -n '2,13p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "$PROG: unknown option $1" >&2; exit 2 ;;
  esac
done
# shellcheck source=lib.sh
. "$HERE/lib.sh"
[ -f "$SERVE_JAR" ] || fail "$SERVE_JAR is missing (mvn -B -ntp -q package -DskipTests -pl examples -am)"
[ -f "$BASELINE_JAR" ] || fail "$BASELINE_JAR is missing (mvn -q -f tools/perf/baseline-server/pom.xml package)"
for jar in alloc-census.jar java-allocation-instrumenter.jar; do
  [ -f "$AGENT_DIR/$jar" ] || fail "$AGENT_DIR/$jar is missing (mvn -q -f tools/perf/alloc-census/pom.xml package)"
done
need h2load "apt-get install -y nghttp2-client"
need ss "apt-get install -y iproute2"
need curl "apt-get install -y curl"
if [ -z "$OUT" ]; then OUT=$(mktemp -d -t alloc-census.XXXXXX) || fail "mktemp failed"; fi
mkdir -p "$OUT/check" || fail "cannot create $OUT"
# the request perf-compare.sh sends (same token, so the same bytes)
python3 "$HERE/perf_util.py" body "$SIZE" perf-token-0123456789 "$OUT/body" --grpc || fail "cannot write the request"

PID=""
stop() { [ -z "$PID" ] || { kill "$PID" 2>/dev/null; wait "$PID" 2>/dev/null; PID=""; }; }
trap stop EXIT
trap 'exit 130' INT TERM
free_port() {
  python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1]); s.close()'
}
HEADERS=(-H 'content-type: application/grpc' -H 'te: trailers' -H 'rpc-caller: perf'
  -H 'rpc-service: yarpc-test' -H 'rpc-encoding: proto')
url_of() { echo "http://127.0.0.1:$1/yarpc.examples.echo.Echo/Echo"; }
load() { # PORT CALLS LOG
  h2load -n "$2" -c 4 -m 16 -t 1 -d "$OUT/body" "${HEADERS[@]}" "$(url_of "$1")" >"$3" 2>&1 ||
    fail "h2load failed: $(tail -3 "$3")"
  grep -q "$2 succeeded, 0 failed" "$3" || fail "not every call succeeded: $(grep requests: "$3")"
}
census() { # NAME PORT COMMAND...
  local name=$1 port=$2 dir="$OUT/$1"
  shift 2
  rm -rf "$dir" && mkdir -p "$dir"
  java -javaagent:"$AGENT_DIR/java-allocation-instrumenter.jar" -javaagent:"$AGENT_DIR/alloc-census.jar=$dir" \
    "$@" >"$OUT/$name.log" 2>&1 &
  PID=$!
  for _ in $(seq 1 240); do
    ss -ltnH "sport = :$port" 2>/dev/null | grep -q . && break
    kill -0 "$PID" 2>/dev/null || fail "$name exited: $(tail -5 "$OUT/$name.log")"
    sleep 0.5
  done
  ss -ltnH "sport = :$port" 2>/dev/null | grep -q . || fail "$name is not listening on $port after 120 s"
  log "$PROG: $name (pid $PID): $WARMUP calls of warm-up, then $CALLS counted"
  check_echo "$name" grpc "$(url_of "$port")" "$OUT/body" "${HEADERS[@]}"
  load "$port" "$WARMUP" "$OUT/$name-warmup.txt"
  touch "$dir/on"
  sleep 1
  load "$port" "$CALLS" "$OUT/$name-census.txt"
  touch "$dir/off"
  for _ in $(seq 1 600); do [ -f "$dir/done" ] && break; sleep 0.5; done
  [ -f "$dir/done" ] || fail "$name wrote no census"
  stop
}

BASE_PORT=$(free_port)
census grpc-java "$BASE_PORT" -jar "$BASELINE_JAR" "$BASE_PORT"
GRPC_PORT=$(free_port) HTTP_PORT=$(free_port) TCH_PORT=$(free_port)
census yarpc "$GRPC_PORT" -jar "$SERVE_JAR" serve --http-port "$HTTP_PORT" --grpc-port "$GRPC_PORT" \
  --tchannel-port "$TCH_PORT"
python3 "$HERE/perf_util.py" census "$OUT/grpc-java" "$OUT/yarpc" "$CALLS" --label-a grpc-java --label-b yarpc \
  | tee "$OUT/census.md"
log "$PROG: raw counts in $OUT/grpc-java and $OUT/yarpc"
