#!/usr/bin/env python3
"""Live check (not run by CI): autoctl's dispatch loop typing each step into the real Claude Code.

    python3 tests/live/dispatch_agent.py [--claude PATH] [--autoctl PATH] [--scratch DIR]

The Getting-started path with the real agent, offline: a private network namespace, the fake
Anthropic server (tests/fixtures/panes/capture-tools), a fresh HOME, a tmux server on a private
socket. In the project: `autoctl task new`, `autoctl hook install --commands` (the hooks and the
shipped /ai-cli-task slash command), then `autoctl run start --mode dispatch --launch` (types
`claude` at the shell, then each step into Claude Code at its idle prompt) and `autoctl run
watch` until the run ends.

The fake server plays the model for scenario `ai-cli-task`: for each step it reads the slash
command's arguments from the request (Claude Code expands the command file with $ARGUMENTS),
asks `autoctl next --step S --result R --checkpoint C` through the Bash tool (by its absolute
path: Claude Code 2.1.332's Bash tool did not find `autoctl` on the pane's PATH, nor in
/usr/local/sbin bind-mounted in a mount namespace — it runs its own shell environment), reads the answer
from the tool result, and writes the signal with `autoctl signal write` — what the shipped
command tells the model to do. The results are fixed: plan (generated), check PASS at
post-plan, exec (done), check ACCEPT at post-exec, merge success, report (done): 6 steps.

Prints one line per check and exits 1 when one fails.

Last run (2026-11-26, 2.1.332): all checks ok — the 6 steps typed once each with their
arguments, the run finished:complete at iteration 6; once (the exec step) Claude Code left the
typed command in its input box despite the 400 ms pause before Enter, and the next tick's
single Enter (one stall recovery) submitted it.
"""
import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.join(ROOT, "tests", "fixtures", "panes", "capture-tools"))
import record_hooks as rh  # noqa: E402

RESULTS = {("plan", ""): "(generated)", ("check", "post-plan"): "PASS", ("exec", ""): "(done)",
           ("check", "post-exec"): "ACCEPT", ("merge", ""): "success", ("report", ""): "(done)"}
WANT = ["plan {t} --generate", "check {t} --checkpoint post-plan", "exec {t}",
        "check {t} --checkpoint post-exec", "merge {t}", "report {t}"]
CURRENT = threading.local()
SEEN = []  # the slash command arguments of each main turn's first request


def texts(content):
    if isinstance(content, str):
        return [content]
    return [b.get("text", "") for b in content or [] if isinstance(b, dict)
            and b.get("type") == "text"]


def step_args(msgs):
    """The latest /ai-cli-task arguments in the conversation."""
    for m in reversed(msgs):
        if m.get("role") != "user":
            continue
        for t in texts(m.get("content")):
            hit = re.search(r"<command-args>([^<]*)</command-args>", t) or \
                re.search(r"Arguments: `([^`]*)`", t)
            if hit and hit.group(1).strip():
                return hit.group(1).split()
    return None


def last_tool_output(msgs):
    for m in reversed(msgs):
        for b in m.get("content") or [] if isinstance(m.get("content"), list) else []:
            if isinstance(b, dict) and b.get("type") == "tool_result":
                c = b.get("content")
                return "".join(texts(c)) if not isinstance(c, str) else c
    return ""


