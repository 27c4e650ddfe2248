#!/usr/bin/env python3
"""Live check (not run by CI): every wait ends, with the real Claude Code and `run watch`.

    python3 tests/live/waits_live.py [--claude PATH] [--autoctl PATH] [--only 529,429,quota]

Uses tests/fixtures/panes/capture-tools/record_hooks.py's offline setup: a private network
namespace (`unshare -n`, loopback only), the fake Anthropic server, a fresh HOME and project,
a tmux server on a private socket. Claude Code runs in the pane as a person starts it; autoctl
registers the pane (`run start`, observe mode) and `autoctl run watch --heartbeat 5s --notify
CMD` supervises it in real time (no AUTOCTL_NOW). The fake server records the text of the last
user message of every main request, so a check can count the resumes that reached it.

  529    The server answers 529 overloaded to every request; Claude Code retries
         (CLAUDE_CODE_MAX_RETRIES=2, so its give-up comes in seconds, not minutes) and gives up:
         `API Error: Repeated 529 …  ❯ Resend your message to try again`. Then the server
         recovers. autoctl must type `continue` once its backoff (1 min) has passed: exactly one
         `continue` reaches the server as a new request, answered; no second one in the 40 s
         after; the `resume` event reaches the notify command.
  429    The same with 429 rate_limit_error (retry-after: 5) on every request: Claude Code
         gives up with `API Error: Request rejected (429)`; one `continue` after the backoff.
  quota  Subscription login (fake OAuth token): the server answers the 5-hour limit (429,
         unified headers rejected, no retry) with a reset on a minute boundary 2–3 minutes
         ahead; Claude Code shows "You've hit your 5-hour limit · resets …" and arms its own
         automatic continue; the script presses Esc ("Automatic continue cancelled"), as in the
         measured failure. After the reset the server answers again. autoctl must type
         `continue` exactly once, never before the reset + --resume-margin (1 min), and the
         notify command must see quota-wait-start and resume.

Prints one `ok`/`FAIL` line per check and exits 1 when one fails. Takes about 9 minutes.
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

QUOTA_RESET = [0]  # the live-quota scenario's reset (epoch seconds), set by the quota run


def install(fa):
    """Scenarios of this script, and the user text of each main request in the server's log."""
    base_steps, base_turn, base_log = fa.steps_for, fa.turn_step, fa.log
    last_user = {}

    def steps_for(name, W):
        if name == "live-quota":
            reset = QUOTA_RESET[0]
            if time.time() >= reset:
                return [("text", "Hello again: the limit has reset and the work goes on.")]
            claim = {"anthropic-ratelimit-unified-status": "rejected",
                     "anthropic-ratelimit-unified-reset": str(reset),
                     "anthropic-ratelimit-unified-representative-claim": "five_hour",
                     "anthropic-ratelimit-unified-5h-status": "rejected",
                     "anthropic-ratelimit-unified-5h-reset": str(reset),
                     "anthropic-ratelimit-unified-5h-utilization": "1.0",
                     "x-should-retry": "false"}
            body = fa.err_body("rate_limit_error", "This request would exceed your account's "
                                                   "rate limit. Please try again later.")
            return [("http", 429, body, claim)]
        return base_steps(name, W)

    def turn_step(msgs):
        text = ""
        for m in reversed(msgs):
            if isinstance(m, dict) and m.get("role") == "user":
                content = m.get("content")
                if isinstance(content, str):
                    text = content
                elif isinstance(content, list):
                    parts = [c.get("text", "") for c in content
                             if isinstance(c, dict) and c.get("type") == "text"]
                    parts = [p for p in parts if not p.startswith("<system-reminder>")]
                    text = parts[-1] if parts else ""
                break
        last_user["text"] = text
        return base_turn(msgs)

    def log(obj):
        if obj.get("main"):
            obj["user"] = last_user.get("text", "")
        base_log(obj)

    fa.steps_for, fa.turn_step, fa.log = steps_for, turn_step, log


def write_home(home, proj, version, auth):
    d = {"numStartups": 5, "theme": "dark", "hasCompletedOnboarding": True,
         "lastOnboardingVersion": version.split()[0],
         "projects": {proj: {"allowedTools": [], "hasCompletedProjectOnboarding": True,
                             "hasTrustDialogAccepted": True}}}
    if auth == "apikey":
        d["customApiKeyResponses"] = {"approved": [rh.API_KEY[-20:]], "rejected": []}
    with open(os.path.join(home, ".claude.json"), "w") as f:
        json.dump(d, f, indent=2)
    os.makedirs(os.path.join(home, ".claude"), exist_ok=True)


def task_module(base):
    task = os.path.join(base, "tasks", "live")
    os.makedirs(task)
    with open(os.path.join(task, ".index.md"), "w") as f:
        f.write("---\ntitle: live waits\nstatus: draft\ncreated: 2027-01-01T00:00:00Z\n"
                "updated: 2027-01-01T00:00:00Z\n---\n")
    with open(os.path.join(task, ".target.md"), "w") as f:
        # A goal run start accepts (a target with too little in it would stop the loop at
        # once, and run start refuses it).
        f.write("# Target\nAnswer each prompt with a short greeting that names the day.\n")
    return task


