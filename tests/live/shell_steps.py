#!/usr/bin/env python3
"""What `--into shell` steps rely on, checked with the real Claude Code in print mode, offline
against the fake Messages API (issue 28 item 3).

    python3 tests/live/shell_steps.py [--claude PATH] [--autoctl PATH] [--scratch DIR]

autoctl's default `--into shell` command is `claude -p --settings {settings} --output-format
stream-json --verbose "…" > {stream}`, and the tick reads the stream's last `result` line
(src/supervise/stream.rs). For each scenario of the fake server (a reply, a 401, a 529 after
Claude Code's own retries, a 429, a low credit balance, a prompt too long) this runs that
command — with the settings file autoctl writes (`autoctl run tick` makes it; here the same
hooks from `autoctl hook install` into a file) — and checks:

- the stream ends in a `result` line carrying what autoctl sorts by (`is_error`,
  `api_error_status`, `api_error_type`, `terminal_reason`), and autoctl's sorting gives the
  expected outcome (done / transient / a person's);
- autoctl's Stop or StopFailure hook ran from `--settings` (its hook record is written);
  with `--bare` (print mode's announced default, which skips hooks) whether they ran is
  printed as `info`, not checked: autoctl reads the step from its stream either way.

Prints one `ok`/`FAIL` line per check; exits 1 on a failure.
"""
import argparse
import glob
import json
import os
import shutil
import subprocess
import sys
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import offline  # noqa: E402

TOOLS = os.path.join(offline.ROOT, "tests", "fixtures", "panes", "capture-tools")
sys.path.insert(0, TOOLS)
import record_hooks as rh  # noqa: E402

# scenario → the outcome autoctl must read (src/supervise/stream.rs `Outcome`).
CASES = [
    ("text", "done"),
    ("http-401", "person:auth"),
    ("http-529", "transient"),
    ("http-429-noretry", "transient"),
    ("credit-low", "person:billing"),
    ("prompt-too-long", "person:invalid-request"),
]


def outcome(result):
    """The Python mirror of `StepResult::outcome` (kept beside the Rust one: a change
    there must be made here, and this script then says whether real streams agree)."""
    if not result.get("is_error"):
        return "done" if result.get("subtype") in (None, "success") else "failed"
    text = (result.get("result") or "").lower()
    status, kind = result.get("api_error_status"), result.get("api_error_type")
    if "credit balance" in text or kind == "billing_error":
        return "person:billing"
    if status in (401, 403) or kind in ("authentication_error", "permission_error"):
        return "person:auth"
    if status == 402:
        return "person:billing"
    if (status == 429 or (status or 0) >= 500
            or kind in ("rate_limit_error", "overloaded_error", "api_error", "timeout_error")):
        return "transient"
    if status in (400, 404, 413) or kind in ("invalid_request_error", "not_found_error",
                                              "request_too_large"):
        return "person:invalid-request"
    return "transient" if result.get("terminal_reason") == "api_error" else "failed"


def main():
    ap = argparse.ArgumentParser()
    a = offline.arguments(ap, "/tmp/shell-steps-live")
    version = offline.offline(a.claude)
    print(f"claude {version}; autoctl {a.autoctl}", file=sys.stderr)
    shutil.rmtree(a.scratch, ignore_errors=True)
    home, proj, state = (os.path.join(a.scratch, d) for d in ("home", "proj", "state"))
    for d in (home, proj, state):
        os.makedirs(d)
    subprocess.run(["git", "init", "-q", proj], check=True)
    with open(os.path.join(home, ".claude.json"), "w") as f:
        json.dump({"hasCompletedOnboarding": True, "numStartups": 5,
                   "customApiKeyResponses": {"approved": [rh.API_KEY[-20:]], "rejected": []},
                   "projects": {proj: {"hasTrustDialogAccepted": True}}}, f)
    scen_file = os.path.join(a.scratch, "scenario")
    os.environ.update(FAKE_PORT=str(rh.PORT), FAKE_SCENARIO_FILE=scen_file,
                      FAKE_LOG=os.path.join(a.scratch, "fake.log"))
    import fake_anthropic as fa
    fa.PORT, fa.SCEN_FILE, fa.LOG = rh.PORT, scen_file, os.environ["FAKE_LOG"]
    srv = fa.ThreadingHTTPServer(("127.0.0.1", rh.PORT), fa.H)
    srv.daemon_threads = True
    threading.Thread(target=srv.serve_forever, daemon=True).start()
    env = {"HOME": home, "PATH": f"{os.path.dirname(a.autoctl)}:/usr/local/bin:/usr/bin:/bin",
           "LANG": "C.UTF-8", "ANTHROPIC_BASE_URL": f"http://127.0.0.1:{rh.PORT}",
           "ANTHROPIC_API_KEY": rh.API_KEY, "DISABLE_AUTOUPDATER": "1",
           "AUTOCTL_STATE_DIR": state, "CLAUDE_CODE_MAX_RETRIES": "1"}
    # The settings file a step gets: autoctl's hooks, by this binary's path.
    # (`hook install --project` into a spare directory: the same hooks `run tick` writes
    # for a step, and none in the project, so only --settings can run them.)
    spare = os.path.join(a.scratch, "hooks")
    os.makedirs(spare)
    subprocess.run([a.autoctl, "hook", "install", "--project", spare, "--autoctl", a.autoctl],
                   env=env, check=True, capture_output=True)
    settings = os.path.join(spare, ".claude", "settings.json")
    failures = 0

    def check(ok, what):
        nonlocal failures
        failures += not ok
        print(("ok   " if ok else "FAIL ") + what, flush=True)

    for bare in (False, True):
        for scen, want in CASES:
            with open(scen_file, "w") as f:
                f.write(f"{scen} {proj}\n")
            stream = os.path.join(a.scratch, f"{scen}{'-bare' if bare else ''}.jsonl")
            before = {p: os.stat(p).st_mtime for p in glob.glob(f"{state}/**/*", recursive=True)
                      if os.path.isfile(p)}
            cmd = [a.claude, "-p", *(["--bare"] if bare else []), "--settings", settings,
                   "--output-format", "stream-json", "--verbose", "Say hello"]
            t0 = time.time()
            with open(stream, "w") as out:
                r = subprocess.run(cmd, cwd=proj, env=env, stdout=out, stderr=subprocess.PIPE,
                                   text=True, timeout=240)
            took = round(time.time() - t0, 1)
            lines = [l for l in open(stream).read().splitlines() if l.startswith("{")]
            results = [json.loads(l) for l in lines if json.loads(l).get("type") == "result"]
            last = results[-1] if results else {}
            keep = {k: last.get(k) for k in ("subtype", "is_error", "api_error_status",
                                             "api_error_type", "terminal_reason")}
            name = f"{scen}{' --bare' if bare else ''}"
            got = outcome(last) if last else "no result"
            check(got == want, f"{name}: result {json.dumps(keep)} → {got} (want {want}; "
                               f"exit {r.returncode}, {took}s)")
            changed = [p for p in glob.glob(f"{state}/**/*", recursive=True)
                       if os.path.isfile(p) and os.stat(p).st_mtime != before.get(p)]
            if bare:
                # Said, not checked: whether --bare runs --settings hooks is Claude Code's
                # choice, and autoctl reads the step from its stream either way.
                print(f"info {name}: autoctl's hooks from --settings "
                      f"{'ran' if changed else 'did not run'} ({len(changed)} state files)")
            else:
                check(bool(changed), f"{name}: autoctl's hooks ran from --settings "
                                     f"({len(changed)} state files written)")
    srv.shutdown()
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
