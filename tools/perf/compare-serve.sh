#!/usr/bin/env bash
# compare-serve.sh [--out DIR] [perf-compare options...] — the external check of the README's Performance
# section: this checkout's `serve` (examples jar) against plain grpc-java, measured from outside both
# processes. Builds nothing; needs
#   examples/target/yarpc-examples.jar                 mvn -B -ntp -q package -DskipTests -pl examples -am
#   tools/perf/baseline-server/target/baseline-server.jar   mvn -q -f tools/perf/baseline-server/pom.xml package
# (SERVE_JAR and BASELINE_JAR override the paths). Starts both on free 127.0.0.1 ports with the same JVM
# flags (env PERF_JAVA_OPTS, default none), then runs
#   perf-compare.sh        gRPC:           A = grpc-java baseline, B = serve's gRPC inbound
#   perf-compare-http.sh   HTTP/1.1, h2c:  serve's HTTP inbound, against the baseline's gRPC in the same run
# and stops both servers (also on Ctrl-C). Every other option (--sizes, --seconds, --warmup, --rounds,
# --clients, --streams, --header, --no-heap...) goes to both scripts. Their tables go to stdout and to
# DIR/grpc/table.md and DIR/http/table.md (DIR: --out, default a new mktemp folder).
# Exit 0 only if both scripts passed.
set -uo pipefail
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
ROOT="$(cd "$HERE/../.." && pwd)"
SERVE_JAR=${SERVE_JAR:-$ROOT/examples/target/yarpc-examples.jar}
BASELINE_JAR=${BASELINE_JAR:-$HERE/baseline-server/target/baseline-server.jar}
PROG=compare-serve
OUT="" ARGS=()
while [ $# -gt 0 ]; do
  case "$1" in
    --out) OUT="$2"; shift 2 ;;
    -h|--help) sed -n '2,17p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) ARGS+=("$1"); shift ;;
  esac
done
fail() { echo "$PROG: FAIL: $*" >&2; exit 1; }
[ -f "$SERVE_JAR" ] || fail "$SERVE_JAR is missing (mvn -B -ntp -q package -DskipTests -pl examples -am)"
[ -f "$BASELINE_JAR" ] || fail "$BASELINE_JAR is missing (mvn -q -f tools/perf/baseline-server/pom.xml package)"
command -v ss >/dev/null || fail "ss not found (apt-get install -y iproute2)"
if [ -z "$OUT" ]; then OUT=$(mktemp -d -t compare-serve.XXXXXX) || fail "mktemp failed"; fi
mkdir -p "$OUT" || fail "cannot create $OUT"

free_port() {
  python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1]); s.close()'
}
PIDS=()
stop_servers() {
  local p
  for p in ${PIDS[@]+"${PIDS[@]}"}; do kill "$p" 2>/dev/null; done
  for p in ${PIDS[@]+"${PIDS[@]}"}; do
    for _ in $(seq 1 20); do kill -0 "$p" 2>/dev/null || break; sleep 0.5; done
    kill -9 "$p" 2>/dev/null || true
  done
  PIDS=()
}
trap stop_servers EXIT
trap 'exit 130' INT TERM

wait_listening() { # PORT PID NAME LOG
  for _ in $(seq 1 120); do
    ss -ltnH "sport = :$1" 2>/dev/null | grep -q . && return 0
    kill -0 "$2" 2>/dev/null || { cat "$4" >&2; fail "$3 exited before listening on $1"; }
    sleep 0.5
  done
  fail "$3 is not listening on $1 after 60 s"
}

BASE_PORT=$(free_port) HTTP_PORT=$(free_port) GRPC_PORT=$(free_port) TCH_PORT=$(free_port)
# shellcheck disable=SC2086 # PERF_JAVA_OPTS is a list of flags
java ${PERF_JAVA_OPTS:-} -jar "$BASELINE_JAR" "$BASE_PORT" >"$OUT/baseline.log" 2>&1 &
BASE_PID=$!
PIDS+=("$BASE_PID")
# shellcheck disable=SC2086
java ${PERF_JAVA_OPTS:-} -jar "$SERVE_JAR" serve --http-port "$HTTP_PORT" --grpc-port "$GRPC_PORT" \
  --tchannel-port "$TCH_PORT" >"$OUT/serve.log" 2>&1 &
SERVE_PID=$!
PIDS+=("$SERVE_PID")
wait_listening "$BASE_PORT" "$BASE_PID" baseline "$OUT/baseline.log"
wait_listening "$GRPC_PORT" "$SERVE_PID" serve "$OUT/serve.log"
wait_listening "$HTTP_PORT" "$SERVE_PID" serve "$OUT/serve.log"
echo "$PROG: baseline pid $BASE_PID on 127.0.0.1:$BASE_PORT; serve pid $SERVE_PID on HTTP $HTTP_PORT," \
  "gRPC $GRPC_PORT; JVM flags '${PERF_JAVA_OPTS:-}'; out $OUT" >&2

status=0
"$HERE/perf-compare.sh" "$BASE_PORT" "$GRPC_PORT" --label-a grpc-java --label-b yarpc \
  --pid-a "$BASE_PID" --pid-b "$SERVE_PID" --out "$OUT/grpc" ${ARGS[@]+"${ARGS[@]}"} || status=1
"$HERE/perf-compare-http.sh" "$HTTP_PORT" --pid "$SERVE_PID" --label yarpc --grpc-port "$BASE_PORT" \
  --grpc-pid "$BASE_PID" --h2c --out "$OUT/http" ${ARGS[@]+"${ARGS[@]}"} || status=1
if [ "$status" = 0 ]; then
  echo "$PROG: OK (tables in $OUT/grpc/table.md and $OUT/http/table.md)" >&2
else
  echo "$PROG: FAIL: a comparison failed (see above; logs in $OUT)" >&2
fi
exit "$status"
