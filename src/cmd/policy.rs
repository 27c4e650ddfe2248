//! `autoctl policy check|show|log|export|test`, and the edge of `autoctl hook permission-request`: read
//! the policy and the call, ask [`crate::policy::decide`], print, log.

use std::io::{self, BufRead, BufWriter, Write};
use std::path::PathBuf;
use std::sync::atomic::{AtomicU8, Ordering};
use std::time::{Duration, Instant};

use anyhow::{Context as _, Result, anyhow, bail};
use clap::{Args, Subcommand};
use serde::Serialize;
use serde_json::Value;

use crate::cmd::args::Format;
use crate::error::Exit;
use crate::fsx::{self, Bounded};
use crate::hook::agents::HookAgent;
use crate::hook::event;
use crate::hook::session::Permission;
use crate::output;
use crate::policy::{self, Policy, Verdict, config, log, request};

#[derive(Debug, Subcommand)]
#[command(defer = true)]
pub enum PolicyCommand {
    /// Decide one tool call and print the decision and the rule that made it
    ///
    /// Prints `allow`, `deny` or `no-decision`, the deciding rule and why, the way the
    /// PermissionRequest hook and a supervisor reading a permission screen would decide it.
    /// With --batch, reads hook payloads ({"tool_name", "tool_input", "cwd"}) as JSON lines
    /// on stdin and prints one decision per line.
    ///
    /// Exit status: 0 allow (every --batch line decided), 1 deny or no decision, 2 a bad
    /// input or policy file.
    #[command(verbatim_doc_comment)]
    Check(CheckArgs),
    /// Print the effective rules: the built-in rules and the policy file's
    Show(ShowArgs),
    /// Print the decision log (oldest first)
    ///
    /// One JSON object per decision a door made: time, session or run, door (hook or
    /// screen), the hook event (PreToolUse, PermissionRequest, PermissionDenied: the agent
    /// denied a call itself, or Reviewer: the policy's reviewer command answered) and the
    /// agent's permission mode, tool, a summary of the input (the command, path, URL or
    /// query; never file contents), decision (allow, deny, ask, no-decision; a reviewer's
    /// no-answer), rule and, for an ask, a deny or a review, the reason. Text: one line each,
    /// TIME SESSION DOOR (or DOOR:EVENT) MODE DECISION RULE TOOL INPUT. Kept in
    /// $AUTOCTL_STATE_DIR/policy/decisions.jsonl, rotated to decisions.jsonl.1 past 1 MiB.
    Log(LogArgs),
    /// Write autoctl's rules as Gemini CLI's own policy-engine file
    ///
    /// With --gemini: a TOML file of Gemini CLI's policy engine (Gemini 0.61, user tier)
    /// holding the policy file's deny rules (deny, with their message), the built-in
    /// destructive set (ask_user, or deny with on_destructive: "deny"; every approval mode,
    /// YOLO included) and the allow rules Gemini's engine can express exactly (the others are
    /// listed in the file as not exported). Written atomically to
    /// $GEMINI_CLI_HOME/.gemini/policies/autoctl.toml (default ~/.gemini/policies/autoctl.toml);
    /// run it again after changing the policy. Gemini matches text, not a shell's reading:
    /// autoctl's BeforeTool hook (hook install --agent gemini) stays the floor.
    ///
    /// Exit status: 0 written, 2 a bad policy file or an output that cannot be written.
    #[command(verbatim_doc_comment)]
    Export(ExportArgs),
    /// Check the rules' match and not_match examples, and print each one decided otherwise
    ///
    /// Decides every example of the policy file's rules (with the whole policy, as when the
    /// file is read: an allow rule's `match` approved by it, its `not_match` not; a deny
    /// rule's alike) and of autoctl's built-in rules (rules/policy.json, with the built-in
    /// rules alone: each rule's, program's, list's, secret name's and destructive id's),
    /// in a fixed example project (/home/dev/proj, home /home/dev), so every machine agrees.
    /// Prints each example decided the other way on a line of its own, then one line per
    /// source: how many examples, how many wrong. Unlike `policy check`, a policy file with
    /// a wrong example is read and all of its examples reported, not just the first.
    ///
    /// Exit status: 0 every example decided as written, 2 an example decided the other way
    /// (as reading that file anywhere else refuses it) or a bad policy file.
    #[command(verbatim_doc_comment)]
    Test(TestArgs),
}

#[derive(Debug, Args)]
pub struct TestArgs {
    #[command(flatten)]
    pub policy: PolicyArg,
    /// Output format
    #[arg(long, value_enum, default_value_t = Format::Text)]
    pub format: Format,
}

