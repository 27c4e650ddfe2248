"""What bench/quota-watch.py (real time, `run watch`) and bench/quota-sim.py (a simulated
clock, `run tick`) share: the fake model server's account windows and its HTTP door, the fake
agent's status line, the sessions' task dirs and tmux panes, and the report's measures.

The account: one token budget per window; a "5-hour" window is WINDOW seconds of the
benchmark's clock, the first starting at T0. A charge the window cannot pay is a limit hit:
what is left of the window is spent (the call ran out mid-way) and the caller is refused.
"""

import http.server
import json
import os
import pathlib
import subprocess
import threading

FIXTURE = "tests/fixtures/hook/claude-code/reference/statusline-subscription.json"


class Windows:
    """One account's windows: tokens used per window of the clock, from T0."""

    def __init__(self, t0, window, budget):
        self.t0, self.window, self.budget = t0, window, budget
        self.used = {}  # window index -> tokens

    def index(self, t):
        return int((t - self.t0) // self.window)

    def reset_of(self, t):
        return self.t0 + (self.index(t) + 1) * self.window

    def reading(self, t):
        """The windows as the API reports them after a call: what the status line shows."""
        return {
            "used_percentage": round(100.0 * self.used.get(self.index(t), 0) / self.budget, 1),
            "resets_at": self.reset_of(t),
        }

    def charge(self, t, cost):
        """Spend `cost` tokens at `t`; False (the window used up) when it cannot pay."""
        w = self.index(t)
        used = self.used.get(w, 0)
        if used + cost > self.budget:
            self.used[w] = self.budget
            return False
        self.used[w] = used + cost
        return True

    def shares(self, windows):
        """The share of each of the first `windows` windows used."""
        return [round(self.used.get(w, 0) / self.budget, 3) for w in range(windows)]

    def most_in_a_minute(self, by_window, windows):
        """The most events in any minute after a reset: `by_window` maps a window index to
        [(time, session)] (the steps started after a wait, or each session's first)."""
        most = 0
        for w in range(1, windows):
            start = self.t0 + w * self.window
            counts = {}
            for at, _ in by_window.get(w, []):
                minute = int((at - start) // 60)
                counts[minute] = counts.get(minute, 0) + 1
            most = max([most, *counts.values()])
        return most


def serve(answer):
    """The fake model server on a free loopback port: each POST's JSON body goes to
    `answer(path, body)`, whose dict is the reply."""

    class Handler(http.server.BaseHTTPRequestHandler):
        def log_message(self, *args):
            pass

        def do_POST(self):
            body = json.loads(self.rfile.read(int(self.headers["Content-Length"])) or b"{}")
            data = json.dumps(answer(self.path, body)).encode()
            self.send_response(200)
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    return httpd


def statusline(r, autoctl, fixture, env=None):
    """Report the windows `r` (a reading) with `autoctl statusline`, as Claude Code's status
    line does after each response (run by the fake agent's step)."""
    payload = json.load(open(fixture))
    payload["rate_limits"]["five_hour"]["used_percentage"] = r["used_percentage"]
    payload["rate_limits"]["five_hour"]["resets_at"] = r["resets_at"]
    payload["rate_limits"]["seven_day"]["used_percentage"] = 20
    payload["rate_limits"]["seven_day"]["resets_at"] = r["resets_at"] + 5 * 86400
    subprocess.run([autoctl, "statusline"], input=json.dumps(payload).encode(),
                   env=env, stdout=subprocess.DEVNULL, check=True)


def write_agent(work, source):
    """The fake agent's step script in `work`, able to import this module."""
    agent = pathlib.Path(work) / "agent.py"
    here = os.path.dirname(os.path.abspath(__file__))
    agent.write_text(source.replace("@BENCH_DIR@", here))
    agent.chmod(0o755)
    return agent


def sessions(work, socket, env, autoctl, names):
    """A task dir and a tmux session (a bash shell with autoctl on its PATH) per name."""
    work = pathlib.Path(work)
    for s in names:
        task = work / "tasks" / s
        task.mkdir(parents=True)
        (task / ".index.md").write_text(
            "---\ntitle: bench\nstatus: draft\ncreated: 2026-11-26T00:00:00Z\n"
            "updated: 2026-11-26T00:00:00Z\n---\n"
        )
        (task / ".target.md").write_text("# Target\nSpend the account's windows.\n")
        subprocess.run(
            ["tmux", "-L", socket, "new-session", "-d", "-s", s, "-x", "200", "-y", "50",
             "--", "env", f"PATH={pathlib.Path(autoctl).parent}:{os.environ['PATH']}",
             "PS1=$ ", "bash", "--norc", "--noprofile"],
            env=env, check=True,
        )


def count_decisions(events):
    """How many of each decision the events hold."""
    decisions = {}
    for e in events:
        d = e.get("decision", "?")
        decisions[d] = decisions.get(d, 0) + 1
    return decisions
