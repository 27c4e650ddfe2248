#!/usr/bin/env bash
# Nothing crashes, nothing is lost (issue 23): fault injection, concurrency and fuzzing, with
# the counts that must all be 0 and the throughput of the readers of untrusted text.
#
#   bench/faults.sh [SECTION...]     sections: fuzz hostile delay log kills concurrency
#                                    (default: all but hostile, which fuzz includes)
#   FAULTS_QUICK=1 bench/faults.sh   every run small (about a minute in all but fuzz)
#   FAULTS_DEBUG=1 bench/faults.sh   delay, log and concurrency on the debug build (no release
#                                    build needed; the counts are the same, the speed is not)
#   AUTOCTL=PATH bench/faults.sh     log and concurrency on that binary, built already (say
#                                    main's release build): nothing is built for them
#   AUTOCTL_LIB_TESTS=PATH           fuzz and delay in that library test binary, built already
#                                    (`cargo test --profile fuzz --lib --no-run` names it)
#
# fuzz: the fuzz targets of src/fuzz.rs in the `fuzz` profile (the release optimizer without
#   its whole-program LTO, which made a release test build take over an hour on the shared
#   machine; Cargo.toml) — the shell reader, the
#   destructive reading, the approval policy at each door (hook payload, permission box,
#   whole pane), the recovery-plan guard, hook payloads and the policy file — each over
#   FUZZ_CASES generated inputs (default 1,000,000), printing inputs per second (time spent
#   in the reader only, not in generating) and the slowest input, each on the thread's CPU
#   clock (the reader's own work) and on the wall clock (preemption by the other builds on
#   the machine included); then the hostile inputs (nested, repeated and unfolding, from 1 KiB
#   to 128 KiB, the longest line read, and 1 MiB) timed through each reader on both clocks.
#   Panics: any is a failed target (the script exits 1). Goals: the shell reader >= 100,000
#   commands/s; the worst input <= 10 ms at any depth or length up to 1 MiB.
# hostile: only the hostile inputs, every reader at sizes from 1 KiB to 1 MiB (seconds, not the
#   fuzz section's hour); HOSTILE=NAME[@SIZE] keeps the inputs whose name holds NAME (at SIZE
#   bytes only), to re-run or profile one: `HOSTILE=pipes@65536 bench/faults.sh hostile`.
# delay: lost signals in DELAY_UNLINKS (default 10,000) consumes of `.auto-signal`, each
#   delayed DELAY_US (default 1000) microseconds between its check and its rename by an
#   in-process hook (strace's delay injection costs a process and a tmux round trip per
#   tick: 10,000 would take hours), with a step writing the next signal at a random moment
#   around the window; the old check-then-unlink runs the same schedule as a control.
# log: torn and lost lines in LOG_CALLS (default 100,000) `hook permission-request` calls,
#   LOG_PARALLEL (default 16) at a time, in rounds of 1,000 (under the log's 1 MiB rotation,
#   so every line written is checked).
# kills: SIGKILL injection at the failpoints of a debug build — wedged loops after
#   KILL_WEDGE_ROUNDS (default 20) loops each killed 1-4 times during the retype of a
#   half-typed dispatch; lost and duplicated notifications over KILL_OUTBOX_ROUNDS (default
#   40) ticks killed after saving their decisions and before announcing them; lock side
#   files and temporary files left after kills in every batch-checkpoint step
#   (KILL_CHECKPOINT_ROUNDS, default 200) once the next command ran.
# concurrency: CONC_LOOPS (default 10) dispatch-mode loops of the scripted agent, restarted
#   as they finish, under CONC_TICKERS (default 8) `run tick --all` loops and a `run watch
#   --all` for CONC_SECONDS (default 180): healthy loops ended (a loop that ended otherwise
#   than finished: the lost-signal race of the issue ended 6 of 65), panics, and the tmux
#   servers left running afterwards (every exit ends the drivers and the server: success,
#   failure and Ctrl-C).
#
# Note the load average beside the numbers: the machine is shared.
set -euo pipefail
source "$(dirname "$0")/lib.sh"
require python3

