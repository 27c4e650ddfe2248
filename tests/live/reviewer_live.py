#!/usr/bin/env python3
"""The optional reviewer stage with the real `claude -p`, offline (issue 24, item 5).

    python3 tests/live/reviewer_live.py [--autoctl PATH] [--claude PATH] [--scratch DIR]

The policy file names the shipped reviewer, `sh examples/reviewer/review.sh` (Claude Code's
print mode, no tools, the prompt in examples/reviewer/prompt.md), and `autoctl hook
permission-request` gets the recorded PermissionRequest payload of Claude Code 2.1.332 with a
call substituted. `claude -p` talks to a fake Messages API on 127.0.0.1 (the capture tools'
fake_anthropic.py, its answer chosen per case) inside a private network namespace. Cases:

allow      `less README.md` (no rule decides it), the model answers allow: the hook allows
           with rule `reviewer`, and `policy log` holds the Reviewer entry with its input,
           answer and reason before the request's own entry;
ask        the same call, the model answers ask: no decision (a person is asked), logged;
garbage    the model answers prose, not the JSON object: no decision, logged `no-answer`;
timeout    the model answers after 20 s, the reviewer's limit is 8 s: no decision within the
           limit (plus the hook's own start), logged `no-answer` with the timeout;
destructive `rm -rf build` and `mv src /tmp/x` with a model that would allow anything: the
           reviewer is never run (the fake server receives no request), no decision with the
           destructive marker.

Each case prints `ok`/`FAIL`; the summary gives each consultation's wall time and the size of
what the reviewer sent the model (the cost: one model call per undecided call).
"""
import argparse
import json
import os
import shutil
import subprocess
import sys
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.abspath(os.path.join(HERE, "..", ".."))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(ROOT, "tests", "fixtures", "panes", "capture-tools"))
import offline  # noqa: E402
import fake_anthropic as fa  # noqa: E402

PORT = 8791
API_KEY = "sk-ant-api03-" + "x" * 80
STATE = {"answer": "", "delay": 0.0, "requests": []}


class Reviewer(fa.H):
    """Every request gets the case's answer (claude -p sends its one request without tools)."""

    def do_POST(self):
        n = int(self.headers.get("content-length") or 0)
        raw = self.rfile.read(n) if n else b""
        try:
            body = json.loads(raw or b"{}")
        except ValueError:
            body = {}
        path = self.path.split("?")[0]
        STATE["requests"].append({"path": path, "bytes": len(raw), "model": body.get("model"),
                                  "max_tokens": body.get("max_tokens"),
                                  "n_tools": len(body.get("tools") or [])})
        if path.endswith("/count_tokens"):
            return self._json(200, {"input_tokens": 1234})
        model = body.get("model") or "claude-haiku-4-5"
        stream = bool(body.get("stream"))
        if STATE["delay"]:
            time.sleep(STATE["delay"])
        return self.reply_text(model, stream, STATE["answer"])


