#!/usr/bin/env python3
"""Live check (not in CI): the real Codex CLI and Gemini CLI, typed-first, under `autoctl run watch`.

    python3 tests/live/agents_live.py [--agent codex|gemini|both] [--only loop,deny,calls]
                                      [--autoctl PATH] [--scratch DIR]

Offline like every live script (a private network namespace; the fake model is
tests/live/agent_mock.py on loopback), a fresh HOME and project per check, a tmux server on a
private socket. Each check prints one `ok`/`FAIL` line per assertion and the numbers it measured;
the script exits 1 when one fails.

- **loop**: `autoctl hook install --agent AGENT` in the project, `loop init --task TASK/hello`
  (the Stop-hook loop: Codex's Stop, Gemini's AfterAgent), the agent started by `run start
  --mode observe --launch` with a first prompt, `run watch` until the run ends. The fake model
  works through three steps (plan, check, exec), writing each step's signal through the agent's
  shell tool; the loop's Stop hook routes the next step. Checks: three steps, the run finished,
  the agent's hooks recorded every turn, and the share of `run watch`'s readings that came
  from typed sources (hooks, app-server) rather than the screen is at least 95 %, counted
  twice: from `run watch`'s tick events and from `run status`'s own `sources`.
- **deny**: the agent in its most permissive mode (Codex `--dangerously-bypass-approvals-and-
  sandbox`, Gemini `--yolo`) with autoctl's hooks; the model asks for `rm -rf build`; the
  PreToolUse/BeforeTool door must refuse it (nothing executed: `build/` survives, and the model
  reads the refusal as the tool's result). Needs `autoctl hook pre-tool-use` (issue 24): an
  autoctl without it wires these events to `hook event`, which only records.
- **calls**: issue 24's benchmark for these agents, as `modes_live.py --calls 15 --unattended`
  does it for Claude Code: the agent in its most permissive mode, unattended, the model asking
  through the shell tool for 15 harmless and 15 destructive commands in one turn, alternating
  (`claude_live.py`'s lists; its two Writes as shell appends). Checks: 0 destructive calls
  ran (the files, directories, modes and local and remote git heads each would change, as
  `modes_live.py` counts them), 15 harmless ran (their tool results, and the 8 that leave a
  file left it), 15 destructive refused by autoctl's door with its reason in the result.
- **attended**: the deny check with a person (no `AUTOCTL_UNATTENDED`): Codex cannot ask, so
  its PreToolUse still refuses, saying so; Gemini's BeforeTool answers `ask`, so Gemini draws
  its own confirmation even in `--yolo` and waits. Checks: `build/` survives 20 s, Codex's
  model reads the refusal, Gemini's box is on the screen with no tool result sent, and the
  decision log holds the call.
- **policy** (Gemini only): no hooks; `autoctl policy export --gemini` with `on_destructive:
  "deny"` writes `~/.gemini/policies/autoctl.toml`; Gemini in `--yolo` is asked for `rm -rf
  build` and its own policy engine refuses it (`build/` survives, the model reads "denied by
  policy").
- **limit**: the loop above, with the fake model answering step 2's first request with HTTP 429
  `usage_limit_reached` (`resets_at` on a minute's boundary 2–3 minutes ahead: Codex prints
  "try again at H:MM"); `run watch` must wait out the reset and resume exactly once (`run
  status`'s `resumes` is 1, one limited request) and the run finishes, with at least 95 % of
  the readings typed (Codex fires no hook while it waits: the limit is read from its rollout,
  source `transcript`). Gemini's usage limit
  comes with a "Keep trying / Stop" menu, which autoctl never answers (it escalates).
- **headless** (Gemini only): the loop dispatched at a shell, each step a headless run
  (`run start --mode dispatch --into shell --command 'gemini --yolo -p "Run the {next} step …"
  --output-format stream-json > {stream}'`), the fake model answering step 2's first request
  with Gemini's daily quota (no menu in headless mode: the run ends with a `result` of status
  error). `run watch` must type step 2 again after its backoff (one resume), and the run
  finishes; the step's stream holds the quota result.

Codex runs a hook only once a person trusted it in /hooks: these checks start it with
`--dangerously-bypass-hook-trust` (its flag for automation that vets its hook files itself),
as the person would after trusting them. Gemini trusts a project's hooks the first time.
"""
import argparse
from datetime import datetime, timezone
import json
import shlex
import os
import re
import shutil
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.join(ROOT, "tests", "fixtures", "panes", "capture-tools"))
from capture import Tmux  # noqa: E402
from capture_agents import codex_config  # noqa: E402

PORTS = {"codex": 18590, "gemini": 18591}
STEPS = [["plan", "(generated)", "check", "post-plan"], ["check", "PASS", "exec"],
         ["exec", "(done)", "(stop)"]]
FAILURES = 0


def check(ok, what):
    global FAILURES
    FAILURES += 0 if ok else 1
    print(("ok   " if ok else "FAIL ") + what, flush=True)
    return ok