sections=("$@")
[ "${#sections[@]}" -gt 0 ] || sections=(fuzz delay log kills concurrency)
if [ -n "${FAULTS_QUICK:-}" ]; then
  : "${FUZZ_CASES:=20000}" "${DELAY_UNLINKS:=1000}" "${LOG_CALLS:=4000}"
  : "${KILL_WEDGE_ROUNDS:=3}" "${KILL_OUTBOX_ROUNDS:=4}" "${KILL_CHECKPOINT_ROUNDS:=20}"
  : "${CONC_SECONDS:=30}"
fi
load() { cut -d' ' -f1-3 /proc/loadavg; }
# FAULTS_DEBUG=1: the delay, log and concurrency runs use the debug build (target/debug,
# already built by `cargo test`) instead of building the release one: their counts do not
# depend on the build, only their speed does (fuzz throughput always needs the optimizer).
# AUTOCTL=PATH: the log and concurrency runs use that binary, built already (say main's release
# build), and nothing is built.
release() {
  if [ -x "${AUTOCTL:-}" ]; then
    export AUTOCTL
  elif [ -n "${FAULTS_DEBUG:-}" ]; then
    (cd "$bench_root" && cargo build --quiet)
    AUTOCTL="$bench_root/target/debug/autoctl"
    export AUTOCTL
  else
    build_release
  fi
}
profile_flag() { [ -n "${FAULTS_DEBUG:-}" ] || echo --profile=fuzz; }
# lib_tests FILTER: the library's tests matching FILTER, in the fuzz profile (debug with
# FAULTS_DEBUG=1), or in AUTOCTL_LIB_TESTS=PATH, the library's test binary built already
# (`cargo test --profile fuzz --lib --no-run` prints it; it runs from the crate's root as
# cargo runs it), so a source edit since does not rebuild it.
lib_tests() {
  if [ -n "${AUTOCTL_LIB_TESTS:-}" ]; then
    [ -x "$AUTOCTL_LIB_TESTS" ] || { echo "bench: AUTOCTL_LIB_TESTS=$AUTOCTL_LIB_TESTS is not an executable" >&2; return 2; }
    (cd "$bench_root" && nice -n 10 "$AUTOCTL_LIB_TESTS" --quiet "$1" --nocapture --test-threads=1)
  else
    # shellcheck disable=SC2046 # no flag in a debug run
    (cd "$bench_root" && nice -n 10 cargo test $(profile_flag) --quiet --lib "$1" -- --nocapture --test-threads=1)
  fi
}

fuzz() {
  local cases=${FUZZ_CASES:-1000000} log status=0
  log=$(mktemp)
  echo "== fuzz: $cases inputs per target, fuzz profile (load: $(load)) =="
  AUTOCTL_FUZZ_CASES="$cases" AUTOCTL_FUZZ_MAX_BYTES=262144 AUTOCTL_FUZZ_REPORT=1 \
    FAULTS_DEBUG='' lib_tests fuzz:: >"$log" 2>&1 || status=$?
  # The test harness's progress dots can stand before a line: `.fuzz pane classify: …`.
  grep -E '^\.*(fuzz|hostile) ' "$log" | sed 's/^\.*//' || true
  local panics
  panics=$(grep -c 'panicked' "$log" || true)
  echo "panics: $panics"
  python3 - "$log" <<'PY'
import re, sys
text = open(sys.argv[1]).read()
# Rates and worst cases on the thread's CPU clock (the reader's work) and the wall clock.
line = re.compile(r"fuzz (.+?): \d+ inputs, (\d+) inputs/s CPU \((\d+)/s wall\), "
                  r"worst ([\d.]+) ms CPU .*?, worst ([\d.]+) ms wall")
targets = {m.group(1): m.groups()[1:] for m in line.finditer(text)}
if "shell reader" in targets:
    cpu, wall, _, _ = targets["shell reader"]
    print(f"shell reader: {int(cpu):,} commands/s CPU, {int(wall):,} wall (goal >= 100,000)")
if targets:
    cpu = max(float(t[2]) for t in targets.values())
    wall = max(float(t[3]) for t in targets.values())
    print(f"worst generated input, any target: {cpu:.3f} ms CPU, {wall:.3f} ms wall (goal <= 10 ms)")
hostile = re.findall(r"hostile worst [a-z ]+: ([\d.]+) ms CPU, ([\d.]+) ms wall", text)
if hostile:
    cpu = max(float(c) for c, _ in hostile)
    wall = max(float(w) for _, w in hostile)
    print(f"worst hostile input, any reader: {cpu:.3f} ms CPU, {wall:.3f} ms wall (goal <= 10 ms up to 1 MiB)")
PY
  if [ "$status" -ne 0 ]; then
    echo "bench: a fuzz target failed; its output:" >&2
    grep -vE '^\s+(at |[0-9]+: )' "$log" | tail -n 40 >&2
    rm -f "$log"
    return 1
  fi
  rm -f "$log"
}

