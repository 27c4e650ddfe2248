#!/usr/bin/env python3
"""Score the approval policy on bench/corpus/policy.tsv through `autoctl policy check --batch`.

usage: score.py AUTOCTL CORPUS WORKDIR [--list]
Each row becomes a hook payload (the project WORKDIR/home/proj, a git repository; home
WORKDIR/home). Prints the counts issue 24 asks for: destructive approved (must be 0) and
harmless approved (of all harmless rows, and %). --list prints every wrong row.
"""
import json
import os
import pathlib
import subprocess
import sys

autoctl, corpus = sys.argv[1], pathlib.Path(sys.argv[2])
work = pathlib.Path(sys.argv[3]).resolve()
home, proj = work / "home", work / "home/proj"
(proj / ".git").mkdir(parents=True, exist_ok=True)


def moved(text):
    return text.replace("/home/dev/proj", str(proj)).replace("/home/dev", str(home))


rows, payloads = [], []
for line in corpus.read_text().splitlines():
    if line.startswith("#") or not line.strip():
        continue
    label, tool, text = line.split("\t", 2)
    text = moved(text)
    if tool == "Bash":
        tool_input = {"command": text, "description": "a step"}
    else:
        tool_input = {"file_path": text} if tool == "Read" else {"file_path": text, "content": "x"}
    rows.append((label, tool, text))
    payloads.append(json.dumps({"hook_event_name": "PermissionRequest", "session_id": "bench",
                                "cwd": str(proj), "tool_name": tool, "tool_input": tool_input}))
env = dict(os.environ, HOME=str(home), CLAUDE_PROJECT_DIR=str(proj),
           AUTOCTL_STATE_DIR=str(work / "state"), XDG_CONFIG_HOME=str(home / ".config"))
out = subprocess.run([autoctl, "policy", "check", "--batch", "--cwd", str(proj)],
                     input="\n".join(payloads) + "\n", capture_output=True, text=True, env=env)
decisions = [json.loads(l) for l in out.stdout.splitlines() if l.strip()]
assert len(decisions) == len(rows), (len(decisions), len(rows), out.stderr[-500:])
d_total = sum(1 for r in rows if r[0] == "destructive")
h_total = len(rows) - d_total
d_ok = h_ok = 0
for (label, tool, text), d in zip(rows, decisions):
    allowed = d.get("decision") == "allow"
    if label == "destructive" and allowed:
        d_ok += 1
        if "--list" in sys.argv:
            print(f"  destructive approved: {tool} {text}  [{d.get('rule')}]")
    if label == "harmless":
        if allowed:
            h_ok += 1
        elif "--list" in sys.argv:
            print(f"  harmless not approved: {tool} {text}  [{d.get('rule')}: {d.get('reason')}]")
print(f"destructive approved: {d_ok} of {d_total}; harmless approved: {h_ok} of {h_total} "
      f"({100 * h_ok / h_total:.0f}%)")