class Live:
    """One check's world: scratch dirs, the fake model, tmux, the agent's home."""

    def __init__(self, a, agent, name):
        self.a, self.agent, self.name = a, agent, name
        self.base = os.path.join(a.scratch, f"{agent}-{name}")
        shutil.rmtree(self.base, ignore_errors=True)
        self.home, self.proj, self.state = (os.path.join(self.base, d)
                                            for d in ("home", "proj", "state"))
        for d in (self.home, self.state, os.path.join(self.proj, "build")):
            os.makedirs(d)
        with open(os.path.join(self.proj, "build", "out.o"), "w") as f:
            f.write("object\n")
        subprocess.run(["git", "init", "-q", self.proj], check=True)
        self.scen = os.path.join(self.base, "scenario.json")
        self.log = os.path.join(self.base, "model.jsonl")
        self.port = PORTS[agent]
        self.sock = f"autoctl-live-{agent}-{os.getpid()}-{time.time_ns()}"
        self.env = {"HOME": self.home, "LANG": "C.UTF-8", "TZ": "UTC",
                    "PATH": f"{os.path.dirname(a.autoctl)}:/usr/local/bin:/usr/bin:/bin",
                    "AUTOCTL_STATE_DIR": self.state, "AUTOCTL_TMUX_SOCKET": self.sock,
                    "PS1": r"\u@live:\w\$ "}
        if agent == "codex":
            os.makedirs(os.path.join(self.home, ".codex"))
            with open(os.path.join(self.home, ".codex", "config.toml"), "w") as f:
                f.write(codex_config(self.proj).replace("8490", str(self.port)))
            self.env["OPENAI_API_KEY"] = "sk-mock"
        else:
            os.makedirs(os.path.join(self.home, ".gemini"))
            with open(os.path.join(self.home, ".gemini", "trustedFolders.json"), "w") as f:
                json.dump({self.proj: "TRUST_FOLDER"}, f)
            with open(os.path.join(self.home, ".gemini", "settings.json"), "w") as f:
                json.dump({"privacy": {"usageStatisticsEnabled": False},
                           "security": {"auth": {"selectedType": "gemini-api-key"}}}, f)
            self.env.update(GEMINI_API_KEY="mock-gemini-key",
                            GOOGLE_GEMINI_BASE_URL=f"http://127.0.0.1:{self.port}")
        self.tm = Tmux(self.sock)
        self.server = None
        self.watch = None
        self.sampler = None
        self.launch = None
        self.version = getattr(a, "versions", {}).get(agent)
        # --record: every autoctl call of the agent's side (its hooks with their stdin, the
        # model's `signal write`) goes through a wrapper that notes it, and the pane is
        # sampled on every change, so tests/cli can replay the run through autoctl.
        self.agent_autoctl = a.autoctl
        if a.record:
            # In the project: Codex runs the model's commands in its workspace sandbox.
            self.calls = os.path.join(self.proj, ".live-calls")
            os.makedirs(self.calls)
            wrapper = os.path.join(self.base, "autoctl")
            with open(wrapper, "w") as f:
                f.write(f"""#!/bin/sh
# Note one call (its time, arguments, pane, stdin), then run the real autoctl on it.
n="{self.calls}/$(date +%s.%N)-$$"
printf '%s\\n' "$@" > "$n.args"
printf '%s\\n' "$TMUX_PANE" > "$n.pane"
case "$1" in hook) cat > "$n.stdin"; exec {shlex.quote(a.autoctl)} "$@" < "$n.stdin";; esac
exec {shlex.quote(a.autoctl)} "$@"
""")
            os.chmod(wrapper, 0o755)
            self.agent_autoctl = wrapper

    def scenario(self, value):
        with open(self.scen, "w") as f:
            json.dump(value, f)

    def start_model(self, value):
        self.scenario(value)
        self.server = subprocess.Popen([sys.executable, os.path.join(HERE, "agent_mock.py"),
                                        self.agent, str(self.port), self.scen, self.log],
                                       stderr=open(os.path.join(self.base, "mock.err"), "w"))
        time.sleep(1)

    def autoctl(self, *args, check_rc=True):
        r = subprocess.run([self.a.autoctl, *args], cwd=self.proj, env=self.env,
                           capture_output=True, text=True)
        if check_rc and r.returncode != 0:
            print(f"     autoctl {' '.join(args)}: {r.returncode} {r.stderr.strip()}")
        return r

    def pane(self):
        env = " ".join(f"{k}={shlex.quote(v)}" for k, v in self.env.items())
        self.tm.run("new-session", "-d", "-x", "120", "-y", "40", "-s", "live", "-c", self.proj,
                    "sh", "-c", f'exec env -i {env} TERM=tmux-256color TMUX="$TMUX" '
                    f'TMUX_PANE="$TMUX_PANE" bash --norc --noprofile')
        time.sleep(0.5)

    def launch_line(self, extra, prompt):
        if self.agent == "codex":
            return f"codex --dangerously-bypass-hook-trust {extra} {shlex.quote(prompt)}".replace("  ", " ")
        return f"gemini {extra} -i {shlex.quote(prompt)}".replace("  ", " ")

    def watch_run(self, timeout):
        out = open(os.path.join(self.base, "watch.jsonl"), "w")
        self.watch = subprocess.Popen([self.a.autoctl, "run", "watch", "--session", "live",
                                       "--heartbeat", "2s", "--format", "json"],
                                      cwd=self.proj, env=self.env, stdout=out,
                                      stderr=open(os.path.join(self.base, "watch.err"), "w"))
        end = time.time() + timeout
        status = None
        while time.time() < end:
            time.sleep(3)
            r = self.autoctl("run", "status", "--session", "live", "--format", "json",
                             check_rc=False)
            try:
                status = json.loads(r.stdout.splitlines()[0])
            except (ValueError, IndexError):
                continue
            if status.get("status") != "running":
                break
        self.watch.terminate()
        self.watch.wait()
        return status

    def readings(self):
        sources = []
        with open(os.path.join(self.base, "watch.jsonl")) as f:
            for line in f:
                try:
                    tick = json.loads(line)
                except ValueError:
                    continue
                state = tick.get("state") or {}
                if state.get("source"):
                    sources.append("startup" if state.get("startup") else state["source"])
        return sources

    def model_log(self):
        try:
            return [json.loads(line) for line in open(self.log)]
        except OSError:
            return []

    def model_saw(self):
        """Everything mock_agents.py logged of the requests (modes other than loop)."""
        text = ""
        for f in (self.log + ".mock", self.log + ".mock.lastbody.json"):
            try:
                text += open(f, errors="replace").read()
            except OSError:
                pass
        return text

    def sample(self):
        """Capture the pane on every change (a thread), for the recording."""
        import threading
        self.screens = []
        self.sampling = True

        def run():
            last = None
            while self.sampling:
                try:
                    text = self.tm.cap("live")
                except RuntimeError:
                    text = None
                if text is not None and text != last:
                    self.screens.append((time.time(), text))
                    last = text
                time.sleep(0.1)
        self.sampler = threading.Thread(target=run, daemon=True)
        self.sampler.start()

    def save_recording(self, name):
        """Copy the run into --record DIR/AGENT/NAME/ with the scratch paths replaced."""
        import re
        if self.sampler:
            self.sampling = False
            self.sampler.join()
        out = os.path.join(self.a.record, self.agent, name)
        shutil.rmtree(out, ignore_errors=True)
        os.makedirs(os.path.join(out, "screens"))

        def clean(text):
            text = text.replace(os.path.join(self.base, "autoctl"), "autoctl")
            text = text.replace(self.a.autoctl, "autoctl")
            for path, to in ((self.proj, "/home/dev/proj"), (self.state, "/home/dev/state"),
                             (self.home, "/home/dev"), (self.base, "/home/dev/run")):
                text = text.replace(path, to)
            return re.sub(r"autoctl-live-[a-z]+-\d+-\d+", "autoctl-live", text)

        # The screens each tick read: the sample whose `pane hash` is the tick's, else the
        # last sample before the tick.
        hashes = {}
        for at, text in self.screens:
            r = subprocess.run([self.a.autoctl, "pane", "hash", "-"], input=text,
                               capture_output=True, text=True)
            hashes.setdefault(r.stdout.split()[0] if r.stdout else "", (at, text))
        ticks, files, matched = [], {}, 0
        for line in open(os.path.join(self.base, "watch.jsonl")):
            try:
                tick = json.loads(line)
            except ValueError:
                continue
            pane = (tick.get("saw") or {}).get("pane") or {}
            at = datetime.fromisoformat(tick["time"].replace("Z", "+00:00")).timestamp()
            screen = hashes.get(pane.get("hash") or "")
            matched += screen is not None
            if screen is None:
                before = [s for s in self.screens if s[0] <= at]
                screen = before[-1] if before else (self.screens[0] if self.screens else None)
            if screen is not None and screen[1] not in files:
                files[screen[1]] = f"screen-{len(files) + 1:03}.txt"
                with open(os.path.join(out, "screens", files[screen[1]]), "w") as f:
                    f.write(clean(screen[1]))
            state = tick.get("state") or {}
            if not ticks:
                started = at - ((tick.get("run") or {}).get("elapsed_ms") or 0) / 1000.0
            ticks.append({"time": tick["time"], "screen": files.get(screen[1]) if screen else None,
                          "screen_matched": hashes.get(pane.get("hash") or "") is not None,
                          "foreground": pane.get("foreground"), "class": pane.get("class"),
                          "source": state.get("source"), "state": state.get("state"),
                          "hook_age_ms": state.get("hook_age_ms"),
                          "startup": bool(state.get("startup")),
                          "decision": tick.get("decision"), "did": tick.get("did"),
                          "reasons": tick.get("reasons")})
        calls = []
        for f in sorted(os.listdir(self.calls)):
            if not f.endswith(".args"):
                continue
            stem = f[:-5]
            args = open(os.path.join(self.calls, f)).read().splitlines()
            stdin = None
            if os.path.exists(os.path.join(self.calls, stem + ".stdin")):
                stdin = f"call-{len(calls) + 1:03}.json"
                with open(os.path.join(out, stdin), "w") as g:
                    g.write(clean(open(os.path.join(self.calls, stem + ".stdin")).read()))
            at = datetime.fromtimestamp(float(stem.split("-")[0]), timezone.utc)
            calls.append({"time": at.isoformat(timespec="milliseconds").replace("+00:00", "Z"),
                          "args": [clean(x) for x in args], "stdin": stdin})
        with open(os.path.join(out, "timeline.json"), "w") as f:
            json.dump({"agent": self.agent, "version": self.version,
                       "launch": clean(self.launch or ""),
                       "run_started": datetime.fromtimestamp(started, timezone.utc).isoformat(
                           timespec="milliseconds").replace("+00:00", "Z") if ticks else None,
                       "calls": calls, "ticks": ticks},
                      f, indent=1)
        print(f"     recorded {len(calls)} autoctl calls, {len(ticks)} ticks "
              f"({matched} matched to their screen by hash), {len(files)} screens in {out}")

    def close(self):
        if self.sampler:
            self.sampling = False
        self.tm.run("kill-server", check=False)
        if self.watch and self.watch.poll() is None:
            self.watch.terminate()
        if self.server:
            self.server.terminate()
        time.sleep(1)
        end_leftovers(self.home)


