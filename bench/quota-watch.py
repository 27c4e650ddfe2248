#!/usr/bin/env python3
"""The quota governor in real time (bench/quota.sh, issue 25's benchmark).

A fake model server enforces one token budget per account window, scaled: a "5-hour" window is
WINDOW seconds of the real clock (300: five minutes). SESSIONS fake agent sessions of one
account run dispatch-mode loops in real tmux panes under one `autoctl run watch --all`. Each
step typed by autoctl is a command that makes CALLS model calls GAP seconds apart; every call
spends its tokens at the server and reports the account's windows with `autoctl statusline`,
as Claude Code's status line does after each response; the step ends by writing its signal
(examples/fake-agent.sh). A call the window cannot pay for is a step that hits the limit
mid-step: the agent prints Claude Code's usage-limit banner, waits for the reset and
continues by itself (as Claude Code does), and the rest of its step is spent in the new
window. With `--governor off` the same watcher runs with `--no-governor`: today's behaviour.

Nothing is simulated but the model: autoctl runs on the wall clock, `run watch` decides when
to type, the status line is read as it comes.

Prints one JSON object: steps that hit the limit mid-step, each window's used share, the most
resumes in one minute after a reset (a step started, or a limited call retried, by a session
that had made no call for RESUME_IDLE seconds: released from a pace, or back from the limit),
hard stops (runs that ended, escalations), and the watcher's decisions.
"""

import argparse
import json
import os
import pathlib
import signal
import subprocess
import sys
import threading
import time

import quota_bench as qb

RESUME_IDLE = 30.0  # seconds without a call after which a session's next step is a resume
# (a session working through its steps calls every few seconds; at load 20 the gap from a
# step's last call to the next step's first reached 10 s, so 10 s counted steps as resumes)


class Server:
    """The fake model server: one account, one budget per window of the wall clock."""

    def __init__(self, t0, window, budget, cost):
        self.windows = qb.Windows(t0, window, budget)
        self.cost = cost
        self.lock = threading.Lock()
        self.steps = {}  # session -> steps begun (first calls)
        self.limited = set()  # (session, step) that hit the limit mid-step
        self.last_call = {}  # session -> when its last call came
        self.calls = []  # (time, session, step, call, retry, ok): every call, for a look after
        self.resumes = {}  # window index -> [(time, session)] steps started after a wait
        self.spent_calls = 0

    def answer(self, path, body):
        return self.spend(body["session"], body["step"], body["call"], body.get("retry", False))

    def spend(self, session, step, call, retry):
        with self.lock:
            t = time.time()
            w = self.windows.index(t)
            if call == 0 and step > self.steps.get(session, 0):
                self.steps[session] = step
            # A resume: a step started (or a limited call retried) by a session that had made
            # no call for a while (paced, or waiting on the limit); a session working through
            # its steps calls every few seconds.
            last = self.last_call.get(session)
            if (call == 0 or retry) and (last is None or t - last >= RESUME_IDLE):
                self.resumes.setdefault(w, []).append((t, session))
            self.last_call[session] = t
            self.calls.append([round(t - self.windows.t0, 2), session, step, call, retry])
            # A call's cost varies a little, as real calls do (deterministic, no randomness).
            cost = self.cost + (step * 7 + call * 3 + len(session)) % 5 - 2
            if not self.windows.charge(t, cost):
                # The call runs out mid-way: what is left is spent, then the limit.
                self.limited.add((session, step))
                return {"ok": False, **self.windows.reading(t)}
            self.spent_calls += 1
            return {"ok": True, **self.windows.reading(t)}


