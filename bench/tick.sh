#!/usr/bin/env bash
# Cost of one supervision pass: `autoctl run tick --all` over 1, 10 and 100 registered runs on
# live tmux panes, against the seed's per-run cost model done naively in shell: for each run,
# `tmux capture-pane | sha256sum` and an `sqlite3` UPDATE of its row.
#
# Both sides do a full heartbeat every time (`--heartbeat 1ms`). autoctl also reads each
# task's .auto-signal and .auto-stop, classifies each screen and enforces the limits, which
# the naive loop does not. Goals: autoctl <= 0.5x the naive loop at 100 runs, and growth from
# 10 to 100 runs linear or better (time(100) / time(10) <= 10).
set -euo pipefail
source "$(dirname "$0")/lib.sh"
require hyperfine tmux sqlite3 sha256sum python3
# AUTOCTL=PATH benchmarks a binary built already (a release build takes minutes here).
[ -x "${AUTOCTL:-}" ] || build_release

work=$(mktemp -d)
socket="autoctl-bench-$$"
trap 'tmux -L "$socket" kill-server 2>/dev/null || true; rm -rf "$work"' EXIT
export AUTOCTL_TMUX_SOCKET=$socket

# 100 live panes: an agent-like screen with a program (not a shell) in front.
for i in $(seq 1 100); do
  tmux -L "$socket" new-session -d -s "s$i" -x 160 -y 40 -- \
    bash -c "for n in \$(seq 1 30); do echo \"● exec: step \$n of 30 — editing src/module_\$n.rs\"; done; exec sleep 3600"
  mkdir -p "$work/tasks/t$i"
done
sleep 1

# Three registries (1, 10, 100 runs) and the naive loop's database, with the same rows; with
# AUTOCTL_BASELINE, three more that the older build registers and ticks (see lib.sh).
builds=("$AUTOCTL=")
if baseline; then builds+=("$AUTOCTL_BASELINE=@before"); fi
for build in "${builds[@]}"; do
  binary=${build%=*} suffix=${build##*=}
  for n in 1 10 100; do
    for i in $(seq 1 "$n"); do
      AUTOCTL_STATE_DIR="$work/state-$n$suffix" "$binary" run start --session "s$i" --task "$work/tasks/t$i" --agent generic
    done
    AUTOCTL_STATE_DIR="$work/state-$n$suffix" "$binary" run tick --all --heartbeat 1ms >/dev/null
  done
done
sqlite3 "$work/naive.db" "CREATE TABLE task_auto (session_name TEXT PRIMARY KEY, task_dir TEXT, last_capture_hash TEXT DEFAULT '', stall_count INTEGER DEFAULT 0); PRAGMA journal_mode=WAL;" >/dev/null
for i in $(seq 1 100); do
  sqlite3 "$work/naive.db" "INSERT INTO task_auto (session_name, task_dir) VALUES ('s$i', '$work/tasks/t$i');"
done
cat >"$work/naive.sh" <<'NAIVE'
#!/usr/bin/env bash
# naive.sh DB N: the seed's heartbeat, one run at a time.
set -euo pipefail
for i in $(seq 1 "$2"); do
  hash=$(tmux -L "$AUTOCTL_TMUX_SOCKET" capture-pane -p -t "=s$i:" | sha256sum | cut -d' ' -f1)
  sqlite3 "$1" "UPDATE task_auto SET stall_count = CASE WHEN last_capture_hash = '$hash' THEN stall_count + 1 ELSE 0 END, last_capture_hash = '$hash' WHERE session_name = 's$i';"
done
NAIVE
chmod +x "$work/naive.sh"

commands=()
for n in 1 10 100; do
  for build in "${builds[@]}"; do
    binary=${build%=*} suffix=${build##*=}
    commands+=(-n "autoctl-$n$suffix" "env AUTOCTL_STATE_DIR=$work/state-$n$suffix $binary run tick --all --heartbeat 1ms")
  done
  commands+=(-n "naive-$n" "$work/naive.sh $work/naive.db $n")
done
hyperfine --warmup 2 --min-runs 10 -N --export-json "$work/tick.json" "${commands[@]}" >/dev/null
ratios "$work/tick.json" naive-100
echo
echo "autoctl-100 / naive-100:   $(ratio "$work/tick.json" autoctl-100 naive-100)x (goal <= 0.5)"
echo "autoctl-100 / autoctl-10:  $(ratio "$work/tick.json" autoctl-100 autoctl-10)x (goal <= 10, linear)"
echo "naive-100 / naive-10:      $(ratio "$work/tick.json" naive-100 naive-10)x"
echo "autoctl-10 / naive-10:     $(ratio "$work/tick.json" autoctl-10 naive-10)x"
echo "autoctl-1 / naive-1:       $(ratio "$work/tick.json" autoctl-1 naive-1)x"
if baseline; then
  for n in 1 10 100; do
    echo "autoctl-$n / autoctl-$n@before: $(ratio "$work/tick.json" "autoctl-$n" "autoctl-$n@before")x (no regression: <= 1.05)"
  done
fi