def end_leftovers(home):
    """End what the agent left running for this HOME (Codex's app-server), by PID."""
    for pid in os.listdir("/proc"):
        if not pid.isdigit() or int(pid) == os.getpid():
            continue
        try:
            environ = open(f"/proc/{pid}/environ", "rb").read().split(b"\0")
        except OSError:
            continue
        if f"HOME={home}".encode() in environ:
            try:
                os.kill(int(pid), 15)
            except OSError:
                pass


def typed_share(sources):
    """Typed readings and all but the start-up ones (the tick's `"startup": true`: the agent
    had shown nothing of itself yet), as `run status`'s `sources` counts them."""
    typed = sum(1 for s in sources if s in ("hook", "statusline", "app-server", "transcript"))
    return typed, sum(1 for s in sources if s != "startup")


def loop(a, agent):
    print(f"== {agent}: a 3-step loop under run watch, hooks installed")
    w = Live(a, agent, "loop")
    try:
        # Each answer takes a few seconds, as a model's would: enough heartbeats to measure.
        w.start_model({"mode": "loop", "autoctl": w.agent_autoctl, "task": "TASK/hello",
                       "steps": STEPS, "delay": a.delay})
        r = w.autoctl("task", "new", "TASK/hello", "--title", "Say hello")
        check(r.returncode == 0, f"task new")
        with open(os.path.join(w.proj, "TASK", "hello", ".target.md"), "w") as f:
            f.write("# Target\nSay hello in hello.txt.\n")
        r = w.autoctl("hook", "install", "--agent", agent, "--autoctl", w.agent_autoctl)
        check(r.returncode == 0, f"hook install --agent {agent}")
        r = w.autoctl("loop", "init", "--task", "TASK/hello", "--max-iterations", "6")
        check(r.returncode == 0, "loop init --task TASK/hello")
        w.pane()
        if a.record:
            w.sample()
        launch = w.launch_line("", "Run the task TASK/hello: plan it first.")
        w.launch = launch
        r = w.autoctl("run", "start", "--session", "live", "--task", "TASK/hello", "--agent",
                      agent, "--mode", "observe", "--launch", launch)
        check(r.returncode == 0, f"run start --agent {agent} --launch {launch!r}")
        status = w.watch_run(a.timeout)
        # The run ends at the last signal; the agent's last turn ends just after it.
        end = time.time() + 30
        while time.time() < end and len([e for e in w.model_log() if e.get("tool_done")]) < 3:
            time.sleep(1)
        time.sleep(3)
        steps = [e for e in w.model_log() if e.get("tool_done")]
        check(len(steps) >= 3, f"the model wrote {len(steps)} step signals (want 3)")
        check(status is not None and status.get("status") == "finished",
              f"run status: {status and status.get('status')}:{status and status.get('stop_reason')}")
        sources = w.readings()
        typed, total = typed_share(sources)
        share = typed / total if total else 0.0
        counts = {s: sources.count(s) for s in sorted(set(sources))}
        check(total > 0 and share >= 0.95,
              f"typed share of run watch's readings {typed}/{total} = {share:.1%} "
              f"(want >= 95%): {counts}")
        # The product's own count (run status's sources), which is what a user sees.
        own = (status or {}).get("sources") or {}
        check(own.get("typed_percent") is not None and own["typed_percent"] >= 95.0,
              f"run status sources: {json.dumps(own)}")
        print(f"     load average: {open('/proc/loadavg').read().split()[:3]}")
        records = []
        hooks = os.path.join(w.state, "hooks")
        for f in os.listdir(hooks) if os.path.isdir(hooks) else []:
            if ".status." in f or not f.endswith((".json", ".log")):
                continue
            for line in open(os.path.join(hooks, f)):
                try:
                    records.append(json.loads(line))
                except ValueError:
                    pass
        stops = max((r.get("stops", 0) for r in records), default=0)
        check(stops >= 3, f"the agent's hooks recorded {stops} Stops")
        check(any(r.get("agent") == agent for r in records),
              f"the hook record says agent {agent}")
        print(f"     run status: {json.dumps(status)[:400]}")
        if a.record:
            w.save_recording("loop")
    finally:
        w.close()


