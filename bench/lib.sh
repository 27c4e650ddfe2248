# Shared helpers for the benchmark scripts: build the release binary once, run hyperfine with
# JSON export, and print each command's median as a ratio to a reference command.
# shellcheck shell=bash

bench_root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)

# Measured as an agent's hooks and a shell loop run it: without the backtrace variables a
# developer's shell may export. With either set, every anyhow error captures a backtrace,
# and the first unwind in the static binary sorts all of its ~17,000 frame descriptions
# (libgcc's frame_heapsort, perf): about 5 ms CPU on each command that ends in an error
# (bench/policy.sh measures it on its empty-payload row).
unset RUST_BACKTRACE RUST_LIB_BACKTRACE

require() {
  for tool in "$@"; do
    [ "$tool" = hyperfine ] && tool=${HYPERFINE:-hyperfine}
    type -P "$tool" >/dev/null || { echo "bench: $tool is required (see bench/README.md)" >&2; exit 2; }
  done
}

# HYPERFINE=PATH runs another hyperfine than the one on PATH (Debian's 1.15 has no --input,
# which startup.sh needs to feed `hook event` its payload).
hyperfine() {
  command "${HYPERFINE:-hyperfine}" "$@"
}

# The binary as we ship it: on Linux the static build (`cargo build-static`, an alias in
# .cargo/config.toml), elsewhere `cargo build --release`. BENCH_DYNAMIC=1 measures the
# dynamically linked `cargo build --release` on Linux too.
build_release() {
  if [ "$(uname -s)" = Linux ] && [ -z "${BENCH_DYNAMIC:-}" ]; then
    (cd "$bench_root" && cargo -q build-static)
  else
    (cd "$bench_root" && cargo build --release --quiet)
  fi
  AUTOCTL="$bench_root/target/release/autoctl"
  export AUTOCTL
}

# AUTOCTL_BASELINE=PATH: a binary built before a change (say `cp target/release/autoctl
# /tmp/before` on the old commit). startup.sh, tick.sh and hooks.sh then run it beside the
# current build in the same run, as `NAME@before` rows, and print after/before per command:
# the one fair comparison on a machine whose load moves.
baseline() {
  if [ -n "${AUTOCTL_BASELINE:-}" ]; then
    [ -x "$AUTOCTL_BASELINE" ] || { echo "bench: AUTOCTL_BASELINE=$AUTOCTL_BASELINE is not an executable" >&2; exit 2; }
    return 0
  fi
  return 1
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

# For scripts with a tmux server and background drivers: set `work` and `socket`, add the
# process group of each driver started with setsid to `groups`, then `trap end_groups EXIT`:
# the groups and the tmux server are ended, and $work is removed (kept with BENCH_KEEP=1).
groups=()
end_groups() {
  for g in "${groups[@]}"; do kill -TERM -- "-$g" 2>/dev/null || true; done
  tmux -L "$socket" kill-server 2>/dev/null || true
  sleep 0.2
  if [ -n "${BENCH_KEEP:-}" ]; then echo "bench: kept $work" >&2; else rm -rf "$work"; fi
}

# summary FILE [DECIMALS]: median, p95 (nearest rank) and maximum of one number per line.
summary() {
  python3 - "$1" "${2:-1}" <<'PY'
import math, sys
xs = sorted(float(l) for l in open(sys.argv[1]) if l.strip())
d = int(sys.argv[2])
p95 = xs[math.ceil(0.95 * len(xs)) - 1]
mid = len(xs) // 2
median = xs[mid] if len(xs) % 2 else (xs[mid - 1] + xs[mid]) / 2
print(f"{median:.{d}f} {p95:.{d}f} {xs[-1]:.{d}f}")
PY
}