def payload(proj, command):
    path = os.path.join(ROOT, "tests/fixtures/policy/payloads/PermissionRequest-bash-harmless.json")
    with open(path) as f:
        p = json.load(f)
    p["cwd"] = proj
    p["tool_input"] = {"command": command, "description": "A step"}
    return json.dumps(p)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--timeout-ms", type=int, default=8000)
    # Not under /tmp: reads in the temporary directory are approved by the rules.
    a = offline.arguments(ap, "/root/autoctl-reviewer-live")
    version = offline.offline(a.claude)
    print(f"claude: {a.claude} -> {version}; autoctl {a.autoctl}", file=sys.stderr)
    shutil.rmtree(a.scratch, ignore_errors=True)
    home, proj, state = (os.path.join(a.scratch, d) for d in ("home", "home/proj", "state"))
    config = os.path.join(home, ".config")
    for d in (proj, state, os.path.join(config, "autoctl")):
        os.makedirs(d)
    with open(os.path.join(proj, "README.md"), "w") as f:
        f.write("# scratch\n")
    os.makedirs(os.path.join(proj, "build"))
    subprocess.run(["git", "init", "-q", proj], check=True)
    review = os.path.join(ROOT, "examples/reviewer/review.sh")
    with open(os.path.join(config, "autoctl", "policy.json"), "w") as f:
        json.dump({"reviewer": f"sh {review}", "reviewer_timeout_ms": a.timeout_ms}, f)
    with open(os.path.join(home, ".claude.json"), "w") as f:
        json.dump({"hasCompletedOnboarding": True, "numStartups": 5,
                   "customApiKeyResponses": {"approved": [API_KEY[-20:]], "rejected": []}}, f)
    fa.LOG = os.path.join(a.scratch, "fake-anthropic.log")
    srv = fa.ThreadingHTTPServer(("127.0.0.1", PORT), Reviewer)
    srv.daemon_threads = True
    threading.Thread(target=srv.serve_forever, daemon=True).start()
    bindir = os.path.dirname(os.path.abspath(a.claude))
    env = {"HOME": home, "PATH": f"{bindir}:/usr/local/bin:/usr/bin:/bin", "LANG": "C.UTF-8",
           "ANTHROPIC_BASE_URL": f"http://127.0.0.1:{PORT}", "ANTHROPIC_API_KEY": API_KEY,
           "DISABLE_AUTOUPDATER": "1", "AUTOCTL_STATE_DIR": state, "XDG_CONFIG_HOME": config,
           "CLAUDE_PROJECT_DIR": proj}
    allow = '{"decision": "allow", "reason": "less only shows a project file"}'
    ask = '{"decision": "ask", "reason": "a pager waits for a person"}'
    cases = [
        ("allow", "less README.md", allow, 0.0),
        ("ask", "less README.md", ask, 0.0),
        ("garbage", "less README.md", "Sure! That looks fine to me.", 0.0),
        ("timeout", "less README.md", allow, 20.0),
        ("destructive rm", "rm -rf build", allow, 0.0),
        ("destructive mv", "mv src /tmp/x", allow, 0.0),
    ]
    failed, rows = 0, []
    for name, command, answer, delay in cases:
        STATE.update(answer=answer, delay=delay, requests=[])
        log_before = log_entries(a.autoctl, env)
        t0 = time.time()
        r = subprocess.run([a.autoctl, "hook", "permission-request", "--timeout", "40s"],
                           input=payload(proj, command), capture_output=True, text=True,
                           env=env, timeout=90)
        took = round(time.time() - t0, 2)
        entries = log_entries(a.autoctl, env)[len(log_before):]
        reviewed = [e for e in entries if e.get("event") == "Reviewer"]
        request = [e for e in entries if e.get("event") != "Reviewer"]
        out = r.stdout.strip()
        row = {"case": name, "command": command, "seconds": took, "exit": r.returncode,
               "stdout": out, "stderr": r.stderr.strip()[-300:],
               "reviewer_log": reviewed, "request_log": request,
               "model_requests": STATE["requests"]}
        rows.append(row)
        allowed = '"behavior":"allow"' in out
        if name == "allow":
            checks = [("allowed", allowed),
                      ("rule reviewer", any(e.get("rule") == "reviewer" for e in request)),
                      ("Reviewer entry says allow, with its input",
                       any(e.get("decision") == "allow" and "less README.md" in
                           json.dumps(e.get("input")) for e in reviewed))]
        elif name in ("ask", "garbage", "timeout"):
            want = "ask" if name == "ask" else "no-answer"
            checks = [("no decision", out == ""),
                      (f"Reviewer entry says {want}",
                       any(e.get("decision") == want for e in reviewed))]
            if name == "timeout":
                checks.append((f"ended within the limit ({a.timeout_ms} ms) plus 3 s",
                               took < a.timeout_ms / 1000 + 3))
        else:
            checks = [("no decision", out == ""),
                      ("the reviewer was never run (no request reached the model)",
                       not STATE["requests"] and not reviewed),
                      ("the decision names the destructive marker",
                       any(str(e.get("rule", "")).startswith("destructive:") for e in request))]
        for what, ok in checks:
            print(f"{'ok  ' if ok else 'FAIL'} {name}: {what} ({took} s)")
            failed += not ok
        print(json.dumps({k: row[k] for k in ("case", "seconds", "stdout")}
                         | {"reviewer": [(e.get("decision"), e.get("reason")) for e in reviewed],
                            "request": [(e.get("decision"), e.get("rule")) for e in request],
                            "model_requests": [(q["path"], q["bytes"], q["model"])
                                               for q in STATE["requests"]]}),
              file=sys.stderr)
    with open(os.path.join(a.scratch, "results.json"), "w") as f:
        json.dump({"claude": version, "rows": rows}, f, indent=2)
    srv.shutdown()
    return 1 if failed else 0


def log_entries(autoctl, env):
    r = subprocess.run([autoctl, "policy", "log", "--format", "json"], capture_output=True,
                       text=True, env=env)
    return [json.loads(line) for line in r.stdout.splitlines() if line.startswith("{")]


if __name__ == "__main__":
    sys.exit(main())
