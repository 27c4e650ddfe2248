//! The optional reviewer stage (issue 24 item 4), off unless the policy file names one:
//! `"reviewer": "COMMAND"`. For a call the rules neither approve nor name destructive — and
//! only such a call — autoctl hands the call to the command and reads back allow or ask:
//!
//! - the command runs under `sh -c` in its own process group, with the call as one JSON
//!   object on stdin ([`request`]: tool, input, working directory, and the rule that left it
//!   undecided, with its reason);
//! - it answers on stdout with one JSON object, `{"decision": "allow" | "ask", "reason": "…"}`
//!   (a ```` ```json ```` fence around it is read too, as models write one) ([`parse_answer`]);
//! - a timeout (`reviewer_timeout_ms`, 4 s by default, never past the hook's own deadline:
//!   the whole process group is killed), a failed start, a non-zero exit, an answer that is
//!   not that object, or any other decision is no answer: the call stays undecided and goes
//!   to a person, as without a reviewer (fails closed);
//! - it never sees what the rules decided otherwise: a destructive marker, the user's deny,
//!   a sensitive path, a question for the person, a plan to approve, unreadable input
//!   ([`eligible`]). Allow is the most it can give; it can never deny or approve past a rule.
//!
//! Cost and risk (docs/policy.md, "The reviewer"): each undecided call costs one command
//! run — with `claude -p` a model call, seconds and tokens — while the agent waits; and what
//! the reviewer allows runs without a person, so a wrong allow is as bad as a missing rule.
//! Every consultation is in the decision log with its input and answer.

use std::io::{Read, Write};
use std::os::unix::process::CommandExt;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use serde::Deserialize;
use serde_json::{Value, json};

use super::{Decision, Verdict};

/// How long a reviewer may take when the policy file does not say.
pub const DEFAULT_TIMEOUT: Duration = Duration::from_millis(4000);
/// The most of a reviewer's stdout read.
const ANSWER_LIMIT: u64 = 64 * 1024;

/// A configured reviewer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Reviewer {
    /// Run with `sh -c`.
    pub command: String,
    pub timeout: Duration,
}

/// What a reviewer said.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Review {
    /// Approve the call.
    Allow { reason: String },
    /// Leave it to a person.
    Ask { reason: String },
    /// No usable answer (timeout, error, unparseable): the call stays undecided.
    NoAnswer { why: String },
}

impl Review {
    /// The decision-log word: `allow`, `ask`, `no-answer`.
    pub fn as_str(&self) -> &'static str {
        match self {
            Review::Allow { .. } => "allow",
            Review::Ask { .. } => "ask",
            Review::NoAnswer { .. } => "no-answer",
        }
    }

    /// The reviewer's reason, or why there was no answer.
    pub fn reason(&self) -> &str {
        match self {
            Review::Allow { reason } | Review::Ask { reason } => reason,
            Review::NoAnswer { why } => why,
        }
    }
}

/// The rules' undecided outcomes a reviewer may be asked about: nothing proved the call
/// harmless and nothing named it dangerous. Everything else — destructive markers,
/// `sensitive-path`, deny rules, `ask-user`, `plan-approval`, `bad-input`, unreadable
/// lines, allows — never reaches the reviewer.
pub fn eligible(decision: &Decision) -> bool {
    decision.decision == Verdict::NoDecision
        && matches!(
            decision.rule.as_str(),
            "not-harmless" | "outside-project" | "unknown-tool" | "mcp-tool"
        )
}