#[derive(Debug, Args)]
pub struct ExportArgs {
    /// Export for Gemini CLI's policy engine (the only target so far)
    #[arg(long, required = true)]
    pub gemini: bool,
    /// Where to write it (- for stdout) [default:
    /// $GEMINI_CLI_HOME/.gemini/policies/autoctl.toml, else ~/.gemini/policies/autoctl.toml]
    #[arg(long, short, value_name = "FILE")]
    pub output: Option<PathBuf>,
    #[command(flatten)]
    pub policy: PolicyArg,
}

#[derive(Debug, Args)]
pub struct PolicyArg {
    /// The policy file [default: $XDG_CONFIG_HOME/autoctl/policy.json, else
    /// ~/.config/autoctl/policy.json; built-in rules only when it does not exist]
    #[arg(long, value_name = "FILE")]
    pub policy: Option<PathBuf>,
}

#[derive(Debug, Args)]
pub struct CheckArgs {
    /// The tool: Bash, Read, Write, Edit, WebFetch, mcp__server__tool and others
    #[arg(long, value_name = "TOOL", required_unless_present_any = ["batch", "screen"])]
    pub tool: Option<String>,
    /// The tool's input as JSON, as Claude Code sends it ({"command": "ls"} for Bash,
    /// {"file_path": "src/a.rs"} for Write)
    #[arg(long, value_name = "JSON", default_value = "{}")]
    pub input: String,
    /// The directory the call runs in [default: the current directory]
    #[arg(long, value_name = "DIR")]
    pub cwd: Option<PathBuf>,
    /// The project directory, when it is not the working directory [default:
    /// $CLAUDE_PROJECT_DIR]
    #[arg(long, value_name = "DIR")]
    pub project: Option<PathBuf>,
    /// Read hook payloads as JSON lines on stdin; print one decision (JSON) per line
    #[arg(long, conflicts_with_all = ["tool", "screen"])]
    pub batch: bool,
    /// Decide the prompt on a captured screen (a file, or - for stdin) the way a supervisor
    /// would: a Claude Code permission box read back into its tool call, or a program's
    /// yes/no question
    #[arg(long, value_name = "FILE", conflicts_with_all = ["tool"])]
    pub screen: Option<PathBuf>,
    #[command(flatten)]
    pub policy: PolicyArg,
    /// Output format
    #[arg(long, value_enum, default_value_t = Format::Text)]
    pub format: Format,
}

#[derive(Debug, Args)]
pub struct ShowArgs {
    #[command(flatten)]
    pub policy: PolicyArg,
    /// Output format
    #[arg(long, value_enum, default_value_t = Format::Text)]
    pub format: Format,
}

#[derive(Debug, Args)]
pub struct LogArgs {
    /// Only the last N decisions
    #[arg(long, value_name = "N")]
    pub tail: Option<usize>,
    /// Output format (json: one object per line)
    #[arg(long, value_enum, default_value_t = Format::Text)]
    pub format: Format,
}

pub fn run(command: PolicyCommand) -> Result<Exit> {
    match command {
        PolicyCommand::Check(args) => check(&args),
        PolicyCommand::Show(args) => show(&args),
        PolicyCommand::Log(args) => print_log(&args),
        PolicyCommand::Export(args) => export(&args),
        PolicyCommand::Test(args) => test(&args),
    }
}

/// `policy test`: every example of the policy file and of the built-in rules.
fn test(args: &TestArgs) -> Result<Exit> {
    #[derive(Serialize)]
    struct Tested {
        source: String,
        #[serde(flatten)]
        report: policy::examples::Report,
    }
    let (policy, file) = config::load_unchecked(args.policy.policy.as_deref())?;
    let mut sources = Vec::new();
    if let Some(file) = &file {
        let source = file.display().to_string();
        let report = policy.wrong_examples(&source);
        sources.push(Tested { source, report });
    }
    sources.push(Tested {
        source: "built-in rules (rules/policy.json)".to_string(),
        report: policy::examples::builtin(),
    });
    match args.format {
        Format::Json => {
            for tested in &sources {
                output::json_line(tested)?;
            }
        }
        Format::Text => {
            for tested in &sources {
                for wrong in &tested.report.wrong {
                    output::line(wrong)?;
                }
            }
            for tested in &sources {
                let r = &tested.report;
                output::line(format_args!(
                    "{}: {} examples, {}",
                    tested.source,
                    r.examples,
                    match r.wrong.len() {
                        0 => "all decided as written".to_string(),
                        n => format!("{n} decided the other way"),
                    }
                ))?;
            }
        }
    }
    let wrong: usize = sources.iter().map(|t| t.report.wrong.len()).sum();
    if wrong > 0 {
        let examples: usize = sources.iter().map(|t| t.report.examples).sum();
        bail!("{wrong} of {examples} examples decided the other way");
    }
    Ok(Exit::Yes)
}

