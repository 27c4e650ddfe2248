#!/usr/bin/env bash
# Rewrite link/startup-order.txt: the functions the per-call commands run, in the order the
# linker is to lay them out (`cargo build-static` passes the file to lld as
# --symbol-ordering-file; see .cargo/config.toml).
#
# Why: a per-call command's start is mostly page faults, not instructions. The static binary's
# 14 MB of code is mapped from the page cache one fault at a time (each fault maps up to 16
# pages around it), and the few hundred functions a hook call runs were spread over it: `hook
# event` took 45 faults in its code alone where a static hello takes 14, at several
# microseconds each on this VM (bench/startup.sh). Laid out side by side they fill a few
# dozen pages.
#
# How: the profiling build (the release build with symbols; the same code and the same symbol
# names) runs each command under callgrind; the functions each one ran, in the order callgrind
# first met them, the commands in the order below (the most frequent first), make the list.
# A name the binary no longer has is passed over by the linker, so a stale list costs only
# speed: re-run this after large changes to the per-call paths. Needs valgrind; takes a
# release build (minutes).
set -euo pipefail
source "$(dirname "$0")/lib.sh"
require valgrind python3
cd "$bench_root"
if [ -z "${PROFILING_BINARY:-}" ]; then
  nice -n 10 cargo rustc --locked --quiet --profile profiling --bin autoctl -- \
    -C target-feature=+crt-static -C relocation-model=static
  PROFILING_BINARY="$bench_root/target/profiling/autoctl"
fi
bin=$PROFILING_BINARY

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
fixtures="$bench_root/tests/fixtures/hook/claude-code"
mkdir -p "$work/home/proj" "$work/task"
export HOME="$work/home" XDG_CONFIG_HOME="$work/home/.config" AUTOCTL_STATE_DIR="$work/state"
export TMUX="/tmp/tmux-bench/default,1,0" TMUX_PANE="%1"
unset CLAUDE_PROJECT_DIR
cp "$fixtures/session/04-PreToolUse-Bash.json" "$work/pre.json"
cp "$fixtures/reference/statusline-subscription.json" "$work/status.json"
python3 - "$fixtures/permission" "$work" <<'PY'
import json, pathlib, sys
source, work = pathlib.Path(sys.argv[1]), pathlib.Path(sys.argv[2])
for name, out in (("04-PreToolUse-Bash.json", "harmless.json"),
                  ("05-PermissionRequest-Bash.json", "permission.json")):
    text = (source / name).read_text().replace("/home/dev/proj", str(work / "home/proj"))
    payload = json.loads(text.replace("/home/dev", str(work / "home")))
    (work / out).write_text(json.dumps(payload))
    if out == "harmless.json":
        payload["tool_input"] = {"command": "rm -rf build", "description": "Clean the build"}
        (work / "destructive.json").write_text(json.dumps(payload))
PY
cat > "$work/signal.json" <<'JSON'
{"step":"check","result":"PASS","next":"exec","checkpoint":"","iteration":3,"timestamp":"2026-11-25T10:00:00Z"}
JSON
# A record with a snapshot and a journal, as a session has after its first 32 events.
for _ in $(seq 40); do "$bin" hook event < "$work/pre.json"; done

n=0
run() { # INPUT ARGS...
  local input=$1
  shift
  n=$((n + 1))
  valgrind --tool=callgrind --demangle=no --dump-instr=no --compress-strings=no \
    --callgrind-out-file="$work/cg.$(printf %02d $n)" "$bin" "$@" < "$input" > /dev/null 2>&1 || true
}
run "$work/pre.json" hook event
run "$work/harmless.json" hook pre-tool-use
run "$work/destructive.json" hook pre-tool-use
run /dev/null next --step check --result PASS
run /dev/null stop check "$work/task"
run /dev/null signal validate "$work/signal.json"
run "$work/status.json" statusline
run "$work/permission.json" hook permission-request

mkdir -p link
python3 - "$work" link/startup-order.txt <<'PY'
import glob, re, sys
work, out = sys.argv[1], sys.argv[2]
seen, order = set(), []
for path in sorted(glob.glob(f"{work}/cg.*")):
    for line in open(path, errors="replace"):
        m = re.match(r"c?fn=(?:\(\d+\) )?(\S+)$", line.rstrip("\n"))
        if not m:
            continue
        name = m.group(1)
        # Callgrind's own names for code without a symbol, and recursion marks.
        name = re.sub(r"'\d+$", "", name)
        if name.startswith("0x") or name in seen:
            continue
        seen.add(name)
        order.append(name)
open(out, "w").write("".join(name + "\n" for name in order))
print(f"{out}: {len(order)} functions")
PY
