#!/usr/bin/env bash
# Startup cost of one routing answer: `autoctl next --step check --result PASS` against
# /bin/true (the process floor), jq reading the same lookup from a JSON table, and the same
# lookup in python3 and node. Goal: autoctl median <= 2.5x /bin/true and >= 8x faster than jq.
set -euo pipefail
source "$(dirname "$0")/lib.sh"
require hyperfine jq python3 node
build_release

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cat > "$work/table.json" <<'JSON'
{"check": {"PASS": "exec", "NEEDS_REVISION": "plan", "ACCEPT": "merge", "NEEDS_FIX": "exec",
           "REPLAN": "plan", "BLOCKED": "(stop)", "CONTINUE": "exec"},
 "exec": {"(done)": "check", "(mid-exec)": "check", "(blocked)": "(stop)"},
 "merge": {"success": "report", "conflict": "(stop)"}}
JSON

hyperfine --warmup 20 --min-runs 300 -N --export-json "$work/startup.json" \
  -n autoctl "$AUTOCTL next --step check --result PASS" \
  -n true "/bin/true" \
  -n jq "jq -r .check.PASS $work/table.json" \
  -n python3 "python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))[\"check\"][\"PASS\"])' $work/table.json" \
  -n node "node -e 'console.log(require(process.argv[1]).check.PASS)' $work/table.json" \
  >/dev/null
ratios "$work/startup.json" true
echo
echo "autoctl / true: $(ratio "$work/startup.json" autoctl true)x (goal <= 2.5)"
echo "jq / autoctl:   $(ratio "$work/startup.json" jq autoctl)x (goal >= 8)"