/// Gemini CLI's user policy file for autoctl's rules.
fn gemini_policy_path() -> Result<PathBuf> {
    let home = std::env::var_os("GEMINI_CLI_HOME")
        .filter(|h| !h.is_empty())
        .or_else(|| std::env::var_os("HOME").filter(|h| !h.is_empty()))
        .ok_or_else(|| anyhow!("neither GEMINI_CLI_HOME nor HOME is set: give --output"))?;
    Ok(PathBuf::from(home).join(".gemini/policies/autoctl.toml"))
}

fn export(args: &ExportArgs) -> Result<Exit> {
    debug_assert!(args.gemini);
    let (policy, file) = config::load(args.policy.policy.as_deref())?;
    let source = file.map_or_else(
        || "autoctl's built-in rules".to_string(),
        |f| f.display().to_string(),
    );
    let text = policy::gemini::export(&policy, &source);
    let path = match &args.output {
        Some(path) if path.as_os_str() == "-" => {
            output::line(text.trim_end())?;
            return Ok(Exit::Yes);
        }
        Some(path) => path.clone(),
        None => gemini_policy_path()?,
    };
    fsx::refuse_symlink(&path, "the Gemini policy file", "--output")?;
    if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
        std::fs::create_dir_all(dir).with_context(|| format!("cannot create {}", dir.display()))?;
    }
    fsx::atomic_write(&path, text.as_bytes())?;
    let rules = text.matches("[[rule]]").count();
    output::line(format_args!("wrote {} ({rules} rules)", path.display()))?;
    Ok(Exit::Yes)
}

fn check(args: &CheckArgs) -> Result<Exit> {
    let (policy, file) = config::load(args.policy.policy.as_deref())?;
    let cwd = match &args.cwd {
        Some(dir) => Some(dir.clone()),
        None => std::env::current_dir().ok(),
    };
    let ctx = config::context(cwd, args.project.clone(), file.as_deref(), None);
    if args.batch {
        return batch(&policy, ctx);
    }
    if let Some(screen) = &args.screen {
        // A screen does not say where the agent runs: its relative paths are the project's.
        let ctx = config::context(
            args.cwd.clone(),
            args.project.clone(),
            file.as_deref(),
            None,
        );
        return check_screen(screen, policy, ctx, args.format);
    }
    let tool = args.tool.as_deref().unwrap_or_default();
    let input = crate::protocol::document::parse_json(args.input.as_bytes())
        .map_err(|p| anyhow!("--input: {p}"))?;
    if !input.is_object() {
        bail!("--input: not a JSON object");
    }
    let decision = policy::decide(&policy, tool, &input, &ctx);
    print_decision(&decision, args.format)
}

/// `policy check --screen FILE`: classify the capture as Claude Code's screen and print the
/// approval of the prompt on it.
fn check_screen(
    file: &std::path::Path,
    policy: Policy,
    context: policy::Context,
    format: Format,
) -> Result<Exit> {
    use crate::pane::classify::{self, Lens};
    use crate::pane::screen::Screen;
    let screen = if file == std::path::Path::new("-") {
        Screen::from_reader(io::stdin().lock(), Some("claude".to_string()))
            .context("cannot read a screen from stdin")?
    } else {
        let handle =
            fsx::open_regular(file).with_context(|| format!("cannot read {}", file.display()))?;
        Screen::from_reader(io::BufReader::new(handle), Some("claude".to_string()))
            .with_context(|| format!("cannot read {}", file.display()))?
    };
    let approval = crate::policy::screen::Approval {
        policy,
        context,
        unusable: None,
    }
    .leak();
    let lens = Lens {
        approval,
        ..Lens::new(
            crate::pane::Agent::Claude,
            crate::time::now()?,
            crate::pane::reset::Zone::from_env(),
        )
    };
    let result = classify::classify(&screen, crate::pane::rules::RuleSet::embedded(), &lens);
    let Some(screened) = result.approval else {
        bail!(
            "no prompt the policy decides on this screen (class {}, {})",
            result.class.as_str(),
            result.reason
        );
    };
    let decision = screened.decision;
    print_decision(&decision, format)
}

/// One decision, as a JSON line or `DECISION RULE: REASON`; exit 0 only for allow.
fn print_decision(decision: &policy::Decision, format: Format) -> Result<Exit> {
    match format {
        Format::Json => output::json_line(decision)?,
        Format::Text => output::line(format_args!(
            "{} {}: {}",
            decision.decision.as_str(),
            decision.rule,
            output::printable(&decision.reason)
        ))?,
    }
    Ok(Exit::from_bool(decision.decision == Verdict::Allow))
}

