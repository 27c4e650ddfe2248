#!/usr/bin/env bash
# Per-call cost of the commands Claude Code runs on every event: `autoctl statusline` (after
# every message) and `autoctl hook event` (every tool call), fed the real payloads recorded
# from Claude Code 2.1.332, against /bin/true (the process floor) and a typical status line,
# `jq -r .model.display_name`. Both autoctl commands do their whole job: parse, key the
# session, read and (on change) write the record in a fresh state dir. `hook event` changes
# the record on every call (a PreToolUse moves its clock); `statusline` is measured twice: on
# the same input (nothing to write, as between most messages) and with the context use
# changing on every call (a write each time).
# Goal: each autoctl command <= 2x /bin/true and <= 0.2x jq.
#
set -euo pipefail
source "$(dirname "$0")/lib.sh"
require jq python3
# AUTOCTL=PATH benchmarks a binary built already (a release build takes minutes here).
[ -x "${AUTOCTL:-}" ] || build_release

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
fixtures="$bench_root/tests/fixtures/hook/claude-code"
cp "$fixtures/reference/statusline-subscription.json" "$work/status.json"
jq -c '.context_window.used_percentage = 1' "$work/status.json" > "$work/status2.json"
cp "$fixtures/session/04-PreToolUse-Bash.json" "$work/pre.json"
export AUTOCTL_STATE_DIR="$work/state"
export TMUX="/tmp/tmux-bench/default,1,0" TMUX_PANE="%1"
# One call of each first, so the measured calls update an existing record as in a session.
"$AUTOCTL" statusline < "$work/status.json" >/dev/null
"$AUTOCTL" hook event < "$work/pre.json"

# hyperfine 1.15 cannot feed stdin without a shell, and its shell correction leaves
# /bin/true at ~0, so the runs are timed by a small harness instead: each command spawned
# directly (like hyperfine -N) with its payload on stdin, the commands interleaved round by
# round so load changes hit them alike, in a shuffled order each round so that none always
# runs right after jq (whose 20 ms run leaves the caches cold for the next command); medians
# of 300 runs after 30 warm-up rounds.
# With AUTOCTL_BASELINE (see lib.sh) the older build runs the same calls in the same rounds,
# on a state dir of its own.
if baseline; then
  AUTOCTL_STATE_DIR="$work/state-before" "$AUTOCTL_BASELINE" statusline < "$work/status.json" >/dev/null
  AUTOCTL_STATE_DIR="$work/state-before" "$AUTOCTL_BASELINE" hook event < "$work/pre.json"
fi
python3 - "$AUTOCTL" "$work/status.json" "$work/status2.json" "$work/pre.json" "${AUTOCTL_BASELINE:-}" "$work/state-before" <<'PY'
import os, random, statistics, subprocess, sys, time
autoctl, status, status2, pre, before, before_state = sys.argv[1:]
cmds = [
    ("statusline", [autoctl, "statusline"], [status]),
    ("statusline Δ", [autoctl, "statusline"], [status2, status]),
    ("hook event", [autoctl, "hook", "event"], [pre]),
    ("true", ["/bin/true"], [status]),
    ("jq", ["jq", "-r", ".model.display_name"], [status]),
]
env = {name: None for name, _, _ in cmds}
if before:
    before_env = dict(os.environ, AUTOCTL_STATE_DIR=before_state)
    for name, argv, payloads in cmds[:3]:
        cmds.append((name + "@before", [before] + argv[1:], payloads))
        env[name + "@before"] = before_env
times = {name: [] for name, _, _ in cmds}
shuffle = random.Random(18).shuffle
for round_ in range(330):
    order = list(cmds)
    shuffle(order)
    for name, argv, payloads in order:
        with open(payloads[round_ % len(payloads)], "rb") as f:
            t0 = time.perf_counter()
            subprocess.run(argv, stdin=f, stdout=subprocess.DEVNULL, check=True, env=env.get(name))
            t1 = time.perf_counter()
        if round_ >= 30:
            times[name].append(t1 - t0)
med = {name: statistics.median(v) for name, v in times.items()}
print(f"{'command':<19} {'median':>9} {'vs true':>8} {'vs jq':>7}")
for name in times:
    print(f"{name:<19} {med[name]*1000:>7.2f}ms {med[name]/med['true']:>7.2f}x {med[name]/med['jq']:>6.2f}x")
print()
for name in ("statusline", "statusline Δ", "hook event"):
    print(f"{name} / true: {med[name]/med['true']:.2f}x (goal <= 2); / jq: {med[name]/med['jq']:.2f}x (goal <= 0.2)")
if before:
    for name in ("statusline", "statusline Δ", "hook event"):
        print(f"{name} / {name}@before: {med[name]/med[name + '@before']:.2f}x (no regression: <= 1.05)")
PY
