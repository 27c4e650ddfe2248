//! `autoctl run turn`: one step sent to Codex CLI as a turn over its app-server — the edge of
//! [`crate::appserver::turn`]: run the app-server, carry the core's effects out (the pane's
//! typed record, the decision log, the terminal), ask the person at the terminal what the
//! policy leaves to them, and exit when the turn ends.

use std::io::{self, BufRead, BufReader, IsTerminal, Write};
use std::path::PathBuf;
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use anyhow::{Context, Result, bail};
use clap::Args;
use serde_json::Value;

use crate::appserver::turn::{Effect, Question, Spec, Turn, TurnEnd};
use crate::error::Exit;
use crate::hook::agents::HookAgent;
use crate::hook::event::{self, Extra};
use crate::hook::session::{self, Channel};
use crate::hook::store::{HookEnv, Store};
use crate::output;

/// Send one step to Codex CLI as a turn over its app-server, and wait for the turn to end
///
/// What `run start --into app-server` types at the pane's shell for each step. It starts `codex
/// app-server` (--app-server), resumes the thread this pane's previous step ran in (the pane's
/// typed record keeps it; --new-thread starts another) or starts one in the current directory,
/// sends PROMPT as a turn and reads the turn as typed messages: items, approval requests, rate
/// limits, errors. Each becomes the pane's typed state, as hooks would record it (`run tick`
/// and `run watch` read it first, with source app-server); rate limits are kept as a status
/// line's windows, so a usage limit is waited out to its exact reset.
///
/// Approvals go through the approval policy (autoctl policy show): a call a rule proves
/// harmless is accepted once, one a deny rule refuses is declined, and anything else is asked
/// here, at the terminal (y to accept once; anything else, or no answer within --ask-timeout,
/// declines). With --unattended, what the policy names destructive is declined without asking.
/// Nothing wider than "once" is ever accepted. Every decision goes to the decision log.
///
/// Prints what the agent does, one line per item. Exit status: 0 the turn completed; 1 it
/// failed (a usage limit, an API error, the app-server ended before the turn did) or was
/// interrupted; 2 the app-server could not be started, or --timeout passed (the app-server is
/// then stopped).
#[derive(Debug, Args)]
#[command(verbatim_doc_comment)]
pub struct TurnArgs {
    /// The step: the text sent as the turn
    #[arg(value_name = "PROMPT")]
    pub prompt: String,
    /// How to run the app-server (a shell command)
    #[arg(long, value_name = "COMMAND", default_value = "codex app-server")]
    pub app_server: String,
    /// Codex's approval policy for a new thread
    #[arg(long, value_name = "POLICY", default_value = "on-request",
          value_parser = ["untrusted", "on-request", "never"])]
    pub approval_policy: String,
    /// Codex's sandbox for a new thread
    #[arg(long, value_name = "MODE", default_value = "workspace-write",
          value_parser = ["read-only", "workspace-write", "danger-full-access"])]
    pub sandbox: String,
    /// Start a new thread even when this pane's previous step left one
    #[arg(long)]
    pub new_thread: bool,
    /// Decline what the policy names destructive instead of asking: nobody will answer
    #[arg(long)]
    pub unattended: bool,
    /// How long a question to the person may wait before it is declined
    #[arg(long, value_name = "DURATION", default_value = "30m", value_parser = crate::duration::parse_positive)]
    pub ask_timeout: Duration,
    /// The longest the turn may take; past it the turn is interrupted
    #[arg(long, value_name = "DURATION", default_value = "2h", value_parser = crate::duration::parse_positive)]
    pub timeout: Duration,
    #[command(flatten)]
    pub policy: crate::cmd::policy::PolicyArg,
}

/// What the main loop waits on.
enum Input {
    /// A line of the app-server's stdout.
    Server(String),
    /// The app-server closed its stdout.
    Closed,
    /// The answer to a question: the person's line, or None when nobody can answer.
    Person(Option<String>),
}