/// One decision per payload line; a line that is not a payload gets
/// `{"error": …}` and the batch goes on.
fn batch(policy: &Policy, base: policy::Context) -> Result<Exit> {
    #[derive(Serialize)]
    struct Failed {
        error: String,
    }
    let stdin = io::stdin().lock();
    let mut out = BufWriter::new(io::stdout().lock());
    let mut all_decided = true;
    for line in stdin.split(b'\n') {
        let line = line.context("cannot read stdin")?;
        if line.iter().all(u8::is_ascii_whitespace) {
            continue;
        }
        let parsed = serde_json::from_slice::<Value>(&line)
            .map_err(|err| err.to_string())
            .and_then(|value| request::from_value(value).map_err(|err| err.to_string()));
        match parsed {
            Ok(call) => {
                let mut ctx = base.clone();
                if let Some(cwd) = call
                    .cwd
                    .as_deref()
                    .map(PathBuf::from)
                    .filter(|p| p.is_absolute())
                {
                    ctx.cwd = Some(cwd);
                }
                let decision = policy::decide(policy, &call.tool_name, &call.tool_input, &ctx);
                serde_json::to_writer(&mut out, &decision)?;
            }
            Err(error) => {
                all_decided = false;
                serde_json::to_writer(&mut out, &Failed { error })?;
            }
        }
        out.write_all(b"\n")?;
    }
    out.flush()?;
    Ok(Exit::from_bool(all_decided))
}

/// The built-in rules, as `policy show` prints them: `rules/policy.json`'s (compiled in).
pub const BUILTIN_RULES: &[(&str, &str)] = policy::data::RULES;

fn show(args: &ShowArgs) -> Result<Exit> {
    let (policy, file) = config::load(args.policy.policy.as_deref())?;
    let user = policy.to_file();
    match args.format {
        Format::Json => {
            #[derive(Serialize)]
            struct Rule<'a> {
                id: &'a str,
                allows: &'a str,
            }
            #[derive(Serialize)]
            struct Shown<'a> {
                file: Option<String>,
                on_destructive: policy::OnDestructive,
                builtin: Vec<Rule<'a>>,
                allow: &'a [policy::rules::RuleDef],
                deny: &'a [policy::rules::RuleDef],
                #[serde(skip_serializing_if = "Option::is_none")]
                reviewer: Option<&'a str>,
                #[serde(skip_serializing_if = "Option::is_none")]
                reviewer_timeout_ms: Option<u64>,
            }
            output::json_pretty(&Shown {
                file: file.map(|f| f.display().to_string()),
                on_destructive: user.on_destructive,
                builtin: BUILTIN_RULES
                    .iter()
                    .map(|(id, allows)| Rule { id, allows })
                    .collect(),
                allow: &user.allow,
                deny: &user.deny,
                reviewer: user.reviewer.as_deref(),
                reviewer_timeout_ms: policy
                    .reviewer
                    .as_ref()
                    .map(|r| u64::try_from(r.timeout.as_millis()).unwrap_or(u64::MAX)),
            })?;
        }
        Format::Text => {
            output::line(format_args!(
                "policy file: {}",
                file.map_or("none (built-in rules only)".to_string(), |f| f
                    .display()
                    .to_string())
            ))?;
            output::line(format_args!(
                "on_destructive: {}",
                match user.on_destructive {
                    policy::OnDestructive::Ask => "ask (no decision: a person decides)",
                    policy::OnDestructive::Deny => "deny (the model is told the marker)",
                }
            ))?;
            output::line("built-in allow rules (everything else gets no decision):")?;
            for (id, allows) in BUILTIN_RULES {
                output::line(format_args!("  {id}\t{allows}"))?;
            }
            output::line(format_args!(
                "reviewer: {}",
                policy.reviewer.as_ref().map_or(
                    "none (calls no rule decides go to a person)".to_string(),
                    |r| format!(
                        "{} (timeout {}; asked only about calls no rule decides)",
                        r.command,
                        crate::duration::format(r.timeout)
                    )
                )
            ))?;
            for (kind, rules) in [("allow", &user.allow), ("deny", &user.deny)] {
                output::line(format_args!(
                    "user {kind} rules:{}",
                    if rules.is_empty() { " none" } else { "" }
                ))?;
                for rule in rules.iter() {
                    output::line(format_args!(
                        "  user:{}\t{}\t{}{}",
                        rule.id,
                        rule.tool,
                        rule.pattern.as_deref().unwrap_or("(any input)"),
                        rule.message
                            .as_deref()
                            .map(|m| format!("\tmessage: {m}"))
                            .unwrap_or_default()
                    ))?;
                }
            }
        }
    }
    Ok(Exit::Yes)
}

