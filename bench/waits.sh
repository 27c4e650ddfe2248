#!/usr/bin/env bash
# How soon a usage limit's end reaches the agent, and how soon a person hears of it.
#
# 20 simulated resets under one `autoctl run watch --all --heartbeat 60s --notify CMD`, one
# after the other: each is a fresh run (`run start --resume-margin $margin`) on a tmux pane with
# the scripted agent (tests/fixtures/agents/scripted-agent.py) showing Claude Code 2.1.332 idle
# at its prompt, and a quota-wait record (`<project>/.autoctl/quota-wait.json`, what `hook
# stop-failure` writes for a usage limit) whose reset is 3 s ahead, to the millisecond.
#   1. reset -> resume: from the reset time to the Enter of `continue` reaching the agent (the
#      key log's modification time). Goal: median <= margin + 2 s.
#   2. notification: from the deciding tick's time (the event's `time`) to the notify command
#      reading the `resume` event. Goal: median <= 1 s.
# Peers, on the same panes and resets:
#   - `sleep` until reset + margin, then `tmux send-keys` (the auto-resume scripts' method; a
#     floor: it knows the reset in advance and checks nothing);
#   - a one-minute cron tick (computed: the reset falls uniformly within the minute, so the
#     resume waits margin + 30 s on average, p95 margin + 57 s).
#
# No hyperfine: a latency is one event inside a long-running process. Two to four minutes.
# BENCH_RESETS and BENCH_MARGIN (seconds, default 1) change the run.
set -euo pipefail
source "$(dirname "$0")/lib.sh"
require tmux jq python3 setsid
build_release

resets=${BENCH_RESETS:-20}
margin=${BENCH_MARGIN:-1}
lead=3
work=$(mktemp -d "${TMPDIR:-/tmp}/autoctl-bench-waits.XXXXXX")
socket="autoctl-bench-waits-$$"
export AUTOCTL AUTOCTL_TMUX_SOCKET=$socket AUTOCTL_STATE_DIR="$work/state"
trap end_groups EXIT

fixtures="$bench_root/tests/fixtures/panes/claude-code-2.1.332"
agent_pane() { # agent_pane NAME: the scripted agent idle at its prompt, keys logged to NAME.keys
  tmux -L "$socket" new-session -d -s "$1" -x 120 -y 40 -- python3 \
    "$bench_root/tests/fixtures/agents/scripted-agent.py" --as claude "$work/$1.keys" \
    "$fixtures/idle-after-reply.txt" "enter:$fixtures/working-streaming.txt"
  local deadline=$((SECONDS + 10))
  until [ -e "$work/$1.keys" ]; do
    [ "$SECONDS" -lt "$deadline" ] || { echo "bench: agent $1 did not start" >&2; exit 1; }
    sleep 0.02
  done
}
project() { # project NAME RESET: a project with a task module and a quota-wait record
  mkdir -p "$work/$1/.autoctl" "$work/$1/task"
  printf -- '---\ntitle: bench\nstatus: draft\ncreated: 2027-01-01T00:00:00Z\nupdated: 2027-01-01T00:00:00Z\n---\n' >"$work/$1/task/.index.md"
  printf '# Target\nResume after the usage limit.\n' >"$work/$1/task/.target.md"
  printf '{"since":"%s","kind":"rate_limit","reset_at":"%s"}\n' "$(date -u +%FT%T.%3NZ)" "$2" \
    >"$work/$1/.autoctl/quota-wait.json"
}
iso_in() { date -u -d "@$1" +%FT%T.%3NZ; } # iso_in EPOCH.FRAC
resumed_at() { # resumed_at NAME: when `continue` + Enter had reached the agent (epoch s)
  local deadline=$((SECONDS + 30))
  until [ "$(cat "$work/$1.keys")" = $'continue\r' ]; do
    [ "$SECONDS" -lt "$deadline" ] || { echo "bench: $1 was not resumed: $(od -c "$work/$1.keys" | head -3)" >&2; exit 1; }
    sleep 0.02
  done
  stat -c %.6Y "$work/$1.keys"
}

