#!/usr/bin/env bash
# The approval policy's cost (issue 12), two ways:
# 1. Per call: `autoctl hook permission-request` on a real PermissionRequest payload recorded
#    from Claude Code 2.1.332 (harmless: it parses, decides, prints the allow, records the
#    session's state and appends to the decision log) vs the typical shell hook people write,
#    `jq -r .tool_input.command | grep -Eq '<30 destructive patterns>'` (a denylist: it only
#    looks, and answers nothing), and /bin/true as the process floor. hyperfine, side by
#    side; every command goes through the same shell (hyperfine 1.15 has no --input), so the
#    shell's cost is subtracted alike. Goal: the hook <= 1x the jq hook.
#    Beside them, in the same hyperfine run (issue 24): `hook pre-tool-use`, the floor, on the
#    recorded PreToolUse payload of Claude Code 2.1.332 (harmless: no answer) and with a
#    destructive command in it (it answers ask). Each row's p99 is printed too: goal p99 <=
#    5 ms for both hook doors; the issue's ratios (<= 1.5x /bin/true, <= 0.1x the jq hook)
#    are printed as measured.
# 2. Throughput: 10,000 payloads (the recorded ones, plus the recorded Bash payload with
#    each of the table's 257 destructive and harmless calls substituted, cycled) through one
#    `policy check --batch` process. Goal: >= 50,000 decisions/s.
#
set -euo pipefail
source "$(dirname "$0")/lib.sh"
require hyperfine jq python3
# AUTOCTL=PATH benchmarks a binary built already (a release build takes minutes here).
[ -x "${AUTOCTL:-}" ] || build_release

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
fixtures="$bench_root/tests/fixtures"
mkdir -p "$work/home/proj"
export HOME="$work/home" XDG_CONFIG_HOME="$work/home/.config" AUTOCTL_STATE_DIR="$work/state"
export TMUX="/tmp/tmux-bench/default,1,0" TMUX_PANE="%1"
unset CLAUDE_PROJECT_DIR

# The recorded payloads with their paths moved into the work dir, and the batch input.
python3 - "$fixtures" "$work" <<'PY'
import json, pathlib, sys
fixtures, work = map(pathlib.Path, sys.argv[1:])
proj, home = work / "home/proj", work / "home"
def moved(text):
    return text.replace("/home/dev/proj", str(proj)).replace("/home/dev", str(home))
recorded = [json.loads(moved(p.read_text()))
            for p in sorted((fixtures / "policy/payloads").glob("*.json"))]
bash = next(p for p in recorded if p["tool_input"].get("command") == "cargo test --workspace")
(work / "harmless.json").write_text(json.dumps(bash))
rows = []
for line in (fixtures / "policy/commands.tsv").read_text().splitlines():
    if line.startswith("#") or not line.strip():
        continue
    _, tool, text = line.split("\t", 2)
    p = dict(bash, tool_name=tool)
    p["tool_input"] = ({"command": moved(text), "description": "a step"} if tool == "Bash"
                       else {"file_path": moved(text), "content": "x"})
    rows.append(p)
pool = recorded + rows
with open(work / "batch.jsonl", "w") as f:
    for i in range(10_000):
        f.write(json.dumps(pool[i % len(pool)]) + "\n")
print(f"batch: 10,000 payloads cycled from {len(recorded)} recorded and {len(rows)} table calls")
pre = json.loads(moved((fixtures / "hook/claude-code/permission/04-PreToolUse-Bash.json").read_text()))
(work / "pre-harmless.json").write_text(json.dumps(pre))
pre["tool_input"] = {"command": "rm -rf build", "description": "Clean the build"}
(work / "pre-destructive.json").write_text(json.dumps(pre))
PY