def requests(log_file):
    """Main requests the fake server saw: (time, user text)."""
    out = []
    try:
        for line in open(log_file):
            e = json.loads(line)
            if e.get("main"):
                out.append((e["t"], e.get("user", "")))
    except OSError:
        pass
    return out


def continues(log_file):
    return [r for r in requests(log_file) if r[1].strip() == "continue"]


class Session:
    """One Claude Code pane under `autoctl run watch`."""

    def __init__(self, name, a, version, tm, scen_file, auth, env_extra):
        self.name, self.a, self.tm = name, a, tm
        self.base = os.path.join(a.scratch, name)
        shutil.rmtree(self.base, ignore_errors=True)
        self.home, self.proj = os.path.join(self.base, "home"), os.path.join(self.base, "proj")
        os.makedirs(self.home)
        os.makedirs(self.proj)
        write_home(self.home, self.proj, version, auth)
        self.task = task_module(self.base)
        self.state = os.path.join(self.base, "state")
        self.notify_log = os.path.join(self.base, "notify.jsonl")
        self.events = os.path.join(self.base, "watch.jsonl")
        env = {"HOME": self.home,
               "PATH": f"{os.path.dirname(a.claude)}:/usr/local/bin:/usr/bin:/bin",
               "LANG": "C.UTF-8", "TZ": "UTC", "TERM": "tmux-256color",
               "PS1": r"\u@live:\w\$ ", "ANTHROPIC_BASE_URL": f"http://127.0.0.1:{rh.PORT}",
               "DISABLE_AUTOUPDATER": "1"}
        if auth == "oauth":
            env["CLAUDE_CODE_OAUTH_TOKEN"] = rh.OAUTH_TOKEN
        else:
            env["ANTHROPIC_API_KEY"] = rh.API_KEY
        env.update(env_extra)
        tm.run("new-session", "-d", "-x", "120", "-y", "40", "-s", name, "-c", self.proj,
               *[x for k, v in env.items() for x in ("-e", f"{k}={v}")],
               "bash", "--norc", "--noprofile")
        time.sleep(0.5)
        self.autoctl_env = {**os.environ, "AUTOCTL_STATE_DIR": self.state,
                            "AUTOCTL_TMUX_SOCKET": tm.sock, "HOME": self.home}
        self.watcher = None

    def autoctl(self, *args):
        return subprocess.run([self.a.autoctl, *args], capture_output=True, text=True,
                              env=self.autoctl_env)

    def begin(self, label, check):
        """Start Claude Code as a person does, put it under `run watch`, ask it something."""
        self.tm.run("send-keys", "-t", self.name, "-l", "claude --permission-mode default")
        self.tm.run("send-keys", "-t", self.name, "Enter")
        check(rh.wait_for(self.tm, self.name, rh.READY, 60), f"{label}: Claude Code is ready")
        rh.settle(self.tm, self.name, 1.0, 10)
        self.supervise()
        self.type("Say hello")

    def type(self, text):
        self.tm.run("send-keys", "-t", self.name, "-l", text)
        time.sleep(0.3)
        self.tm.run("send-keys", "-t", self.name, "Enter")

    def supervise(self):
        r = self.autoctl("run", "start", "--session", self.name, "--target", self.name,
                         "--task", self.task, "--timeout", "2h")
        if r.returncode != 0:
            raise RuntimeError(f"run start: {r.stderr.strip()}")
        notify = f"cat >> {self.notify_log}; echo >> {self.notify_log}"
        self.watcher = subprocess.Popen(
            [self.a.autoctl, "run", "watch", "--session", self.name, "--heartbeat", "5s",
             "--notify", notify],
            stdout=open(self.events, "w"), stderr=open(self.events + ".err", "w"),
            env=self.autoctl_env)

    def notified(self):
        out = []
        try:
            for line in open(self.notify_log):
                if line.strip():
                    out.append(json.loads(line))
        except OSError:
            pass
        return out

    def decisions(self):
        out = []
        try:
            for line in open(self.events):
                e = json.loads(line)
                out.append((e.get("time"), e.get("decision"), e.get("reason", "")))
        except (OSError, ValueError):
            pass
        return out

    def close(self):
        if self.watcher:
            self.watcher.terminate()
            try:
                self.watcher.wait(10)
            except subprocess.TimeoutExpired:
                self.watcher.kill()
        self.autoctl("run", "stop", "--session", self.name)
        self.tm.run("kill-session", "-t", self.name, check=False)


