#!/usr/bin/env python3
"""Live checks of autoctl's approval policy against the real Claude Code, offline.

    python3 tests/live/policy_live.py live    [--autoctl PATH] [--claude PATH] [--evidence DIR]
    python3 tests/live/policy_live.py record  [--out tests/fixtures/policy/payloads]
    python3 tests/live/policy_live.py capture [--out tests/fixtures/policy/screens]

Like tests/fixtures/panes/capture-tools/record_hooks.py (whose helpers it imports), it
re-executes itself in a private network namespace (`unshare -n`, loopback only), serves the
fake Anthropic server in-process with scripted scenarios of its own (a scenario is a list of
tool calls the "model" makes one after the other, then a closing text), and drives Claude
Code in a tmux pane on a private socket (`tmux -L policy-live-<pid>`), in the default
("manual") permission mode.

live     `autoctl hook install --project` wires the hooks (PermissionRequest → `autoctl hook
         permission-request`) into a scratch project; the model makes 20 harmless tool calls in
         one turn. Passes when no permission prompt is ever on the screen, every tool result
         the server receives is a success, the decision log holds the hook's allows, and a
         supervisor ticking the pane the whole time (`autoctl run start` + `run tick`) typed
         nothing (its ticks continue, or wait while a tool runs), answered no screen and
         spent no stall recovery. The evidence (the fake server's request log with the tool results
         it received, the decision log, the run's status, the last screen) goes to --evidence.
record   a PermissionRequest recording hook (no decision) and one tool call per scenario:
         the real payloads of Write, Edit, Read outside the project, WebFetch, a multi-line
         Bash, AskUserQuestion and ExitPlanMode, into --out (paths redacted to /home/dev).
capture  the permission screens of 2.1.332 for commands the policy tests substitute
         (a short command, a long one wrapped at the box edge, a multi-line one, one without a
         description, a Write and an Edit), into --out.
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
ROOT = os.path.abspath(os.path.join(HERE, "..", ".."))
TOOLS = os.path.join(ROOT, "tests", "fixtures", "panes", "capture-tools")
sys.path.insert(0, TOOLS)
import record_hooks as rh  # noqa: E402  (Tmux, wait_for, settle, redact, API_KEY)

PORT = 8767
READY = r"for shortcuts|\? for|mode on"
PROMPT = re.compile(r"Do you want to (proceed|make this edit|create|write|fetch|allow)|Do you want to .*\?")

# ---- scripted scenarios ----------------------------------------------------------------------
SCRIPTS = {}
server_log = None


def bash(cmd, desc="A step of the task"):
    return ("tool", "Bash", {"command": cmd, "description": desc})


def live_steps(proj):
    """Twenty harmless tool calls Claude Code asks about in default mode (and the Read an Edit
    needs first, which it does not ask about)."""
    return [
        bash("mkdir -p out1", "Create the output directory"),
        bash("mkdir -p out2 out3", "Create two more output directories"),
        bash("touch out1/a.txt", "Create an empty marker file"),
        ("tool", "Write", {"file_path": f"{proj}/src/parser.py",
                           "content": "def parse(text):\n    return text.split()\n"}),
        bash("python3 scripts/check.py", "Run the project's check script"),
        bash("make test", "Run the tests"),
        bash("npm test", "Run the npm tests"),
        ("tool", "Read", {"file_path": f"{proj}/notes.txt"}),
        ("tool", "Edit", {"file_path": f"{proj}/notes.txt", "old_string": "colour = red",
                          "new_string": "colour = blue"}),
        bash("git add -A", "Stage every change"),
        bash("git commit -q -m 'Add the parser'", "Commit the parser"),
        bash("git switch -c feature/parser", "Start a feature branch"),
        ("tool", "Write", {"file_path": f"{proj}/docs/guide.md",
                           "content": "# Guide\n\nRun `make test`.\n"}),
        bash("echo done >> out1/log.txt", "Append to the log"),
        bash("make check", "Run the checks"),
        bash("npm run build", "Build the project"),
        bash("cp -n notes.txt out2/notes.txt", "Keep a copy of the notes"),
        bash("bash scripts/test.sh", "Run the test script"),
        bash("git add docs && git commit -q -m 'Add the guide'", "Commit the guide"),
        bash("git push -q -u origin feature/parser", "Push the feature branch"),
        ("tool", "Edit", {"file_path": f"{proj}/src/parser.py", "old_string": "text.split()",
                          "new_string": "text.split(None)"}),
        ("text", "All 20 steps are done."),
    ]


def install_scenarios(fa, proj_for):
    base = fa.steps_for

    def steps_for(name, W):
        if name in SCRIPTS:
            return SCRIPTS[name]
        if name == "policy-live":
            return live_steps(W)
        return base(name, W)

    fa.steps_for = steps_for
    # Claude Code 2.1.332 puts `system` messages (file-change notices) into the conversation
    # after some tools: they are not a typed prompt, so the turn's step count goes on.
    turn_step = fa.turn_step
    fa.turn_step = lambda msgs: turn_step([m for m in msgs if m.get("role") != "system"])
    do_post = fa.H.do_POST

    def logging_post(self):
        # Log what the server receives as tool results (is_error and the start of the text):
        # the evidence that each tool ran and was not refused.
        n = int(self.headers.get("content-length") or 0)
        raw = self.rfile.read(n) if n else b""
        try:
            body = json.loads(raw or b"{}")
        except ValueError:
            body = {}
        results = []
        msgs = body.get("messages") or []
        users = [m for m in msgs if m.get("role") == "user"]
        if users and isinstance(users[-1].get("content"), list):
            for block in users[-1]["content"]:
                if isinstance(block, dict) and block.get("type") == "tool_result":
                    content = block.get("content")
                    if isinstance(content, list):
                        content = " ".join(c.get("text", "") for c in content
                                           if isinstance(c, dict))
                    results.append({"is_error": bool(block.get("is_error")),
                                    "content": str(content)[:160]})
        tools = [t.get("name") for t in body.get("tools") or [] if isinstance(t, dict)]
        # The text the last user messages carry besides tool results (what the step counter
        # reads as a new prompt).
        texts = []
        for m in msgs[-3:]:
            if m.get("role") != "user":
                continue
            c = m.get("content")
            if isinstance(c, str):
                texts.append(c[:120])
            elif isinstance(c, list):
                texts.extend(b.get("text", "")[:120] for b in c
                             if isinstance(b, dict) and b.get("type") == "text")
        with open(server_log, "a") as f:
            f.write(json.dumps({"t": time.strftime("%H:%M:%S"), "path": self.path,
                                "main": "Bash" in tools, "n_msgs": len(msgs),
                                "n_asst": fa.turn_step(msgs), "tool_results": results,
                                "user_texts": texts}) + "\n")
        import io
        self.rfile = io.BytesIO(raw)
        return do_post(self)

    fa.H.do_POST = logging_post


def serve(scen_file, log):
    global server_log
    server_log = log + ".results.jsonl"
    os.environ.update(FAKE_PORT=str(PORT), FAKE_SCENARIO_FILE=scen_file, FAKE_LOG=log)
    import fake_anthropic as fa
    fa.PORT, fa.SCEN_FILE, fa.LOG = PORT, scen_file, log
    install_scenarios(fa, None)
    srv = fa.ThreadingHTTPServer(("127.0.0.1", PORT), fa.H)
    srv.daemon_threads = True
    threading.Thread(target=srv.serve_forever, daemon=True).start()
    return srv


# ---- the scratch session -------------------------------------------------------------------
def prepare(base, version, settings=None):
    shutil.rmtree(base, ignore_errors=True)
    home, proj, state, config = (os.path.join(base, d) for d in ("home", "proj", "state", "config"))
    for d in (home, proj, state, config):
        os.makedirs(d)
    os.makedirs(os.path.join(proj, "scripts"))
    os.makedirs(os.path.join(proj, "src"))
    files = {
        "notes.txt": "colour = red\nsize = 3\n",
        "Makefile": "test:\n\t@echo 'tests pass'\ncheck:\n\t@echo 'checks pass'\n",
        "package.json": json.dumps({"name": "scratch", "version": "1.0.0",
                                    "scripts": {"test": "echo npm tests pass",
                                                "build": "echo built"}}),
        "scripts/check.py": "print('check ok')\n",
        "scripts/test.sh": "echo script tests pass\n",
    }
    for name, text in files.items():
        with open(os.path.join(proj, name), "w") as f:
            f.write(text)
    git = ["git", "-C", proj]
    subprocess.run([*git, "init", "-q", "-b", "main"], check=True)
    subprocess.run([*git, "config", "user.email", "dev@example.com"], check=True)
    subprocess.run([*git, "config", "user.name", "Dev"], check=True)
    subprocess.run([*git, "add", "-A"], check=True)
    subprocess.run([*git, "commit", "-q", "-m", "start"], check=True)
    # A remote on this machine, so a push needs no network.
    remote = os.path.join(base, "origin.git")
    subprocess.run(["git", "init", "-q", "--bare", remote], check=True)
    subprocess.run([*git, "remote", "add", "origin", remote], check=True)
    d = {"numStartups": 5, "theme": "dark", "hasCompletedOnboarding": True,
         "lastOnboardingVersion": version.split()[0],
         "customApiKeyResponses": {"approved": [rh.API_KEY[-20:]], "rejected": []},
         "projects": {proj: {"allowedTools": [], "hasCompletedProjectOnboarding": True,
                             "hasTrustDialogAccepted": True}}}
    with open(os.path.join(home, ".claude.json"), "w") as f:
        json.dump(d, f, indent=2)
    if settings is not None:
        os.makedirs(os.path.join(home, ".claude"), exist_ok=True)
        with open(os.path.join(home, ".claude", "settings.json"), "w") as f:
            json.dump(settings, f, indent=2)
    return home, proj, state, config


def env_for(home, state, config, claude, extra_path=()):
    bindir = os.path.dirname(os.path.abspath(claude))
    path = ":".join([*extra_path, bindir, "/root/.cargo/bin", "/usr/local/bin", "/usr/bin", "/bin"])
    return {"HOME": home, "PATH": path, "LANG": "C.UTF-8", "TZ": "UTC",
            "PS1": r"\u@live:\w\$ ", "TERM": "tmux-256color",
            "ANTHROPIC_BASE_URL": f"http://127.0.0.1:{PORT}", "DISABLE_AUTOUPDATER": "1",
            "ANTHROPIC_API_KEY": rh.API_KEY, "AUTOCTL_STATE_DIR": state,
            "XDG_CONFIG_HOME": config, "XDG_STATE_HOME": state}


def start_claude(tm, sess, proj, env):
    tm.run("new-session", "-d", "-x", "120", "-y", "40", "-s", sess, "-c", proj,
           *[x for k, v in env.items() for x in ("-e", f"{k}={v}")],
           "bash", "--norc", "--noprofile")
    tm.run("set-option", "-t", sess, "status", "off")
    time.sleep(0.5)
    tm.run("send-keys", "-t", sess, "-l", "claude --permission-mode default")
    tm.run("send-keys", "-t", sess, "Enter")
    if not rh.wait_for(tm, sess, READY, 60):
        raise RuntimeError("Claude Code did not start: " + tm.cap(sess)[-500:])
    rh.settle(tm, sess, 1.0, 10)


def type_prompt(tm, sess, text):
    tm.run("send-keys", "-t", sess, "-l", text)
    time.sleep(0.3)
    tm.run("send-keys", "-t", sess, "Enter")


# ---- live ---------------------------------------------------------------------------------------
def live(a, tm, version, scen_file, log):
    base = os.path.join(a.scratch, "live")
    home, proj, state, config = prepare(base, version)
    env = env_for(home, state, config, a.claude, [os.path.dirname(a.autoctl)])
    autoctl = [a.autoctl]
    run_env = dict(os.environ, **env)
    # The hooks, as a user wires them: `hook install` into the project's settings.json.
    subprocess.run([*autoctl, "hook", "install", "--project", proj, "--autoctl", a.autoctl],
                   check=True, env=run_env)
    subprocess.run(["git", "-C", proj, "add", "-A"], check=True)
    subprocess.run(["git", "-C", proj, "commit", "-q", "-m", "hooks"], check=True)
    with open(scen_file, "w") as f:
        f.write(f"policy-live {proj}\n")
    sess = "live"
    start_claude(tm, sess, proj, env)
    task = os.path.join(base, "task")
    os.makedirs(task)
    sock = ["--tmux-socket", tm.sock]
    subprocess.run([*autoctl, *sock, "run", "start", "--session", sess, "--task", task,
                    "--timeout", "30m"], check=True, env=run_env)
    type_prompt(tm, sess, "Do the twenty steps of the task")
    # Every permission box that appears, and how long it stays: Claude Code draws its box
    # while the PermissionRequest hook decides, so a box may flash; one that stays is a
    # prompt waiting for a person.
    prompts, ticks, screens = [], [], []
    open_box, lifetimes = None, []
    deadline = time.time() + a.wait
    done = False
    last_tick = 0.0
    while time.time() < deadline:
        screen = tm.cap(sess)
        box = next((l.strip() for l in screen.splitlines() if PROMPT.search(l)), None)
        now = time.time()
        if box and open_box is None:
            open_box = (box, now)
            prompts.append(box)
            screens.append((time.strftime("%H:%M:%S"), rh.redact(screen, home, proj)))
        elif box is None and open_box is not None:
            lifetimes.append((open_box[0], round(now - open_box[1], 3)))
            open_box = None
        if "All 20 steps are done" in screen:
            done = True
            break
        if time.time() - last_tick >= 1.0:
            # The supervisor's heartbeat, as cron or `run watch` would give it.
            r = subprocess.run([*autoctl, *sock, "run", "tick", "--all", "--heartbeat", "1s"],
                               capture_output=True, text=True, env=run_env)
            ticks.extend(l for l in r.stdout.splitlines() if l.strip())
            last_tick = time.time()
        time.sleep(0.02)
    if open_box is not None:
        lifetimes.append((open_box[0], round(time.time() - open_box[1], 3)))
    time.sleep(2)
    status = subprocess.run([*autoctl, *sock, "run", "status", "--session", sess,
                             "--format", "json"], capture_output=True, text=True, env=run_env)
    decisions = subprocess.run([*autoctl, "policy", "log", "--format", "json"],
                               capture_output=True, text=True, env=run_env).stdout
    final = tm.cap(sess)
    tm.run("kill-session", "-t", sess, check=False)
    results = []
    with open(server_log) as f:
        for line in f:
            entry = json.loads(line)
            if entry["main"]:
                results.extend(entry["tool_results"])
    os.makedirs(a.evidence, exist_ok=True)
    shutil.copy(server_log, os.path.join(a.evidence, "fake-server-requests.jsonl"))
    with open(os.path.join(a.evidence, "decisions.jsonl"), "w") as f:
        f.write(decisions)
    with open(os.path.join(a.evidence, "run-status.json"), "w") as f:
        f.write(status.stdout)
    with open(os.path.join(a.evidence, "ticks.jsonl"), "w") as f:
        f.write("\n".join(ticks) + "\n")
    with open(os.path.join(a.evidence, "final-screen.txt"), "w") as f:
        f.write(rh.redact(final, home, proj))
    with open(os.path.join(a.evidence, "prompt-screens.txt"), "w") as f:
        for at, screen in screens:
            f.write(f"===== {at}\n{screen}\n")
    allows = [json.loads(l) for l in decisions.splitlines() if l.strip()]
    errors = [r for r in results if r["is_error"]]
    summary = {
        "claude": version,
        "finished": done,
        "permission_boxes_seen": len(prompts),
        "box_lifetimes_s": lifetimes,
        "longest_box_s": max((t for _, t in lifetimes), default=0),
        "tool_results": len(results),
        "tool_errors": errors,
        "hook_decisions": [(d["decision"], d["rule"], d["input"]) for d in allows],
        "run_status": status.stdout.strip()[:2000],
        "ticks": len(ticks),
        "tick_decisions": sorted({json.loads(t).get("decision", "?") for t in ticks
                                  if t.startswith("{")}),
    }
    with open(os.path.join(a.evidence, "summary.json"), "w") as f:
        json.dump(summary, f, indent=2)
    print(json.dumps(summary, indent=2))
    decisions_by_tick = summary["tick_decisions"]
    run = json.loads(status.stdout) if status.stdout.strip().startswith("{") else {}
    # The supervisor typed nothing: no tick did anything (a running tool is a wait, which
    # types nothing), no screen answer was needed, no stall recovery spent.
    acted = [t for t in ticks if t.startswith("{") and json.loads(t).get("did")]
    ok = (done and len(results) >= 21 and not errors
          and summary["longest_box_s"] < 2.0
          and set(decisions_by_tick) <= {"progress", "wait"}
          and not acted
          and run.get("recoveries_total") == 0
          and run.get("answers_total") == 0
          and sum(1 for d in allows if d["door"] == "hook" and d["decision"] == "allow") >= 20)
    print("LIVE", "PASS" if ok else "FAIL", file=sys.stderr)
    return 0 if ok else 1


# ---- record and capture -------------------------------------------------------------------------
def one_call_scenarios(proj):
    return {
        "write-new": [("tool", "Write", {"file_path": f"{proj}/hello.py",
                                          "content": "print('hello')\n"}), ("text", "Done.")],
        "edit-existing": [("tool", "Read", {"file_path": f"{proj}/notes.txt"}),
                          ("tool", "Edit", {"file_path": f"{proj}/notes.txt",
                                            "old_string": "colour = red",
                                            "new_string": "colour = blue"}), ("text", "Done.")],
        "write-sensitive": [("tool", "Write", {"file_path": f"{proj}/.claude/settings.local.json",
                                                "content": "{}\n"}), ("text", "Done.")],
        "read-outside": [("tool", "Read", {"file_path": "/etc/hostname"}), ("text", "Done.")],
        "webfetch": [("tool", "WebFetch", {"url": "https://example.com/docs",
                                            "prompt": "Summarise the page"}), ("text", "Done.")],
        "bash-multiline": [bash("cargo --version\nrm -rf build", "Check the toolchain"),
                           ("text", "Done.")],
        "bash-no-description": [("tool", "Bash", {"command": "make deploy"}), ("text", "Done.")],
        "bash-long": [bash("git log --oneline --decorate --graph --all --since=2020-01-01 "
                           "--author=someone --grep=fix -- src tests docs scripts | head -n 40 "
                           "&& rm -rf build/cache/old", "Show the recent history"),
                      ("text", "Done.")],
        "bash-harmless": [bash("cargo test --workspace", "Run the tests"), ("text", "Done.")],
        "ask-question": [("tool", "AskUserQuestion", {"questions": [{
            "question": "Which database should I use?", "header": "Database",
            "multiSelect": False, "options": [{"label": "SQLite", "description": "A file"},
                                              {"label": "Postgres", "description": "A server"}]}]}),
                         ("text", "Noted.")],
        "plan-approval": [("tool", "ExitPlanMode", {"plan": "# Plan\n\n1. Parse.\n2. Test."}),
                          ("text", "Starting.")],
    }


def record_or_capture(a, tm, version, scen_file, mode):
    names = [n for n in a.only.split(",") if n] or list(one_call_scenarios("/x"))
    os.makedirs(a.out, exist_ok=True)
    for name in names:
        base = os.path.join(a.scratch, f"{mode}-{name}")
        rec = os.path.join(base, "rec")
        settings = None
        if mode == "record":
            me = os.path.abspath(rh.__file__)
            settings = {"hooks": {"PermissionRequest": [{"hooks": [{
                "type": "command", "timeout": 30,
                "command": f"python3 {me} --record {rec} PermissionRequest"}]}]}}
        home, proj, state, config = prepare(base, version, settings)
        os.makedirs(rec)
        SCRIPTS[f"one-{name}"] = one_call_scenarios(proj)[name]
        with open(scen_file, "w") as f:
            f.write(f"one-{name} {proj}\n")
        env = env_for(home, state, config, a.claude)
        sess = f"{mode}-{name}"[:30]
        try:
            start_claude(tm, sess, proj, env)
            type_prompt(tm, sess, "Do the step")
            found = rh.wait_for(tm, sess, r"Do you want|Allow|Which database|Would you like|approve", 30)
            rh.settle(tm, sess, 1.5, 15)
            screen = tm.cap(sess)
            if mode == "capture":
                with open(os.path.join(a.out, f"{name}.txt"), "w") as f:
                    f.write(rh.redact(screen, home, proj))
                escapes = tm.run("capture-pane", "-p", "-J", "-e", "-t", sess)
                with open(os.path.join(a.out, f"{name}.escapes.txt"), "w") as f:
                    f.write(rh.redact(escapes, home, proj))
            else:
                for fn in sorted(os.listdir(rec)):
                    if fn.endswith(".json"):
                        text = rh.redact(open(os.path.join(rec, fn)).read(), home, proj)
                        with open(os.path.join(a.out, f"PermissionRequest-{name}.json"), "w") as f:
                            f.write(text)
            print(f"[{name}] {'prompt' if found else 'NO PROMPT'}", file=sys.stderr)
            tm.run("send-keys", "-t", sess, "Escape")
            time.sleep(1)
        except Exception as e:  # keep going
            print(f"[{name}] FAILED: {e}", file=sys.stderr)
        finally:
            tm.run("kill-session", "-t", sess, check=False)
    with open(os.path.join(a.out, "VERSION"), "w") as f:
        f.write(version + "\n")
    return 0


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("mode", choices=["live", "record", "capture"])
    ap.add_argument("--autoctl", default=os.path.join(ROOT, "target", "debug", "autoctl"))
    ap.add_argument("--claude", default=shutil.which("claude") or "/usr/bin/claude")
    ap.add_argument("--scratch", default="/tmp/policy-live")
    ap.add_argument("--out", default="")
    ap.add_argument("--only", default="")
    ap.add_argument("--evidence", default="/tmp/policy-live/evidence")
    ap.add_argument("--wait", type=float, default=240)
    a = ap.parse_args()
    a.autoctl = os.path.abspath(a.autoctl)
    if not a.out:
        a.out = os.path.join(ROOT, "tests", "fixtures", "policy",
                             "payloads" if a.mode == "record" else "screens")
    a.out = os.path.abspath(a.out)
    a.evidence = os.path.abspath(a.evidence)
    if os.environ.get("CAPTURE_NETNS") != "1":
        unshare = ["unshare", "-n"] if os.geteuid() == 0 else ["unshare", "-rn"]
        os.execvpe(unshare[0], unshare + [sys.executable, *sys.argv],
                   dict(os.environ, CAPTURE_NETNS="1"))
    subprocess.run(["ip", "link", "set", "lo", "up"], check=True)
    version = subprocess.run([a.claude, "--version"], capture_output=True, text=True,
                             env={"HOME": "/tmp", "PATH": os.environ["PATH"]}).stdout.strip()
    print(f"claude: {a.claude} -> {version}", file=sys.stderr)
    os.makedirs(a.scratch, exist_ok=True)
    scen_file = os.path.join(a.scratch, "scenario")
    log = os.path.join(a.scratch, "fake-anthropic.log")
    for f in (log, log + ".results.jsonl"):
        if os.path.exists(f):
            os.remove(f)
    serve(scen_file, log)
    time.sleep(0.5)
    tm = rh.Tmux(f"policy-live-{os.getpid()}", {"PATH": "/usr/local/bin:/usr/bin:/bin",
                                                "HOME": a.scratch, "TERM": "xterm-256color"})
    try:
        if a.mode == "live":
            return live(a, tm, version, scen_file, log)
        return record_or_capture(a, tm, version, scen_file, a.mode)
    finally:
        tm.run("kill-server", check=False)


if __name__ == "__main__":
    sys.exit(main())
