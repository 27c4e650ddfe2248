#!/usr/bin/env bash
# How fast `autoctl run watch` reacts, and what it costs while nothing happens.
#
# 1. Signal-to-dispatch latency over 50 steps of a dispatch-mode loop of the scripted agent
#    (examples/fake-agent.sh --fixes 23: plan, check, 24 x exec/check, merge, report = 52 steps,
#    the first 50 transitions measured): from the moment the agent begins writing its
#    `.auto-signal` to the moment the next step's command starts in the pane (the first thing
#    the typed command does is stamp the time). Drivers, one after the other on fresh runs:
#      - `autoctl run watch --session S`;
#      - the same loop driven by `inotifywait -m` (inotify-tools) calling `autoctl run tick
#        --session S` on each write of .auto-signal/.auto-stop, ticking again with the same
#        backoff as the watcher (25 ms doubling) while the tick says the pane is not ready;
#      - a one-minute cron tick, computed: a signal lands uniformly within the minute, so it
#        waits 30 s on average (median 30 s, p95 57 s) plus one tick.
#    Goals: watch median <= 200 ms and <= the inotifywait pipeline's median.
# 2. Idle CPU over 60 s with 10 registered observe-mode runs on quiet panes (default
#    --heartbeat 60s, so one heartbeat falls in the window): the watcher vs the inotifywait
#    pipeline (10 inotifywait | bash loops, no heartbeat at all) vs cron (one `run tick --all`
#    a minute). CPU is user + system time of the process group, children included.
#    Goal: the watcher under 1% of a core.
#
# No hyperfine: a latency is one event inside a long-running process, not a command's run
# time. The script takes about two and a half minutes. BENCH_IDLE_SECONDS shortens step 2.
set -euo pipefail
source "$(dirname "$0")/lib.sh"
require tmux jq python3 inotifywait setsid
build_release

steps=50
fixes=23
idle_seconds=${BENCH_IDLE_SECONDS:-60}
work=$(mktemp -d "${TMPDIR:-/tmp}/autoctl-bench-watch.XXXXXX")
socket="autoctl-bench-watch-$$"
export AUTOCTL AUTOCTL_TMUX_SOCKET=$socket AUTOCTL_STATE_DIR="$work/state"
trap end_groups EXIT

module() { # module NAME: a task module in status draft
  mkdir -p "$work/tasks/$1"
  printf -- '---\ntitle: bench\nstatus: draft\ncreated: 2027-01-01T00:00:00Z\nupdated: 2027-01-01T00:00:00Z\n---\n' >"$work/tasks/$1/.index.md"
  printf '# Target\nMeasure how soon the next step is typed after a signal.\n' >"$work/tasks/$1/.target.md"
}
shell_pane() { # shell_pane NAME: a session with a bare bash whose prompt is `$ `
  tmux -L "$socket" new-session -d -s "$1" -x 200 -y 50 -- \
    env PATH="$(dirname "$AUTOCTL"):$PATH" PS1='$ ' bash --norc --noprofile
}
# The typed command: stamp when it starts, then run one step of the scripted agent.
cat >"$work/step" <<EOF
#!/usr/bin/env bash
printf 'typed step=%s at=%s\n' "\$1" "\$EPOCHREALTIME" >>"\$4"
exec "$bench_root/examples/fake-agent.sh" --delay 0.05 --fixes $fixes --log "\$4" --step "\$1" --checkpoint="\${2#ck=}" "\$3"
EOF
chmod +x "$work/step"
start_dispatch() { # start_dispatch NAME: register a dispatch-mode run of the agent
  module "$1"
  "$AUTOCTL" run start --session "$1" --task "$work/tasks/$1" --mode dispatch --agent generic \
    --max-iterations 1000 --timeout 1h \
    --command "$work/step {next} ck={checkpoint} {task} $work/$1.log"
}
wait_finished() { # wait_finished NAME: until the run has ended (at most two minutes)
  local deadline=$((SECONDS + 120))
  until [ "$("$AUTOCTL" run status --session "$1" --format json | jq -r .status)" != running ]; do
    [ "$SECONDS" -lt "$deadline" ] || { echo "bench: $1 did not finish; see $work/$1.log" >&2; tail -5 "$work/$1.log" >&2; exit 1; }
    sleep 0.2
  done
}
# latencies LOG: one line per transition, signal k written -> command k+1 started, in ms.
latencies() {
  python3 - "$1" "$steps" <<'PY'
import sys
wrote, typed = [], []
for line in open(sys.argv[1]):
    key, _, rest = line.partition(" ")
    fields = dict(f.split("=", 1) for f in rest.split() if "=" in f)
    if key == "wrote":
        wrote.append(float(fields["at"]))
    elif key == "typed":
        typed.append(float(fields["at"]))
pairs = list(zip(wrote, typed[1:]))
if len(pairs) < int(sys.argv[2]):
    sys.exit(f"bench: only {len(pairs)} transitions in {sys.argv[1]}")
for w, t in pairs[: int(sys.argv[2])]:
    print(f"{(t - w) * 1000:.3f}")
PY
}

