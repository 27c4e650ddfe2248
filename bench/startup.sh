#!/usr/bin/env bash
# Startup cost of the per-call commands every hook call, tick and shell-loop step pays, in one
# hyperfine run beside the floors: a Rust "hello world" built with -O here, the same hello
# linked statically like the shipped autoctl (the like-for-like reference: both start without
# a dynamic loader), /bin/true (the process floor) and jq reading the same lookup from a JSON
# table. Goal (issue 26): each autoctl command's median <= 1.3x the static hello. `hook event`
# is fed a recorded PreToolUse payload, which needs hyperfine >= 1.16 (--input, without a
# shell); an older hyperfine is refused with one line, never a table without that row
# (HYPERFINE=PATH picks a newer one; bench/hooks.sh measures `hook event` with any).
# AUTOCTL_BASELINE=PATH adds the same commands run by an older build (see lib.sh).
set -euo pipefail
source "$(dirname "$0")/lib.sh"
require hyperfine jq rustc
# AUTOCTL=PATH benchmarks a binary built already (a release build takes minutes here).
[ -x "${AUTOCTL:-}" ] || build_release

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cat > "$work/table.json" <<'JSON'
{"check": {"PASS": "exec", "NEEDS_REVISION": "plan", "ACCEPT": "merge", "NEEDS_FIX": "exec",
           "REPLAN": "plan", "BLOCKED": "(stop)", "CONTINUE": "exec"},
 "exec": {"(done)": "check", "(mid-exec)": "check", "(blocked)": "(stop)"},
 "merge": {"success": "report", "conflict": "(stop)"}}
JSON
# The reference: the smallest Rust program that prints a line, optimized.
echo 'fn main() { println!("exec"); }' > "$work/hello.rs"
rustc -O -o "$work/hello" "$work/hello.rs"
# The same hello linked the way the static autoctl is (cargo build-static): what is left of
# autoctl's start once no dynamic loader runs.
rustc -O -C target-feature=+crt-static -C relocation-model=static -o "$work/hello-static" "$work/hello.rs"
# A task dir without a stop request, and a valid signal file.
mkdir -p "$work/task"
cat > "$work/signal.json" <<'JSON'
{"step":"check","result":"PASS","next":"exec","checkpoint":"","iteration":3,"timestamp":"2026-11-25T10:00:00Z"}
JSON

# hook event as Claude Code runs it: its payload on stdin, its record in a fresh state dir.
cp "$bench_root/tests/fixtures/hook/claude-code/session/04-PreToolUse-Bash.json" "$work/pre.json"
export AUTOCTL_STATE_DIR="$work/state" TMUX="/tmp/tmux-bench/default,1,0" TMUX_PANE="%1"
"$AUTOCTL" hook event < "$work/pre.json"

# The autoctl commands, as (name, arguments), for this build and the baseline.
per_call=(next stop-check signal-validate)
autoctl_commands() { # BINARY SUFFIX
  commands+=(-n "next$2" "$1 next --step check --result PASS")
  commands+=(-n "stop-check$2" "$1 stop check $work/task")
  commands+=(-n "signal-validate$2" "$1 signal validate $work/signal.json")
  commands+=(-n "hook-event$2" "$1 hook event")
}
# --input feeds every command the payload; the others never read their standard input.
if ! hyperfine --help | grep -q -- '--input'; then
  echo "bench: $(hyperfine --version) has no --input (1.16+), so \`hook event\` cannot be fed its payload; install a newer one (cargo install hyperfine) and point HYPERFINE=PATH at it, or run bench/hooks.sh" >&2
  exit 2
fi
per_call+=(hook-event)
commands=(--input "$work/pre.json")
autoctl_commands "$AUTOCTL" ""
if baseline; then
  autoctl_commands "$AUTOCTL_BASELINE" "@before"
fi
hyperfine --warmup 20 --min-runs 300 -N -i --export-json "$work/startup.json" \
  "${commands[@]}" \
  -n hello "$work/hello" \
  -n hello-static "$work/hello-static" \
  -n true "/bin/true" \
  -n jq "jq -r .check.PASS $work/table.json" \
  >/dev/null
ratios "$work/startup.json" hello-static
echo
for cmd in "${per_call[@]}"; do
  echo "$cmd / hello-static: $(ratio "$work/startup.json" "$cmd" hello-static)x (goal <= 1.3)"
done
echo "jq / next:   $(ratio "$work/startup.json" jq next)x"
for cmd in "${per_call[@]}"; do
  echo "$cmd / hello: $(ratio "$work/startup.json" "$cmd" hello)x (a dynamically linked hello)"
done
if baseline; then
  for cmd in "${per_call[@]}"; do
    echo "$cmd / $cmd@before: $(ratio "$work/startup.json" "$cmd" "$cmd@before")x (no regression: <= 1.05)"
  done
fi
