#!/usr/bin/env bash
# Soak `autoctl run watch`: run it for an hour (SOAK_SECONDS) over a few busy loops and show
# that it does not leak: its resident memory (VmRSS) and open file descriptors at the start
# (after a warm-up) and at the end, with samples in between.
#
# The loops never rest: two dispatch-mode loops and one observe-mode loop of the scripted
# agent (examples/fake-agent.sh, 16 steps each) are started again as soon as they finish, so
# the watcher keeps arming and dropping watches, picking up new runs from the registry,
# dispatching steps and heartbeating (--heartbeat 10s) for the whole run.
#
#   bench/soak.sh                      # one hour
#   SOAK_SECONDS=120 bench/soak.sh     # a quick look
set -euo pipefail
source "$(dirname "$0")/lib.sh"
require tmux jq
build_release

seconds=${SOAK_SECONDS:-3600}
sample_every=${SOAK_SAMPLE:-300}
work=$(mktemp -d "${TMPDIR:-/tmp}/autoctl-soak.XXXXXX")
socket="autoctl-soak-$$"
# Copies of the binary and the agent: edits during the hour must not change what is measured.
cp "$AUTOCTL" "$work/autoctl"
AUTOCTL="$work/autoctl"
export AUTOCTL AUTOCTL_TMUX_SOCKET=$socket AUTOCTL_STATE_DIR="$work/state"
watcher=""
cleanup() {
  [ -n "$watcher" ] && kill "$watcher" 2>/dev/null || true
  tmux -L "$socket" kill-server 2>/dev/null || true
  sleep 0.3
  rm -rf "$work"
}
trap cleanup EXIT
cp "$bench_root/examples/fake-agent.sh" "$work/fake-agent.sh"
fake="$work/fake-agent.sh"

module() {
  mkdir -p "$work/tasks/$1"
  printf -- '---\ntitle: soak\nstatus: draft\ncreated: 2027-01-01T00:00:00Z\nupdated: 2027-01-01T00:00:00Z\n---\n' >"$work/tasks/$1/.index.md"
  printf '# Target\nKeep the watcher busy for an hour without leaking anything.\n' >"$work/tasks/$1/.target.md"
}
start() { # start SESSION MODE
  local session=$1 mode=$2
  if [ "$mode" = dispatch ]; then
    "$AUTOCTL" run start --session "$session" --task "$work/tasks/$session" --mode dispatch \
      --agent generic --max-iterations 1000 --timeout 1h \
      --command "$fake --delay 0.5 --fixes 5 --step {next} --checkpoint={checkpoint} {task}"
  else
    "$AUTOCTL" run start --session "$session" --task "$work/tasks/$session" --agent generic \
      --max-iterations 1000 --timeout 1h --launch "$fake --delay 0.5 --fixes 5 {task}"
  fi
}
sessions=(d1:dispatch d2:dispatch o1:observe)
for entry in "${sessions[@]}"; do
  name=${entry%%:*}
  module "$name"
  tmux -L "$socket" new-session -d -s "$name" -x 200 -y 50 -- \
    env PATH="$(dirname "$AUTOCTL"):$PATH" PS1='$ ' bash --norc --noprofile
done
sleep 0.5

"$AUTOCTL" run watch --all --heartbeat 10s >"$work/watch.jsonl" 2>"$work/watch.err" &
watcher=$!
sleep 0.5

sample() { # sample LABEL: elapsed, RSS and open fds of the watcher
  local rss fds
  rss=$(awk '/^VmRSS/ {print $2}' "/proc/$watcher/status")
  fds=$(find "/proc/$watcher/fd" -mindepth 1 -maxdepth 1 | wc -l)
  printf '%-8s %6ss  rss %6s KiB  fds %3s  lines %6s\n' "$1" "$SECONDS" "$rss" "$fds" "$(wc -l <"$work/watch.jsonl")"
}

SECONDS=0
loops=0
next_sample=$sample_every
start_line=""
while [ "$SECONDS" -lt "$seconds" ]; do
  for entry in "${sessions[@]}"; do
    name=${entry%%:*} mode=${entry#*:}
    state=$("$AUTOCTL" run status --session "$name" --format json 2>/dev/null | jq -r .status || echo none)
    if [ "$state" != running ]; then
      start "$name" "$mode" 2>>"$work/start.err" && loops=$((loops + 1))
    fi
  done
  if [ -z "$start_line" ] && [ "$SECONDS" -ge 30 ]; then
    start_line=$(sample start)
    echo "$start_line"
  fi
  if [ "$SECONDS" -ge "$next_sample" ]; then
    sample sample
    next_sample=$((next_sample + sample_every))
  fi
  kill -0 "$watcher" || { echo "soak: the watcher died" >&2; cat "$work/watch.err" >&2; exit 1; }
  sleep 1
done
end_line=$(sample end)
echo "$end_line"
kill -TERM "$watcher"
status=0
wait "$watcher" || status=$?
watcher=""
echo
echo "loops started: $loops; JSON lines: $(wc -l <"$work/watch.jsonl")"
jq -r .decision "$work/watch.jsonl" | sort | uniq -c | sort -rn | sed 's/^/  /'
echo "stderr lines: $(wc -l <"$work/watch.err") (warnings and per-run errors)"
sed 's/^/  /' "$work/watch.err" | sort | uniq -c | sort -rn | head -5
echo "exit status after SIGTERM: $status (expected 0)"
echo
echo "$start_line" | awk '{print "start: rss " $4 " KiB, fds " $7}'
echo "$end_line" | awk '{print "end:   rss " $4 " KiB, fds " $7}'