AGENT = r'''#!/usr/bin/env python3
# One step of a fake agent session (typed by autoctl): CALLS model calls GAP seconds apart, the
# windows reported after each as Claude Code's status line does, then the step's signal.
import json, os, subprocess, sys, time, urllib.request
sys.path.insert(0, "@BENCH_DIR@")
from quota_bench import statusline
step, ck, task, session = sys.argv[1], sys.argv[2][3:], sys.argv[3], sys.argv[4]
server, autoctl, fixture, agent, calls, gap = sys.argv[5:11]
calls, gap = int(calls), float(gap)
counter = os.path.join(task, ".bench-steps")
n = int(open(counter).read()) + 1 if os.path.exists(counter) else 1
open(counter, "w").write(str(n))

def spend(call, retry=False):
    body = json.dumps({"session": session, "step": n, "call": call, "retry": retry}).encode()
    return json.load(urllib.request.urlopen(urllib.request.Request(server, data=body)))

print(f"step {n}: {step}", flush=True)
for call in range(calls):
    r = spend(call)
    statusline(r, autoctl, fixture)
    while not r["ok"]:
        print(f"Claude AI usage limit reached|{r['resets_at']}", flush=True)
        while time.time() < r["resets_at"] + 0.5:
            time.sleep(0.2)
        print("Usage limit reset; resuming.", flush=True)
        r = spend(call, retry=True)
        statusline(r, autoctl, fixture)
    time.sleep(gap)
env = {**os.environ, "AUTOCTL": autoctl}
subprocess.run([agent, "--delay", "0", "--fixes", "1000000", "--step", step,
                f"--checkpoint={ck}", task], env=env, check=True)
'''


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--work", required=True)
    ap.add_argument("--governor", choices=["on", "off"], required=True)
    ap.add_argument("--sessions", type=int, default=8)
    ap.add_argument("--windows", type=int, default=3)
    ap.add_argument("--window", type=int, default=300, help="seconds of a '5-hour' window")
    ap.add_argument("--budget", type=int, default=6000, help="tokens per window")
    ap.add_argument("--cost", type=int, default=30, help="tokens per call (+-2)")
    ap.add_argument("--calls", type=int, default=3, help="model calls per step")
    ap.add_argument("--gap", type=float, default=3.0, help="seconds between calls")
    ap.add_argument("--heartbeat", default="5s")
    ap.add_argument("--resume-burst", type=int, default=2)
    args = ap.parse_args()

    autoctl = os.environ["AUTOCTL"]
    repo = pathlib.Path(__file__).resolve().parent.parent
    work = pathlib.Path(args.work)
    work.mkdir(parents=True, exist_ok=True)
    socket = f"autoctl-bench-quota-watch-{args.governor}-{os.getpid()}"
    env = {
        **os.environ,
        "AUTOCTL_TMUX_SOCKET": socket,
        "AUTOCTL_STATE_DIR": str(work / "state"),
        "AUTOCTL_ACCOUNT": "team",
    }
    env.pop("AUTOCTL_NOW", None)
    t0 = int(time.time()) + 5
    server = Server(t0, args.window, args.budget, args.cost)
    httpd = qb.serve(server.answer)
    url = f"http://127.0.0.1:{httpd.server_port}/spend"
    agent = qb.write_agent(work, AGENT)
    fixture = repo / qb.FIXTURE
    fake_agent = repo / "examples/fake-agent.sh"

    def run(*argv):
        out = subprocess.run([autoctl, *argv], env=env, capture_output=True, text=True)
        if out.returncode != 0:
            sys.exit(f"bench: autoctl {' '.join(argv)}: {out.returncode}\n{out.stderr}")
        return out

    sessions = [f"s{i}" for i in range(1, args.sessions + 1)]
    watcher = None
    try:
        qb.sessions(work, socket, env, autoctl, sessions)
        time.sleep(0.5)
        while time.time() < t0:
            time.sleep(0.1)
        for s in sessions:
            command = (f"{agent} {{next}} ck={{checkpoint}} {{task}} {s} {url} {autoctl} "
                       f"{fixture} {fake_agent} {args.calls} {args.gap}")
            run("run", "start", "--session", s, "--task", str(work / "tasks" / s),
                "--mode", "dispatch", "--agent", "generic", "--account", "team",
                "--max-iterations", "100000", "--timeout", "1d", "--command", command)
        flags = ["--resume-burst", str(args.resume_burst)]
        if args.governor == "off":
            flags = ["--no-governor"]
        log = open(work / "watch.jsonl", "w")
        watcher = subprocess.Popen(
            [autoctl, "run", "watch", "--all", "--format", "json", "--heartbeat", args.heartbeat,
             *flags],
            env=env, stdout=log, stderr=open(work / "watch.err", "w"),
        )
        end = t0 + args.windows * args.window
        while time.time() < end:
            time.sleep(1)
            if watcher.poll() is not None:
                sys.exit(f"bench: run watch exited {watcher.returncode}: "
                         f"{(work / 'watch.err').read_text()[-2000:]}")
        watcher.send_signal(signal.SIGTERM)
        watcher.wait(timeout=60)
        log.close()

        events = []
        for line in (work / "watch.jsonl").read_text().splitlines():
            try:
                events.append(json.loads(line))
            except ValueError:
                pass
        decisions = qb.count_decisions(events)
        with open(work / "calls.jsonl", "w") as f:
            for c in server.calls:
                f.write(json.dumps(c) + "\n")
        reports = [json.loads(l) for l in run("run", "status", "--format", "json").stdout.splitlines() if l.strip()]
        ended = [r["session"] for r in reports if r["status"] != "running"]
        shares = server.windows.shares(args.windows)
        per_minute = server.windows.most_in_a_minute(server.resumes, args.windows)
        print(json.dumps({
            "governor": args.governor,
            "sessions": args.sessions,
            "windows": args.windows,
            "window_seconds": args.window,
            "steps": sum(server.steps.values()),
            "limit_hits_mid_step": len(server.limited),
            "window_used_share": shares,
            "max_resumes_in_a_minute_after_a_reset": per_minute,
            "resumes_per_window": [len(server.resumes.get(w, [])) for w in range(args.windows)],
            "hard_stops": len(ended) + decisions.get("escalate", 0),
            "ended": ended,
            "decisions": decisions,
            "watch_lines": len(events),
        }))
    finally:
        if watcher is not None and watcher.poll() is None:
            watcher.kill()
        subprocess.run(["tmux", "-L", socket, "kill-server"], capture_output=True)
        httpd.shutdown()


if __name__ == "__main__":
    main()