def install(fa, autoctl):
    base_turn, base_steps = fa.turn_step, fa.steps_for

    def turn_step(msgs):
        CURRENT.msgs = msgs
        return base_turn(msgs)

    def steps_for(name, workdir):
        if name != "ai-cli-task":
            return base_steps(name, workdir)
        msgs = getattr(CURRENT, "msgs", [])
        args = step_args(msgs)
        if not args or len(args) < 2:
            return [("text", "No /ai-cli-task arguments found.")]
        step, task = args[0], args[1]
        cp = args[args.index("--checkpoint") + 1] if "--checkpoint" in args else ""
        result = RESULTS.get((step, cp), "(done)")
        n = base_turn(msgs)
        if n == 0:
            SEEN.append(" ".join(args))
        nxt, ncp = "", ""
        if n >= 1:
            # `autoctl next` printed NEXT or NEXT<TAB>CHECKPOINT
            out = last_tool_output(msgs).strip().split("\t")
            nxt, ncp = (out + [""])[:2]
        return [
            fa.bash(f"{autoctl} next --step {step} --result '{result}' --checkpoint '{cp}'",
                    "Route the step's result"),
            fa.bash(f"{autoctl} signal write {task} --step {step} --result '{result}' "
                    f"--next '{nxt}' --checkpoint '{ncp}'", "Write the step's signal"),
            ("text", f"{step} {result}: signal written."),
        ]

    fa.turn_step, fa.steps_for = turn_step, steps_for