# hostile: the hostile inputs alone, each reader's slowest.
hostile() {
  local log
  log=$(mktemp)
  echo "== hostile: ${HOSTILE:-every input}, fuzz profile (load: $(load)) =="
  if AUTOCTL_FUZZ_REPORT=1 AUTOCTL_FUZZ_HOSTILE="${HOSTILE:-}" FAULTS_DEBUG='' \
    lib_tests fuzz::hostile_inputs_report >"$log" 2>&1; then
    grep -E '^hostile ' "$log"
  else
    grep -vE '^\s+(at |[0-9]+: )' "$log" | tail -n 40 >&2
    rm -f "$log"
    return 1
  fi
  rm -f "$log"
}

# delay: the in-process delay hook of src/protocol/signal.rs's bench test, release build.
delay() {
  local rounds=${DELAY_UNLINKS:-10000} us=${DELAY_US:-1000} log
  log=$(mktemp)
  echo "== delay: $rounds delayed consumes, ${us} us each (load: $(load)) =="
  if AUTOCTL_BENCH_UNLINKS="$rounds" AUTOCTL_BENCH_DELAY_US="$us" \
    lib_tests protocol::signal::tests::delayed_consumes_lose_no_signal >"$log" 2>&1; then
    grep '^delay-injection' "$log" || { echo "bench: the delay run printed no count" >&2; rm -f "$log"; return 1; }
  else
    grep -E '^delay-injection|panicked|lost' "$log" >&2 || tail -n 20 "$log" >&2
    rm -f "$log"
    return 1
  fi
  rm -f "$log"
}

# log: real processes, the release binary.
log_section() {
  local calls=${LOG_CALLS:-100000} parallel=${LOG_PARALLEL:-16} work
  release
  work=$(mktemp -d "${TMPDIR:-/tmp}/autoctl-faults-log.XXXXXX")
  mkdir -p "$work/proj" "$work/home"
  echo "== log: $calls concurrent hook permission-request calls, $parallel at a time (load: $(load)) =="
  python3 - "$AUTOCTL" "$work" "$calls" "$parallel" <<'PY'
import concurrent.futures, json, os, subprocess, sys
autoctl, work, calls, parallel = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
env = dict(os.environ, AUTOCTL_STATE_DIR=f"{work}/state", HOME=f"{work}/home",
           CLAUDE_PROJECT_DIR=f"{work}/proj")
log = f"{work}/state/policy/decisions.jsonl"
def payload(n):
    # Lengths vary up to ~3 KB so lines straddle any write size.
    command = f"cargo test case_{n} " + "x" * (n * 37 % 3000)
    return json.dumps({"session_id": "bench", "cwd": f"{work}/proj", "hook_event_name": "PermissionRequest",
                       "permission_mode": "default", "tool_name": "Bash",
                       "tool_input": {"command": command}}).encode()
def call(n):
    out = subprocess.run([autoctl, "hook", "permission-request"], input=payload(n), env=env,
                         cwd=f"{work}/proj", capture_output=True)
    return out.returncode, b"panicked" in out.stderr
torn = lost = duplicated = failed = panics = 0
round_size = 1000  # about 0.7 MB of log: under the 1 MiB rotation
with concurrent.futures.ThreadPoolExecutor(parallel) as pool:
    for start in range(0, calls, round_size):
        numbers = range(start, min(calls, start + round_size))
        for code, panicked in pool.map(call, numbers):
            failed += code != 0
            panics += panicked
        seen = {}
        with open(log, "rb") as f:
            data = f.read()
        lines = data.split(b"\n")
        if lines and lines[-1] == b"":
            lines.pop()
        elif lines:
            torn += 1  # a last line without its newline
            lines.pop()
        for line in lines:
            try:
                entry = json.loads(line)
            except ValueError:
                torn += 1
                continue
            case = entry["input"].split(" ")[2]
            seen[case] = seen.get(case, 0) + 1
        for n in numbers:
            k = seen.get(f"case_{n}", 0)
            lost += k == 0
            duplicated += max(0, k - 1)
        os.remove(log)
        done = min(calls, start + round_size)
        if done % 10000 == 0 or done == calls:
            print(f"log: {done} calls so far: torn {torn}, lost {lost}, duplicated {duplicated}, "
                  f"failed {failed}, panics {panics}", flush=True)
        for rotated in [log + ".1"]:
            if os.path.exists(rotated):
                torn += 10**6  # a round must stay under the rotation size: the run is void
print(f"log: {calls} calls: torn lines {torn}, lost entries {lost}, duplicated {duplicated}, "
      f"failed calls {failed}, panics {panics}")
sys.exit(1 if torn or lost or duplicated or failed or panics else 0)
PY
  local status=$?
  rm -rf "$work"
  return $status
}