fn print_log(args: &LogArgs) -> Result<Exit> {
    let state = crate::supervise::state_dir()?;
    let (entries, bad) = log::read(&state)?;
    if bad > 0 {
        output::warn(&format!(
            "{bad} lines of the decision log do not parse; skipped"
        ));
    }
    if entries.is_empty() {
        output::note(&format!(
            "no decision logged yet in {} (the hook and the supervisors log each one)",
            log::path(&state).display()
        ));
    }
    let skip = args.tail.map_or(0, |n| entries.len().saturating_sub(n));
    for entry in &entries[skip..] {
        match args.format {
            Format::Json => output::json_line(entry)?,
            Format::Text => output::line(format_args!(
                "{}\t{}\t{}\t{}\t{}\t{}\t{}\t{}",
                entry.time,
                output::printable(
                    entry
                        .session
                        .as_deref()
                        .or(entry.run.as_deref())
                        .unwrap_or("-")
                ),
                match &entry.event {
                    Some(event) => format!("{}:{}", entry.door, output::printable(event)),
                    None => entry.door.clone(),
                },
                output::printable(entry.mode.as_deref().unwrap_or("-")),
                entry.decision,
                output::printable(&entry.rule),
                output::printable(&entry.tool),
                output::printable(&entry.input)
            ))?,
        }
    }
    Ok(Exit::Yes)
}

// Arguments of `autoctl hook permission-request`. A plain comment: a doc comment would
// replace the command's help text (its arguments are built on first use, after the variant's
// doc comment is applied).
#[derive(Debug, Args)]
pub struct PermissionArgs {
    #[command(flatten)]
    pub policy: PolicyArg,
    /// Answer within this time, whatever happens (a stalled stdin, a slow disk): past it the
    /// hook gives no decision, so Claude Code shows its prompt
    #[arg(long, value_name = "DURATION", default_value = "5s", value_parser = crate::duration::parse_positive)]
    pub timeout: Duration,
    #[command(flatten)]
    pub agent: crate::cmd::args::AgentArg,
}

impl Default for PermissionArgs {
    fn default() -> PermissionArgs {
        PermissionArgs {
            policy: PolicyArg { policy: None },
            timeout: Duration::from_secs(5),
            agent: crate::cmd::args::AgentArg { agent: None },
        }
    }
}

// Arguments of `autoctl hook pre-tool-use` (a plain comment, as for PermissionArgs).
#[derive(Debug, Args)]
pub struct PreToolUseArgs {
    #[command(flatten)]
    pub policy: PolicyArg,
    /// Deny what the policy names destructive instead of asking: nobody will answer [default:
    /// ask, unless AUTOCTL_UNATTENDED=1 is in the agent's environment, `run start
    /// --unattended` marked the agent's tmux pane, or the policy file says on_destructive
    /// "deny"]
    #[arg(long)]
    pub unattended: bool,
    /// Answer within this time, whatever happens: past it the hook gives no decision
    #[arg(long, value_name = "DURATION", default_value = "5s", value_parser = crate::duration::parse_positive)]
    pub timeout: Duration,
    #[command(flatten)]
    pub agent: crate::cmd::args::AgentArg,
}

impl Default for PreToolUseArgs {
    fn default() -> PreToolUseArgs {
        PreToolUseArgs {
            policy: PolicyArg { policy: None },
            unattended: false,
            timeout: Duration::from_secs(5),
            agent: crate::cmd::args::AgentArg { agent: None },
        }
    }
}

/// Largest payload read: a Write of a big file comes whole.
pub const PAYLOAD_LIMIT: u64 = 32 * 1024 * 1024;

/// The environment variable that marks an agent's run unattended for the floor.
pub const UNATTENDED_ENV: &str = "AUTOCTL_UNATTENDED";

type After = Box<dyn FnOnce() + Send>;

/// A hook door's work: the answer to print (none: print nothing) and the recording to do
/// after printing.
type Work = Box<dyn FnOnce() -> Result<(Option<String>, After)> + Send>;

/// Where a hook door is: [`WORKING`] until the work hands its answer over ([`ANSWERED`]) or
/// the watchdog's deadline passes first ([`TIMED_OUT`]); whichever comes first wins.
static DOOR: AtomicU8 = AtomicU8::new(WORKING);
const WORKING: u8 = 0;
const ANSWERED: u8 = 1;
const TIMED_OUT: u8 = 2;