# A typical denylist hook: 30 destructive patterns, as in the hooks people paste.
denylist=(
  'rm -rf' 'rm -fr' 'rm -r ' 'git push --force' 'git push -f' 'git reset --hard' 'git clean -f'
  'git checkout \.' 'drop table' 'drop database' 'truncate table' 'delete from' 'mkfs' 'dd if='
  'chmod -R 777' 'chown -R' 'sudo ' 'shutdown' 'reboot' 'kill -9' 'pkill' 'killall'
  'curl .*[|] *sh' 'wget .*[|] *sh' 'npm publish' 'cargo publish' 'terraform destroy'
  'kubectl delete' 'docker rm' ':[(][)] *[{]'
)
[ "${#denylist[@]}" -eq 30 ] || { echo "bench: expected 30 patterns" >&2; exit 2; }
patterns=$(IFS='|'; echo "${denylist[*]}")
printf '#!/bin/sh\njq -r .tool_input.command | grep -Eqi %q && exit 2\nexit 0\n' "$patterns" > "$work/jq-hook.sh"
chmod +x "$work/jq-hook.sh"

# Sanity: the hook allows the recorded harmless call; one call first, so the measured calls
# update an existing state record as in a session.
out=$("$AUTOCTL" hook permission-request < "$work/harmless.json")
grep -q '"behavior":"allow"' <<<"$out" || { echo "bench: the hook did not allow: $out" >&2; exit 2; }

out=$("$AUTOCTL" hook pre-tool-use < "$work/pre-destructive.json")
grep -q '"permissionDecision":"ask"' <<<"$out" || { echo "bench: the floor did not ask: $out" >&2; exit 2; }
out=$("$AUTOCTL" hook pre-tool-use < "$work/pre-harmless.json")
[ -z "$out" ] || { echo "bench: the floor answered a harmless call: $out" >&2; exit 2; }

hyperfine --warmup 20 --runs "${RUNS:-300}" --export-json "$work/hook.json" \
  -n 'hook permission-request' "$AUTOCTL hook permission-request < $work/harmless.json" \
  -n 'hook pre-tool-use (harmless)' "$AUTOCTL hook pre-tool-use < $work/pre-harmless.json" \
  -n 'hook pre-tool-use (destructive)' "$AUTOCTL hook pre-tool-use < $work/pre-destructive.json" \
  -n 'jq hook (30 patterns)' "$work/jq-hook.sh < $work/harmless.json" \
  -n 'true' "/bin/true < $work/harmless.json" >/dev/null
echo "== per call (recorded payloads; load average: $(cut -d' ' -f1-3 /proc/loadavg)) =="
ratios "$work/hook.json" 'jq hook (30 patterns)'
python3 - "$work/hook.json" <<'PY'
import json, sys
results = {r["command"]: r for r in json.load(open(sys.argv[1]))["results"]}
def p(r, q):
    times = sorted(r["times"])
    return times[min(len(times) - 1, int(q * len(times)))] * 1000
true, jq = results["true"]["median"], results["jq hook (30 patterns)"]["median"]
for name in ("hook permission-request", "hook pre-tool-use (harmless)", "hook pre-tool-use (destructive)"):
    r = results[name]
    # hyperfine subtracts the shell it measured at the start; under load /bin/true's median
    # can come out 0 after it, and a ratio to it means nothing (the section below does not
    # depend on the shell).
    vs_true = f"{r['median']/true:.2f}x" if true > 0 else "unmeasured (/bin/true's median is 0 after the shell's)"
    print(f"{name}: median {r['median']*1000:.2f} ms, p99 {p(r, 0.99):.2f} ms (goal <= 5), "
          f"{vs_true} /bin/true (goal <= 1.5), {r['median']/jq:.2f}x the jq hook (goal <= 0.1)")
PY
# The same calls with no shell in between (issue 24 item 6): python starts each process with
# its stdin on the payload file, and the child's own CPU time (getrusage of the children:
# exec, start-up, the work) is what the ratio to /bin/true compares, load or not; the wall
# time beside it includes python's fork and the wait for a core. The empty payload (`{}`,
# no tool_name) is the door's error path: one line on stderr, no decision. It is measured
# twice: as an agent runs it, and with RUST_BACKTRACE=1 as a developer's shell may export it
# (5.3 ms CPU last session, unexplained then: anyhow captures a backtrace, and the first
# unwind sorts the static binary's frame descriptions; lib.sh unsets it for every other row).
echo "== per call, no shell (${RUNS:-300} runs each; child CPU time; load average: $(cut -d' ' -f1-3 /proc/loadavg)) =="
python3 - "$AUTOCTL" "$work" "${RUNS:-300}" <<'PY'
import os, resource, statistics, subprocess, sys, time
autoctl, work, runs = sys.argv[1], sys.argv[2], int(sys.argv[3])
pre = [autoctl, "hook", "pre-tool-use"]
calls = [("true", ["/bin/true"], "harmless.json", {}),
         ("autoctl --version", [autoctl, "--version"], "harmless.json", {}),
         ("hook pre-tool-use, empty payload", pre, "empty.json", {}),
         ("  the same, RUST_BACKTRACE=1", pre, "empty.json", {"RUST_BACKTRACE": "1"}),
         ("hook pre-tool-use (harmless)", pre, "pre-harmless.json", {}),
         ("hook pre-tool-use (destructive)", pre, "pre-destructive.json", {}),
         ("hook permission-request", [autoctl, "hook", "permission-request"], "harmless.json", {})]