# kills and concurrency' kill parts: ignored integration tests of tests/cli (debug build:
# failpoints exist only there), each printing its counts.
kills() {
  local log status=0
  log=$(mktemp)
  echo "== kills: SIGKILL at failpoints, debug build (load: $(load)) =="
  (cd "$bench_root" && AUTOCTL_BENCH_WEDGE_ROUNDS="${KILL_WEDGE_ROUNDS:-20}" \
    AUTOCTL_BENCH_OUTBOX_ROUNDS="${KILL_OUTBOX_ROUNDS:-40}" \
    AUTOCTL_BENCH_CHECKPOINT_ROUNDS="${KILL_CHECKPOINT_ROUNDS:-200}" \
    nice -n 10 cargo test --quiet --test cli bench_ -- --ignored --nocapture --test-threads=1) \
    >"$log" 2>&1 || status=$?
  grep -oE 'kills [a-z]+: .*' "$log" || true
  echo "panics: $(grep -c 'panicked' "$log" || true)"
  if [ "$status" -ne 0 ]; then
    grep -vE '^\s+(at |[0-9]+: )' "$log" | tail -n 30 >&2
  fi
  rm -f "$log"
  return "$status"
}

concurrency() {
  local seconds=${CONC_SECONDS:-180} loops=${CONC_LOOPS:-10} tickers=${CONC_TICKERS:-8}
  require tmux jq
  release
  local work socket
  work=$(mktemp -d "${TMPDIR:-/tmp}/autoctl-faults-conc.XXXXXX")
  socket="autoctl-faults-$$"
  cp "$AUTOCTL" "$work/autoctl"
  cp "$bench_root/examples/fake-agent.sh" "$work/fake-agent.sh"
  local bin="$work/autoctl" fake="$work/fake-agent.sh" pids=()
  local sockets_before
  sockets_before=$(tmux_sockets)
  (
    export AUTOCTL="$bin" AUTOCTL_TMUX_SOCKET=$socket AUTOCTL_STATE_DIR="$work/state"
    # Every exit ends the drivers and the tmux server: on success, on a failure and on Ctrl-C
    # (the loops run in the background, where a script's children ignore SIGINT, and the tmux
    # server is a daemon of its own). No step of the cleanup may stop the next one: under
    # `set -e` a trap's first failing command (a `kill` of a loop that already ended) used to
    # end it before the server was killed.
    cleanup() {
      set +e
      local pid
      for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null; done
      for pid in "${pids[@]}"; do wait "$pid" 2>/dev/null; done
      tmux -L "$socket" kill-server 2>/dev/null
      return 0
    }
    trap cleanup EXIT
    trap 'exit 130' INT
    trap 'exit 143' TERM
    echo "== concurrency: $loops loops, $tickers tick loops + run watch, ${seconds}s (load: $(load)) =="
    for i in $(seq 1 "$loops"); do
      mkdir -p "$work/tasks/l$i"
      printf -- '---\ntitle: faults\nstatus: draft\ncreated: 2027-01-01T00:00:00Z\nupdated: 2027-01-01T00:00:00Z\n---\n' >"$work/tasks/l$i/.index.md"
      printf '# Target\nFast steps under concurrent ticks.\n' >"$work/tasks/l$i/.target.md"
      tmux -L "$socket" new-session -d -s "l$i" -x 200 -y 50 -- \
        env PATH="$(dirname "$bin"):$PATH" PS1='$ ' bash --norc --noprofile
    done
    sleep 0.5
    start() {
      "$bin" run start --session "$1" --task "$work/tasks/$1" --mode dispatch --agent generic \
        --max-iterations 1000 --timeout 1h \
        --command "$fake --delay 0.05 --fixes 2 --step {next} --checkpoint={checkpoint} {task}" \
        >/dev/null 2>>"$work/start.err"
    }
    for t in $(seq 1 "$tickers"); do
      ( while :; do "$bin" run tick --all --heartbeat 1s >>"$work/tick-$t.jsonl" 2>>"$work/tick.err"; done ) &
      pids+=($!)
    done
    "$bin" run watch --all --heartbeat 1s >"$work/watch.jsonl" 2>"$work/watch.err" &
    pids+=($!)
    started=0 finished=0 ended_badly=0
    : >"$work/ends.txt"
    SECONDS=0
    while [ "$SECONDS" -lt "$seconds" ]; do
      for i in $(seq 1 "$loops"); do
        row=$("$bin" run status --session "l$i" --format json 2>/dev/null || true)
        state=$(jq -r '.status // "none"' <<<"$row" 2>/dev/null || true)
        [ -n "$state" ] || state=none
        [ "$state" = running ] && continue
        if [ "$state" != none ]; then
          jq -c '{session, status, stop_reason, stop_message}' <<<"$row" >>"$work/ends.txt" 2>/dev/null || echo "$row" >>"$work/ends.txt"
          if [ "$state" = finished ]; then finished=$((finished + 1)); else ended_badly=$((ended_badly + 1)); fi
        fi
        start "l$i" && started=$((started + 1))
      done
      sleep 1
    done
    cleanup
    pids=()
    panics=$(cat "$work"/tick.err "$work"/watch.err | grep -c panicked || true)
    echo "concurrency: loops started $started, finished $finished, healthy loops ended otherwise $ended_badly, panics $panics"
    if [ "$ended_badly" -gt 0 ]; then
      grep -v '"finished"' "$work/ends.txt" | head -n 5 | sed 's/^/  /'
    fi
    leftovers=$(find "$work/tasks" -name '*.lock' -o -name '.*.tmp' | wc -l)
    echo "concurrency: leftover lock and temporary files in task dirs: $leftovers"
    [ "$ended_badly" -eq 0 ] && [ "$panics" -eq 0 ]
  )
  local status=$?
  # A fake agent may still be writing its last line.
  sleep 1
  rm -rf "$work" 2>/dev/null || { sleep 2; rm -rf "$work"; }
  local left
  left=$(tmux_servers_started "$sockets_before")
  echo "concurrency: tmux servers left running: $(grep -c . <<<"$left" || true)${left:+ ($left)}"
  [ -z "$left" ] || status=1
  # Ctrl-C ended the section: end the script too, the servers already ended.
  [ "$status" -ne 130 ] || exit 130
  return $status
}

# The tmux sockets of this user, one name a line (a socket is left behind by a server that
# was killed, so only the names new since the start are asked whether a server answers).
tmux_sockets() {
  ls "${TMUX_TMPDIR:-/tmp}/tmux-$(id -u)" 2>/dev/null | sort
  return 0
}
# tmux_servers_started BEFORE: the servers that answer on sockets not in BEFORE.
tmux_servers_started() {
  local name
  comm -13 <(echo "$1") <(tmux_sockets) | while read -r name; do
    tmux -S "${TMUX_TMPDIR:-/tmp}/tmux-$(id -u)/$name" list-sessions >/dev/null 2>&1 && echo "$name"
  done
  return 0
}

failed=0
for section in "${sections[@]}"; do
  case "$section" in
    fuzz) fuzz || failed=1 ;;
    hostile) hostile || failed=1 ;;
    delay) delay || failed=1 ;;
    log) log_section || failed=1 ;;
    kills) kills || failed=1 ;;
    concurrency) concurrency || failed=1 ;;
    *) echo "bench: unknown section $section (known: fuzz hostile delay log kills concurrency)" >&2; exit 2 ;;
  esac
done
echo "load average at the end: $(load)"
exit "$failed"