/// Run a hook door: the work runs on this thread while a watchdog thread sleeps until the
/// deadline, so a stalled stdin or a hung file system cannot hold the hook past it — the
/// watchdog ends the process (exit 0) with the answer printed so far, or none. Always exit 0
/// (exit 2 would block the tool call); any problem is no decision and one line on stderr.
///
/// The work runs here and not on a thread of its own (as it did until issue 24's cost
/// work): a worker thread's allocations and stack pages would all be first touches, on every
/// tool call. The watchdog's own code only sleeps (about 3,700 instructions of a harmless
/// PreToolUse's 441,000, callgrind), but starting any thread is not free: its 2 MiB stack
/// and std's signal stack for it are mapped, and std frees the thread's boxed start data on
/// the new thread, a first call into glibc's malloc there, which gives the thread its cache
/// in a second arena (a 128 MiB mapping, trimmed; gdb: `free` -> `tcache_init` ->
/// `arena_get2` under `ThreadInit::init`). A static program that starts the same sleeping
/// thread costs 0.06 ms more CPU and 0.08 ms more wall time than one that does not (load
/// 7.9); a smaller stack changes nothing. Cheaper deadlines are unsafe code this crate
/// forbids (a signal handler, `pthread_create`, `mallopt`), and a timer signal without one
/// would end the hook with status 142, not 0, and print nothing.
fn hook_door(name: &'static str, timeout: Duration, work: Work) -> Exit {
    let deadline = Instant::now() + timeout;
    let watchdog = std::thread::Builder::new().spawn(move || {
        while let Some(left) = deadline
            .checked_duration_since(Instant::now())
            .filter(|left| !left.is_zero())
        {
            std::thread::sleep(left);
        }
        if DOOR
            .compare_exchange(WORKING, TIMED_OUT, Ordering::SeqCst, Ordering::SeqCst)
            .is_ok()
        {
            output::error_line(&format!(
                "hook {name}: no answer within {}; no decision",
                crate::duration::format(timeout)
            ));
        }
        // Logging and the session's state got what was left of the deadline.
        std::process::exit(0);
    });
    if let Err(err) = watchdog {
        // Without a watchdog the hook still answers; it only cannot promise the deadline.
        output::error_line(&format!(
            "hook {name}: no watchdog ({err}); answering without one"
        ));
    }
    let (output_json, after) = match work() {
        Ok((output_json, after)) => (output_json, Some(after)),
        Err(problem) => {
            claim_the_answer();
            output::error_line(&format!("hook {name}: {problem}; no decision"));
            return Exit::Yes;
        }
    };
    claim_the_answer();
    if let Some(json) = output_json
        && let Err(err) = output::line(&json).and_then(|()| io::stdout().flush())
    {
        output::error_line(&format!("hook {name}: cannot print the answer: {err}"));
    }
    if let Some(after) = after {
        after();
    }
    Exit::Yes
}

/// Claim the answer for the work. When the watchdog's deadline passed first, it has said
/// so and is ending the process: this thread waits for that and prints nothing.
fn claim_the_answer() {
    if DOOR
        .compare_exchange(WORKING, ANSWERED, Ordering::SeqCst, Ordering::SeqCst)
        .is_err()
    {
        loop {
            std::thread::park();
        }
    }
}

/// `autoctl hook permission-request`.
pub fn permission_request(args: &PermissionArgs) -> Exit {
    let policy_file = args.policy.policy.clone();
    // A reviewer must be done (or killed) before the door gives up: a quarter second is
    // kept for printing and logging.
    let deadline = Instant::now() + args.timeout.saturating_sub(Duration::from_millis(250));
    let agent = args.agent.agent;
    hook_door(
        "permission-request",
        args.timeout,
        Box::new(move || permission_answer(policy_file.as_deref(), agent, deadline)),
    )
}

/// `autoctl hook pre-tool-use`.
pub fn pre_tool_use(args: &PreToolUseArgs) -> Exit {
    let policy_file = args.policy.policy.clone();
    let unattended = args.unattended;
    let agent = args.agent.agent;
    hook_door(
        "pre-tool-use",
        args.timeout,
        Box::new(move || pre_tool_use_answer(policy_file.as_deref(), unattended, agent)),
    )
}

fn read_payload() -> Result<Vec<u8>> {
    match fsx::read_bounded_from(io::stdin().lock(), PAYLOAD_LIMIT) {
        Ok(Bounded::Complete(bytes)) => Ok(bytes),
        Ok(Bounded::TooLarge { limit }) => {
            Err(anyhow!("stdin is larger than {}", fsx::human_size(limit)))
        }
        Err(err) => Err(anyhow!("cannot read stdin: {err}")),
    }
}

