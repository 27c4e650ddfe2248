#!/usr/bin/env python3
"""Live check (not run by CI): two real Claude Code sessions on one subscription account,
paced by autoctl's quota governor (issue 25).

    python3 tests/live/quota_live.py [--claude PATH] [--autoctl PATH] [--scratch DIR]
                                     [--budget N] [--first-window S] [--window S]
                                     [--no-governor]

Offline (a private network namespace, loopback only) against the fake Anthropic server of
tests/fixtures/panes/capture-tools, which here also keeps ONE account's window: a budget of
--budget main requests (default 20) per window; the first window ends --first-window seconds
after the sessions start (default 150), each next one lasts --window seconds (default 300: the
"5-hour" window scaled to 5 minutes). Every answer carries the subscription's unified
rate-limit headers (`anthropic-ratelimit-unified-5h-utilization` = used/budget,
`-5h-reset`, and the 7-day pair), which is how Claude Code 2.1.332 fills the status line's
`rate_limits` when logged in with a subscription (`CLAUDE_CODE_OAUTH_TOKEN`; with an API key
the status line has no `rate_limits`). A request past the budget is answered as the real API
answers the 5-hour limit: 429, `anthropic-ratelimit-unified-status: rejected` — a hit.

Two Claude Code sessions (one fake OAuth token: one account) each run a 6-step dispatch loop
(dispatch_agent.py's model: each step is 3 main requests, so 15 % of a window) under one
`autoctl run watch --all`, with `hook install --commands` (whose status line is `autoctl
statusline`). With the governor (the default) nothing may hit the limit: the step that would
cross --pace-stop (95 %) waits `quota-paced` until the reset, then both runs go on and finish.

Checks: 0 hits; at least one run waited quota-paced; each run dispatched a step after the
first reset; both finished; the first window's share used; each step reached the model once.
Prints one `ok`/`FAIL` line per check and exits 1 when one fails. --no-governor runs the same
without the governor (the hits it takes are the comparison; its checks are expected to fail).
"""
import argparse
import io
import json
import os
import re
import subprocess
import sys
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.join(ROOT, "tests", "fixtures", "panes", "capture-tools"))
sys.path.insert(0, HERE)
import record_hooks as rh  # noqa: E402
import dispatch_agent as da  # noqa: E402
from offline import arguments, offline  # noqa: E402

LOCK = threading.Lock()
ACCOUNT = {"reset": 0.0, "window": 300, "budget": 20, "used": 0, "windows": [], "hits": []}
SEEN = {}  # task dir -> the /ai-cli-task arguments of each step's first request
MAIN = threading.local()  # whether the request being answered is a main one (it offers Bash)


def roll(now):
    """Start the next window once the current one has reset."""
    while now >= ACCOUNT["reset"]:
        ACCOUNT["windows"].append({"reset": ACCOUNT["reset"], "used": ACCOUNT["used"]})
        ACCOUNT["reset"] += ACCOUNT["window"]
        ACCOUNT["used"] = 0


def account_headers(status="allowed"):
    reset = str(int(ACCOUNT["reset"]))
    util = ACCOUNT["used"] / ACCOUNT["budget"]
    h = {"anthropic-ratelimit-unified-status": status,
         "anthropic-ratelimit-unified-reset": reset,
         "anthropic-ratelimit-unified-representative-claim": "five_hour",
         "anthropic-ratelimit-unified-5h-utilization": f"{util:.4f}",
         "anthropic-ratelimit-unified-5h-reset": reset,
         "anthropic-ratelimit-unified-7d-utilization": "0.1000",
         "anthropic-ratelimit-unified-7d-reset": str(int(ACCOUNT["reset"]) + 4 * 86400)}
    if status == "rejected":
        h["anthropic-ratelimit-unified-5h-status"] = "rejected"
        h["x-should-retry"] = "false"
    return h


