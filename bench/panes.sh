#!/usr/bin/env bash
# Reading panes, two comparisons in one hyperfine run each:
#  1. `autoctl pane classify -` on a 2,000-line capture (a real Claude Code 2.1.332
#     permission screen under ~1,960 lines of build log; and the same for a Codex CLI and a
#     Gemini CLI approval screen), every agent's rules loaded (they are one embedded file), vs
#     `grep -E` with as many patterns as the rules have `match`, `with` and `default_option`
#     patterns. Goal: <= 2x grep.
#  2. One `autoctl stall check --all-panes` pass over 50 live panes (ONE autoctl call that
#     captures all panes in one tmux client call, classifies, hashes, and saves the state
#     file) vs a naive shell loop running `tmux capture-pane | sha256sum` per pane.
#     Goal: <= 0.5x the naive loop.
set -euo pipefail
source "$(dirname "$0")/lib.sh"
require hyperfine python3 tmux grep
# AUTOCTL=PATH benchmarks a binary built already (a release build takes minutes here).
[ -x "${AUTOCTL:-}" ] || build_release

work=$(mktemp -d)
socket="autoctl-bench-$$"
trap 'tmux -L "$socket" kill-server 2>/dev/null || true; rm -rf "$work"' EXIT

# --- 1. classify vs grep -E --------------------------------------------------------------
screen="$bench_root/tests/fixtures/panes/claude-code-2.1.332/permission-bash-safe.txt"
pad() {
python3 - "$1" "$2" <<'PY'
import sys
screen = open(sys.argv[1]).read().rstrip("\n").split("\n")
log = [f"   Compiling crate-{i % 97} v0.{i % 13}.{i % 7} (/work/app/crates/crate-{i % 97})" if i % 3
       else f"warning: unused variable `x{i}` --> src/lib.rs:{i}:9" for i in range(2000 - len(screen))]
open(sys.argv[2], "w").write("\n".join(log + screen) + "\n")
PY
}
pad "$screen" "$work/capture.txt"
pad "$bench_root/tests/fixtures/panes/codex-0.169/approval-exec-npm-test.txt" "$work/codex.txt"
pad "$bench_root/tests/fixtures/panes/gemini-0.61/approval-shell-npm-test.txt" "$work/gemini.txt"
# The rules' match patterns, in the ERE dialect GNU grep -E reads.
"$AUTOCTL" pane rules --dump | python3 -c '
import json, re, sys
rules = json.load(sys.stdin)["rules"]
out = []
for r in rules:
    for p in r.get("match", []) + r.get("with", []) + r.get("default_option", []):
        p = p.replace("(?i)", "").replace("(?i-u)", "").replace("(?-u)", "").replace("(?:", "(").replace("\\d", "[0-9]")
        out.append(p)
print("\n".join(out))' > "$work/patterns.txt"
# Keep only the patterns grep accepts, and say how many.
: > "$work/ere.txt"
while IFS= read -r p; do
  if printf 'x\n' | grep -E -q -e "$p" 2>/dev/null || [ $? -eq 1 ]; then printf '%s\n' "$p" >> "$work/ere.txt"; fi
done < "$work/patterns.txt"
total=$(wc -l < "$work/patterns.txt"); kept=$(wc -l < "$work/ere.txt")
echo "classify: $(wc -l < "$work/capture.txt")-line capture; $total rule patterns, $kept accepted by grep -E"
echo "autoctl says: claude $("$AUTOCTL" pane classify - --foreground claude < "$work/capture.txt" | tr '\t' ' ')," \
  "codex $("$AUTOCTL" pane classify - --agent codex --foreground node < "$work/codex.txt" | tr '\t' ' ')," \
  "gemini $("$AUTOCTL" pane classify - --agent gemini --foreground node < "$work/gemini.txt" | tr '\t' ' ')"
cd "$work"
hyperfine --warmup 5 --runs 40 --export-json "$work/classify.json" \
  -n autoctl "$AUTOCTL pane classify - --foreground claude < capture.txt" \
  -n "autoctl codex" "$AUTOCTL pane classify - --agent codex --foreground node < codex.txt" \
  -n "autoctl gemini" "$AUTOCTL pane classify - --agent gemini --foreground node < gemini.txt" \
  -n "grep -E" "grep -E -i -c -f ere.txt capture.txt" \
  >/dev/null
ratios "$work/classify.json" "grep -E"
echo "autoctl / grep -E: $(ratio "$work/classify.json" autoctl "grep -E")x (goal <= 2)"
echo "autoctl codex / grep -E: $(ratio "$work/classify.json" "autoctl codex" "grep -E")x, autoctl gemini / grep -E: $(ratio "$work/classify.json" "autoctl gemini" "grep -E")x"
echo

# --- 2. one stall check pass over 50 panes vs a naive loop ------------------------------
tmux -L "$socket" new-session -d -s bench -x 120 -y 40 "cat '$screen'; exec sleep 600"
for i in $(seq 2 50); do
  tmux -L "$socket" new-window -d -t bench "cat '$screen'; exec sleep 600"
done
panes=$(tmux -L "$socket" list-panes -a -F '#{pane_id}' | wc -l)
echo "stall check: $panes live panes on socket $socket (ONE autoctl call for all of them)"
export AUTOCTL_TMUX_SOCKET="$socket" AUTOCTL_STATE_DIR="$work/state" SOCKET="$socket"
cat > "$work/naive.sh" <<'SH'
for p in $(tmux -L "$SOCKET" list-panes -a -F '#{pane_id}'); do
  tmux -L "$SOCKET" capture-pane -p -t "$p" | sha256sum
done
SH
"$AUTOCTL" stall check --all-panes --state "$work/stall.json" | head -1
hyperfine --warmup 3 --runs 20 --export-json "$work/stall.json.bench" \
  -n "autoctl stall check --all-panes" "$AUTOCTL stall check --all-panes --state $work/stall.json" \
  -n "naive loop" "bash $work/naive.sh" \
  >/dev/null
ratios "$work/stall.json.bench" "naive loop"
echo "autoctl / naive loop: $(ratio "$work/stall.json.bench" "autoctl stall check --all-panes" "naive loop")x (goal <= 0.5)"