def run_gave_up(label, server, a, version, tm, scen_file, log_file, check):
    with open(scen_file, "w") as f:
        f.write(f"{server}\n")
    s = Session(f"live{label}", a, version, tm, scen_file, "apikey",
                {"CLAUDE_CODE_MAX_RETRIES": "2"})
    before = len(continues(log_file))
    try:
        s.begin(label, check)
        gave_up = rh.wait_for(tm, s.name, r"Resend your message|API Error(?![^\n]*[Rr]etrying)", 300)
        check(gave_up, f"{label}: Claude Code gave up after its retries")
        gave_up_at = time.time()
        with open(scen_file, "w") as f:
            f.write("text\n")   # the API recovers; only a new request can tell
        deadline = gave_up_at + 150
        while time.time() < deadline and len(continues(log_file)) == before:
            time.sleep(0.5)
        got = continues(log_file)[before:]
        waited = time.time() - gave_up_at
        check(len(got) == 1, f"{label}: one `continue` reached the server {waited:.0f}s after the "
                             f"give-up (backoff 1 min + up to one 5 s heartbeat): {got}")
        check(rh.wait_for(tm, s.name, r"canned reply", 30), f"{label}: the resumed turn was answered")
        time.sleep(40)
        check(len(continues(log_file)) - before == 1,
              f"{label}: still one `continue` 40 s later: {continues(log_file)[before:]}")
        events = [n.get("event") for n in s.notified()]
        check("resume" in events, f"{label}: the notify command saw {events}")
        st = s.autoctl("run", "status", "--session", s.name, "--format", "json")
        report = json.loads(st.stdout) if st.returncode == 0 else {}
        check(report.get("status") == "running" and not report.get("needs_person"),
              f"{label}: run status {report.get('status')}, needs_person "
              f"{report.get('needs_person')}")
        return s
    finally:
        s.close()


def run_quota(a, version, tm, scen_file, log_file, check):
    now = time.time()
    QUOTA_RESET[0] = int((now + 120) // 60 + 1) * 60   # a minute boundary 2-3 minutes ahead
    reset = QUOTA_RESET[0]
    with open(scen_file, "w") as f:
        f.write("live-quota\n")
    s = Session("livequota", a, version, tm, scen_file, "oauth",
                {"CLAUDE_CODE_SUBSCRIPTION_TYPE": "max"})
    before = len(continues(log_file))
    try:
        s.begin("quota", check)
        armed = rh.wait_for(tm, s.name, r"continue automatically|hit your", 60)
        check(armed, "quota: Claude Code shows the 5-hour limit")
        rh.settle(tm, s.name, 1.5, 15)
        tm.run("send-keys", "-t", s.name, "Escape")
        cancelled = rh.wait_for(tm, s.name, r"Automatic continue cancelled", 15)
        check(cancelled, "quota: Esc cancelled the automatic continue")
        print(f"     reset at {time.strftime('%H:%M:%S', time.gmtime(reset))}, "
              f"resume due from {time.strftime('%H:%M:%S', time.gmtime(reset + 60))} UTC")
        deadline = reset + 60 + 60
        while time.time() < deadline and len(continues(log_file)) == before:
            time.sleep(0.5)
        typed_at = time.time()
        got = continues(log_file)[before:]
        check(len(got) == 1, f"quota: one `continue` reached the server, "
                             f"{typed_at - reset:.1f}s after the reset: {got}")
        check(typed_at >= reset + 60, "quota: not before the reset + --resume-margin 1m")
        check(rh.wait_for(tm, s.name, r"limit has reset", 30),
              "quota: the resumed turn was answered")
        time.sleep(40)
        check(len(continues(log_file)) - before == 1,
              "quota: still one `continue` 40 s later")
        events = [n.get("event") for n in s.notified()]
        check("quota-wait-start" in events and "resume" in events,
              f"quota: the notify command saw {events}")
        return s
    finally:
        if os.environ.get("LIVE_DEBUG"):
            for d in s.decisions():
                print("     ", d)
        s.close()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--only", default="529,429,quota")
    a = arguments(ap, "/tmp/autoctl-live-waits")
    version = offline(a.claude)
    print(f"claude {version}; autoctl {a.autoctl}")
    os.makedirs(a.scratch, exist_ok=True)
    scen_file = os.path.join(a.scratch, "scenario")
    log_file = os.path.join(a.scratch, "fake-anthropic.log")
    if os.path.exists(log_file):
        os.remove(log_file)
    sys.path.insert(0, rh.HERE)
    import fake_anthropic as fa
    install(fa)
    rh.serve(scen_file, log_file)
    time.sleep(0.5)
    tm = rh.Tmux(f"autoctl-live-waits-{os.getpid()}",
                 {"PATH": "/usr/local/bin:/usr/bin:/bin", "HOME": a.scratch,
                  "TERM": "xterm-256color"})
    failures = 0

    def check(ok, what):
        nonlocal failures
        failures += 0 if ok else 1
        print(("ok   " if ok else "FAIL ") + what, flush=True)

    try:
        only = a.only.split(",")
        for label, server in (("529", "http-529"), ("429", "http-429")):
            if label in only:
                run_gave_up(label, server, a, version, tm, scen_file, log_file, check)
        if "quota" in only:
            run_quota(a, version, tm, scen_file, log_file, check)
    finally:
        tm.run("kill-server", check=False)
    sys.exit(1 if failures else 0)


if __name__ == "__main__":
    main()
