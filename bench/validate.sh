#!/usr/bin/env bash
# Validating 10,000 signal files (a tenth invalid) in one call: autoctl against
# check-jsonschema (PyPI) with the same schema, `cat` of all files, and the I/O floor: a Rust
# program that only opens, checks and reads each file.
# autoctl reads, parses and checks each file in one pass, on every core.
# Goal: >= 20x faster than check-jsonschema, <= 0.5x cat, and peak memory flat from
# 1,000 to 10,000 files.
set -euo pipefail
source "$(dirname "$0")/lib.sh"
require hyperfine python3 check-jsonschema rustc
build_release

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

generate() { # generate DIR COUNT
  python3 - "$1" "$2" <<'PY'
import json, os, sys
out, count = sys.argv[1], int(sys.argv[2])
os.makedirs(out, exist_ok=True)
steps = [("plan", "(generated)", "check", "post-plan"), ("check", "PASS", "exec", ""),
         ("exec", "(done)", "check", "post-exec"), ("check", "ACCEPT", "merge", ""),
         ("merge", "success", "report", ""), ("report", "(done)", "(stop)", "")]
for i in range(count):
    step, result, nxt, cp = steps[i % len(steps)]
    doc = {"step": step, "result": result, "next": nxt, "checkpoint": cp, "iteration": i,
           "timestamp": "2026-11-25T10:00:00Z"}
    if i % 10 == 0:  # a tenth invalid, in varied ways
        kind = (i // 10) % 4
        if kind == 0: doc["step"] = "deploy"
        elif kind == 1: doc["timestamp"] = "2026-11-25T10:00:00"
        elif kind == 2: doc["iteration"] = -1
        else: doc["mood"] = "great"
    with open(os.path.join(out, f"{i:05d}.json"), "w") as f:
        json.dump(doc, f)
PY
}
# The I/O floor: a Rust program built with -O here that does for each file only what any
# validator must (open, check the type, read to the end, close) and nothing else.
cat > "$work/floor.rs" <<'RS'
use std::io::Read;
fn main() {
    let (mut bytes, mut total) = (Vec::new(), 0);
    for path in std::env::args_os().skip(1) {
        let mut file = std::fs::File::open(path).unwrap();
        assert!(file.metadata().unwrap().is_file());
        bytes.clear();
        total += file.read_to_end(&mut bytes).unwrap();
    }
    println!("{total}");
}
RS
rustc -O -o "$work/floor" "$work/floor.rs"
generate "$work/10k" 10000
generate "$work/1k" 1000
schema="$bench_root/schemas/auto-signal.schema.json"

cd "$work/10k"
hyperfine --warmup 2 --runs 10 -i --export-json "$work/validate.json" \
  -n autoctl "$AUTOCTL signal validate ./*.json" \
  -n cat "cat ./*.json" \
  -n floor "$work/floor ./*.json" \
  >/dev/null
hyperfine --warmup 1 --runs 3 -i --export-json "$work/cjs.json" \
  -n check-jsonschema "check-jsonschema --schemafile $schema ./*.json" \
  >/dev/null
python3 - "$work/validate.json" "$work/cjs.json" <<'PY'
import json, sys
results = json.load(open(sys.argv[1]))["results"] + json.load(open(sys.argv[2]))["results"]
m = {r["command"]: r["median"] for r in results}
for name, median in m.items():
    print(f"{name:<18} {median*1000:>10.1f}ms  {median/m['cat']:>7.2f}x cat")
print()
print(f"check-jsonschema / autoctl: {m['check-jsonschema']/m['autoctl']:.1f}x (goal >= 20)")
print(f"autoctl / cat:              {m['autoctl']/m['cat']:.2f}x (goal <= 0.5)")
print(f"autoctl / floor:            {m['autoctl']/m['floor']:.2f}x (the reads alone; check-jsonschema / floor: {m['check-jsonschema']/m['floor']:.1f}x)")
PY
# Sanity: the verdicts are right (1,000 invalid of 10,000).
invalid=$("$AUTOCTL" signal validate ./*.json | grep -vc ': ok$' || true)
echo "invalid documents reported: $invalid of 10000"
rss10k=$(peak_rss_kib "$AUTOCTL" signal validate ./*.json)
cd "$work/1k"
rss1k=$(peak_rss_kib "$AUTOCTL" signal validate ./*.json)
echo "peak RSS: ${rss1k} KiB for 1,000 files, ${rss10k} KiB for 10,000 files"
