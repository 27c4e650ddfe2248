#!/usr/bin/env bash
# Per-call cost of the commands Claude Code runs on every event: `autoctl statusline` (after
# every message) and `autoctl hook event` (every tool call), fed the real payloads recorded
# from Claude Code 2.1.332, against /bin/true (the process floor) and a typical status line,
# `jq -r .model.display_name`. Both autoctl commands do their whole job: parse, key the
# session, read and (on change) write the record in a fresh state dir.
# Goal: each autoctl command <= 2x /bin/true and <= 0.2x jq.
#
# Every command reads its payload from a redirect, so hyperfine runs them through `sh -c`
# and subtracts the shell's own start (measured by hyperfine); the ratios compare like with
# like.
set -euo pipefail
source "$(dirname "$0")/lib.sh"
require hyperfine jq
# AUTOCTL=PATH benchmarks a binary built already (a release build takes minutes here).
[ -x "${AUTOCTL:-}" ] || build_release

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
fixtures="$bench_root/tests/fixtures/hook/claude-code"
cp "$fixtures/reference/statusline-subscription.json" "$work/status.json"
cp "$fixtures/session/04-PreToolUse-Bash.json" "$work/pre.json"
export AUTOCTL_STATE_DIR="$work/state"
export TMUX="/tmp/tmux-bench/default,1,0" TMUX_PANE="%1"
# One call of each first, so the measured calls update an existing record as in a session.
"$AUTOCTL" statusline < "$work/status.json" >/dev/null
"$AUTOCTL" hook event < "$work/pre.json"

hyperfine --shell=sh --warmup 30 --min-runs 300 --export-json "$work/hooks.json" \
  -n statusline "$AUTOCTL statusline < $work/status.json" \
  -n "hook event" "$AUTOCTL hook event < $work/pre.json" \
  -n true "/bin/true < $work/status.json" \
  -n jq "jq -r .model.display_name < $work/status.json" \
  >/dev/null
ratios "$work/hooks.json" true
echo
echo "statusline / true: $(ratio "$work/hooks.json" statusline true)x (goal <= 2)"
echo "hook event / true: $(ratio "$work/hooks.json" "hook event" true)x (goal <= 2)"
echo "statusline / jq:   $(ratio "$work/hooks.json" statusline jq)x (goal <= 0.2)"
echo "hook event / jq:   $(ratio "$work/hooks.json" "hook event" jq)x (goal <= 0.2)"