open(f"{work}/empty.json", "w").write("{}")
rows = {}
for name, argv, payload, env in calls:
    cpu, wall = [], []
    for i in range(runs + 10):
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        t0 = time.perf_counter()
        with open(f"{work}/{payload}") as f:
            subprocess.run(argv, stdin=f, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                           env={**os.environ, **env})
        t1 = time.perf_counter()
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        if i >= 10:
            cpu.append((after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime) * 1000)
            wall.append((t1 - t0) * 1000)
    rows[name] = (statistics.mean(cpu), statistics.median(wall))
base_cpu, base_wall = rows["true"]
for name, (cpu, wall) in rows.items():
    print(f"{name:34s} CPU mean {cpu:.3f} ms ({cpu/base_cpu:.2f}x /bin/true)   "
          f"wall median {wall:.2f} ms ({wall/base_wall:.2f}x)")
print("goal: hook pre-tool-use <= 1.5x /bin/true")
PY
echo "hook permission-request / jq hook: $(ratio "$work/hook.json" 'hook permission-request' 'jq hook (30 patterns)')x (goal <= 1)"
echo

# Every line is decided (some are not allowed: the batch exits 1), one process per run.
decided=$("$AUTOCTL" policy check --batch < "$work/batch.jsonl" | grep -c '"decision"' || true)
[ "$decided" -eq 10000 ] || { echo "bench: the batch decided $decided of 10000" >&2; exit 2; }
hyperfine --warmup 2 --runs 20 -i --export-json "$work/batch.json" \
  -n 'policy check --batch (10,000)' "$AUTOCTL policy check --batch < $work/batch.jsonl > /dev/null" \
  -n 'jq -c . (10,000)' "jq -c . < $work/batch.jsonl > /dev/null" >/dev/null
echo "== throughput (one process, 10,000 payloads) =="
ratios "$work/batch.json" 'jq -c . (10,000)'
python3 - "$work/batch.json" <<'PY'
import json, sys
r = next(r for r in json.load(open(sys.argv[1]))["results"] if r["command"].startswith("policy"))
print(f"policy check --batch: {10_000 / r['median']:,.0f} decisions/s (median {r['median']*1000:.1f} ms; goal >= 50,000/s)")
# On a loaded machine the wall clock includes waiting for a core: the CPU time says more.
cpu = r["user"] + r["system"]
print(f"policy check --batch: {10_000 / cpu:,.0f} decisions per CPU second (user+system {cpu*1000:.1f} ms)")
PY

# 3. The corpus (issue 24): bench/corpus/policy.tsv, written from the leaking classes and
#    Claude Code's auto-mode block list (bench/corpus/make-policy-corpus.py), through the
#    PermissionRequest door (`policy check --batch`, the same engine as every door). Goal:
#    destructive approved 0; harmless approved as many as can be proven.
#    BEFORE=PATH scores another build beside it (an older release) on the same corpus.
echo "== corpus (bench/corpus/policy.tsv) =="
# The corpus's home and project must not be under the temporary directory (reads and
# outputs there are approved), so they live in target/.
corpus_dir="$bench_root/target/bench-policy-corpus"
for bin in ${BEFORE:+"$BEFORE"} "$AUTOCTL"; do
  rm -rf "$corpus_dir" && mkdir -p "$corpus_dir"
  printf '%s: ' "$bin"
  python3 "$bench_root/bench/corpus/score.py" "$bin" "$bench_root/bench/corpus/policy.tsv" "$corpus_dir"
done
rm -rf "$corpus_dir"
