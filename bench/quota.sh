#!/usr/bin/env bash
# Issue 25's benchmark, in two parts (`bench/quota.sh [governor|registry|sim]`; governor and
# registry by default).
#
# 1. The quota governor in real time (bench/quota-watch.py): a fake model server enforces one
#    token budget per account window, scaled ("5 hours" are 300 s of the wall clock); 8 fake
#    agent sessions of one account run dispatch-mode loops in real tmux panes under one
#    `autoctl run watch --all`. Each step makes 3 model calls 3 s apart, each spending its
#    tokens at the server and reporting the windows with `autoctl statusline`, as Claude
#    Code's status line does; a call the window cannot pay for hits the limit mid-step, shows
#    Claude Code's banner and continues by itself at the reset. Three windows with the
#    governor and three with `--no-governor`, the two side by side (separate servers, tmux
#    sockets and state dirs): about 16 minutes. Goals with the governor: 0 limit hits
#    mid-step, each window >= 90% used, at most --resume-burst (2) resumes in any minute
#    after a reset (a session that made no call for 30 s starts a step or retries its limited
#    call: released from a pace, or back from the limit), 0 hard stops.
#    `sim` runs the same on a simulated clock (bench/quota-sim.py: `run tick --all` every 15 s
#    of it at AUTOCTL_NOW, steps spent at once): minutes, for a quick look while changing the
#    governor; not the benchmark.
#
# 2. The fleet registry's cost: `autoctl run tick --all` over 1,000 runs registered in the
#    embedded SQLite file and in a PostgreSQL database, the same runs on the same live tmux
#    panes (20 panes, 50 runs watching each: an agent-like screen with a program in front).
#    Both do a full heartbeat every time (`--heartbeat 1ms`): claim every run, capture and
#    classify its pane, save its row. Goal: Postgres / SQLite <= 3x. PostgreSQL is Debian's
#    (`initdb`, `pg_ctl` on PATH or in /usr/lib/postgresql/*/bin), a server of this script's
#    own: initdb into a temp dir as nobody, listening on 127.0.0.1 on a free port and a socket
#    dir in the temp dir, stopped at the end.
#
# AUTOCTL=PATH benchmarks a binary built already (a release build takes minutes here);
# AUTOCTL_BASELINE=PATH runs another build beside it on the same registries (`NAME@before`);
# BENCH_RUNS changes the number of runs (default 1000), BENCH_MIN_RUNS hyperfine's (5).
set -euo pipefail
source "$(dirname "$0")/lib.sh"
require hyperfine tmux python3 setpriv
[ -x "${AUTOCTL:-}" ] || build_release
export AUTOCTL
part=${1:-all}
runs=${BENCH_RUNS:-1000}
panes=20

governor_table() {
  python3 - "$1/on.json" "$1/off.json" <<'PY'
import json, sys
on, off = (json.load(open(p)) for p in sys.argv[1:])
rows = [
    ("steps that hit the limit mid-step", "limit_hits_mid_step", "0"),
    ("share of each window used", "window_used_share", ">= 0.9 each"),
    ("most resumes in a minute after a reset", "max_resumes_in_a_minute_after_a_reset", "<= 2"),
    ("hard stops (runs ended or escalated)", "hard_stops", "0"),
    ("steps done", "steps", ""),
]
print(f"{'':44}  {'governor':>20}  {'--no-governor':>20}  goal")
for label, key, goal in rows:
    print(f"{label:44}  {str(on[key]):>20}  {str(off[key]):>20}  {goal}")
PY
}

if [ "$part" = all ] || [ "$part" = governor ]; then
  live=$(mktemp -d "${TMPDIR:-/tmp}/autoctl-bench-quota-watch.XXXXXX")
  echo "governor: 8 sessions, one account, three 300 s windows of the wall clock, under run watch ($(uptime))" >&2
  python3 "$(dirname "$0")/quota-watch.py" --work "$live/on" --governor on >"$live/on.json" &
  on=$!
  python3 "$(dirname "$0")/quota-watch.py" --work "$live/off" --governor off >"$live/off.json" &
  off=$!
  wait "$on"; wait "$off"
  echo "load after: $(uptime)" >&2
  governor_table "$live"
  [ -z "${BENCH_KEEP:-}" ] && rm -rf "$live" || echo "kept $live" >&2
  [ "$part" = all ] || exit 0
  echo
