#!/usr/bin/env python3
"""`autoctl doctor` when the hooks cannot run (issue 29 item 6's live check), with the real
Claude Code, offline against the fake Messages API.

    python3 tests/live/doctor_path.py [--claude PATH] [--autoctl PATH] [--scratch DIR]

The hooks are installed by bare name (`hook install --autoctl autoctl`) and Claude Code is
started with a PATH that holds no autoctl, so every hook fails on screen (`/bin/sh: 1:
autoctl: not found`). After one turn, `autoctl run start` registers the pane and `autoctl
doctor --session live` must exit 1 with a FAIL row naming the fix (the absolute path).
Prints one `ok`/`FAIL` line per check; exits 1 on a failure.
"""
import argparse
import os
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import offline  # noqa: E402
import policy_live as pl  # noqa: E402

rh = pl.rh


def main():
    a = offline.arguments(argparse.ArgumentParser(), "/tmp/doctor-path-live")
    version = offline.offline(a.claude)
    print(f"claude {version}; autoctl {a.autoctl}", file=sys.stderr)
    os.makedirs(a.scratch, exist_ok=True)
    scen = os.path.join(a.scratch, "scenario")
    with open(scen, "w") as f:
        f.write("text\n")
    pl.serve(scen, os.path.join(a.scratch, "fake.log"))
    time.sleep(0.5)
    base = os.path.join(a.scratch, "b")
    home, proj, state, config = pl.prepare(base, version)
    env = pl.env_for(home, state, config, a.claude)  # no autoctl on this PATH
    run_env = dict(os.environ, **env)
    subprocess.run([a.autoctl, "hook", "install", "--project", proj, "--autoctl", "autoctl"],
                   env=run_env, check=True, capture_output=True)
    task = os.path.join(base, "task")
    os.makedirs(task)
    with open(os.path.join(task, ".index.md"), "w") as f:
        f.write("---\ntitle: live doctor\nstatus: draft\ncreated: 2027-01-01T00:00:00Z\n"
                "updated: 2027-01-01T00:00:00Z\n---\n")
    with open(os.path.join(task, ".target.md"), "w") as f:
        f.write("# Target\nLimit failed logins to five per minute per account and per IP.\n")
    tm = rh.Tmux(f"doctor-path-{os.getpid()}", {"PATH": "/usr/local/bin:/usr/bin:/bin",
                                                "HOME": a.scratch, "TERM": "xterm-256color"})
    failures = 0

    def check(ok, what):
        nonlocal failures
        failures += not ok
        print(("ok   " if ok else "FAIL ") + what, flush=True)

    try:
        pl.start_claude(tm, "live", proj, env)
        pl.type_prompt(tm, "live", "Say hello")
        rh.wait_for(tm, "live", r"Stop hook failed", 60)
        check("autoctl: not found" in tm.cap("live"), "the hooks fail on screen")
        sock = ["--tmux-socket", tm.sock]
        r = subprocess.run([a.autoctl, *sock, "run", "start", "--session", "live", "--task",
                            task], env=run_env, capture_output=True, text=True)
        check(r.returncode == 0, f"run start: {r.stderr.strip()}")
        r = subprocess.run([a.autoctl, *sock, "doctor", "--session", "live"], env=run_env,
                           capture_output=True, text=True, cwd=proj)
        print(r.stdout, file=sys.stderr)
        fail = [l for l in r.stdout.splitlines() if l.strip().startswith("FAIL")]
        check(r.returncode == 1, f"doctor --session live exits 1 (exit {r.returncode})")
        check(any("not found" in l for l in fail) and "--autoctl /" in r.stdout,
              f"a FAIL row names the failed hook and the fix: {fail}")
    finally:
        tm.run("kill-server", check=False)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
