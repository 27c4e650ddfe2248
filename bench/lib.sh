# Shared helpers for the benchmark scripts: build the release binary once, run hyperfine with
# JSON export, and print each command's median as a ratio to a reference command.
# shellcheck shell=bash

bench_root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)

require() {
  for tool in "$@"; do
    command -v "$tool" >/dev/null || { echo "bench: $tool is required (see bench/README.md)" >&2; exit 2; }
  done
}

build_release() {
  (cd "$bench_root" && cargo build --release --quiet)
  AUTOCTL="$bench_root/target/release/autoctl"
  export AUTOCTL
}

# ratios JSON_FILE REFERENCE_NAME: print median, and median / reference median, per command.
ratios() {
  python3 - "$1" "$2" <<'PY'
import json, sys
results = json.load(open(sys.argv[1]))["results"]
ref = next(r for r in results if r["command"] == sys.argv[2])["median"]
width = max(len(r["command"]) for r in results)
print(f"{'command':<{width}}  {'median':>10}  {'vs ' + sys.argv[2]:>16}")
for r in results:
    print(f"{r['command']:<{width}}  {r['median']*1000:>8.2f}ms  {r['median']/ref:>15.2f}x")
PY
}

# ratio JSON_FILE A B: print median(A)/median(B).
ratio() {
  python3 - "$@" <<'PY'
import json, sys
results = {r["command"]: r["median"] for r in json.load(open(sys.argv[1]))["results"]}
print(f"{results[sys.argv[2]] / results[sys.argv[3]]:.2f}")
PY
}

# peak_rss_kib CMD...: the maximum resident set size of one run, in KiB.
peak_rss_kib() {
  { /usr/bin/time -f '%M' "$@" 2>&1 >/dev/null || true; } | tail -n 1
}
