#!/usr/bin/env python3
"""Live check (not run by CI): the real Claude Code driving autoctl's Stop-hook loop.

    python3 tests/live/stop_hook_loop.py [--claude PATH] [--autoctl PATH] [--keep DIR]

Uses tests/fixtures/panes/capture-tools/record_hooks.py's offline setup: a private network
namespace, the fake Anthropic server (scenario `rec-loop`: a short text reply per turn, 1200
input tokens, no tool calls), a fresh HOME, a tmux server on a private socket. The project's
Stop hook is `autoctl hook stop` (with AUTOCTL_LOG=debug), set up by `autoctl loop init`.
Two runs:

  block-cap  --max-idle 0: Claude Code overrides a Stop hook's 9th consecutive block, so the
             loop must end itself at the 9th Stop (ended: block-cap), leave no override notice
             in the transcript, and `loop status` must say `active: no`.
  budget     --budget 3000 on ~1210-token turns: the loop must end at the 3rd Stop (3 turns),
             counting a final message the transcript may not show yet.

Prints one line per check and exits 1 when one fails.
"""
import argparse
import json
import os
import shutil
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.join(ROOT, "tests", "fixtures", "panes", "capture-tools"))
import record_hooks as rh  # noqa: E402
from offline import arguments, offline  # noqa: E402


def write_home(home, proj, version, autoctl):
    d = {"numStartups": 5, "theme": "dark", "hasCompletedOnboarding": True,
         "lastOnboardingVersion": version.split()[0],
         "customApiKeyResponses": {"approved": [rh.API_KEY[-20:]], "rejected": []},
         "projects": {proj: {"allowedTools": [], "hasCompletedProjectOnboarding": True,
                             "hasTrustDialogAccepted": True}}}
    with open(os.path.join(home, ".claude.json"), "w") as f:
        json.dump(d, f, indent=2)
    os.makedirs(os.path.join(home, ".claude"), exist_ok=True)
    hook = {"type": "command", "timeout": 30, "command": f"{autoctl} hook stop"}
    with open(os.path.join(home, ".claude", "settings.json"), "w") as f:
        json.dump({"hooks": {"Stop": [{"hooks": [hook]}]}}, f, indent=2)


def run(name, loop_args, a, version, scen_file, tm):
    base = os.path.join(a.scratch, name)
    shutil.rmtree(base, ignore_errors=True)
    home, proj = os.path.join(base, "home"), os.path.join(base, "proj")
    os.makedirs(home)
    os.makedirs(proj)
    write_home(home, proj, version, a.autoctl)
    subprocess.run([a.autoctl, "loop", "init", "--dir", proj, "--prompt", "Go on with the plan.",
                    *loop_args], check=True, stdout=subprocess.DEVNULL,
                   env={**os.environ, "HOME": home})
    with open(scen_file, "w") as f:
        f.write(f"rec-loop {proj}\n")
    env = {"HOME": home, "PATH": f"{os.path.dirname(a.claude)}:/usr/local/bin:/usr/bin:/bin",
           "LANG": "C.UTF-8", "TZ": "UTC", "TERM": "tmux-256color", "PS1": r"\u@live:\w\$ ",
           "ANTHROPIC_BASE_URL": f"http://127.0.0.1:{rh.PORT}", "DISABLE_AUTOUPDATER": "1",
           "ANTHROPIC_API_KEY": rh.API_KEY, "AUTOCTL_LOG": "debug",
           "AUTOCTL_STATE_DIR": os.path.join(base, "state")}
    tm.run("new-session", "-d", "-x", "120", "-y", "40", "-s", name, "-c", proj,
           *[x for k, v in env.items() for x in ("-e", f"{k}={v}")], "bash", "--norc", "--noprofile")
    time.sleep(0.5)
    tm.run("send-keys", "-t", name, "-l", "claude --permission-mode default")
    tm.run("send-keys", "-t", name, "Enter")
    rh.wait_for(tm, name, rh.READY, 60)
    rh.settle(tm, name, 1.0, 10)
    tm.run("send-keys", "-t", name, "-l", "Work through the plan")
    time.sleep(0.3)
    tm.run("send-keys", "-t", name, "Enter")
    deadline = time.time() + 120
    while time.time() < deadline and os.path.exists(os.path.join(proj, ".autoctl", "loop.json")):
        time.sleep(0.5)
    rh.settle(tm, name, 3.0, 30)
    screen = tm.cap(name)
    tm.run("kill-session", "-t", name, check=False)
    state = json.load(open(os.path.join(proj, ".autoctl", "loop-state.json")))
    status = subprocess.run([a.autoctl, "loop", "status", "--dir", proj], capture_output=True,
                            text=True)
    log = [json.loads(l) for l in open(os.path.join(proj, ".autoctl", "debug.log"))]
    transcript = state.get("transcript", {}).get("path")
    override = bool(transcript) and os.path.exists(transcript) and \
        "A hook blocked the turn from ending" in open(transcript).read()
    return dict(state=state, status=status.stdout, status_code=status.returncode, log=log,
                screen=screen, override=override)


def main():
    ap = argparse.ArgumentParser()
    a = arguments(ap, "/tmp/autoctl-live-loop")
    version = offline(a.claude)
    print(f"claude {version}; autoctl {a.autoctl}")
    os.makedirs(a.scratch, exist_ok=True)
    scen_file = os.path.join(a.scratch, "scenario")
    rh.serve(scen_file, os.path.join(a.scratch, "fake-anthropic.log"))
    time.sleep(0.5)
    tm = rh.Tmux(f"autoctl-live-{os.getpid()}", {"PATH": "/usr/local/bin:/usr/bin:/bin",
                                                 "HOME": a.scratch, "TERM": "xterm-256color"})
    failures = 0

    def check(ok, what):
        nonlocal failures
        failures += 0 if ok else 1
        print(("ok   " if ok else "FAIL ") + what)

    try:
        cap = run("block-cap", ["--max-idle", "0", "--max-iterations", "50"], a, version,
                  scen_file, tm)
        kinds = [l["kind"] for l in cap["log"]]
        check(kinds == ["continue"] * 8 + ["block-cap"], f"block-cap: hook answers {kinds}")
        check(cap["state"].get("ended", {}).get("outcome") == "block-cap",
              f"block-cap: ended {cap['state'].get('ended')}")
        check(not cap["override"], "block-cap: Claude Code never had to override the hook")
        check(cap["status"].startswith("active: no") and cap["status_code"] == 1,
              f"block-cap: loop status says {cap['status'].splitlines()[0]!r}")
        budget = run("budget", ["--budget", "3000"], a, version, scen_file, tm)
        kinds = [l["kind"] for l in budget["log"]]
        check(kinds == ["continue", "continue", "budget-exhausted"],
              f"budget: hook answers {kinds} ({budget['state'].get('ended', {}).get('message')})")
    finally:
        tm.run("kill-server", check=False)
    sys.exit(1 if failures else 0)


if __name__ == "__main__":
    main()