# --- 1. latency ------------------------------------------------------------------------------
echo "latency: signal write -> next command starts in the pane, $steps steps"

# run watch
shell_pane w1
sleep 0.3
start_dispatch w1
"$AUTOCTL" run watch --session w1 >"$work/w1.jsonl" 2>"$work/w1.err" &
watch_pid=$!
wait_finished w1
wait "$watch_pid" || { echo "bench: run watch failed" >&2; cat "$work/w1.err" >&2; exit 1; }
latencies "$work/w1.log" >"$work/watch.ms"

# inotifywait | run tick
cat >"$work/inotify-driver" <<'EOF'
#!/usr/bin/env bash
# inotify-driver SESSION DIR: tick SESSION whenever DIR's signal or stop file is written.
session=$1
inotifywait -m -e close_write,moved_to --format '%f' "$2" 2>"$2.inotify.err" |
  while IFS= read -r name; do
    case $name in .auto-signal | .auto-stop) ;; *) continue ;; esac
    delay=25
    for _ in 1 2 3 4 5 6 7 8 9 10; do
      "$AUTOCTL" run tick --session "$session" >"$2.tick" || true
      grep -q '"decision":"wait"' "$2.tick" || break
      sleep "0.$(printf '%03d' "$delay")"
      delay=$((delay * 2 > 999 ? 999 : delay * 2))
    done
  done
EOF
chmod +x "$work/inotify-driver"
shell_pane i1
sleep 0.3
start_dispatch i1
setsid "$work/inotify-driver" i1 "$work/tasks/i1" &
groups+=($!)
until grep -q "Watches established" "$work/tasks/i1.inotify.err" 2>/dev/null; do sleep 0.05; done
"$AUTOCTL" run tick --session i1 >/dev/null   # the entry step, as the watcher's first heartbeat
wait_finished i1
kill -TERM -- "-${groups[0]}"
latencies "$work/i1.log" >"$work/inotify.ms"

read -r w_med w_p95 w_max < <(summary "$work/watch.ms")
read -r i_med i_p95 i_max < <(summary "$work/inotify.ms")
printf '%-24s %10s %10s %10s\n' driver median p95 max
printf '%-24s %8sms %8sms %8sms\n' "autoctl run watch" "$w_med" "$w_p95" "$w_max"
printf '%-24s %8sms %8sms %8sms\n' "inotifywait + run tick" "$i_med" "$i_p95" "$i_max"
printf '%-24s %8sms %8sms %10s\n' "cron, 1 min (computed)" 30000 57000 60000
echo
echo "watch median:                  ${w_med}ms (goal <= 200ms: $(python3 -c "print(f'{$w_med / 200:.2f}')")x of the goal)"
echo "watch / inotifywait median:    $(python3 -c "print(f'{$w_med / $i_med:.2f}')")x (goal <= 1)"
echo "watch / inotifywait p95:       $(python3 -c "print(f'{$w_p95 / $i_p95:.2f}')")x"
echo "cron median / watch median:    $(python3 -c "print(f'{30000 / $w_med:.0f}')")x"