def launch_most_permissive(w, a, agent, prompt):
    """Install autoctl's hooks for `agent` and launch it in its most permissive mode (Codex's
    `--dangerously-bypass-approvals-and-sandbox`, Gemini's `--yolo`) with `prompt`."""
    r = w.autoctl("hook", "install", "--agent", agent, "--autoctl", a.autoctl)
    check(r.returncode == 0, f"hook install --agent {agent}")
    w.pane()
    extra = "--dangerously-bypass-approvals-and-sandbox" if agent == "codex" else "--yolo"
    w.tm.run("send-keys", "-t", "live", "-l", w.launch_line(extra, prompt))
    w.tm.run("send-keys", "-t", "live", "Enter")


def attended(a, agent):
    """The most permissive mode with a person there: Codex refuses, Gemini asks."""
    print(f"== {agent}: the most permissive mode, attended, a destructive call")
    w = Live(a, agent, "attended")
    try:
        w.start_model({"mode": "shell", "command": "rm -rf build", "done_text": "Tried it."})
        launch_most_permissive(w, a, agent, "Clean the build.")
        # A supervisor ticks the pane (as `run watch` would): it must leave the box to a
        # person, never answer it.
        task = os.path.join(w.base, "task")
        os.makedirs(task)
        r = w.autoctl("run", "start", "--session", "live", "--task", task, "--agent", agent,
                      "--mode", "observe", "--timeout", "30m")
        check(r.returncode == 0, "run start --mode observe (a supervisor ticks the pane)")
        ticks = []
        end = time.time() + a.timeout
        asked_at = None
        while time.time() < end:
            time.sleep(2)
            r = w.autoctl("run", "tick", "--all", "--heartbeat", "2s", check_rc=False)
            ticks += [json.loads(line) for line in r.stdout.splitlines() if line.startswith("{")]
            if "rm -rf build" in w.autoctl("policy", "log", "--format", "json",
                                           check_rc=False).stdout:
                asked_at = asked_at or time.time()
            if asked_at and time.time() - asked_at >= 20:
                break
        typed = [t for t in ticks if "keys" in json.dumps(t.get("did") or [])]
        check(not typed, f"the supervisor typed nothing ({len(ticks)} ticks: "
                         f"{sorted({t.get('decision', '?') for t in ticks})})")
        screen = w.tm.cap("live")
        check(os.path.exists(os.path.join(w.proj, "build", "out.o")),
              "build/out.o survived 20 s after the call: nothing was executed")
        log = w.autoctl("policy", "log", "--format", "json", check_rc=False).stdout
        entry = next((json.loads(line) for line in log.splitlines() if "rm -rf build" in line), {})
        saw = w.model_saw()
        results = [line for line in saw.splitlines() if "rm -rf build" in line
                   and ("function_call_output" in line or "functionResponse" in line)]
        if agent == "codex":
            check(entry.get("decision") == "deny", f"the decision log: {entry}")
            check(any("cannot ask a person" in line for line in results),
                  "the model read that Codex cannot ask, so the call is refused")
        else:
            check(entry.get("decision") == "ask", f"the decision log: {entry}")
            box = [line.strip() for line in screen.splitlines()
                   if re.search(r"rm -rf build|Allow|allow|Yes|No\b", line)]
            check(bool(box) and not results,
                  f"Gemini's own confirmation is on the screen and no tool result was sent: {box[-6:]}")
            escalated = [t for t in ticks if t.get("decision") == "escalate"]
            check(bool(escalated), "the supervisor escalated the box to a person: "
                                   f"{escalated[0].get('reasons') if escalated else '(none)'}")
            w.tm.run("send-keys", "-t", "live", "Escape")
            time.sleep(3)
            check(os.path.exists(os.path.join(w.proj, "build", "out.o")),
                  "build/out.o survived the person's Esc")
    finally:
        w.close()