pub fn run(args: &TurnArgs) -> Result<Exit> {
    let cwd = std::env::current_dir().context("cannot read the current directory")?;
    let (policy, policy_file) = crate::policy::config::load(args.policy.policy.as_deref())?;
    let ctx = crate::policy::config::context(Some(cwd.clone()), None, policy_file.as_deref(), None);
    let recorder = Recorder::new(&cwd);
    let resume = if args.new_thread {
        None
    } else {
        recorder.thread()
    };
    let mut turn = Turn::new(Spec {
        cwd: cwd.display().to_string(),
        prompt: args.prompt.clone(),
        resume,
        approval_policy: args.approval_policy.clone(),
        sandbox: args.sandbox.clone(),
        unattended: args.unattended,
    });
    let mut server = AppServer::spawn(&args.app_server)?;
    let mut decide = |tool: &str, input: &Value| crate::policy::decide(&policy, tool, input, &ctx);
    let outcome = converse(args, &mut turn, &mut server, &recorder, &mut decide)?;
    server.stop();
    let Some(outcome) = outcome else {
        bail!(
            "the turn did not end within {} (--timeout)",
            crate::duration::format(args.timeout)
        );
    };
    exit_for(&outcome)
}

/// The app-server running: its stdin, and its stdout's lines (with the person's answers) as
/// [`Input`]s.
struct AppServer {
    child: Child,
    stdin: ChildStdin,
    sender: mpsc::Sender<Input>,
    inputs: mpsc::Receiver<Input>,
}

impl AppServer {
    /// Run `command` under `sh -c`, its stdout read line by line on a thread of its own
    /// (blank lines skipped; [`Input::Closed`] at its end).
    fn spawn(command: &str) -> Result<AppServer> {
        let mut child = Command::new("sh")
            .arg("-c")
            .arg(command)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .with_context(|| format!("cannot run the app-server ({command})"))?;
        let stdin = child.stdin.take().context("the app-server has no stdin")?;
        let stdout = child
            .stdout
            .take()
            .context("the app-server has no stdout")?;
        let (sender, inputs) = mpsc::channel();
        let server = sender.clone();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines() {
                match line {
                    Ok(line) if line.trim().is_empty() => {}
                    Ok(line) => {
                        if server.send(Input::Server(line)).is_err() {
                            return;
                        }
                    }
                    Err(_) => break,
                }
            }
            let _ = server.send(Input::Closed);
        });
        Ok(AppServer {
            child,
            stdin,
            sender,
            inputs,
        })
    }

    fn stop(mut self) {
        stop(&mut self.child, self.stdin);
    }
}

/// The turn from its start to its end: carry the core's effects out, then wait for the
/// app-server's next line, the person's answer, the question's or the turn's time limit.
/// None: `--timeout` passed first.
fn converse(
    args: &TurnArgs,
    turn: &mut Turn,
    server: &mut AppServer,
    recorder: &Recorder,
    decide: &mut dyn FnMut(&str, &Value) -> crate::policy::Decision,
) -> Result<Option<TurnEnd>> {
    let deadline = Instant::now() + args.timeout;
    let mut pending: Option<(Question, Instant)> = None;
    let mut effects = turn.start();
    loop {
        if let Some(outcome) = carry_out(args, &mut effects, server, recorder, &mut pending)? {
            return Ok(Some(outcome));
        }
        let wait_until = match &pending {
            Some((_, until)) => (*until).min(deadline),
            None => deadline,
        };
        let closed = |message: &str| TurnEnd::Failed {
            kind: "app_server".to_string(),
            message: message.to_string(),
        };
        match server
            .inputs
            .recv_timeout(wait_until.saturating_duration_since(Instant::now()))
        {
            Ok(Input::Server(line)) => match serde_json::from_str::<Value>(&line) {
                Ok(message) => effects = turn.receive(&message, decide),
                Err(err) => output::warn(&format!(
                    "run turn: the app-server sent a line that is not JSON ({err})"
                )),
            },
            Ok(Input::Person(answer)) => {
                if let Some((question, _)) = pending.take() {
                    effects = person_answered(turn, &question, answer.as_deref())?;
                }
            }
            Ok(Input::Closed) => {
                return Ok(Some(closed("the app-server exited before the turn ended")));
            }
            Err(mpsc::RecvTimeoutError::Timeout) => {
                if let Some((question, until)) = &pending
                    && Instant::now() >= *until
                {
                    output::line(format!(
                        "autoctl: no answer within {}: declined {}",
                        crate::duration::format(args.ask_timeout),
                        question.what
                    ))?;
                    let question = question.clone();
                    pending = None;
                    effects = turn.answer(&question, false);
                    continue;
                }
                if Instant::now() >= deadline {
                    return Ok(None);
                }
            }
            Err(mpsc::RecvTimeoutError::Disconnected) => {
                return Ok(Some(closed("lost the app-server")));
            }
        }
    }
}

