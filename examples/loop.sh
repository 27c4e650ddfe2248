#!/usr/bin/env bash
# A scripted agent loop driven by autoctl alone: plan -> check -> exec -> check -> merge ->
# report, through `autoctl next`, `autoctl signal write` and `autoctl stop check`.
#
# The "agent" here is a shell function that answers each step the way a real one would
# (one NEEDS_FIX on the first verification, to show the loop correcting itself). Replace it
# with your agent invocation; the loop around it stays the same.
#
#   examples/loop.sh            # builds autoctl if it is not on PATH, runs in a temp dir
#   AUTOCTL=/path/to/autoctl examples/loop.sh
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
if [ -z "${AUTOCTL:-}" ]; then
  if command -v autoctl >/dev/null; then
    AUTOCTL=$(command -v autoctl)
  else
    # Say so before the wait, and let cargo show its progress (stderr).
    if [ -x "$here/../target/debug/autoctl" ]; then
      echo "loop: checking that autoctl is built and current (cargo build)…" >&2
    else
      echo "loop: building autoctl (first time only, about 3 minutes)…" >&2
    fi
    (cd "$here/.." && cargo build)
    AUTOCTL="$here/../target/debug/autoctl"
  fi
fi
autoctl() { command "$AUTOCTL" "$@"; } # `command`: AUTOCTL=autoctl must not call this function

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
task="$work/TASK/login-rate-limit"
mkdir -p "$task"
cat > "$task/.index.md" <<'INDEX'
---
title: Rate-limit the login endpoint
status: draft
created: 2026-11-25T09:00:00Z
updated: 2026-11-25T09:00:00Z
---
# Rate-limit the login endpoint
INDEX
cat > "$task/.target.md" <<'TARGET'
# Target
Limit failed logins to five per minute per account and per IP, with a clear error message.
TARGET

fixes=0
agent() { # agent STEP CHECKPOINT -> sets $result (no subshell, so it can remember fixes)
  case "$1" in
    plan) result="(generated)" ;;
    exec) result="(done)" ;;
    check)
      case "$2" in
        post-plan) result=PASS ;;
        post-exec) if [ "$fixes" -eq 0 ]; then fixes=1; result=NEEDS_FIX; else result=ACCEPT; fi ;;
        *) result=CONTINUE ;;
      esac ;;
    merge) result=success ;;
    report) result="(done)" ;;
  esac
}

max_iterations=20
iteration=0
echo "task: $task"
while :; do
  if reason=$(autoctl stop check "$task"); then
    echo "stop requested: $reason"
    break
  fi
  IFS=$'\t' read -r step checkpoint < <(autoctl next --task "$task")
  if [ "$step" = "(stop)" ]; then
    echo "loop complete after $iteration iterations"
    break
  fi
  agent "$step" "${checkpoint:-}"
  autoctl signal write "$task" --step "$step" --result "$result" --iteration "$iteration"
  printf 'iteration %2d  %-6s %-10s -> %-14s next: %s\n' "$iteration" "$step" \
    "${checkpoint:+($checkpoint)}" "$result" "$(autoctl signal read "$task" --field next)"
  iteration=$((iteration + 1))
  if [ "$iteration" -ge "$max_iterations" ]; then
    autoctl stop write "$task" --reason max_iterations
  fi
done
# Seed 000's cleanup: the loop removes its transient files on exit.
autoctl signal clear "$task"
autoctl stop clear "$task"