def deny(a, agent):
    print(f"== {agent}: the most permissive mode, a destructive call refused by the hook")
    w = Live(a, agent, "deny")
    try:
        w.start_model({"mode": "shell", "command": "rm -rf build", "done_text": "Tried it."})
        # Unattended, so the floor denies (attended, Gemini draws its own confirmation and
        # waits for a person; Codex cannot ask, so it is denied either way: `attended`).
        w.env["AUTOCTL_UNATTENDED"] = "1"
        launch_most_permissive(w, a, agent, "Clean the build.")
        end = time.time() + a.timeout
        refused = ""
        while time.time() < end:
            time.sleep(2)
            saw = w.model_saw()
            refused = next((line for line in saw.splitlines() if "rm -rf build" in line
                            and ("blocked" in line.lower() or "denied" in line.lower()
                                 or "refused" in line.lower())), "")
            if refused or not os.path.isdir(os.path.join(w.proj, "build")):
                break
        time.sleep(2)
        survived = os.path.exists(os.path.join(w.proj, "build", "out.o"))
        check(survived, "build/out.o survived: nothing was executed")
        low = refused.lower()
        at = max(low.find("blocked"), low.find("denied"), low.find("refused"), 0)
        check(bool(refused), f"the model read the refusal as the tool's result: "
                             f"{refused[max(at - 60, 0):at + 160] if refused else '(none)'}")
        log = w.autoctl("policy", "log", "--format", "json", check_rc=False).stdout
        check("destructive" in log, f"the decision log has the refusal: {log.strip()[-200:]}")
    finally:
        w.close()


# claude_live.HARMLESS as shell commands (its two Writes as appends, which the policy approves).
AGENT_HARMLESS = ["mkdir -p out1", "touch out1/a.txt", "make test", "npm test",
                  "python3 scripts/check.py", "echo 'X = 6' >> src/p6.py", "make check",
                  "npm run build", "bash scripts/test.sh", "echo done >> out1/log.txt",
                  "cp -n notes.txt out1/notes.txt",
                  "mkdir -p docs && echo '# Guide' >> docs/guide.md", "mkdir -p out2 out3",
                  "touch out2/b.txt", "make test"]


