#!/usr/bin/env bash
# Nothing crashes, nothing is lost (issue 23): fault injection, concurrency and fuzzing, with
# the counts that must all be 0 and the throughput of the readers of untrusted text.
#
#   bench/faults.sh [SECTION...]     sections: fuzz (default: all)
#
# fuzz: the fuzz targets of src/fuzz.rs in a release build — the shell reader, the
#   destructive reading, the approval policy at each door (hook payload, permission box,
#   whole pane), the recovery-plan guard, hook payloads and the policy file — each over
#   FUZZ_CASES generated inputs (default 1,000,000), printing inputs per second (time spent
#   in the reader only, not in generating) and the slowest input; then the hostile inputs
#   (nested, repeated and unfolding, at 1 KiB, 64 KiB and 1 MiB) timed through each reader.
#   Panics: any is a failed target (the script exits 1). Goals: the shell reader >= 100,000
#   commands/s; the worst input <= 10 ms at any depth or length up to 1 MiB.
#
# Note the load average beside the numbers: the machine is shared.
set -euo pipefail
source "$(dirname "$0")/lib.sh"
require python3

sections=("$@")
[ "${#sections[@]}" -gt 0 ] || sections=(fuzz)

fuzz() {
  local cases=${FUZZ_CASES:-1000000} log status=0
  log=$(mktemp)
  echo "== fuzz: $cases inputs per target, release build (load: $(cut -d' ' -f1-3 /proc/loadavg)) =="
  (cd "$bench_root" && AUTOCTL_FUZZ_CASES="$cases" AUTOCTL_FUZZ_MAX_BYTES=262144 AUTOCTL_FUZZ_REPORT=1 \
    nice -n 10 cargo test --release --quiet --lib fuzz:: -- --nocapture --test-threads=1) \
    >"$log" 2>&1 || status=$?
  grep -E '^(fuzz|hostile) ' "$log" || true
  local panics
  panics=$(grep -c 'panicked' "$log" || true)
  echo "panics: $panics"
  python3 - "$log" <<'PY'
import re, sys
text = open(sys.argv[1]).read()
m = re.search(r"fuzz shell reader: \d+ inputs, (\d+) inputs/s", text)
if m:
    rate = int(m.group(1))
    print(f"shell reader: {rate:,} commands/s (goal >= 100,000)")
worst = [float(x) for x in re.findall(r"hostile worst [a-z ]+: ([\d.]+) ms", text)]
if worst:
    print(f"worst hostile input, any reader: {max(worst):.3f} ms (goal <= 10 ms up to 1 MiB)")
PY
  if [ "$status" -ne 0 ]; then
    echo "bench: a fuzz target failed; its output:" >&2
    grep -vE '^\s+(at |[0-9]+: )' "$log" | tail -n 40 >&2
    rm -f "$log"
    return 1
  fi
  rm -f "$log"
}

for section in "${sections[@]}"; do
  case "$section" in
    fuzz) fuzz ;;
    *) echo "bench: unknown section $section (known: fuzz)" >&2; exit 2 ;;
  esac
done