fi

if [ "$part" = sim ]; then
  sim=$(mktemp -d "${TMPDIR:-/tmp}/autoctl-bench-quota-sim.XXXXXX")
  echo "governor: 8 sessions, one account, three 300 s windows of a simulated clock ($(uptime))" >&2
  for governor in on off; do
    python3 "$(dirname "$0")/quota-sim.py" --work "$sim/$governor" --governor "$governor" >"$sim/$governor.json"
  done
  governor_table "$sim"
  rm -rf "$sim"
  exit 0
fi

pg_bin=$(dirname "$(command -v initdb 2>/dev/null || ls /usr/lib/postgresql/*/bin/initdb 2>/dev/null | sort -V | tail -n 1)")
[ -x "$pg_bin/pg_ctl" ] || { echo "bench: no PostgreSQL server (apt-get install postgresql)" >&2; exit 2; }

work=$(mktemp -d "${TMPDIR:-/tmp}/autoctl-bench-quota.XXXXXX")
chmod 755 "$work"
socket="autoctl-bench-quota-$$"
export AUTOCTL_TMUX_SOCKET=$socket
as_pg() { if [ "$(id -u)" -eq 0 ]; then setpriv --reuid=65534 --regid=65534 --clear-groups -- "$@"; else "$@"; fi; }
stop_pg() { [ -d "$work/pg/data" ] && as_pg "$pg_bin/pg_ctl" -D "$work/pg/data" -m immediate stop >/dev/null 2>&1 || true; }
trap 'stop_pg; end_groups' EXIT

mkdir -p "$work/pg/run"
[ "$(id -u)" -ne 0 ] || chown -R 65534:65534 "$work/pg"
as_pg "$pg_bin/initdb" --auth=trust --username=autoctl --no-sync -E UTF8 -D "$work/pg/data" >/dev/null
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
as_pg "$pg_bin/pg_ctl" -w -D "$work/pg/data" -l "$work/pg/server.log" \
  -o "-c listen_addresses=127.0.0.1 -p $port -k $work/pg/run -c fsync=off" start >/dev/null
url="postgres://autoctl@127.0.0.1:$port/postgres?sslmode=disable"

for p in $(seq 1 "$panes"); do
  tmux -L "$socket" new-session -d -s "p$p" -x 160 -y 40 -- \
    bash -c "for n in \$(seq 1 30); do echo \"● exec: step \$n of 30 — editing src/module_\$n.rs\"; done; exec sleep 3600"
done
echo "registering $runs runs in each registry …" >&2
for i in $(seq 1 "$runs"); do
  mkdir -p "$work/tasks/t$i"
  target="=p$(( (i - 1) % panes + 1 )):"
  for registry in "$work/state" "$url"; do
    case $registry in
      postgres://*) r=(--registry "$registry") ;;
      *) r=(); export AUTOCTL_STATE_DIR=$registry ;;
    esac
    "$AUTOCTL" run start "${r[@]}" --session "s$i" --target "$target" --task "$work/tasks/t$i" \
      --agent generic --timeout 1d
  done
done
export AUTOCTL_STATE_DIR="$work/state"
"$AUTOCTL" run tick --all --heartbeat 1ms >/dev/null
"$AUTOCTL" run tick --all --heartbeat 1ms --registry "$url" >/dev/null

commands=(-n sqlite "$AUTOCTL run tick --all --heartbeat 1ms"
  -n postgres "$AUTOCTL run tick --all --heartbeat 1ms --registry $url")
if baseline; then
  commands+=(-n sqlite@before "$AUTOCTL_BASELINE run tick --all --heartbeat 1ms"
    -n postgres@before "$AUTOCTL_BASELINE run tick --all --heartbeat 1ms --registry $url")
fi
echo "load before: $(uptime)" >&2
hyperfine --warmup 1 --min-runs "${BENCH_MIN_RUNS:-5}" -N --export-json "$work/quota.json" "${commands[@]}" >/dev/null
echo "load after: $(uptime)" >&2
ratios "$work/quota.json" sqlite
echo
echo "postgres / sqlite at $runs runs: $(ratio "$work/quota.json" postgres sqlite)x (goal <= 3)"
if baseline; then
  echo "before: postgres / sqlite at $runs runs: $(ratio "$work/quota.json" postgres@before sqlite@before)x"
fi