/// Carry out the core's effects in order: messages to the app-server (one it cannot take
/// ends the turn), the pane's typed record, the decision log, lines for the terminal, a
/// question to the person (it becomes `pending`). Some: the turn ended.
fn carry_out(
    args: &TurnArgs,
    effects: &mut Vec<Effect>,
    server: &mut AppServer,
    recorder: &Recorder,
    pending: &mut Option<(Question, Instant)>,
) -> Result<Option<TurnEnd>> {
    let mut done = None;
    for effect in effects.drain(..) {
        match effect {
            Effect::Send(message) => {
                if let Err(err) = send(&mut server.stdin, &message) {
                    // Not our stdout's broken pipe (a clean exit): the app-server's end.
                    done = Some(TurnEnd::Failed {
                        kind: "app_server".to_string(),
                        message: format!("the app-server exited before the turn ended ({err})"),
                    });
                    break;
                }
            }
            Effect::Record(payload, permission) => recorder.record(&payload, permission),
            Effect::Limits(limits) => recorder.limits(&limits),
            Effect::Decided {
                tool,
                input,
                decision,
            } => recorder.decided(&tool, &input, &decision),
            Effect::Say(line) => output::line(line)?,
            Effect::Ask(question) => {
                let until = ask(&question, args.ask_timeout, &server.sender);
                *pending = Some((question, until));
            }
            Effect::Done(outcome) => done = Some(outcome),
        }
    }
    Ok(done)
}

/// The person's line (None: no terminal to ask at): `y` accepts the call once, anything
/// else declines it; said on the terminal.
fn person_answered(
    turn: &mut Turn,
    question: &Question,
    answer: Option<&str>,
) -> Result<Vec<Effect>> {
    let allow = answer.is_some_and(|a| matches!(a.trim(), "y" | "Y" | "yes"));
    let who = if answer.is_some() {
        "a person"
    } else {
        "no terminal to ask at"
    };
    output::line(format!(
        "autoctl: {} {} ({who})",
        if allow { "approved" } else { "declined" },
        question.what
    ))?;
    Ok(turn.answer(question, allow))
}

/// The exit status of a turn's end: 0 completed, 1 failed or interrupted (said on the
/// terminal).
fn exit_for(outcome: &TurnEnd) -> Result<Exit> {
    Ok(match outcome {
        TurnEnd::Completed(_) => Exit::Yes,
        TurnEnd::Failed { kind, message } => {
            output::line(format!("autoctl: the turn failed ({kind}): {message}"))?;
            Exit::No
        }
        TurnEnd::Interrupted => {
            output::line("autoctl: the turn was interrupted")?;
            Exit::No
        }
    })
}

/// Write one JSON-RPC message.
fn send(stdin: &mut ChildStdin, message: &Value) -> io::Result<()> {
    let mut line = serde_json::to_vec(message)?;
    line.push(b'\n');
    stdin.write_all(&line).and_then(|()| stdin.flush())
}