def install(fa, autoctl):
    da.install(fa, autoctl)
    steps_for = fa.steps_for

    def budgeted(name, workdir):
        steps = steps_for(name, workdir)
        if name != "ai-cli-task":
            return steps
        if not getattr(MAIN, "flag", False):
            # Claude Code's own small requests (titles, its quota probe) are not counted.
            return steps
        msgs = getattr(da.CURRENT, "msgs", [])
        args = da.step_args(msgs) or ["?", "?"]
        with LOCK:
            now = time.time()
            roll(now)
            if ACCOUNT["used"] + 1 > ACCOUNT["budget"]:
                ACCOUNT["hits"].append((now, " ".join(args)))
                body = fa.err_body("rate_limit_error", "This request would exceed your "
                                   "account's rate limit. Please try again later.")
                return [("http", 429, body, account_headers("rejected"))] * 10
            ACCOUNT["used"] += 1
            if fa.turn_step(msgs) == 0:
                SEEN.setdefault(args[1], []).append((now, args[0], " ".join(args)))
        return steps

    fa.steps_for = budgeted
    post = fa.H.do_POST

    def do_post(self):
        # Read the request first to know whether it is a main one, then hand it on.
        n = int(self.headers.get("content-length") or 0)
        raw = self.rfile.read(n) if n else b""
        try:
            tools = json.loads(raw or b"{}").get("tools") or []
        except ValueError:
            tools = []
        MAIN.flag = any(isinstance(t, dict) and t.get("name") == "Bash" for t in tools)
        sock, self.rfile = self.rfile, io.BytesIO(raw)
        try:
            return post(self)
        finally:
            self.rfile = sock

    fa.H.do_POST = do_post
    # Every answer carries the account's window, as the API's do for a subscription.
    sse_head, as_json = fa.H.sse_head, fa.H._json

    def sse_head_h(self, extra=None):
        with LOCK:
            roll(time.time())
            h = account_headers()
        return sse_head(self, {**h, **(extra or {})})

    def json_h(self, status, obj, headers=None):
        if status == 200:
            with LOCK:
                roll(time.time())
                headers = {**account_headers(), **(headers or {})}
        return as_json(self, status, obj, headers)

    fa.H.sse_head, fa.H._json = sse_head_h, json_h


