#!/usr/bin/env python3
"""The quota governor's simulation (bench/quota.sh, issue 25's benchmark).

A fake model server enforces one token budget per account window, scaled: a "5-hour" window is
WINDOW seconds of a simulated clock (300: five minutes). SESSIONS fake agent sessions of one
account run dispatch-mode loops in real tmux panes (a bash shell; each step typed by autoctl
is a command that spends the step's tokens at the server, reports the account's windows with
`autoctl statusline` as Claude Code's status line does, and writes the step's signal with
examples/fake-agent.sh). A step the window cannot pay for hits the limit mid-step: the agent
prints Claude Code's usage-limit banner and waits for the reset, then continues by itself (as
Claude Code does).

The clock is simulated, so three windows take minutes, not fifteen: every autoctl command runs
at AUTOCTL_NOW, and the driver is `autoctl run tick --all` once per TICK seconds of the clock
(the pass `run watch` makes), after the steps it typed have ended. With `--no-governor` the
same loop runs without pacing: today's behaviour.

Prints one JSON object: mid-step limit hits, each window's used share, the most first steps of
a window (releases and resumes) in any minute after a reset, hard stops (runs that ended or
escalated), and the decisions autoctl made.
"""

import argparse
import datetime
import json
import os
import pathlib
import subprocess
import sys
import threading
import time

import quota_bench as qb

T0 = 1_795_680_000  # 2026-11-26T08:00:00Z, a multiple of every window length used here


def iso(secs):
    return datetime.datetime.fromtimestamp(secs, datetime.timezone.utc).strftime(
        "%Y-%m-%dT%H:%M:%S.%f"
    )[:-3] + "Z"


class Server:
    """The fake model server: one account, one budget per window of the simulated clock."""

    def __init__(self, window, budget, cost):
        self.windows = qb.Windows(T0, window, budget)
        self.cost = cost
        self.now = T0
        self.lock = threading.Condition()
        self.spends = {}  # session -> number of steps started (or retried)
        self.busy = set()  # sessions inside a step (not blocked on a limit)
        self.blocked = {}  # session -> the reset it waits for
        self.limited = []  # (time, session): steps that hit the limit mid-step
        self.firsts = {}  # window index -> [(time, session)] first step of each session in it

    def reading(self, t):
        return {"now": t, **self.windows.reading(t)}

    def answer(self, path, body):
        if path == "/spend":
            return self.spend(body["session"])
        if path == "/done":
            self.done(body["session"])
            return {}
        with self.lock:
            return {"now": self.now}

    def spend(self, session):
        with self.lock:
            t = self.now
            w = self.windows.index(t)
            self.spends[session] = self.spends.get(session, 0) + 1
            self.blocked.pop(session, None)
            firsts = self.firsts.setdefault(w, [])
            if all(s != session for _, s in firsts):
                firsts.append((t, session))
            # A step's cost varies a little, as real steps do (deterministic: no randomness).
            n = self.spends[session]
            cost = self.cost + (n * 7 + len(session)) % 5 - 2
            if not self.windows.charge(t, cost):
                # The step starts and runs out mid-way: what is left is spent, then the limit.
                self.limited.append((t, session))
                self.blocked[session] = self.windows.reset_of(t)
                self.busy.discard(session)
                self.lock.notify_all()
                return {"ok": False, **self.reading(t)}
            self.busy.add(session)
            return {"ok": True, **self.reading(t)}

    def done(self, session):
        with self.lock:
            self.busy.discard(session)
            self.lock.notify_all()