# --- 2. idle CPU -----------------------------------------------------------------------------
# cpu_seconds PID...: CPU time (user + system) of these processes and every process in their
# process groups: live threads to the nanosecond (schedstat), reaped children (the watcher's
# tmux calls) in clock ticks (10 ms: the kernel truncates their sum when it is read).
cpu_seconds() {
  python3 - "$@" <<'PY'
import os, sys
hz = os.sysconf("SC_CLK_TCK")
groups = set(sys.argv[1:])
total = 0.0
for pid in filter(str.isdigit, os.listdir("/proc")):
    try:
        stat = open(f"/proc/{pid}/stat").read()
        fields = stat[stat.rindex(")") + 2 :].split()
        if pid not in groups and fields[2] not in groups:  # pid, pgrp
            continue
        for tid in os.listdir(f"/proc/{pid}/task"):
            total += int(open(f"/proc/{pid}/task/{tid}/schedstat").read().split()[0]) / 1e9
        total += (int(fields[13]) + int(fields[14])) / hz  # cutime cstime
    except (OSError, ValueError, IndexError):
        continue
print(f"{total:.6f}")
PY
}
echo
echo "idle CPU over ${idle_seconds}s, 10 registered runs on quiet panes"
export AUTOCTL_STATE_DIR="$work/idle-state"
for i in $(seq 1 10); do
  module "idle$i"
  tmux -L "$socket" new-session -d -s "idle$i" -x 120 -y 30 -- sleep 3600
  "$AUTOCTL" run start --session "idle$i" --task "$work/tasks/idle$i" --agent generic --timeout 1h >/dev/null
done
tmux_pid=$(tmux -L "$socket" display-message -p '#{pid}')
setsid "$AUTOCTL" run watch --all >"$work/idle.jsonl" 2>"$work/idle.err" &
watch_group=$!
groups+=("$watch_group")
for i in $(seq 1 10); do
  setsid "$work/inotify-driver" "idle$i" "$work/tasks/idle$i" &
  groups+=($!)
done
sleep 2   # the watcher's first heartbeat; every inotifywait armed
inotify_groups=("${groups[@]:2}")
w0=$(cpu_seconds "$watch_group"); i0=$(cpu_seconds "${inotify_groups[@]}"); t0=$(cpu_seconds "$tmux_pid")
sleep "$idle_seconds"
w1=$(cpu_seconds "$watch_group"); i1=$(cpu_seconds "${inotify_groups[@]}"); t1=$(cpu_seconds "$tmux_pid")
kill -0 "$watch_group" || { echo "bench: the watcher died" >&2; cat "$work/idle.err" >&2; exit 1; }
heartbeats=$(jq -r "select(.heartbeat) | .time" "$work/idle.jsonl" | sort -u | wc -l)
# cron: one `run tick --all` a minute over the same runs (a full heartbeat, as after a minute).
python3 - "$w0" "$w1" "$i0" "$i1" "$t0" "$t1" "$idle_seconds" "$heartbeats" "$AUTOCTL" <<'PY'
import resource, subprocess, sys
w0, w1, i0, i1, t0, t1, secs = (float(x) for x in sys.argv[1:8])
heartbeats, autoctl = sys.argv[8], sys.argv[9]
runs = 5
before = resource.getrusage(resource.RUSAGE_CHILDREN)
for _ in range(runs):
    subprocess.run([autoctl, "run", "tick", "--all", "--heartbeat", "1ms"], check=True, stdout=subprocess.DEVNULL)
after = resource.getrusage(resource.RUSAGE_CHILDREN)
tick = (after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime) / runs
watch = (w1 - w0) / secs * 100
inotify = (i1 - i0) / secs * 100
cron = tick / 60 * 100
print(f"{'driver':<26} {'CPU, % of one core':>20}")
print(f"{'autoctl run watch':<26} {watch:>19.3f}%   ({(w1 - w0) * 1000:.1f} ms; {heartbeats} heartbeats since it started)")
print(f"{'inotifywait (10 loops)':<26} {inotify:>19.3f}%   ({(i1 - i0) * 1000:.1f} ms; no heartbeat)")
print(f"{'cron, run tick --all/min':<26} {cron:>19.3f}%   ({tick * 1000:.1f} ms per tick)")
print(f"{'(tmux server, shared)':<26} {(t1 - t0) / secs * 100:>19.3f}%   (answers every capture)")
print()
print(f"watch idle CPU: {watch:.3f}% of a core (goal < 1%: {watch:.2f}x of the goal)")
PY
echo "watch stderr lines: $(wc -l <"$work/idle.err"); JSON lines: $(wc -l <"$work/idle.jsonl")"