def write_home(home, proj, version):
    d = {"numStartups": 5, "theme": "dark", "hasCompletedOnboarding": True,
         "lastOnboardingVersion": version.split()[0],
         "customApiKeyResponses": {"approved": [rh.API_KEY[-20:]], "rejected": []},
         "projects": {proj: {"allowedTools": [], "hasCompletedProjectOnboarding": True,
                             "hasTrustDialogAccepted": True}}}
    with open(os.path.join(home, ".claude.json"), "w") as f:
        json.dump(d, f, indent=2)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--claude", default=shutil.which("claude") or "/usr/bin/claude")
    ap.add_argument("--autoctl", default=os.path.join(ROOT, "target", "debug", "autoctl"))
    ap.add_argument("--scratch", default="/tmp/autoctl-live-dispatch")
    ap.add_argument("--timeout", type=int, default=300)
    a = ap.parse_args()
    a.autoctl = os.path.abspath(a.autoctl)
    if os.environ.get("CAPTURE_NETNS") != "1":
        unshare = ["unshare", "-n"] if os.geteuid() == 0 else ["unshare", "-rn"]
        os.execvpe(unshare[0], unshare + [sys.executable, *sys.argv],
                   dict(os.environ, CAPTURE_NETNS="1"))
    subprocess.run(["ip", "link", "set", "lo", "up"], check=True)

    version = subprocess.run([a.claude, "--version"], capture_output=True, text=True,
                             env={"HOME": "/tmp", "PATH": os.environ["PATH"]}).stdout.strip()
    print(f"claude {version}; autoctl {a.autoctl}")
    shutil.rmtree(a.scratch, ignore_errors=True)
    home, proj, state = (os.path.join(a.scratch, d) for d in ("home", "proj", "state"))
    for d in (home, proj, state):
        os.makedirs(d)
    write_home(home, proj, version)
    scen_file = os.path.join(a.scratch, "scenario")
    with open(scen_file, "w") as f:
        f.write(f"ai-cli-task {proj}\n")
    sys.path.insert(0, rh.HERE)
    import fake_anthropic as fa
    install(fa, a.autoctl)
    rh.serve(scen_file, os.path.join(a.scratch, "fake-anthropic.log"))
    time.sleep(0.5)
    sock = f"autoctl-live-dispatch-{os.getpid()}"
    path = f"{os.path.dirname(a.autoctl)}:{os.path.dirname(a.claude)}:/usr/local/bin:/usr/bin:/bin"
    env = {"HOME": home, "PATH": path, "LANG": "C.UTF-8", "TZ": "UTC", "TERM": "tmux-256color",
           "PS1": r"\u@live:\w\$ ", "ANTHROPIC_BASE_URL": f"http://127.0.0.1:{rh.PORT}",
           "DISABLE_AUTOUPDATER": "1", "ANTHROPIC_API_KEY": rh.API_KEY,
           "AUTOCTL_STATE_DIR": state, "AUTOCTL_TMUX_SOCKET": sock}
    tm = rh.Tmux(sock, {"PATH": "/usr/local/bin:/usr/bin:/bin", "HOME": a.scratch,
                        "TERM": "xterm-256color"})
    failures = 0

    def check(ok, what):
        nonlocal failures
        failures += 0 if ok else 1
        print(("ok   " if ok else "FAIL ") + what, flush=True)

    def autoctl(*args, **kw):
        return subprocess.run([a.autoctl, *args], cwd=proj, env=env, capture_output=True,
                              text=True, **kw)

    try:
        r = autoctl("task", "new", "TASK/hello", "--title", "Say hello", "--goal",
                    "Write hello.txt containing one line: hello, world.")
        check(r.returncode == 0, f"task new: {r.stderr.strip()}")
        r = autoctl("hook", "install", "--commands", "--autoctl", a.autoctl)
        check(r.returncode == 0 and "commands/ai-cli-task.md" in r.stdout,
              f"hook install --commands: {r.stdout.strip().splitlines()[-1:]}")
        # The model below runs autoctl by its absolute path, which the shipped command's
        # allowed-tools (`Bash(autoctl next:*)`) do not match: allow it in the project, and run
        # Claude Code in its default permission mode (auto mode, 2.1.332's default, sends each
        # such call to its classifier, which against a non-Anthropic endpoint shows a billing
        # notice that autoctl rightly escalates).
        settings_path = os.path.join(proj, ".claude", "settings.json")
        settings = json.load(open(settings_path))
        settings.setdefault("permissions", {}).setdefault("allow", []).extend(
            [f"Bash({a.autoctl} next:*)", f"Bash({a.autoctl} signal write:*)"])
        with open(settings_path, "w") as f:
            json.dump(settings, f, indent=2)
        tm.run("new-session", "-d", "-x", "120", "-y", "40", "-s", "live", "-c", proj,
               *[x for k, v in env.items() for x in ("-e", f"{k}={v}")], "bash", "--norc",
               "--noprofile")
        time.sleep(0.5)
        r = autoctl("run", "start", "--session", "live", "--task", "TASK/hello", "--mode",
                    "dispatch", "--launch", "claude --permission-mode default")
        check(r.returncode == 0, f"run start --mode dispatch --launch: {r.stderr.strip()}")
        watch = subprocess.Popen([a.autoctl, "run", "watch", "--session", "live",
                                  "--heartbeat", "5s"], cwd=proj, env=env,
                                 stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        try:
            out, err = watch.communicate(timeout=a.timeout)
        except subprocess.TimeoutExpired:
            watch.terminate()
            out, err = watch.communicate()
        events = [json.loads(l) for l in out.splitlines() if l.startswith("{")]
        with open(os.path.join(a.scratch, "watch.jsonl"), "w") as f:
            f.write(out)
        screen = tm.cap("live")
        with open(os.path.join(a.scratch, "screen.txt"), "w") as f:
            f.write(screen)
        status = json.loads(autoctl("run", "status", "--format", "json", "--session",
                                    "live").stdout.splitlines()[0])
        check(status.get("status") == "finished",
              f"the run ended {status.get('status')}:{status.get('stop_reason')} "
              f"at iteration {status.get('iteration')}")
        task = os.path.realpath(os.path.join(proj, "TASK/hello"))
        want = [w.format(t=task) for w in WANT]
        check(SEEN == want, f"the model saw each step once with its arguments: {SEEN}")
        dispatches = [" ".join(e["reasons"]) for e in events if e.get("decision") == "dispatch"]
        typed = [r for r in dispatches if "typed: /ai-cli-task" in r]
        check(len(typed) == 6, f"run watch typed {len(typed)} steps")
        enters = [r for r in dispatches if "pressed Enter" in r]
        print(f"     Enters the agent did not take, pressed again: {len(enters)}")
        asked = [e["reasons"][-1] for e in events if e.get("decision") in ("escalate", "answer")]
        print(f"     answers/escalations: {asked}")
        print(f"     last decisions: {[e.get('decision') for e in events][-8:]}")
        if err.strip():
            print(f"     run watch stderr: {err.strip().splitlines()[-3:]}")
    finally:
        tm.run("kill-server", check=False)
    sys.exit(1 if failures else 0)


if __name__ == "__main__":
    main()
