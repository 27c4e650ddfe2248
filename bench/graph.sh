#!/usr/bin/env bash
# Levelling a 100,000-node sub-issue graph (about 200,000 edges, 5,000+ levels deep in
# places): `autoctl graph levels` against the same levels computed with python3's graphlib
# (TopologicalSorter, one get_ready() round per level) and node, with coreutils `tsort`
# (a plain topological order, no levels, in C) and `jq length` (parsing the file) as floors.
# No stated goal in the issue beyond "stays fast"; the ratios show where autoctl sits.
set -euo pipefail
source "$(dirname "$0")/lib.sh"
require hyperfine jq python3 node tsort
build_release

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

python3 - "$work" <<'PY'
import json, os, sys
out = sys.argv[1]
n = 100_000
nodes, pairs = [], []
for i in range(1, n + 1):
    blockers = []
    if i % 1000 != 1 and i > 1:
        blockers.append(i - 1)
    if i > 5000:
        blockers += [i - 5000, i // 2]
    nodes.append({"number": i, "title": f"sub-issue {i}", "blocked_by": blockers})
    pairs += [f"{b} {i}" for b in blockers]
    if not blockers:
        pairs.append(f"{i} {i}")  # tsort: a node with no edge
with open(os.path.join(out, "graph.json"), "w") as f:
    json.dump({"nodes": nodes}, f)
with open(os.path.join(out, "pairs.txt"), "w") as f:
    f.write("\n".join(pairs) + "\n")
PY

cat > "$work/levels.py" <<'PY'
import json, sys
from graphlib import TopologicalSorter
nodes = json.load(open(sys.argv[1]))["nodes"]
ts = TopologicalSorter({n["number"]: n.get("blocked_by", []) for n in nodes})
ts.prepare()
out = []
while ts.is_active():
    ready = sorted(ts.get_ready())
    for start in range(0, len(ready), 5):
        out.append(" ".join(map(str, ready[start:start + 5])))
    ts.done(*ready)
sys.stdout.write("\n".join(out) + "\n")
PY

cat > "$work/levels.js" <<'JS'
const nodes = JSON.parse(require("fs").readFileSync(process.argv[2])).nodes;
const index = new Map(nodes.map((n, i) => [n.number, i]));
const remaining = nodes.map(n => new Set(n.blocked_by || []).size);
const dependents = nodes.map(() => []);
nodes.forEach((n, i) => new Set(n.blocked_by || []).forEach(b => dependents[index.get(b)].push(i)));
let level = nodes.map((_, i) => i).filter(i => remaining[i] === 0);
const out = [];
while (level.length) {
  const ready = level.map(i => nodes[i].number).sort((a, b) => a - b);
  for (let s = 0; s < ready.length; s += 5) out.push(ready.slice(s, s + 5).join(" "));
  const next = [];
  for (const i of level) for (const d of dependents[i]) if (--remaining[d] === 0) next.push(d);
  level = next;
}
process.stdout.write(out.join("\n") + "\n");
JS

graph="$work/graph.json"
echo "graph: $(du -h "$graph" | cut -f1), $(wc -l < "$work/pairs.txt") tsort pairs"
# Sanity: autoctl and python agree on every batch.
"$AUTOCTL" graph levels "$graph" | cut -f3 > "$work/autoctl.txt"
python3 "$work/levels.py" "$graph" > "$work/python.txt"
node "$work/levels.js" "$graph" > "$work/node.txt"
cmp -s "$work/autoctl.txt" "$work/python.txt" && cmp -s "$work/autoctl.txt" "$work/node.txt" \
  && echo "autoctl, python3 and node print the same $(wc -l < "$work/autoctl.txt") batches" \
  || { echo "bench: the implementations disagree" >&2; exit 1; }

hyperfine --warmup 1 --runs 5 --export-json "$work/graph.json.bench" \
  -n autoctl "$AUTOCTL graph levels $graph >/dev/null" \
  -n autoctl-json "$AUTOCTL graph levels --format json $graph >/dev/null" \
  -n python3-graphlib "python3 $work/levels.py $graph >/dev/null" \
  -n node "node $work/levels.js $graph >/dev/null" \
  -n tsort "tsort $work/pairs.txt >/dev/null" \
  -n jq-parse "jq length $graph >/dev/null" \
  >/dev/null
ratios "$work/graph.json.bench" autoctl
echo
echo "python3-graphlib / autoctl: $(ratio "$work/graph.json.bench" python3-graphlib autoctl)x"
echo "node / autoctl:             $(ratio "$work/graph.json.bench" node autoctl)x"
echo "autoctl / jq-parse:         $(ratio "$work/graph.json.bench" autoctl jq-parse)x"
echo "peak RSS: $(peak_rss_kib "$AUTOCTL" graph levels "$graph") KiB"
