#!/usr/bin/env bash
# Startup cost of the per-call commands every hook call, tick and shell-loop step pays, in one
# hyperfine run beside the floors: a Rust "hello world" built with -O here (the goal's
# reference), the same hello linked statically like the shipped autoctl, /bin/true (the
# process floor) and jq reading the same lookup from a JSON table. Goal: each autoctl command's median <= 1.3x hello; jq stays in the table.
set -euo pipefail
source "$(dirname "$0")/lib.sh"
require hyperfine jq rustc
build_release

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

hyperfine --warmup 20 --min-runs 300 -N -i --export-json "$work/startup.json" \
  -n hello "$work/hello" \
  -n hello-static "$work/hello-static" \
  -n true "/bin/true" \
  -n next "$AUTOCTL next --step check --result PASS" \
  -n stop-check "$AUTOCTL stop check $work/task" \
  -n signal-validate "$AUTOCTL signal validate $work/signal.json" \
  -n jq "jq -r .check.PASS $work/table.json" \
  >/dev/null
ratios "$work/startup.json" hello
echo
for cmd in next stop-check signal-validate; do
  echo "$cmd / hello: $(ratio "$work/startup.json" "$cmd" hello)x (goal <= 1.3)"
done
echo "jq / next:   $(ratio "$work/startup.json" jq next)x"
for cmd in next stop-check signal-validate; do
  echo "$cmd / hello-static: $(ratio "$work/startup.json" "$cmd" hello-static)x (no goal: both static)"
done