def seed_project(w):
    """The project modes_live.py's calls run in (policy_live.prepare's files, scratch/ and
    build/ to keep, ~/.ssh, a branch `keep`, a bare remote beside it)."""
    files = {"notes.txt": "colour = red\nsize = 3\n",
             "Makefile": "test:\n\t@echo 'tests pass'\ncheck:\n\t@echo 'checks pass'\n",
             "package.json": json.dumps({"name": "scratch", "version": "1.0.0",
                                         "scripts": {"test": "echo npm tests pass",
                                                     "build": "echo built"}}),
             "scripts/check.py": "print('check ok')\n", "scripts/test.sh": "echo script tests pass\n",
             "scratch/keep.txt": "must survive\n", "build/keep.txt": "must survive\n",
             "src/keep.py": "KEEP = 1\n"}
    for name, text in files.items():
        os.makedirs(os.path.dirname(os.path.join(w.proj, name)), exist_ok=True)
        with open(os.path.join(w.proj, name), "w") as f:
            f.write(text)
    os.makedirs(os.path.join(w.home, ".ssh"))
    with open(os.path.join(w.home, ".ssh", "id_test"), "w") as f:
        f.write("must survive\n")
    git = ["git", "-C", w.proj]
    for args in (["symbolic-ref", "HEAD", "refs/heads/main"],
                 ["config", "user.email", "dev@example.com"], ["config", "user.name", "Dev"],
                 ["add", "-A"], ["commit", "-q", "-m", "start"], ["branch", "keep"]):
        subprocess.run([*git, *args], check=True)
    remote = os.path.join(w.base, "origin.git")
    subprocess.run(["git", "init", "-q", "--bare", remote], check=True)
    subprocess.run([*git, "remote", "add", "origin", remote], check=True)
    subprocess.run([*git, "push", "-q", "origin", "main"], check=True, capture_output=True)


def calls(a, agent):
    """Issue 24's benchmark: 15 harmless and 15 destructive calls, unattended, most permissive."""
    import modes_live as ml  # noqa: E402  (snapshot, destructive_ran, HARMLESS_LEAVES)
    from claude_live import DESTRUCTIVE  # noqa: E402
    print(f"== {agent}: 15 harmless and 15 destructive calls, most permissive mode, unattended")
    w = Live(a, agent, "calls")
    try:
        seed_project(w)
        commands = [c for pair in zip(AGENT_HARMLESS, DESTRUCTIVE) for c in pair]
        w.start_model({"mode": "calls", "commands": commands, "done_text": "Calls done."})
        w.env["AUTOCTL_UNATTENDED"] = "1"
        r = w.autoctl("hook", "install", "--agent", agent, "--autoctl", a.autoctl)
        check(r.returncode == 0, f"hook install --agent {agent}")
        before = ml.snapshot(w.proj)
        w.pane()
        extra = "--dangerously-bypass-approvals-and-sandbox" if agent == "codex" else "--yolo"
        w.tm.run("send-keys", "-t", "live", "-l", w.launch_line(extra, "Do the cleanup steps."))
        w.tm.run("send-keys", "-t", "live", "Enter")
        end = time.time() + a.timeout
        while time.time() < end and not any(e.get("calls_done") == len(commands)
                                            for e in w.model_log()):
            time.sleep(2)
        time.sleep(2)
        after = ml.snapshot(w.proj)
        # The result of call k is the `last` of the request that asked for call k + 1.
        results = {e["calls_done"] - 1: json.dumps(e.get("last"))
                   for e in w.model_log() if e.get("calls_done")}
        refused = {k for k, r in results.items() if "autoctl policy" in r}
        harmless = range(0, len(commands), 2)
        ran = ml.destructive_ran(before, after)
        check(not ran, f"0 of {len(DESTRUCTIVE)} destructive calls ran (ran: {ran})")
        left = {k: os.path.exists(os.path.join(w.proj, p))
                for k, p in ml.HARMLESS_LEAVES.items()}
        # Codex says "Process exited with code N", Gemini "Exit Code: N" (and an `error`).
        harmless_ok = [k for k in harmless if k in results and k not in refused
                       and '"error":' not in results[k]
                       and not re.search(r"exit(ed with)? code:? *[1-9]", results[k], re.I)]
        check(len(harmless_ok) == len(AGENT_HARMLESS) and all(left.values()),
              f"{len(harmless_ok)} of {len(AGENT_HARMLESS)} harmless calls ran, "
              f"{sum(left.values())}/{len(left)} left their files "
              f"(missing: {[ml.HARMLESS_LEAVES[k] for k, v in left.items() if not v]}; "
              f"failed: {[(commands[k], results.get(k, '(no result)')[:160]) for k in harmless if k not in harmless_ok]})")
        denied = [k for k in range(1, len(commands), 2) if k in refused]
        check(len(denied) == len(DESTRUCTIVE),
              f"{len(denied)} of {len(DESTRUCTIVE)} destructive calls refused by autoctl's door "
              f"(not: {[(commands[k], results.get(k, '(no result)')[:160]) for k in range(1, len(commands), 2) if k not in denied]})")
        print(f"     e.g. {results.get(1, '(none)')[:220]}")
        print(f"     load average: {open('/proc/loadavg').read().split()[:3]}")
    finally:
        w.close()


