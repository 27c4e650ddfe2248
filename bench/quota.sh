#!/usr/bin/env bash
# The fleet registry's cost (issue 25's benchmark, its registry part): `autoctl run tick --all`
# over 1,000 runs registered in the embedded SQLite file and in a PostgreSQL database, the same
# runs on the same live tmux panes (20 panes, 50 runs watching each: an agent-like screen with
# a program in front). Both do a full heartbeat every time (`--heartbeat 1ms`): claim every
# run, capture and classify its pane, save its row. Goal: Postgres / SQLite <= 3x.
#
# PostgreSQL is Debian's (`initdb`, `pg_ctl` on PATH or in /usr/lib/postgresql/*/bin), a
# server of this script's own: initdb into a temp dir as nobody, listening on 127.0.0.1 on a
# free port and a socket dir in the temp dir, stopped at the end.
#
# Not here yet: the governor's simulation the issue also names (8 sessions on one account
# against a fake model server's scaled windows, with and without the governor).
#
# AUTOCTL=PATH benchmarks a binary built already (a release build takes minutes here);
# AUTOCTL_BASELINE=PATH runs another build beside it on the same registries (`NAME@before`);
# BENCH_RUNS changes the number of runs (default 1000), BENCH_MIN_RUNS hyperfine's (5).
set -euo pipefail
source "$(dirname "$0")/lib.sh"
require hyperfine tmux python3 setpriv
[ -x "${AUTOCTL:-}" ] || build_release
runs=${BENCH_RUNS:-1000}
panes=20

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
