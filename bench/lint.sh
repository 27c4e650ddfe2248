#!/usr/bin/env bash
# Linting a generated tree of 10,000 task modules (3% broken in varied ways) in one call,
# against the I/O floor of reading every .index.md (`find ... -name .index.md | xargs cat`)
# on the same tree, warm cache. The tree is a git repository, so the default run includes the
# git checks of transient files; --no-git shows what they cost.
# Goals: autoctl <= 3x the floor, and peak memory flat from 1,000 to 10,000 modules.
set -euo pipefail
source "$(dirname "$0")/lib.sh"
require hyperfine python3 git
build_release

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

generate() { # generate DIR COUNT: a git repository with TASK/ holding COUNT modules
  python3 - "$1" "$2" <<'PY'
import json, os, sys
out, count = sys.argv[1], int(sys.argv[2])
root = os.path.join(out, "TASK")
os.makedirs(root)
statuses = ["draft", "planning", "review", "executing", "re-planning", "complete", "blocked", "cancelled"]
target = "# Task Target: {t}\n\n## Objective\n\nMove session handling for {t} to signed tokens with refresh.\n"
template = "# Task Target: {t}\n\n## Objective\n\n<!-- Describe the goal of this task -->\n"
signal = {"step": "check", "result": "PASS", "next": "exec", "checkpoint": "", "iteration": 3,
          "timestamp": "2026-11-25T10:00:00Z"}
broken_kinds = ["status", "yaml", "no-target", "template", "branch", "depends", "cycle", "signal",
                "stop", "timestamp", "tags", "profile", "unlisted"]
listing, broken = [], 0
for i in range(count):
    name = f"m{i:05d}"
    status = statuses[i % len(statuses)]
    fields = {"title": f'"Module {i}"', "status": status, "created": "2026-01-01T00:00:00Z",
              "updated": "2026-01-02T00:00:00Z", "depends_on": f"[m{i - 1:05d}]" if i % 7 == 3 else "[]",
              "tags": "[feature, backend]", "branch": f'"task/{name}"', "worktree": '""'}
    files = {"plan.md": "# Plan\n\n1. Do it.\n", ".target.md": target.format(t=name)}
    if status == "complete":
        files[".report.md"] = "# Report\n"
    if i % 10 == 1:
        files[".auto-signal"] = json.dumps(signal)
    kind = broken_kinds[(i // 33) % len(broken_kinds)] if i % 33 == 5 else None  # 3% broken
    if kind:
        broken += 1
    if kind == "status": fields["status"] = "done"
    if kind == "branch": fields["branch"] = '"feature/x"'
    if kind == "depends": fields["depends_on"] = "[ghost]"
    if kind == "cycle": fields["depends_on"] = f"[{name}b]"
    if kind == "timestamp": fields["updated"] = "2025-12-31T00:00:00Z"
    if kind == "tags": fields["tags"] = "backend"
    if kind == "no-target": del files[".target.md"]
    if kind == "template":
        fields["status"] = "executing"
        files[".target.md"] = template.format(t=name)
    if kind == "signal": files[".auto-signal"] = json.dumps(dict(signal, step="deploy"))
    if kind == "stop": files[".auto-stop"] = '{"reason": "lunch", "timestamp": "2026-11-25T10:00:00Z"}'
    if kind == "profile": files[".type-profile.md"] = "## Auto Adaptation\n- post-plan threshold: 70\n"
    index = "---\n" + "".join(f"{k}: {v}\n" for k, v in fields.items()) + "---\n# " + name + "\n"
    if kind == "yaml": index = index.replace("tags: [feature, backend]", "tags: [feature, backend")
    files[".index.md"] = index
    os.makedirs(os.path.join(root, name))
    for file, text in files.items():
        with open(os.path.join(root, name, file), "w") as f:
            f.write(text)
    if kind == "cycle":  # a second module closing the cycle
        other = name + "b"
        os.makedirs(os.path.join(root, other))
        with open(os.path.join(root, other, ".index.md"), "w") as f:
            f.write(index.replace(f"[{other}]", f"[{name}]").replace(f"task/{name}", f"task/{other}"))
        with open(os.path.join(root, other, ".target.md"), "w") as f:
            f.write(target.format(t=other))
        with open(os.path.join(root, other, "plan.md"), "w") as f:
            f.write("# Plan\n")
        if "status: complete" in index:
            with open(os.path.join(root, other, ".report.md"), "w") as f:
                f.write("# Report\n")
        listing.append(other)
    if kind != "unlisted":
        listing.append(name)
with open(os.path.join(root, ".index.md"), "w") as f:
    f.write("# TASK\n\n" + "".join(f"- [{n}](./{n}/.index.md) — {n}\n" for n in listing))
with open(os.path.join(out, ".gitignore"), "w") as f:
    f.write("TASK/**/.auto-signal\nTASK/**/.auto-stop\nTASK/**/.tmp-annotations.json\n")
print(broken)
PY
  git -C "$1" init -q
  git -C "$1" add -A
  git -C "$1" -c user.name=bench -c user.email=bench@example.invalid commit -q -m tree
}
broken10k=$(generate "$work/10k" 10000)
generate "$work/1k" 1000 >/dev/null

cd "$work/10k"
hyperfine -N --warmup 3 --runs 15 -i --export-json "$work/lint.json" \
  -n autoctl "$AUTOCTL lint TASK" \
  -n autoctl-no-git "$AUTOCTL lint --no-git TASK" \
  -n floor "bash -c 'find TASK -name .index.md | xargs cat > /dev/null'" \
  >/dev/null
ratios "$work/lint.json" floor
echo
echo "autoctl / floor:        $(ratio "$work/lint.json" autoctl floor)x (goal <= 3)"
echo "autoctl --no-git / floor: $(ratio "$work/lint.json" autoctl-no-git floor)x"

# Sanity: the broken modules are found (a cycle is one finding for two modules).
findings=$("$AUTOCTL" lint --format json TASK | python3 -c 'import json,sys; print(len(json.load(sys.stdin)))' || true)
echo "broken modules generated: $broken10k; findings reported: $findings"
# Peak RSS of autoctl itself is measured with --no-git: with the git checks on, the number
# /usr/bin/time reports is the largest process of the tree, which at 10,000 modules is
# `git ls-files` reading the index, not autoctl.
rss10k=$(peak_rss_kib "$AUTOCTL" lint --no-git TASK)
rss10k_git=$(peak_rss_kib "$AUTOCTL" lint TASK)
cd "$work/1k"
rss1k=$(peak_rss_kib "$AUTOCTL" lint --no-git TASK)
rss1k_git=$(peak_rss_kib "$AUTOCTL" lint TASK)
echo "peak RSS of autoctl: ${rss1k} KiB for 1,000 modules, ${rss10k} KiB for 10,000 modules"
echo "peak RSS with git children: ${rss1k_git} KiB for 1,000 modules, ${rss10k_git} KiB for 10,000 modules"