# --- autoctl run watch -----------------------------------------------------------------------
cat >"$work/notify" <<'EOF'
#!/bin/sh
# The notify command: stamp when the event was read, with the event.
event=$(cat)
printf '%s %s\n' "$(date +%s.%N)" "$event" >>"$NOTIFY_LOG"
EOF
chmod +x "$work/notify"
export NOTIFY_LOG="$work/notify.log"
# One session that stays, so killing a measured one never ends the tmux server under the next.
tmux -L "$socket" new-session -d -s keep -- sleep 3600
setsid "$AUTOCTL" run watch --all --heartbeat 60s --notify "$work/notify" \
  >"$work/watch.jsonl" 2>"$work/watch.err" &
groups+=($!)
sleep 1
: >"$work/watch.ms"
for i in $(seq 1 "$resets"); do
  agent_pane "w$i"
  reset=$(python3 -c "import time; print(f'{time.time() + $lead:.3f}')")
  project "w$i" "$(iso_in "$reset")"
  "$AUTOCTL" run start --session "w$i" --task "$work/w$i/task" --resume-margin "${margin}s" \
    --timeout 1h >/dev/null
  typed=$(resumed_at "w$i")
  python3 -c "print(f'{($typed - $reset) * 1000:.1f}')" >>"$work/watch.ms"
  "$AUTOCTL" run stop --session "w$i" >/dev/null
  tmux -L "$socket" kill-session -t "w$i"
done
sleep 1   # the last notification
python3 - "$work/notify.log" >"$work/notify.ms" <<'PY'
import json, sys
from datetime import datetime
for line in open(sys.argv[1]):
    at, _, event = line.partition(" ")
    event = json.loads(event)
    if event["event"] != "resume":
        continue
    decided = datetime.fromisoformat(event["time"].replace("Z", "+00:00")).timestamp()
    print(f"{(float(at) - decided) * 1000:.1f}")
PY
[ "$(wc -l <"$work/notify.ms")" -eq "$resets" ] ||
  { echo "bench: $(wc -l <"$work/notify.ms") resume notifications for $resets resets" >&2; exit 1; }

# --- sleep until the reset, then send-keys ---------------------------------------------------
: >"$work/sleep.ms"
for i in $(seq 1 "$resets"); do
  agent_pane "s$i"
  reset=$(python3 -c "import time; print(f'{time.time() + $lead:.3f}')")
  setsid bash -c "sleep \$(python3 -c 'import time; print(max(0, $reset + $margin - time.time()))')
    tmux -L $socket send-keys -t s$i -l continue && tmux -L $socket send-keys -t s$i Enter" &
  typed=$(resumed_at "s$i")
  python3 -c "print(f'{($typed - $reset) * 1000:.1f}')" >>"$work/sleep.ms"
  tmux -L "$socket" kill-session -t "s$i"
done

read -r w_med w_p95 w_max < <(summary "$work/watch.ms" 0)
read -r n_med n_p95 n_max < <(summary "$work/notify.ms" 0)
read -r s_med s_p95 s_max < <(summary "$work/sleep.ms" 0)
echo "reset -> resume reaching the agent, $resets resets, --resume-margin ${margin}s"
printf '%-30s %10s %10s %10s\n' driver median p95 max
printf '%-30s %8sms %8sms %8sms\n' "autoctl run watch" "$w_med" "$w_p95" "$w_max"
printf '%-30s %8sms %8sms %8sms\n' "sleep + tmux send-keys" "$s_med" "$s_p95" "$s_max"
printf '%-30s %8sms %8sms %8sms\n' "cron, 1 min (computed)" $((margin * 1000 + 30000)) $((margin * 1000 + 57000)) $((margin * 1000 + 60000))
echo "watch median - margin: $((w_med - margin * 1000))ms (goal <= 2000ms)"
echo "watch median - sleep median: $((w_med - s_med))ms"
echo
echo "notification: deciding tick -> notify command reads the resume event, $resets events"
printf '%-30s %8sms %8sms %8sms\n' "autoctl --notify" "$n_med" "$n_p95" "$n_max"
echo "median: goal <= 1000ms"