/// The policy for a call in `cwd` and its context: `--policy FILE` (never one inside the
/// project), else the default file.
fn policy_for(
    policy_file: Option<&std::path::Path>,
    cwd: Option<PathBuf>,
) -> Result<(Policy, policy::Context)> {
    if let Some(file) = policy_file
        && config::inside_project(file, &config::context(cwd.clone(), None, policy_file, None))
    {
        return Err(anyhow!(
            "--policy {} is inside the project; a policy is never read from the project",
            file.display()
        ));
    }
    let (policy, file) = config::load(policy_file).map_err(|err| anyhow!("{err:#}"))?;
    let ctx = config::context(cwd, None, file.as_deref(), None);
    Ok((policy, ctx))
}

fn to_json<T: Serialize>(output: Option<T>) -> Option<String> {
    output.and_then(|o| serde_json::to_string(&o).ok())
}

/// Read the payload and the policy, decide; the answer to print and the recording to do
/// after printing.
fn permission_answer(
    policy_file: Option<&std::path::Path>,
    agent: Option<HookAgent>,
    deadline: Instant,
) -> Result<(Option<String>, After)> {
    let raw = read_payload()?;
    // The payload is parsed once: the call is read from the value, and the session's record
    // from the same value after the answer is out.
    let value = crate::protocol::document::parse_json(&raw).map_err(|p| anyhow!("{p}"))?;
    let call = request::event_from_ref(&value, "PermissionRequest")?;
    let (policy, ctx) = policy_for(policy_file, call.cwd.as_deref().map(PathBuf::from))?;
    // Codex asks here in Claude Code's shape (its shell calls are `Bash` too); a Codex patch
    // or another agent's tool is decided part by part.
    let agent = agent.unwrap_or_else(|| {
        if call.turn_id.is_some() {
            HookAgent::Codex
        } else {
            HookAgent::Claude
        }
    });
    let decision =
        crate::hook::agents::decide(&policy, agent, &call.tool_name, &call.tool_input, &ctx);
    // The optional reviewer stage: only for what no rule decided (policy::reviewer).
    let review = match &policy.reviewer {
        Some(reviewer) if policy::reviewer::eligible(&decision) => {
            let request = policy::reviewer::request(
                &call.tool_name,
                &call.tool_input,
                call.cwd.as_deref(),
                &decision,
            );
            let budget = deadline.saturating_duration_since(Instant::now());
            Some(policy::reviewer::review(reviewer, &request, budget))
        }
        _ => None,
    };
    let decision = match &review {
        Some(review) => policy::reviewer::apply(decision, review),
        None => decision,
    };
    let output_json = to_json(request::hook_output(&decision));
    let after: After = Box::new(move || {
        if let Some(review) = &review {
            log_call(
                &call,
                "Reviewer",
                review.as_str(),
                "reviewer",
                Some(review.reason().to_string()),
            );
        }
        let outcome = match decision.decision {
            Verdict::Allow => Permission::Allowed,
            Verdict::Deny => Permission::Denied,
            Verdict::NoDecision => Permission::Asked,
        };
        log_call(
            &call,
            "PermissionRequest",
            decision.decision.as_str(),
            &decision.rule,
            None,
        );
        // The session's hook state: working when the call runs or was denied,
        // waiting-for-permission when the agent shows its prompt.
        if let Ok((agent, payload)) = event::payload_of(Some(agent), value) {
            let extra = Some(event::Extra::Permission(outcome));
            for line in event::record_payload_quietly(agent, &payload, extra) {
                output::warn(&line);
            }
        }
    });
    Ok((output_json, after))
}

/// Whether the agent's run is unattended: `--unattended`, `AUTOCTL_UNATTENDED=1` in the
/// agent's environment, the policy's `on_destructive: "deny"`, or a mark `run start
/// --unattended` left for the agent's tmux pane.
fn attendance(
    flag: bool,
    policy: &Policy,
    payload: Option<&crate::hook::session::Payload>,
) -> policy::floor::Attendance {
    use policy::floor::Attendance;
    let env = std::env::var(UNATTENDED_ENV).is_ok_and(|v| v == "1" || v == "true");
    if flag || env || policy.on_destructive == policy::OnDestructive::Deny {
        return Attendance::Unattended;
    }
    let marked = payload.and_then(|payload| {
        let key = crate::hook::store::HookEnv::from_env().key(payload)?;
        let store = crate::hook::store::Store::from_env().ok()?;
        Some(store.unattended_path(&key).exists())
    });
    if marked == Some(true) {
        Attendance::Unattended
    } else {
        Attendance::Attended
    }
}

