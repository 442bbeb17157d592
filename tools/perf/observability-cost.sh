#!/usr/bin/env bash
# observability-cost.sh [--pairs N] [--rounds N] [--seconds S] [--rps R] [--observability O] [--out DIR]
# What observability costs a YARPC gRPC server per 350 B unary call, measured from outside: two server
# JVMs (the load harness's ServerProcess), `yarpc-grpc` with observability off (A) and the same system
# with it on (B: --observability O, default `on` = metrics into a Prometheus registry, call logs with
# successes off, tracing sampled out), loaded in turn by h2load at a FIXED rate (4 connections x 16
# streams, --rps R per connection, default 2000: 8,000 calls/s), so both do the same work per second.
# Server CPU per call comes from /proc/PID/stat (the whole process), split by thread from
# /proc/PID/task/*/stat: JIT compiler, GC, event loops, handler pool, other, and threads that exited
# during the round (the handler pool retires idle threads; rounding makes it a few ticks either way). --pairs fresh pairs of JVMs (default 3; the
# first to start alternates), each with a closed-loop warm-up and --rounds ABBA rounds of --seconds
# (default 4 rounds of 8 s). Prints every
# round and a summary: per-group medians of A and B, and the B/A ratio of the total, per round and per
# pair. Needs yarpc-benchmarks/target/yarpc-benchmarks.jar (BENCH_JAR overrides), h2load, ss, python3.
# Measure on a quiet machine: the last column of each round is the load average.
set -uo pipefail
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
ROOT="$(cd "$HERE/../.." && pwd)"
JAR=${BENCH_JAR:-$ROOT/yarpc-benchmarks/target/yarpc-benchmarks.jar}
PAIRS=3 ROUNDS=4 SECS=8 RPS=2000 OBS=on OUT=""
while [ $# -gt 0 ]; do
  case "$1" in
    --pairs) PAIRS="$2"; shift 2 ;;
    --rounds) ROUNDS="$2"; shift 2 ;;
    --seconds) SECS="$2"; shift 2 ;;
    --rps) RPS="$2"; shift 2 ;;
    --observability) OBS="$2"; shift 2 ;;
    --out) OUT="$2"; shift 2 ;;
    -h|--help) sed -n '2,15p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "observability-cost: unknown option $1 (--help)" >&2; exit 2 ;;
  esac
done
PROG=observability-cost
# shellcheck source=lib.sh
source "$HERE/lib.sh" # fail, need, pid_of_port; $UTIL: the request body builder
[ -f "$JAR" ] || fail "$JAR is missing (mvn -B -ntp -q package -DskipTests -pl yarpc-benchmarks -am)"
need h2load "apt-get install -y nghttp2-client"
need ss "apt-get install -y iproute2"
need python3 "apt-get install -y python3"
if [ -z "$OUT" ]; then OUT=$(mktemp -d -t observability-cost.XXXXXX) || fail "mktemp failed"; fi
mkdir -p "$OUT" && : > "$OUT/rounds.txt" || fail "cannot write to $OUT"

# the request: a gRPC frame of yarpc.benchmarks.EchoRequest{payload: 350 bytes, token: "bench"}
python3 "$UTIL" body 350 bench "$OUT/body" --grpc || fail "cannot build the request body"
H=(-H 'content-type: application/grpc' -H 'te: trailers' -d "$OUT/body")
# the servers exit when their stdin (a fifo this script holds open) closes
close_servers() { for fd in "${FDS[@]:-}"; do [ -n "$fd" ] && eval "exec $fd>&-"; done 2>/dev/null; }
trap close_servers EXIT
FDS=()

# A snapshot of PID's CPU ticks: "process TICKS" (the whole process, threads that exited included), then
# "TID GROUP TICKS" per live thread (groups: jit gc loop handler other)
snapshot() {
  local pid=$1 s; s=$(cat "/proc/$pid/stat") || return
  local rest=${s##*) }
  # shellcheck disable=SC2086
  set -- $rest
  echo "process $(( ${12} + ${13} ))"
  for t in /proc/$pid/task/*; do
    s=$(cat "$t/stat" 2>/dev/null) || continue
    local comm=${s#*(}; comm=${comm%)*}; rest=${s##*) }
    # shellcheck disable=SC2086
    set -- $rest
    local group
    case "$comm" in
      *Compiler*) group=jit ;;
      GC*|G1*|"VM Thread"|"VM Periodic"*) group=gc ;;
      yarpc-grpc-inbo*) group=loop ;;
      yarpc-bench-ser*) group=handler ;;
      *) group=other ;;
    esac
    echo "${t##*/} $group $(( ${12} + ${13} ))"
  done
}

# ticks between two snapshots: "total jit gc loop handler other exited" (exited: threads that ended
# between them, what the process total has beyond the live threads' deltas)
ticks_between() {
  awk 'FNR == NR { if ($1 == "process") p0 = $2; else before[$1] = $3; next }
       $1 == "process" { p1 = $2; next }
       { d = $3 - ($1 in before ? before[$1] : 0); g[$2] += d; live += d }
       END { printf "%d %d %d %d %d %d %d\n", p1 - p0, g["jit"], g["gc"], g["loop"], g["handler"],
             g["other"], (p1 - p0) - live }' "$1" "$2"
}

