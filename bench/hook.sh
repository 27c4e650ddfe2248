#!/usr/bin/env bash
# `autoctl hook stop` on Claude Code-shaped transcripts of 1 MB, 100 MB and 1 GB, against
# `tail -n 100 FILE | grep -c SENTINEL` (what Stop-hook loops usually do) on the same files.
# The hook does strictly more: it parses the stdin payload, takes the loop guard and the
# heartbeat lock, reads back to the start of the last turn, counts the turn's token usage,
# and writes the loop state atomically. Goal: its time stays flat as the transcript grows
# (it reads from the end) and within 3x the tail+grep pipeline; its peak memory stays flat.
#
# The transcripts are generated in a temporary directory and deleted on exit (about 1.1 GB
# of disk while it runs). Both commands run through the shell (stdin redirection needs one);
# hyperfine subtracts the shell's own startup.
set -euo pipefail
source "$(dirname "$0")/lib.sh"
require hyperfine python3 tail grep
build_release

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# generate FILE SIZE_MB: earlier turns repeated up to SIZE_MB, then a last turn of ten tool
# calls (about 40 lines) without the sentinel, so the hook continues the loop every run.
generate() {
  python3 - "$1" "$2" <<'PY'
import json, sys
path, size = sys.argv[1], int(sys.argv[2]) * 1024 * 1024
sid = "0b6f3c3e-5a8e-4d7c-9b1e-7f2d9c1a4e10"
n = 0
def line(kind, message, **extra):
    global n
    n += 1
    d = {"parentUuid": f"u{n-1}", "isSidechain": False, "userType": "external",
         "cwd": "/home/dev/project", "sessionId": sid, "version": "2.1.90", "gitBranch": "main",
         "type": kind, "message": message, "uuid": f"u{n}", "timestamp": "2026-11-25T10:00:00.000Z"}
    d.update(extra)
    return json.dumps(d, separators=(",", ":")) + "\n"
usage = {"input_tokens": 4, "cache_creation_input_tokens": 900, "cache_read_input_tokens": 40000,
         "output_tokens": 250}
def assistant(mid, block):
    return line("assistant", {"id": mid, "type": "message", "role": "assistant",
                "model": "claude-sonnet-4-5", "content": [block], "usage": usage},
                requestId="req_" + mid)
def turn(k, prompt, tools):
    out = [line("user", {"role": "user", "content": prompt})]
    for t in range(tools):
        mid = f"msg_{k}_{t}"
        out.append(assistant(mid, {"type": "text", "text": f"Step {t}: looking at the next file."}))
        out.append(assistant(mid, {"type": "tool_use", "id": f"toolu_{k}_{t}", "name": "Bash",
                                   "input": {"command": f"sed -n 1,120p src/mod{t}.rs"}}))
        out.append(line("user", {"role": "user", "content": [{"tool_use_id": f"toolu_{k}_{t}",
                   "type": "tool_result", "content": "fn body() {}\n" * 150}]}))
    out.append(assistant(f"msg_{k}_end", {"type": "text", "text": "Done with this step."}))
    return "".join(out)
with open(path, "w") as f:
    written, k = 0, 0
    while written < size:
        block = turn(k, "Stop hook feedback:\nContinue with the next item.", 6)
        f.write(block)
        written += len(block)
        k += 1
    f.write(turn(k, "Stop hook feedback:\nContinue with the next item.", 10))
PY
}

sizes=(1 100 1024)
for mb in "${sizes[@]}"; do
  generate "$work/t$mb.jsonl" "$mb"
done
ls -l "$work"/*.jsonl | awk '{printf "%s %6.0f MB\n", $NF, $5/1048576}' | sed "s|$work/||"

sentinel='<promise>AUTOCTL COMPLETE</promise>'
for mb in "${sizes[@]}"; do
  project="$work/p$mb"
  mkdir -p "$project"
  "$AUTOCTL" loop init --dir "$project" --prompt "Continue with the next item." \
    --max-iterations 1000000 --budget 1000000000000 >/dev/null
  python3 - "$work/t$mb.jsonl" "$project" > "$work/stdin$mb.json" <<'PY'
import json, sys
print(json.dumps({"session_id": "0b6f3c3e-5a8e-4d7c-9b1e-7f2d9c1a4e10",
                  "transcript_path": sys.argv[1], "cwd": sys.argv[2],
                  "permission_mode": "default", "hook_event_name": "Stop",
                  "stop_hook_active": True, "last_assistant_message": "Done with this step."}))
PY
  # Sanity: the hook continues the loop on this transcript.
  "$AUTOCTL" hook stop --dir "$project" < "$work/stdin$mb.json" | grep -q '"decision":"block"'
done

hyperfine --warmup 5 --min-runs 50 --export-json "$work/hook.json" \
  -n "autoctl 1MB" "$AUTOCTL hook stop --dir $work/p1 < $work/stdin1.json" \
  -n "tail+grep 1MB" "tail -n 100 $work/t1.jsonl | grep -c '$sentinel'; true" \
  -n "autoctl 100MB" "$AUTOCTL hook stop --dir $work/p100 < $work/stdin100.json" \
  -n "tail+grep 100MB" "tail -n 100 $work/t100.jsonl | grep -c '$sentinel'; true" \
  -n "autoctl 1GB" "$AUTOCTL hook stop --dir $work/p1024 < $work/stdin1024.json" \
  -n "tail+grep 1GB" "tail -n 100 $work/t1024.jsonl | grep -c '$sentinel'; true" \
  >/dev/null
ratios "$work/hook.json" "tail+grep 1MB"
echo
for mb in 1MB 100MB 1GB; do
  echo "autoctl / tail+grep at $mb: $(ratio "$work/hook.json" "autoctl $mb" "tail+grep $mb")x (goal <= 3)"
done
echo "autoctl 1GB / autoctl 1MB:  $(ratio "$work/hook.json" "autoctl 1GB" "autoctl 1MB")x (goal: flat, ~1)"

rss() { /usr/bin/time -f '%M' "$AUTOCTL" hook stop --dir "$1" < "$2" 2>&1 >/dev/null | tail -n 1; }
echo "peak RSS: $(rss "$work/p1" "$work/stdin1.json") KiB at 1 MB, $(rss "$work/p1024" "$work/stdin1024.json") KiB at 1 GB"