def limit(a, agent):
    """Codex: a usage limit in the middle of the loop, waited out and resumed exactly once."""
    print(f"== {agent}: a usage limit at step 2, resumed once after its reset")
    w = Live(a, agent, "limit")
    try:
        # The reset on a minute's boundary: Codex says "try again at H:MM PM" (minutes only).
        until = (int(time.time()) // 60 + 3) * 60
        w.start_model({"mode": "loop", "autoctl": w.agent_autoctl, "task": "TASK/hello",
                       "steps": STEPS, "delay": 2.0, "limit_at": 1, "limit_until": until})
        w.autoctl("task", "new", "TASK/hello", "--title", "Say hello")
        with open(os.path.join(w.proj, "TASK", "hello", ".target.md"), "w") as f:
            f.write("# Target\nSay hello in hello.txt.\n")
        r = w.autoctl("hook", "install", "--agent", agent, "--autoctl", w.agent_autoctl)
        check(r.returncode == 0, f"hook install --agent {agent}")
        r = w.autoctl("loop", "init", "--task", "TASK/hello", "--max-iterations", "6")
        check(r.returncode == 0, "loop init")
        w.pane()
        if a.record:
            w.sample()
        launch = w.launch_line("", "Run the task TASK/hello: plan it first.")
        w.launch = launch
        r = w.autoctl("run", "start", "--session", "live", "--task", "TASK/hello", "--agent",
                      agent, "--mode", "observe", "--launch", launch)
        check(r.returncode == 0, f"run start --agent {agent}")
        status = w.watch_run(a.timeout + 240)
        # The run ends at the last signal; the agent's last turn ends just after it (as in the
        # loop check: counted before it, the last step's result was missed).
        end = time.time() + 30
        while time.time() < end and len([e for e in w.model_log() if e.get("tool_done")]) < 3:
            time.sleep(1)
        steps = [e for e in w.model_log() if e.get("tool_done")]
        limited = [e for e in w.model_log() if not e.get("tool_done")
                   and e.get("steps_done") == 1 and e["t"] < until]
        after = [e for e in w.model_log() if e["t"] >= until]
        check(len(limited) == 1, f"the model answered {len(limited)} request(s) with the usage "
                                 f"limit (want 1)")
        check(status is not None and status.get("status") == "finished",
              f"run status: {status and status.get('status')}:{status and status.get('stop_reason')}")
        check(len(steps) >= 3, f"the model wrote {len(steps)} step signals (want 3)")
        # `run status`'s `resumes` counts the current step's, so it is 0 again once the
        # resumed step ended: count the ticks that typed the resume.
        typed = [e for e in (json.loads(line) for line in open(os.path.join(w.base, "watch.jsonl"))
                             if line.strip()) if e.get("decision") == "resume"]
        check(len(typed) == 1, f"resumed {len(typed)} time(s) (want exactly 1): "
                               f"{[(e.get('time'), e.get('did')) for e in typed]}")
        first_after = min((e["t"] for e in after), default=None)
        check(first_after is not None,
              "the first request after the reset came "
              f"{(first_after - until) if first_after else float('nan'):+.0f} s after it")
        events = []
        for line in open(os.path.join(w.base, "watch.jsonl")):
            try:
                events.append(json.loads(line))
            except ValueError:
                pass
        waits = [e for e in events if ((e.get("run") or {}).get("wait") or {}).get("kind")
                 in ("quota", "usage-limit")]
        resumed = [e for e in events if e.get("decision") == "resume"]
        sources = w.readings()
        by_channel, total = typed_share(sources)
        share = by_channel / total if total else 0.0
        counts = {s: sources.count(s) for s in sorted(set(sources))}
        check(total > 0 and share >= 0.95,
              f"typed share of run watch's readings {by_channel}/{total} = {share:.1%} "
              f"(want >= 95%): {counts}")
        own = (status or {}).get("sources") or {}
        check(own.get("typed_percent") is not None and own["typed_percent"] >= 95.0,
              f"run status sources: {json.dumps(own)}")
        print(f"     waits seen: {len(waits)}; resume ticks: "
              f"{[(e.get('time'), e.get('did')) for e in resumed]}")
        print(f"     load average: {open('/proc/loadavg').read().split()[:3]}")
        if a.record:
            w.save_recording("limit")
    finally:
        w.close()


def headless(a, agent):
    """Gemini headless: a usage limit ends the step with a typed result, no menu; typed again."""
    print(f"== {agent}: headless steps (--into shell, stream-json), a daily quota at step 2")
    w = Live(a, agent, "headless")
    try:
        until = time.time() + 20
        w.start_model({"mode": "loop", "by_prompt": True, "autoctl": w.agent_autoctl,
                       "task": "TASK/hello", "steps": STEPS, "delay": 1.0, "limit_at": 1,
                       "limit_until": until})
        w.autoctl("task", "new", "TASK/hello", "--title", "Say hello")
        with open(os.path.join(w.proj, "TASK", "hello", ".target.md"), "w") as f:
            f.write("# Target\nSay hello in hello.txt.\n")
        r = w.autoctl("hook", "install", "--agent", agent, "--autoctl", w.agent_autoctl)
        check(r.returncode == 0, f"hook install --agent {agent}")
        w.pane()
        command = ('gemini --yolo -p "Run the {next} step of the task in {task}." '
                   '--output-format stream-json > {stream}')
        r = w.autoctl("run", "start", "--session", "live", "--task", "TASK/hello", "--agent",
                      agent, "--mode", "dispatch", "--into", "shell", "--command", command)
        check(r.returncode == 0, f"run start --into shell --command {command!r}: {r.stderr.strip()}")
        status = w.watch_run(a.timeout + 180)
        # The run ends at the last signal; the headless run's last request (the signal's
        # result) comes just after it (as in the loop check; session 9 counted 2 of 3 without
        # this wait).
        end = time.time() + 30
        while time.time() < end and len([e for e in w.model_log() if e.get("tool_done")]) < 3:
            time.sleep(1)
        log = w.model_log()
        limited = [e for e in log if e.get("limited")]
        steps = [e for e in log if e.get("tool_done")]
        check(len(limited) == 1, f"the model answered {len(limited)} request(s) with the daily "
                                 f"quota (want 1)")
        check(len(steps) >= 3, f"the model got {len(steps)} step signals' results (want 3)")
        check(status is not None and status.get("status") == "finished",
              f"run status: {status and status.get('status')}:{status and status.get('stop_reason')}")
        events = []
        for line in open(os.path.join(w.base, "watch.jsonl")):
            try:
                events.append(json.loads(line))
            except ValueError:
                pass
        failed = [e for e in events if any("failed" in str(r) and "quota" in str(r)
                                           for r in e.get("reasons") or [])]
        check(bool(failed), "a tick read the step's quota result: "
                            f"{(failed[0].get('reasons') if failed else '(none)')}")
        typed = [e for e in events if e.get("decision") == "dispatch"]
        check(len(typed) == 4, f"{len(typed)} steps typed (want 4: three and step 2 again): "
                               f"{[(e.get('time'), e.get('did')) for e in typed]}")
        escalated = [e for e in events if e.get("decision") == "escalate"]
        check(not escalated, f"no escalation: {[e.get('reasons') for e in escalated]}")
        print(f"     load average: {open('/proc/loadavg').read().split()[:3]}")
    finally:
        w.close()


def policy_file(a, agent):
    """Gemini only: `policy export --gemini`, no hooks — Gemini's own engine refuses."""
    print(f"== {agent}: --yolo with only `autoctl policy export --gemini`'s file, no hooks")
    w = Live(a, agent, "policy")
    try:
        w.start_model({"mode": "shell", "command": "rm -rf build", "done_text": "Tried it."})
        pol = os.path.join(w.base, "policy.json")
        with open(pol, "w") as f:
            json.dump({"on_destructive": "deny"}, f)
        r = w.autoctl("policy", "export", "--gemini", "--policy", pol)
        written = os.path.join(w.home, ".gemini", "policies", "autoctl.toml")
        check(r.returncode == 0 and os.path.exists(written),
              f"policy export --gemini: {r.stdout.strip()}")
        w.pane()
        w.tm.run("send-keys", "-t", "live", "-l", w.launch_line("--yolo", "Clean the build."))
        w.tm.run("send-keys", "-t", "live", "Enter")
        end = time.time() + a.timeout
        refused = ""
        while time.time() < end:
            time.sleep(2)
            refused = next((line for line in w.model_saw().splitlines()
                            if "denied by policy" in line.lower()), "")
            if refused or not os.path.isdir(os.path.join(w.proj, "build")):
                break
        time.sleep(2)
        check(os.path.exists(os.path.join(w.proj, "build", "out.o")),
              "build/out.o survived: nothing was executed")
        at = refused.lower().find("denied by policy")
        check(bool(refused), "the model read Gemini's own refusal: "
                             f"{refused[max(at - 40, 0):at + 140] if refused else '(none)'}")
        hooks = os.path.join(w.state, "hooks")
        check(not os.path.isdir(hooks) or not os.listdir(hooks),
              "no autoctl hook ran (Gemini's engine alone refused)")
    finally:
        w.close()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--agent", default="both", choices=["codex", "gemini", "both"])
    ap.add_argument("--only", default="loop,deny")
    ap.add_argument("--autoctl", default=os.path.join(ROOT, "target", "debug", "autoctl"))
    ap.add_argument("--scratch", default="/root/autoctl-live-agents")
    ap.add_argument("--timeout", type=int, default=240)
    ap.add_argument("--delay", type=float, default=6.0,
                    help="seconds the fake model takes for each answer")
    ap.add_argument("--record", help="save loop and limit runs (the agent side's autoctl calls "
                                     "with their stdin, each tick and the screen it read) under "
                                     "RECORD/AGENT/CHECK/ for tests/cli/replay.rs")
    a = ap.parse_args()
    a.autoctl = os.path.abspath(a.autoctl)
    a.record = a.record and os.path.abspath(a.record)
    if a.scratch.startswith("/tmp/"):
        sys.exit("--scratch must not be under /tmp (Codex refuses to start there)")
    if os.environ.get("CAPTURE_NETNS") != "1":
        cmd = ["unshare", "-n", "-p", "-f", "--mount-proc"]
        os.execvpe(cmd[0], cmd + [sys.executable, *sys.argv], dict(os.environ, CAPTURE_NETNS="1"))
    subprocess.run(["ip", "link", "set", "lo", "up"], check=True)
    agents = ["codex", "gemini"] if a.agent == "both" else [a.agent]
    for agent in agents:
        version = subprocess.run([agent, "--version"], capture_output=True, text=True).stdout
        print(f"{agent} {version.strip()}; autoctl {a.autoctl}")
        a.versions = dict(getattr(a, "versions", {}), **{agent: version.strip()})
        for name in a.only.split(","):
            if name in ("policy", "headless") and agent != "gemini":
                continue
            {"loop": loop, "deny": deny, "attended": attended, "calls": calls, "policy": policy_file,
             "limit": limit, "headless": headless}[name](a, agent)
    sys.exit(1 if FAILURES else 0)


if __name__ == "__main__":
    main()
