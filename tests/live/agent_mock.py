#!/usr/bin/env python3
"""The fake model for the Codex CLI and Gemini CLI live checks (agents_live.py).

    python3 agent_mock.py codex|gemini PORT SCENARIO_JSON LOG

`tests/fixtures/panes/capture-tools/mock_agents.py` (the Responses API for Codex, the
generateContent API for Gemini) with two modes of its own, read from the scenario file on every
request like the others:

- `loop`: a model that works through a task's steps. On a main request (one that offers tools)
  it counts the steps already done in the conversation (the shell results it got back) and asks
  the shell to write the next step's signal — `AUTOCTL signal write TASK --step S --result R
  --next N` from `steps` — then, once the result is back, answers `step S done.`; past the last
  step it only answers text. `limit_at`: the step whose first request gets the usage limit
  instead (while `limit_until` is ahead: an epoch; the error carries it).
  `by_prompt` (Gemini): each step is its own headless run (`gemini -p "… the STEP step …"`), so
  the step is the one the prompt names, not the count of results in the conversation; its
  usage limit is Gemini's daily quota (HTTP 429, a per-day QuotaFailure), or with
  `limit_delay` a RetryInfo of that many seconds.
- `calls`: a model that asks for the shell commands in `commands`, one per request, in order
  (the count of tool results in the conversation says which is next), then answers
  `done_text`. Each main request is noted with the previous call's result (`last`), so the
  check can tell a call that ran from one a hook refused.
- the other modes are mock_agents.py's (`shell`, `text`, `error`, ...).

Every main request is appended to LOG as one JSON line (`{"t", "kind", "steps_done", "last"}`)
so the check can count turns and see what the model got back (a hook's refusal).
"""
import json
import os
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "fixtures", "panes", "capture-tools"))
KIND, PORT, SCEN, LOG = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4]
sys.argv = [sys.argv[0], KIND, str(PORT), SCEN, LOG + ".mock"]
import mock_agents as m  # noqa: E402


def scenario():
    return m.scenario()


def note(entry):
    entry["t"] = time.time()
    with open(LOG, "a") as f:
        f.write(json.dumps(entry) + "\n")


def signal_command(sc, done):
    step = sc["steps"][done]
    return (f"{sc['autoctl']} signal write {sc['task']} --step {step[0]} --result '{step[1]}' "
            f"--next '{step[2]}'" + (f" --checkpoint '{step[3]}'" if len(step) > 3 else ""))


def limited(sc, done):
    return (sc.get("limit_at") is not None and done == sc["limit_at"]
            and time.time() < float(sc.get("limit_until", 0)))


def next_call(sc, done, last):
    """The `calls` mode: note the request, and the command to ask for next (None: done)."""
    note({"kind": KIND, "calls_done": done, "last": last})
    commands = sc["commands"]
    return commands[done] if done < len(commands) else None


class Codex(m.Codex):
    def calls(self, sc):
        raw, body = self.read_body()
        inp = body.get("input") or []
        if not body.get("tools"):
            self.stream([{"type": "message", "text": "Calls"}], {})
            return
        outputs = [i.get("output") for i in inp if isinstance(i, dict)
                   and i.get("type") in ("function_call_output", "custom_tool_call_output")]
        command = next_call(sc, len(outputs), outputs[-1] if outputs else None)
        if command is None:
            self.stream([{"type": "message", "text": sc.get("done_text", "Calls done.")}], sc)
            return
        self.stream([{"type": "message", "text": "Next step."},
                     {"type": "function_call", "id": "fc_%d_%d" % (len(outputs), time.time_ns()),
                      "call_id": "call_%d_%d" % (len(outputs), time.time_ns()),
                      "name": "exec_command", "arguments": json.dumps({"cmd": command})}], sc)

    def do_POST(self):
        sc = scenario()
        if sc.get("mode") == "calls":
            return self.calls(sc)
        if sc.get("mode") != "loop":
            return super().do_POST()
        raw, body = self.read_body()
        inp = body.get("input") or []
        tools = [t.get("name") for t in body.get("tools") or []]
        if not tools:
            self.stream([{"type": "message", "text": "Loop"}], {})
            return
        outputs = [i.get("output") for i in inp if isinstance(i, dict)
                   and i.get("type") in ("function_call_output", "custom_tool_call_output")]
        last = inp[-1] if inp else {}
        tool_done = isinstance(last, dict) and last.get("type") in (
            "function_call_output", "custom_tool_call_output")
        done = len(outputs)
        if sc.get("delay"):
            time.sleep(float(sc["delay"]))
        note({"kind": "codex", "steps_done": done, "tool_done": tool_done,
              "last": outputs[-1] if tool_done else None})
        if tool_done:
            self.stream([{"type": "message",
                          "text": sc.get("done_text", "step {n} done.").format(n=done)}], sc)
            return
        if limited(sc, done):
            self.send_json(429, {"error": {"type": "usage_limit_reached",
                                           "message": "The usage limit has been reached",
                                           "plan_type": "plus",
                                           "resets_at": int(float(sc["limit_until"]))}})
            return
        if done >= len(sc["steps"]):
            self.stream([{"type": "message", "text": "All steps are done."}], sc)
            return
        args = {"cmd": signal_command(sc, done)}
        if sc.get("escalate"):
            args.update(sandbox_permissions="require_escalated",
                        justification="Write the step's signal")
        self.stream([{"type": "message", "text": "Writing the step's signal."},
                     {"type": "function_call", "id": "fc_%d_%d" % (done, time.time_ns()),
                      "call_id": "call_%d_%d" % (done, time.time_ns()),
                      "name": "exec_command", "arguments": json.dumps(args)}], sc)