/// The floor's answer in the agent's own shape (see [`policy::floor`]).
fn floor_output(agent: HookAgent, floor: &policy::floor::Floor) -> Option<String> {
    match agent {
        HookAgent::Claude | HookAgent::Codex => to_json(request::pre_tool_use_output(floor)),
        HookAgent::Gemini => to_json(request::before_tool_output(floor)),
    }
}

fn pre_tool_use_answer(
    policy_file: Option<&std::path::Path>,
    unattended: bool,
    agent: Option<HookAgent>,
) -> Result<(Option<String>, After)> {
    let raw = read_payload()?;
    // The payload is parsed once (strictly: a duplicate key is refused for every agent) and
    // each reader below takes what it needs from that value. Gemini's BeforeTool is read as a
    // PreToolUse (its tool names stay its own: the policy's calls are made from them below).
    let value = crate::protocol::document::parse_json(&raw).map_err(|p| anyhow!("{p}"))?;
    let (agent, value) = crate::hook::agents::canonical_value(agent, value);
    // The session's fields, before the call takes the value (a record needs no tool input).
    let payload = <crate::hook::session::Payload as serde::Deserialize>::deserialize(&value).ok();
    let call = request::event_from_value(value, "PreToolUse")?;
    let (policy, ctx) = policy_for(policy_file, call.cwd.as_deref().map(PathBuf::from))?;
    let decision =
        crate::hook::agents::decide(&policy, agent, &call.tool_name, &call.tool_input, &ctx);
    // Whether anybody is watching is looked up (a file looked for) only for a call the floor
    // stops: the answer to every other call does not depend on it.
    let attendance = if policy::floor::stops(&decision) {
        attendance(unattended, &policy, payload.as_ref())
    } else {
        policy::floor::Attendance::Attended
    };
    let floor = policy::floor::answer(decision, attendance, agent.can_ask_before_tool());
    let output_json = floor_output(agent, &floor);
    let after: After = Box::new(move || {
        use policy::floor::Answer;
        let outcome = match floor.answer {
            Answer::Ask => Some(Permission::Asked),
            Answer::Deny => Some(Permission::Denied),
            Answer::Pass => None,
        };
        let reason = (floor.answer != Answer::Pass).then(|| floor.reason.clone());
        log_call(
            &call,
            "PreToolUse",
            floor.answer.as_str(),
            &floor.rule,
            reason,
        );
        if let Some(payload) = &payload {
            let extra = outcome.map(event::Extra::Permission);
            for line in event::record_payload_quietly(agent, payload, extra) {
                output::warn(&line);
            }
        }
    });
    Ok((output_json, after))
}

/// Append a hook's decision to the decision log (best effort: a warning when it fails).
fn log_call(call: &request::Call, event: &str, decision: &str, rule: &str, reason: Option<String>) {
    let Ok(state) = crate::supervise::state_dir() else {
        return;
    };
    let entry = log::Entry {
        time: crate::time::now()
            .unwrap_or_else(|_| chrono::Utc::now())
            .to_rfc3339_opts(chrono::SecondsFormat::Millis, true),
        session: call.session_id.clone(),
        run: None,
        door: "hook".to_string(),
        event: Some(event.to_string()),
        mode: call.permission_mode.clone(),
        tool: call.tool_name.clone(),
        input: policy::summary(&call.tool_name, &call.tool_input),
        decision: decision.to_string(),
        rule: rule.to_string(),
        reason: reason.map(|r| policy::one_line(&r, policy::SUMMARY_CHARS)),
    };
    if let Err(err) = log::append(&state, &entry) {
        output::warn(&format!("hook {event}: decision log: {err:#}"));
    }
}

/// `hook event` with a PermissionDenied payload (the agent denied a call itself: its
/// auto-mode classifier, a rule of its own, or a hook): the decision log gets it beside the
/// hooks' own decisions. Anything else, or a payload without a tool, is not logged.
pub fn log_permission_denied(value: &Value) {
    if value.get("hook_event_name").and_then(Value::as_str) != Some("PermissionDenied") {
        return;
    }
    let text = |key: &str| value.get(key).and_then(Value::as_str).map(str::to_string);
    let Some(tool) = text("tool_name") else {
        return;
    };
    let call = request::Call {
        tool_name: tool,
        tool_input: value.get("tool_input").cloned().unwrap_or(Value::Null),
        cwd: text("cwd"),
        session_id: text("session_id"),
        hook_event_name: text("hook_event_name"),
        permission_mode: text("permission_mode"),
        turn_id: text("turn_id"),
    };
    let reason = text("reason").or_else(|| text("message"));
    log_call(&call, "PermissionDenied", "deny", "agent", reason);
}