def film(tm, sessions, scratch, seconds):
    """Keep every distinct screen of each pane during the first seconds (the start-up), with
    its time, in scratch/startup-NAME.txt: what the first dispatch was typed into."""
    last = {s: None for s in sessions}
    files = {s: open(os.path.join(scratch, f"startup-{s}.txt"), "w") for s in sessions}
    end = time.time() + seconds
    while time.time() < end:
        for s in sessions:
            try:
                screen = tm.cap(s)
            except Exception:  # noqa: BLE001 - a pane not there yet
                continue
            if screen != last[s]:
                last[s] = screen
                files[s].write(f"=== {time.time():.3f}\n{screen}\n")
                files[s].flush()
        time.sleep(0.1)
    for f in files.values():
        f.close()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--budget", type=int, default=20)
    ap.add_argument("--first-window", type=int, default=150)
    ap.add_argument("--window", type=int, default=300)
    ap.add_argument("--timeout", type=int, default=900)
    ap.add_argument("--no-governor", action="store_true")
    ap.add_argument("--one-by-one", action="store_true",
                    help="start the second Claude Code only once the first took its step")
    a = arguments(ap, "/tmp/autoctl-live-quota")
    version = offline(a.claude)
    print(f"claude {version}; autoctl {a.autoctl}")
    subprocess.run(["rm", "-rf", a.scratch])
    home, proj, state = (os.path.join(a.scratch, d) for d in ("home", "proj", "state"))
    for d in (home, proj, state):
        os.makedirs(d)
    d = {"numStartups": 5, "theme": "dark", "hasCompletedOnboarding": True,
         "lastOnboardingVersion": version.split()[0],
         "projects": {proj: {"allowedTools": [], "hasCompletedProjectOnboarding": True,
                             "hasTrustDialogAccepted": True}}}
    with open(os.path.join(home, ".claude.json"), "w") as f:
        json.dump(d, f, indent=2)
    scen_file = os.path.join(a.scratch, "scenario")
    with open(scen_file, "w") as f:
        f.write(f"ai-cli-task {proj}\n")
    sys.path.insert(0, rh.HERE)
    import fake_anthropic as fa
    install(fa, a.autoctl)
    ACCOUNT.update(budget=a.budget, window=a.window)
    sock = f"autoctl-live-quota-{os.getpid()}"
    path = f"{os.path.dirname(a.autoctl)}:{os.path.dirname(a.claude)}:/usr/local/bin:/usr/bin:/bin"
    env = {"HOME": home, "PATH": path, "LANG": "C.UTF-8", "TZ": "UTC", "TERM": "tmux-256color",
           "PS1": r"\u@live:\w\$ ", "ANTHROPIC_BASE_URL": f"http://127.0.0.1:{rh.PORT}",
           "DISABLE_AUTOUPDATER": "1", "CLAUDE_CODE_OAUTH_TOKEN": rh.OAUTH_TOKEN,
           "CLAUDE_CODE_SUBSCRIPTION_TYPE": "max",
           "AUTOCTL_STATE_DIR": state, "AUTOCTL_TMUX_SOCKET": sock}
    tm = rh.Tmux(sock, {"PATH": "/usr/local/bin:/usr/bin:/bin", "HOME": a.scratch,
                        "TERM": "xterm-256color"})
    failures = 0

    def check(ok, what):
        nonlocal failures
        failures += 0 if ok else 1
        print(("ok   " if ok else "FAIL ") + what, flush=True)

    def autoctl(*args):
        return subprocess.run([a.autoctl, *args], cwd=proj, env=env, capture_output=True,
                              text=True)

    sessions = ["q1", "q2"]
    watch = None
    try:
        r = autoctl("hook", "install", "--commands", "--autoctl", a.autoctl)
        check(r.returncode == 0, f"hook install --commands: {r.stderr.strip()}")
        settings_path = os.path.join(proj, ".claude", "settings.json")
        settings = json.load(open(settings_path))
        settings.setdefault("permissions", {}).setdefault("allow", []).extend(
            [f"Bash({a.autoctl} next:*)", f"Bash({a.autoctl} signal write:*)"])
        with open(settings_path, "w") as f:
            json.dump(settings, f, indent=2)
        # Whole seconds, as the headers carry it (a reset between two seconds let the
        # governor release a step the server still counted in the old window).
        ACCOUNT["reset"] = int(time.time()) + a.first_window
        rh.serve(scen_file, os.path.join(a.scratch, "fake-anthropic.log"))
        time.sleep(0.5)
        for s in sessions:
            r = autoctl("task", "new", f"TASK/{s}", "--title", f"Say hello {s}", "--goal",
                        f"Write {s}.txt containing one line: hello, world.")
            check(r.returncode == 0, f"task new TASK/{s}: {r.stderr.strip()}")
            tm.run("new-session", "-d", "-x", "120", "-y", "40", "-s", s, "-c", proj,
                   *[x for k, v in env.items() for x in ("-e", f"{k}={v}")], "bash",
                   "--norc", "--noprofile")
        time.sleep(0.5)
        first_reset = ACCOUNT["reset"]
        print(f"     budget {a.budget} requests a window; first reset at "
              f"{time.strftime('%H:%M:%S', time.gmtime(first_reset))} UTC, then every "
              f"{a.window} s")
        watch_args = [a.autoctl, "run", "watch", "--all", "--heartbeat", "5s",
                      "--format", "json"]
        if a.no_governor:
            watch_args.append("--no-governor")
        events_path = os.path.join(a.scratch, "watch.jsonl")
        watch = subprocess.Popen(watch_args, cwd=proj, env=env,
                                 stdout=open(events_path, "w"),
                                 stderr=open(events_path + ".err", "w"))
        # Both Claude Codes start at once (the start-up the first dispatch must wait out);
        # --one-by-one starts the second once the first took its step.
        startup = threading.Thread(target=film, args=(tm, sessions, a.scratch, 45),
                                   daemon=True)
        startup.start()
        for s in sessions:
            r = autoctl("run", "start", "--session", s, "--task", f"TASK/{s}", "--mode",
                        "dispatch", "--account", "team", "--timeout", "1h", "--launch",
                        "claude --permission-mode default")
            check(r.returncode == 0, f"run start {s}: {r.stderr.strip()}")
            if a.one_by_one:
                rh.wait_for(tm, s, r"ai-cli-task", 60)
        deadline = time.time() + a.timeout
        status = {}
        while time.time() < deadline:
            status = {}
            for s in sessions:
                out = autoctl("run", "status", "--session", s, "--format", "json").stdout
                status[s] = json.loads(out.splitlines()[0]) if out.strip() else {}
            if all(v.get("status") not in (None, "running") for v in status.values()):
                break
            time.sleep(2)
        watch.terminate()
        watch.wait(10)
        with LOCK:
            roll(time.time())
        events = []
        for line in open(events_path):
            if line.startswith("{"):
                events.append(json.loads(line))
        for name in ("q1", "q2"):
            screen = tm.cap(name)
            with open(os.path.join(a.scratch, f"screen-{name}.txt"), "w") as f:
                f.write(screen)
        acct = autoctl("run", "status", "--accounts", "--format", "json").stdout
        with open(os.path.join(a.scratch, "accounts.json"), "w") as f:
            f.write(acct)

        def when(e):
            t = e.get("time") or e.get("now") or ""
            try:
                return time.mktime(time.strptime(t[:19], "%Y-%m-%dT%H:%M:%S")) - time.timezone
            except ValueError:
                return 0.0

        paced = [e for e in events if "quota-paced" in json.dumps(e.get("reasons", []))]
        paced_runs = sorted({e["session"] for e in paced})
        hits = ACCOUNT["hits"]
        check(not hits, f"no request hit the limit: {len(hits)} hits {hits[:3]}")
        check(bool(paced_runs), f"a run waited quota-paced: {paced_runs} "
                                f"({len(paced)} paced decisions)")
        for s in sessions:
            task = os.path.realpath(os.path.join(proj, "TASK", s))
            seen = SEEN.get(task, [])
            after = [x for x in seen if x[0] >= first_reset]
            check(bool(after), f"{s}: a step reached the model after the first reset: "
                               f"{len(seen) - len(after)} before, {len(after)} after")
            names = [x[2] for x in seen]
            check(len(names) == len(set(names)) and len(names) == 6,
                  f"{s}: each of its 6 steps reached the model once: {len(names)} "
                  f"({len(set(names))} distinct)")
            st = status.get(s, {})
            check(st.get("status") == "finished",
                  f"{s}: the run ended {st.get('status')}:{st.get('stop_reason')} at "
                  f"iteration {st.get('iteration')}")
        for w in ACCOUNT["windows"]:
            print(f"     window ending {time.strftime('%H:%M:%S', time.gmtime(w['reset']))}: "
                  f"{w['used']}/{ACCOUNT['budget']} requests "
                  f"({100 * w['used'] / ACCOUNT['budget']:.0f} %)")
        print(f"     current window: {ACCOUNT['used']}/{ACCOUNT['budget']}")
        released = [(e.get("time"), e["session"]) for e in events
                    if e.get("decision") == "dispatch" and when(e) >= first_reset]
        print(f"     dispatches after the first reset: {released[:6]}")
        if paced:
            span = max(1.0, when(paced[-1]) - when(paced[0]))
            print(f"     paced decisions: {len(paced)} over {span:.0f} s "
                  f"({60 * len(paced) / span:.0f} a minute)")
        for e in paced[:2]:
            print(f"     paced: {e['session']} {e.get('time')} {e['reasons'][-1][:160]}")
        err = open(events_path + ".err").read().strip()
        if err:
            print(f"     run watch stderr: {err.splitlines()[-3:]}")
    finally:
        if watch and watch.poll() is None:
            watch.kill()
        tm.run("kill-server", check=False)
    sys.exit(1 if failures else 0)


if __name__ == "__main__":
    main()