start() { # NAME ServerProcess-args...
  local name=$1; shift
  rm -f "$OUT/$name.in"; mkfifo "$OUT/$name.in"
  # the server exits when its stdin closes: this script holds the fifo's write end
  (java -cp "$JAR" io.yarpc.benchmarks.load.ServerProcess "$@" < "$OUT/$name.in" > "$OUT/$name.out" 2> "$OUT/$name.err" &)
  local fd; exec {fd}>"$OUT/$name.in"; FDS+=("$fd"); eval "FD_$name=$fd"
  for _ in $(seq 1 120); do grep -q "^ready" "$OUT/$name.out" 2>/dev/null && break; sleep 0.5; done
  local port; port=$(awk '/^ready/{print $2}' "$OUT/$name.out")
  [ -n "$port" ] || fail "server $name did not start: $(tail -3 "$OUT/$name.err")"
  local pid; pid=$(pid_of_port "$port")
  [ -n "$pid" ] && [ -d "/proc/$pid" ] || fail "no process found listening on port $port"
  eval "PORT_$name=$port PID_$name=$pid"
}
stop() { local fd; eval "fd=\$FD_$1"; eval "exec $fd>&-"; }

run() { # NAME h2load-args... -> "NAME calls ticks..."
  local name=$1; shift; local port pid; eval "port=\$PORT_$name"; eval "pid=\$PID_$name"
  snapshot "$pid" > "$OUT/before.txt"
  h2load "${H[@]}" -c 4 -m 16 -t 1 "$@" "http://127.0.0.1:$port/yarpc.benchmarks.Echo/Unary" > "$OUT/h2load.txt" 2>&1
  snapshot "$pid" > "$OUT/after.txt"
  local t; t=$(ticks_between "$OUT/before.txt" "$OUT/after.txt")
  local ok; ok=$(awk '/^requests:/{for(i=1;i<=NF;i++) if($(i+1) ~ /succeeded/) print $i}' "$OUT/h2load.txt")
  if [ -z "$ok" ] || [ "$ok" -le 0 ]; then
    echo "observability-cost: FAIL: no call succeeded against $name: $(tail -3 "$OUT/h2load.txt")" >&2
    kill -TERM $$ # run() runs in a subshell: stop the script itself
    exit 1
  fi
  echo "$name $ok $t"
}

echo "pair round system calls ticks(total jit gc loop handler other exited) load"
for p in $(seq 1 "$PAIRS"); do
  if [ $((p % 2)) = 1 ]; then
    start A --system yarpc-grpc; start B --system yarpc-grpc --observability "$OBS"
  else
    start B --system yarpc-grpc --observability "$OBS"; start A --system yarpc-grpc
  fi
  for n in A B; do run $n -n 200000 > /dev/null; done # warm-up: closed loop, then the fixed rate
  for n in A B; do run $n -D 10 --rps "$RPS" > /dev/null; done
  for r in $(seq 1 "$ROUNDS"); do
    if [ $((r % 2)) = 1 ]; then order="A B"; else order="B A"; fi
    for n in $order; do
      echo "$p $r $(run $n -D "$SECS" --rps "$RPS") $(cut -d' ' -f1 /proc/loadavg)"
    done
  done | tee -a "$OUT/rounds.txt"
  stop A; stop B; sleep 2
done

python3 - "$OUT/rounds.txt" "$(getconf CLK_TCK)" <<'PY'
import statistics as st, sys
rows = [l.split() for l in open(sys.argv[1])]
us_per_tick = 1e6 / int(sys.argv[2])
cell = {}
for p, r, n, ok, *ticks, load in rows:
    cell.setdefault((p, r), {})[n] = [int(t) * us_per_tick / int(ok) for t in ticks]
names = ['total', 'jit', 'gc', 'event loops', 'handler pool', 'other', 'exited threads']
print('\nserver CPU per call, median of %d rounds (us):' % len(cell))
print('%-13s %8s %8s %8s' % ('threads', 'off (A)', 'on (B)', 'B - A'))
for i, name in enumerate(names):
    a = st.median(c['A'][i] for c in cell.values()); b = st.median(c['B'][i] for c in cell.values())
    print('%-13s %8.2f %8.2f %+8.2f' % (name, a, b, b - a))
ratios = [c['B'][0] / c['A'][0] for c in cell.values()]
nojit = [(c['B'][0] - c['B'][1]) / (c['A'][0] - c['A'][1]) for c in cell.values()]
print('B/A total, per round:  ' + ' '.join('%.3f' % x for x in ratios) + '  median %.3f' % st.median(ratios))
print('B/A without JIT:       ' + ' '.join('%.3f' % x for x in nojit) + '  median %.3f' % st.median(nojit))
for p in sorted(set(p for p, r in cell)):
    rs = [c['B'][0] / c['A'][0] for (pp, r), c in cell.items() if pp == p]
    print('pair %s: B/A total median %.3f (%.3f-%.3f)' % (p, st.median(rs), min(rs), max(rs)))
PY
echo "rounds: $OUT/rounds.txt"