AGENT = r'''#!/usr/bin/env python3
# One step of a fake agent session (typed by autoctl): spend at the fake model server, report
# the windows as Claude Code's status line does, write the step's signal.
import json, os, subprocess, sys, time, urllib.request
sys.path.insert(0, "@BENCH_DIR@")
import quota_bench
step, ck, task, session = sys.argv[1], sys.argv[2][3:], sys.argv[3], sys.argv[4]
server, autoctl, fixture, agent = sys.argv[5:9]

def call(path, body):
    req = urllib.request.Request(server + path, data=json.dumps(body).encode())
    return json.load(urllib.request.urlopen(req))

def iso(secs):
    import datetime
    return datetime.datetime.fromtimestamp(secs, datetime.timezone.utc).strftime(
        "%Y-%m-%dT%H:%M:%S.000Z")

def statusline(r):
    quota_bench.statusline(r, autoctl, fixture, {**os.environ, "AUTOCTL_NOW": iso(r["now"])})

r = call("/spend", {"session": session})
while not r["ok"]:
    statusline(r)
    print(f"Claude AI usage limit reached|{r['resets_at']}", flush=True)
    while call("/now", {})["now"] < r["resets_at"]:
        time.sleep(0.1)
    print("Usage limit reset; resuming.", flush=True)
    r = call("/spend", {"session": session})
statusline(r)
env = {**os.environ, "AUTOCTL_NOW": iso(r["now"]), "AUTOCTL": autoctl}
subprocess.run([agent, "--delay", "0", "--fixes", "1000000", "--step", step,
                f"--checkpoint={ck}", task], env=env, check=True)
call("/done", {"session": session})
'''


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--work", required=True)
    ap.add_argument("--governor", choices=["on", "off"], required=True)
    ap.add_argument("--sessions", type=int, default=8)
    ap.add_argument("--windows", type=int, default=3)
    ap.add_argument("--window", type=int, default=300)
    ap.add_argument("--tick", type=int, default=15)
    ap.add_argument("--budget", type=int, default=1000)
    ap.add_argument("--cost", type=int, default=15)
    ap.add_argument("--resume-burst", type=int, default=2)
    args = ap.parse_args()

    autoctl = os.environ["AUTOCTL"]
    repo = pathlib.Path(__file__).resolve().parent.parent
    work = pathlib.Path(args.work)
    work.mkdir(parents=True, exist_ok=True)
    socket = f"autoctl-bench-quota-sim-{os.getpid()}"
    env = {
        **os.environ,
        "AUTOCTL_TMUX_SOCKET": socket,
        "AUTOCTL_STATE_DIR": str(work / "state"),
        "AUTOCTL_ACCOUNT": "team",
    }
    server = Server(args.window, args.budget, args.cost)
    httpd = qb.serve(server.answer)
    url = f"http://127.0.0.1:{httpd.server_port}"
    agent = qb.write_agent(work, AGENT)
    fixture = repo / qb.FIXTURE
    fake_agent = repo / "examples/fake-agent.sh"

    def autoctl_at(t, *argv, check=True):
        out = subprocess.run(
            [autoctl, *argv],
            env={**env, "AUTOCTL_NOW": iso(t)},
            capture_output=True,
            text=True,
        )
        if check and out.returncode != 0:
            sys.exit(f"bench: autoctl {' '.join(argv)}: {out.returncode}\n{out.stderr}")
        return out

    sessions = [f"s{i}" for i in range(1, args.sessions + 1)]
    try:
        qb.sessions(work, socket, env, autoctl, sessions)
        time.sleep(0.5)
        for s in sessions:
            command = f"{agent} {{next}} ck={{checkpoint}} {{task}} {s} {url} {autoctl} {fixture} {fake_agent}"
            autoctl_at(T0, "run", "start", "--session", s, "--task", str(work / "tasks" / s),
                       "--mode", "dispatch", "--agent", "generic", "--account", "team",
                       "--max-iterations", "100000", "--timeout", "1d", "--command", command)

        flags = ["--resume-burst", str(args.resume_burst)]
        if args.governor == "off":
            flags = ["--no-governor"]
        decisions = {}
        escalations = 0
        end = T0 + args.windows * args.window
        t = T0 + 1
        while t < end:
            with server.lock:
                server.now = t
                # Blocked steps whose reset has come continue by themselves: wait for them.
                due = [s for s, reset in server.blocked.items() if reset <= t]
                server.busy.update(due)
                server.lock.notify_all()
            wait_quiet(server, {}, t)
            before = dict(server.spends)
            out = autoctl_at(t, "run", "tick", "--all", *flags)
            events = [json.loads(line) for line in out.stdout.splitlines() if line.strip()]
            typed = {}
            for e in events:
                d = e.get("decision", "?")
                decisions[d] = decisions.get(d, 0) + 1
                if d == "escalate":
                    escalations += 1
                if d == "dispatch":
                    typed[e["session"]] = before.get(e["session"], 0)
            wait_quiet(server, typed, t)
            if os.environ.get("BENCH_TRACE"):
                waits = {}
                for e in events:
                    kind = ((e.get("run") or {}).get("wait") or {}).get("kind")
                    waits[kind] = waits.get(kind, 0) + 1
                print(f"{t - T0:5d}s typed {len(typed)} used {server.windows.reading(t)['used_percentage']:5.1f}% "
                      f"blocked {len(server.blocked)} waits {waits}", file=sys.stderr)
            t += args.tick

        reports = [json.loads(l) for l in autoctl_at(t, "run", "status", "--format", "json").stdout.splitlines() if l.strip()]
        ended = [r["session"] for r in reports if r["status"] != "running"]
        shares = server.windows.shares(args.windows)
        per_minute = server.windows.most_in_a_minute(server.firsts, args.windows)
        print(json.dumps({
            "governor": args.governor,
            "sessions": args.sessions,
            "windows": args.windows,
            "steps": sum(server.spends.values()) - len(server.limited),
            "limit_hits_mid_step": len(server.limited),
            "window_used_share": shares,
            "max_resumes_in_a_minute_after_a_reset": per_minute,
            "hard_stops": len(ended) + escalations,
            "ended": ended,
            "decisions": decisions,
        }))
    finally:
        subprocess.run(["tmux", "-L", socket, "kill-server"], capture_output=True)
        httpd.shutdown()


def wait_quiet(server, typed, t, limit=60.0):
    """Until every session autoctl typed a step into has started it and no step is running
    (blocked ones wait for their reset): the clock moves only between steps."""
    deadline = time.monotonic() + limit
    with server.lock:
        while True:
            started = all(server.spends.get(s, 0) > n for s, n in typed.items())
            if started and not server.busy:
                return
            left = deadline - time.monotonic()
            if left <= 0:
                missing = [s for s, n in typed.items() if server.spends.get(s, 0) <= n]
                print(f"bench: at {iso(t)} steps typed but not started: {missing}; "
                      f"still running: {sorted(server.busy)}", file=sys.stderr)
                return
            server.lock.wait(min(left, 0.5))


if __name__ == "__main__":
    main()