/// The JSON object a reviewer reads on stdin.
pub fn request(tool: &str, input: &Value, cwd: Option<&str>, decision: &Decision) -> Value {
    json!({
        "tool": tool,
        "input": input,
        "cwd": cwd,
        "rules": {"rule": decision.rule, "reason": decision.reason},
        "answer_with": {"decision": "allow | ask", "reason": "one line"},
    })
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Answer {
    decision: String,
    #[serde(default)]
    reason: Option<String>,
}

/// Read a reviewer's stdout: one JSON object `{"decision": "allow"|"ask", "reason": …}`,
/// optionally inside one ```` ```json ```` fence; anything else is [`Review::NoAnswer`].
pub fn parse_answer(stdout: &[u8]) -> Review {
    let Ok(text) = std::str::from_utf8(stdout) else {
        return Review::NoAnswer {
            why: "the answer is not UTF-8".to_string(),
        };
    };
    let mut body = text.trim();
    if let Some(inner) = body
        .strip_prefix("```json")
        .or_else(|| body.strip_prefix("```"))
        .and_then(|b| b.strip_suffix("```"))
    {
        body = inner.trim();
    }
    let answer: Answer = match crate::protocol::document::parse_json(body.as_bytes())
        .map_err(|p| p.to_string())
        .and_then(|v| match v {
            // serde would read a struct from an array too (`["allow"]`): an object only.
            Value::Object(_) => serde_json::from_value(v).map_err(|e| e.to_string()),
            _ => Err("not a JSON object".to_string()),
        }) {
        Ok(answer) => answer,
        Err(err) => {
            return Review::NoAnswer {
                why: format!("unparseable answer ({err})"),
            };
        }
    };
    let reason = answer
        .reason
        .map(|r| super::one_line(&r, 200))
        .unwrap_or_default();
    match answer.decision.as_str() {
        "allow" => Review::Allow { reason },
        "ask" => Review::Ask { reason },
        other => Review::NoAnswer {
            why: format!("decision {other:?} is neither allow nor ask"),
        },
    }
}

/// What the hook answers after a review: the reviewer's allow becomes an allow by rule
/// `reviewer`; anything else leaves the rules' decision as it was. A call that was not
/// [`eligible`] is never changed, whatever the review says.
pub fn apply(decision: Decision, review: &Review) -> Decision {
    match review {
        Review::Allow { reason } if eligible(&decision) => Decision::allow(
            "reviewer",
            format!(
                "the reviewer allowed what {} left undecided: {reason}",
                decision.rule
            ),
        ),
        _ => decision,
    }
}

/// Ask the reviewer about one call (see the module doc); `budget` caps its timeout (what
/// is left of the hook's deadline).
pub fn review(reviewer: &Reviewer, request: &Value, budget: Duration) -> Review {
    let timeout = reviewer.timeout.min(budget);
    let mut child = match Command::new("sh")
        .arg("-c")
        .arg(&reviewer.command)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .process_group(0)
        .spawn()
    {
        Ok(child) => child,
        Err(err) => {
            return Review::NoAnswer {
                why: format!("cannot start the reviewer: {err}"),
            };
        }
    };
    if let Some(mut stdin) = child.stdin.take() {
        // A reviewer that does not read its stdin closes it: that is no error.
        let _ = stdin.write_all(request.to_string().as_bytes());
    }
    let stdout = child.stdout.take();
    let reader = std::thread::spawn(move || {
        let mut bytes = Vec::new();
        if let Some(out) = stdout {
            let _ = out.take(ANSWER_LIMIT).read_to_end(&mut bytes);
        }
        bytes
    });
    let deadline = Instant::now() + timeout;
    let mut pause = Duration::from_millis(1);
    let status = loop {
        match child.try_wait() {
            Ok(Some(status)) => break status,
            Ok(None) if Instant::now() < deadline => {
                std::thread::sleep(pause.min(deadline.saturating_duration_since(Instant::now())));
                pause = (pause * 2).min(Duration::from_millis(20));
            }
            Ok(None) => {
                kill_group(&mut child);
                return Review::NoAnswer {
                    why: format!("no answer within {}", crate::duration::format(timeout)),
                };
            }
            Err(err) => {
                kill_group(&mut child);
                return Review::NoAnswer {
                    why: format!("cannot wait for the reviewer: {err}"),
                };
            }
        }
    };
    // The command is gone; what it started may still hold stdout open: kill the group.
    kill_group(&mut child);
    let bytes = reader.join().unwrap_or_default();
    if !status.success() {
        return Review::NoAnswer {
            why: format!("the reviewer failed ({status})"),
        };
    }
    parse_answer(&bytes)
}

/// Kill a command and everything in its process group (`kill -KILL -- -PGID`: the crate
/// forbids `unsafe`, so no kill(2) here), then reap it.
fn kill_group(child: &mut Child) {
    let group = format!("-{}", child.id());
    let killed = Command::new("kill")
        .args(["-s", "KILL", "--", &group])
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success());
    if !killed {
        let _ = child.kill();
    }
    let _ = child.wait();
}