/// End the app-server: close its stdin (it exits on end of input), then kill it if it stays.
fn stop(child: &mut Child, stdin: ChildStdin) {
    drop(stdin);
    let until = Instant::now() + Duration::from_secs(3);
    while Instant::now() < until {
        if let Ok(Some(_)) = child.try_wait() {
            return;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    let _ = child.kill();
    let _ = child.wait();
}

/// Put a question to the person at the terminal; their line arrives as [`Input::Person`].
/// Returns when it is declined unanswered. Without a terminal nobody can answer: declined at
/// once.
fn ask(question: &Question, timeout: Duration, sender: &mpsc::Sender<Input>) -> Instant {
    let reason = question
        .reason
        .as_deref()
        .map(|r| format!(" ({r})"))
        .unwrap_or_default();
    let _ = output::line(format!(
        "autoctl: Codex asks to {}{reason}; the policy does not prove it harmless ({})",
        question.what, question.rule
    ));
    if !io::stdin().is_terminal() {
        let _ = sender.send(Input::Person(None));
        return Instant::now();
    }
    let _ = output::line("Allow it once? (y/n)");
    let sender = sender.clone();
    std::thread::spawn(move || {
        let mut line = String::new();
        let _ = io::stdin().lock().read_line(&mut line);
        let _ = sender.send(Input::Person(Some(line)));
    });
    Instant::now() + timeout
}

/// Where the turn's typed state goes: the pane's record in the hook store (or the thread's,
/// outside tmux), as the agent's hooks would write it.
struct Recorder {
    env: HookEnv,
    cwd: PathBuf,
}

impl Recorder {
    fn new(cwd: &std::path::Path) -> Recorder {
        Recorder {
            env: HookEnv::from_env(),
            cwd: cwd.to_path_buf(),
        }
    }

    /// The thread this pane's last step ran in, when its record says the app-server.
    fn thread(&self) -> Option<String> {
        let payload = session::Payload {
            cwd: Some(self.cwd.display().to_string()),
            ..session::Payload::default()
        };
        let key = self.env.key(&payload)?;
        let record = Store::from_env().ok()?.read(&key).ok()??;
        (record.channel == Some(Channel::AppServer) && record.agent == Some(HookAgent::Codex))
            .then_some(record.session_id)
            .flatten()
    }

    fn record(&self, payload: &Value, permission: Option<session::Permission>) {
        let Ok(payload) = session::from_value(payload.clone()) else {
            return;
        };
        let extra = permission.map(Extra::Permission);
        for line in event::record_via(HookAgent::Codex, Some(Channel::AppServer), &payload, extra) {
            output::warn(&format!("run turn: {line}"));
        }
    }

    fn limits(&self, limits: &Value) {
        let result = (|| -> Result<()> {
            let input: crate::hook::statusline::StatusInput =
                serde_json::from_value(limits.clone())?;
            let payload = session::Payload {
                cwd: Some(self.cwd.display().to_string()),
                ..session::Payload::default()
            };
            let key = self
                .env
                .key(&payload)
                .context("no key to file the rate limits under")?;
            let now = crate::time::now()?;
            let record = crate::hook::statusline::StatusRecord::of(&input, &key.label(), now);
            let mut warnings = Vec::new();
            Store::from_env()?.write_status(&key, &record, &mut warnings)?;
            for warning in warnings {
                output::warn(&format!("run turn: {warning}"));
            }
            Ok(())
        })();
        if let Err(err) = result {
            output::warn(&format!("run turn: cannot record the rate limits: {err:#}"));
        }
    }

    fn decided(&self, tool: &str, input: &Value, decision: &crate::policy::Decision) {
        let Ok(state) = crate::supervise::state_dir() else {
            return;
        };
        let entry = crate::policy::log::Entry {
            time: crate::time::now()
                .unwrap_or_else(|_| chrono::Utc::now())
                .to_rfc3339_opts(chrono::SecondsFormat::Millis, true),
            session: None,
            run: None,
            door: "app-server".to_string(),
            event: None,
            mode: None,
            tool: tool.to_string(),
            input: crate::policy::summary(tool, input),
            decision: decision.decision.as_str().to_string(),
            rule: decision.rule.clone(),
            reason: (decision.decision != crate::policy::Verdict::Allow)
                .then(|| decision.reason.clone()),
        };
        if let Err(err) = crate::policy::log::append(&state, &entry) {
            output::warn(&format!("run turn: decision log: {err:#}"));
        }
    }
}
