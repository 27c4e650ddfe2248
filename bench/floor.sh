#!/usr/bin/env bash
# The tail of the PreToolUse floor's latency (issue 24: the hook decides within 5 ms at p99),
# beside the tail of /bin/true in the same run. Claude Code waits for `autoctl hook
# pre-tool-use` before every tool call, so its slowest calls are what a session feels. On a
# shared machine a process's p99 is mostly waiting for a core, which /bin/true pays alike: the
# calls are therefore interleaved (each round runs /bin/true, the harmless call and the
# destructive call in a shuffled order), each process is spawned directly with its payload on
# stdin (posix_spawn: no shell, no fork of the measuring python), and the wall time from spawn
# to exit is what is counted. Prints median, p95, p99 and the maximum per command, and the
# load average before and after.
# Goal: hook pre-tool-use p99 <= 5 ms (and its p99 over /bin/true's, the part that is autoctl's).
# RUNS=N rounds (default 3000, after 50 warm-up rounds).
set -euo pipefail
source "$(dirname "$0")/lib.sh"
require python3
# AUTOCTL=PATH benchmarks a binary built already (a release build takes minutes here).
[ -x "${AUTOCTL:-}" ] || build_release

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
mkdir -p "$work/home/proj"
export HOME="$work/home" XDG_CONFIG_HOME="$work/home/.config" AUTOCTL_STATE_DIR="$work/state"
export TMUX="/tmp/tmux-bench/default,1,0" TMUX_PANE="%1"
unset CLAUDE_PROJECT_DIR

# The recorded PreToolUse payload of Claude Code 2.1.332 with its paths moved into the work
# dir (harmless: no answer), and the same with a destructive command (the floor asks).
python3 - "$bench_root/tests/fixtures/hook/claude-code/permission/04-PreToolUse-Bash.json" "$work" <<'PY'
import json, pathlib, sys
source, work = pathlib.Path(sys.argv[1]), pathlib.Path(sys.argv[2])
text = source.read_text().replace("/home/dev/proj", str(work / "home/proj"))
pre = json.loads(text.replace("/home/dev", str(work / "home")))
(work / "harmless.json").write_text(json.dumps(pre))
pre["tool_input"] = {"command": "rm -rf build", "description": "Clean the build"}
(work / "destructive.json").write_text(json.dumps(pre))
PY
out=$("$AUTOCTL" hook pre-tool-use < "$work/destructive.json")
grep -q '"permissionDecision":"ask"' <<<"$out" || { echo "bench: the floor did not ask: $out" >&2; exit 2; }
out=$("$AUTOCTL" hook pre-tool-use < "$work/harmless.json")
[ -z "$out" ] || { echo "bench: the floor answered a harmless call: $out" >&2; exit 2; }

echo "load average before: $(cut -d' ' -f1-3 /proc/loadavg)"
python3 - "$AUTOCTL" "$work" "${RUNS:-3000}" <<'PY'
import os, random, sys, time
autoctl, work, runs = sys.argv[1], sys.argv[2], int(sys.argv[3])
calls = [("/bin/true", ["/bin/true"], "harmless.json"),
         ("hook pre-tool-use (harmless)", [autoctl, "hook", "pre-tool-use"], "harmless.json"),
         ("hook pre-tool-use (destructive)", [autoctl, "hook", "pre-tool-use"], "destructive.json")]
null = os.open(os.devnull, os.O_WRONLY)
times = {name: [] for name, _, _ in calls}
for round in range(runs + 50):
    order = calls[:]
    random.shuffle(order)
    for name, argv, payload in order:
        stdin = os.open(f"{work}/{payload}", os.O_RDONLY)
        actions = [(os.POSIX_SPAWN_DUP2, stdin, 0), (os.POSIX_SPAWN_DUP2, null, 1),
                   (os.POSIX_SPAWN_DUP2, null, 2)]
        t0 = time.perf_counter()
        pid = os.posix_spawn(argv[0], argv, os.environ, file_actions=actions)
        _, status = os.waitpid(pid, 0)
        t1 = time.perf_counter()
        os.close(stdin)
        if os.waitstatus_to_exitcode(status) != 0:
            sys.exit(f"bench: {name} exited {os.waitstatus_to_exitcode(status)}")
        if round >= 50:
            times[name].append((t1 - t0) * 1000)
def at(xs, q):
    return xs[min(len(xs) - 1, int(q * len(xs)))]
print(f"{runs} interleaved rounds; wall time from spawn to exit, ms")
print(f"{'command':34s} {'median':>8s} {'p95':>8s} {'p99':>8s} {'max':>8s}")
rows = {}
for name, xs in times.items():
    xs.sort()
    rows[name] = (at(xs, 0.5), at(xs, 0.95), at(xs, 0.99), xs[-1])
    print(f"{name:34s} " + " ".join(f"{v:8.2f}" for v in rows[name]))
true_p99 = rows["/bin/true"][2]
for name in ("hook pre-tool-use (harmless)", "hook pre-tool-use (destructive)"):
    p99 = rows[name][2]
    print(f"{name}: p99 {p99:.2f} ms (goal <= 5), /bin/true's p99 {true_p99:.2f} ms, "
          f"difference {p99 - true_p99:.2f} ms; median {rows[name][0] / rows['/bin/true'][0]:.2f}x /bin/true's")
PY
echo "load average after: $(cut -d' ' -f1-3 /proc/loadavg)"