#[cfg(test)]
mod tests {
    use super::*;

    fn undecided(rule: &str) -> Decision {
        Decision::none(rule, "nothing proves it harmless")
    }

    #[test]
    fn only_calls_no_rule_decided_are_eligible() {
        for rule in [
            "not-harmless",
            "outside-project",
            "unknown-tool",
            "mcp-tool",
        ] {
            assert!(eligible(&undecided(rule)), "{rule}");
        }
        for rule in [
            "destructive:rm",
            "destructive:unreadable",
            "sensitive-path",
            "ask-user",
            "plan-approval",
            "bad-input",
        ] {
            assert!(!eligible(&undecided(rule)), "{rule}");
        }
        assert!(!eligible(&Decision::allow("read-only", "ls")));
        assert!(!eligible(&Decision::deny(
            "user:no-prod",
            "deny",
            "no".to_string()
        )));
    }

    #[test]
    fn answers_are_read_strictly() {
        let allow = parse_answer(br#"{"decision":"allow","reason":"reads a URL"}"#);
        assert_eq!(
            allow,
            Review::Allow {
                reason: "reads a URL".to_string()
            }
        );
        assert_eq!(
            parse_answer(b"```json\n{\"decision\": \"ask\"}\n```\n").as_str(),
            "ask"
        );
        for bad in [
            &b""[..],
            b"allow",
            b"yes",
            b"{\"decision\":\"deny\"}",
            b"{\"decision\":\"allow\",\"extra\":1}",
            b"{\"decision\":\"allow\"} and more",
            b"{\"decision\":\"allow\",\"decision\":\"ask\"}",
            b"\xff",
            b"[\"allow\"]",
        ] {
            assert_eq!(
                parse_answer(bad).as_str(),
                "no-answer",
                "{}",
                String::from_utf8_lossy(bad)
            );
        }
    }

    #[test]
    fn an_allow_never_passes_a_rule() {
        let allow = Review::Allow {
            reason: "fine".to_string(),
        };
        let applied = apply(undecided("not-harmless"), &allow);
        assert_eq!(applied.decision, Verdict::Allow);
        assert_eq!(applied.rule, "reviewer");
        for rule in ["destructive:rm", "sensitive-path", "ask-user"] {
            assert_eq!(apply(undecided(rule), &allow), undecided(rule));
        }
        let ask = Review::Ask {
            reason: "unsure".to_string(),
        };
        assert_eq!(
            apply(undecided("not-harmless"), &ask),
            undecided("not-harmless")
        );
    }

    #[test]
    fn a_reviewer_that_fails_or_hangs_is_no_answer() {
        let run = |command: &str, timeout_ms: u64| {
            let reviewer = Reviewer {
                command: command.to_string(),
                timeout: Duration::from_millis(timeout_ms),
            };
            review(&reviewer, &json!({"tool": "Bash"}), Duration::from_secs(30))
        };
        assert_eq!(
            run(
                r#"cat >/dev/null; echo '{"decision":"allow","reason":"ok"}'"#,
                10_000
            )
            .as_str(),
            "allow"
        );
        // The request arrives whole on stdin.
        assert_eq!(
            run(
                r#"grep -q '"tool":"Bash"' && echo '{"decision":"ask"}'"#,
                10_000
            )
            .as_str(),
            "ask"
        );
        assert_eq!(run("exit 3", 10_000).as_str(), "no-answer");
        assert_eq!(run("echo maybe", 10_000).as_str(), "no-answer");
        // A reviewer that never answers: its whole group is killed at the timeout (the
        // background `sleep` holding stdout open too, or this would wait for it).
        let hung = run("sleep 30 & sleep 30", 200);
        assert!(hung.reason().starts_with("no answer within"), "{hung:?}");
    }
}