class Gemini(m.Gemini):
    def answered_aside(self, body, streaming, offers_tools):
        """Answer the requests beside the main one, true when answered: a token count, and a
        request without tools (the CLI's next-speaker and routing checks ask for JSON; any
        other gets "ok")."""
        if ":countTokens" in self.path:
            self.send_json(200, {"totalTokens": 1200})
            return True
        if offers_tools:
            return False
        gcfg = body.get("generationConfig") or {}
        if gcfg.get("responseMimeType") == "application/json" or gcfg.get("responseJsonSchema"):
            txt = json.dumps({"reasoning": "simple", "next_speaker": "user",
                              "model_choice": "flash", "complexity_reasoning": "simple",
                              "complexity_score": 10})
        else:
            txt = "ok"
        self.reply(streaming, [{"text": txt}], {})
        return True

    def calls(self, sc):
        raw, body = self.read_body()
        contents = body.get("contents") or []
        streaming = ":streamGenerateContent" in self.path
        offers_tools = any(t.get("functionDeclarations") for t in body.get("tools") or [])
        if self.answered_aside(body, streaming, offers_tools):
            return
        responses = [p["functionResponse"] for c in contents for p in c.get("parts") or []
                     if "functionResponse" in p]
        command = next_call(sc, len(responses), responses[-1] if responses else None)
        if command is None:
            self.reply(streaming, [{"text": sc.get("done_text", "Calls done.")}], sc)
            return
        self.reply(streaming, [{"text": "Next step."},
                               {"functionCall": {"name": "run_shell_command",
                                                 "args": {"command": command,
                                                          "description": "A step of the work"}}}],
                   sc)

    def do_POST(self):
        sc = scenario()
        if sc.get("mode") == "calls":
            return self.calls(sc)
        if sc.get("mode") != "loop":
            return super().do_POST()
        raw, body = self.read_body()
        contents = body.get("contents") or []
        tools = [fd.get("name") for t in body.get("tools") or []
                 for fd in t.get("functionDeclarations") or []]
        streaming = ":streamGenerateContent" in self.path
        if self.answered_aside(body, streaming, bool(tools)):
            return
        responses = [p["functionResponse"] for c in contents for p in c.get("parts") or []
                     if "functionResponse" in p]
        last = contents[-1] if contents else {}
        tool_done = any("functionResponse" in p for p in last.get("parts") or [])
        done = len(responses)
        if sc.get("by_prompt"):
            text = " ".join(p.get("text", "") for c in contents for p in c.get("parts") or [])
            named = [i for i, st in enumerate(sc["steps"]) if f"the {st[0]} step" in text]
            done = named[-1] if named else len(sc["steps"])
            if not tool_done and limited(sc, done):
                note({"kind": "gemini", "steps_done": done, "tool_done": False,
                      "limited": True, "last": None})
                delay = sc.get("limit_delay")
                self.error_reply({
                    "status": 429,
                    "message": "Quota exceeded for quota metric 'Generate Content API requests "
                               "per day' of service 'generativelanguage.googleapis.com'.",
                    "details": [{"@type": "type.googleapis.com/google.rpc.QuotaFailure",
                                 "violations": [{"quotaMetric": "generativelanguage.googleapis."
                                                                "com/generate_content_requests",
                                                 "quotaId": "GenerateRequestsPerHour" if delay
                                                 else "GenerateRequestsPerDayPerProjectPerModel"}]}]
                    + ([{"@type": "type.googleapis.com/google.rpc.RetryInfo",
                         "retryDelay": f"{int(delay)}s"}] if delay else [])})
                return
        if sc.get("delay"):
            time.sleep(float(sc["delay"]))
        note({"kind": "gemini", "steps_done": done, "tool_done": tool_done,
              "last": responses[-1] if tool_done else None})
        if tool_done:
            self.reply(streaming, [{"text": sc.get("done_text", "step {n} done.").format(n=done)}],
                       sc)
            return
        if done >= len(sc["steps"]):
            self.reply(streaming, [{"text": "All steps are done."}], sc)
            return
        self.reply(streaming, [{"text": "Writing the step's signal."},
                               {"functionCall": {"name": "run_shell_command",
                                                 "args": {"command": signal_command(sc, done),
                                                          "description": "Write the signal"}}}],
                   sc)


if __name__ == "__main__":
    srv = m.http.server.ThreadingHTTPServer(("127.0.0.1", PORT), Codex if KIND == "codex" else Gemini)
    srv.daemon_threads = True
    srv.serve_forever()
