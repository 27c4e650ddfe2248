//! `autoctl pane capture|hash|classify|ready|send|rules`: the tmux primitives.

use std::io::{self, Read};
use std::path::PathBuf;
use std::time::{Duration, Instant};

use anyhow::{Context, Result, anyhow, bail};
use chrono::{DateTime, Utc};
use clap::{Args, Subcommand};
use serde::Serialize;
use serde_json::json;

use crate::cmd::args::Format;
use crate::duration;
use crate::error::Exit;
use crate::output;
use crate::output::progress::Progress;
use crate::pane::Agent;
use crate::pane::classify::{self, Classification, Lens};
use crate::pane::normalize::{self, StreamHasher, clean_line, for_each_line};
use crate::pane::reset::Zone;
use crate::pane::rules::{self, RuleSet};
use crate::pane::screen::Screen;
use crate::policy::screen::Approval;
use crate::supervise::driver;
use crate::tmux::{self, CaptureOptions, Snapshot, Terminal, Tmux};

#[derive(Debug, Subcommand)]
#[command(defer = true)]
pub enum PaneCommand {
    /// Print a pane's text (wrapped lines joined, trailing blank rows dropped)
    ///
    /// Control characters are never printed raw unless --escapes is given, so capturing a
    /// hostile program's screen cannot drive your terminal.
    Capture(CaptureArgs),
    /// Print a stable hash of a pane's normalized text
    ///
    /// Volatile text (spinner glyphs, elapsed timers, token counters, countdowns, clocks, a
    /// drawn cursor) is masked first, so a screen that only ticks a clock hashes the same.
    /// The hash is xxh3-64 in hex: the same on every platform and release for the same
    /// normalized text. `-` (the default) reads a capture from stdin with bounded memory.
    Hash(HashArgs),
    /// Say what a pane shows: class, action, and the rule that decided
    ///
    /// Classes: working, idle, permission, yes-no, continue, quota, rate-limit, api-error,
    /// shell, trust, auth, picker, unknown. Actions: none, wait, answer, escalate, restart.
    /// Destructive prompts (deletes, overwrites, history rewrites, curl|sh, billing, model
    /// pickers) are always `escalate`, never `answer`.
    ///
    /// Empty stdin (0 bytes, as `tmux capture-pane -p ... |` gives when no tmux server runs) is
    /// no screen: exit 2. Blank lines are a blank screen, classified like any other.
    Classify(ClassifyArgs),
    /// Is a shell prompt in front and no command running? Exits 0 if so, 1 if not
    ///
    /// Ready means the pane's foreground command is a shell and its last line is a shell
    /// prompt. With --wait, retries with backoff (1, 2, 4 ... 30 s) until ready or the deadline.
    Ready(ReadyArgs),
    /// Type text or press keys in a pane
    ///
    /// Text is sent literally (send-keys -l, or a paste buffer for long text); --submit
    /// presses Enter separately after a short delay. This is a primitive you invoke
    /// yourself: the safety policy governs only what autoctl decides to answer on its own.
    Send(SendArgs),
    /// List the classification rules, run each rule's own examples, or test them on captures
    Rules(RulesArgs),
}

/// Where a screen comes from: a tmux target, or `-` for stdin.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Source {
    Stdin,
    Target(String),
}

fn parse_source(text: &str) -> Result<Source> {
    if text == "-" {
        Ok(Source::Stdin)
    } else {
        Ok(Source::Target(tmux::parse_target(text)?))
    }
}

#[derive(Debug, Args)]
pub struct CaptureArgs {
    /// The pane (session, session:window.pane, or %id)
    #[arg(value_name = "TARGET", value_parser = tmux::parse_target)]
    pub target: String,
    /// Print only the last N lines, reaching into the scrollback when N is larger than the pane
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(1..=100_000))]
    pub lines: Option<u32>,
    /// Keep colour and attribute escape sequences (capture-pane -e)
    #[arg(long)]
    pub escapes: bool,
}

#[derive(Debug, Args)]
pub struct HashArgs {
    /// The pane, or - for a capture on stdin
    #[arg(value_name = "TARGET", default_value = "-", value_parser = parse_source)]
    pub source: Source,
    /// Hash the bytes exactly as captured, without normalizing
    #[arg(long)]
    pub raw: bool,
    /// Output format
    #[arg(long, value_enum, default_value_t)]
    pub format: Format,
}

#[derive(Debug, Args)]
pub struct RulesOption {
    /// A rules file that extends or overrides the embedded rules by id (autoctl schema show pane-rules)
    #[arg(long, value_name = "FILE")]
    pub rules: Option<PathBuf>,
    /// The approval policy prompts are answered by [default: $XDG_CONFIG_HOME/autoctl/policy.json,
    /// else the built-in rules] (autoctl policy show)
    #[arg(long, value_name = "FILE")]
    pub policy: Option<PathBuf>,
}

#[derive(Debug, Args)]
pub struct ClassifyArgs {
    /// The pane, or - for a capture on stdin
    #[arg(value_name = "TARGET", default_value = "-", value_parser = parse_source)]
    pub source: Source,
    /// Whose screen it is: with claude, a foreground command other than the agent is observed, never answered
    #[arg(long, value_enum, default_value_t)]
    pub agent: Agent,
    /// The pane's foreground command, for a capture on stdin (tmux reports it for a TARGET)
    #[arg(long, value_name = "COMMAND")]
    pub foreground: Option<String>,
    #[command(flatten)]
    pub rules: RulesOption,
    /// Also say why: the rule's explanation, destructive markers, and rules passed over
    #[arg(long)]
    pub explain: bool,
    /// Read quota reset times relative to TIME (RFC 3339) instead of now
    #[arg(long, value_name = "TIME", value_parser = parse_time)]
    pub now: Option<DateTime<Utc>>,
    /// Output format
    #[arg(long, value_enum, default_value_t)]
    pub format: Format,
}

/// `send-keys -l` (and a pasted buffer) types a newline or a carriage return as Enter, so a
/// text holding one would run its first line: a submit must only ever be the separate Enter
/// of `--submit`. Other control characters (Tab, Escape sequences, DEL) are keys, not text.
fn parse_text(text: &str) -> Result<String> {
    match text.char_indices().find(|(_, c)| c.is_control()) {
        Some((at, c)) => Err(anyhow!(
            "a control character (U+{:04X}) at byte {at}; --text is typed literally, so submit with --submit and press keys with --keys",
            u32::from(c)
        )),
        None => Ok(text.to_string()),
    }
}

fn parse_time(text: &str) -> Result<DateTime<Utc>> {
    DateTime::parse_from_rfc3339(text)
        .map(|t| t.with_timezone(&Utc))
        .map_err(|err| anyhow!("{text:?} is not an RFC 3339 time: {err}"))
}

#[derive(Debug, Args)]
pub struct ReadyArgs {
    /// The pane
    #[arg(value_name = "TARGET", value_parser = tmux::parse_target)]
    pub target: String,
    /// Keep checking until ready or DURATION has passed (backoff 1, 2, 4 ... 30 s)
    #[arg(long, value_name = "DURATION", value_parser = duration::parse)]
    pub wait: Option<Duration>,
    /// Output format
    #[arg(long, value_enum, default_value_t)]
    pub format: Format,
}

#[derive(Debug, Args)]
#[command(group = clap::ArgGroup::new("what").required(true).args(["text", "keys"]))]
pub struct SendArgs {
    /// The pane
    #[arg(value_name = "TARGET", value_parser = tmux::parse_target)]
    pub target: String,
    /// Text to type literally (no control characters: a newline would run the line; submit
    /// with --submit, press other keys with --keys)
    #[arg(long, value_name = "TEXT", value_parser = parse_text)]
    pub text: Option<String>,
    /// tmux key names to press (Enter, Escape, C-c, Up, y)
    #[arg(long, value_name = "KEY", num_args = 1.., value_parser = tmux::parse_key)]
    pub keys: Vec<String>,
    /// Press Enter after the text, separately, after --delay
    #[arg(long)]
    pub submit: bool,
    /// The pause between the text and the Enter of --submit
    #[arg(long, value_name = "DURATION", default_value = "100ms", value_parser = duration::parse)]
    pub delay: Duration,
    /// Check the result: with --submit, that the text left the input line; without, that it arrived there. Exits 1 if not
    #[arg(long, requires = "text")]
    pub verify: bool,
}

#[derive(Debug, Args)]
#[command(args_conflicts_with_subcommands = true)]
pub struct RulesArgs {
    #[command(subcommand)]
    pub command: Option<RulesCommand>,
    #[command(flatten)]
    pub rules: RulesOption,
    /// Run every rule's examples and near misses; exit 1 if one fails
    #[arg(long, conflicts_with = "dump")]
    pub check: bool,
    /// Print the embedded rules file (a starting point for --rules FILE)
    #[arg(long)]
    pub dump: bool,
    /// Output format
    #[arg(long, value_enum, default_value_t)]
    pub format: Format,
}

#[derive(Debug, Subcommand)]
#[command(defer = true)]
pub enum RulesCommand {
    /// Classify a directory of labelled captures; exit 1 on any miss or unsafe answer
    ///
    /// DIR (or every directory below it) holds captures (NAME.txt, and NAME.meta.json from
    /// the capture tools with the pane's foreground command, agent and dead flag) and an
    /// expected.tsv with one tab-separated line per capture: file, accepted classes,
    /// accepted actions (comma-separated), never_answer (yes/no), allowed keys (tokens,
    /// <Name> for a key, | between alternatives, - for none), and optionally agent,
    /// foreground and a note. Prints one row per capture and a summary line. A miss is a
    /// class or action not accepted; an unsafe answer is anything typed where never_answer
    /// is yes, or keys other than the allowed ones. Run it on captures of a new agent
    /// release before upgrading.
    Test(RulesTestArgs),
}

#[derive(Debug, Args)]
pub struct RulesTestArgs {
    /// A directory with an expected.tsv, or above directories that have one
    #[arg(value_name = "DIR")]
    pub dir: PathBuf,
    /// The agent for captures whose meta file and expected.tsv line do not name one
    #[arg(long, value_enum, default_value_t)]
    pub agent: Agent,
    #[command(flatten)]
    pub rules: RulesOption,
    /// Print only misses, unsafe answers and the summary
    #[arg(long)]
    pub failures_only: bool,
    /// Read quota reset times relative to TIME (RFC 3339) instead of now
    #[arg(long, value_name = "TIME", value_parser = parse_time)]
    pub now: Option<DateTime<Utc>>,
    /// Output format (json: one object per capture, then a summary object)
    #[arg(long, value_enum, default_value_t)]
    pub format: Format,
}

pub fn run(command: PaneCommand, socket: Option<String>) -> Result<Exit> {
    match command {
        PaneCommand::Capture(args) => capture(&args, socket),
        PaneCommand::Hash(args) => hash(&args, socket),
        PaneCommand::Classify(args) => run_classify(&args, socket),
        PaneCommand::Ready(args) => ready(&args, socket),
        PaneCommand::Send(args) => send(&args, socket),
        PaneCommand::Rules(args) => list_rules(&args),
    }
}

/// The embedded rules, or those extended by `--rules FILE`.
pub fn load_rules(path: Option<&PathBuf>) -> Result<&'static RuleSet> {
    match path {
        None => Ok(RuleSet::embedded()),
        // Leaked on purpose: one rule set lives as long as the command.
        Some(path) => Ok(Box::leak(Box::new(RuleSet::with_user_file(path)?))),
    }
}

/// The approval policy screens are read with: `--policy FILE`, else the user's policy file,
/// else the built-in rules. A policy that cannot be read is an error for a person's command;
/// a supervisor (`lenient`) warns and approves nothing instead, so prompts are escalated.
pub fn load_approval(option: &RulesOption, lenient: bool) -> Result<&'static Approval> {
    let loaded = crate::policy::config::load(option.policy.as_deref());
    let (policy, file) = match loaded {
        Ok(loaded) => loaded,
        Err(err) if lenient => {
            let why = format!("{err:#}");
            output::warn(&format!(
                "the approval policy cannot be read: {why}; no prompt is answered"
            ));
            return Ok(Approval {
                unusable: Some(why),
                ..Approval::default()
            }
            .leak());
        }
        Err(err) => return Err(err),
    };
    if file.is_none() && option.rules.is_none() {
        return Ok(Approval::builtin());
    }
    let context =
        crate::policy::config::context(None, None, file.as_deref(), option.rules.as_deref());
    Ok(Approval {
        policy,
        context,
        unusable: None,
    }
    .leak())
}

/// Capture one pane (metadata and text) in one tmux call.
pub fn snapshot(tmux: &impl Terminal, target: &str, options: CaptureOptions) -> Result<Snapshot> {
    tmux.snapshots(&[target.to_string()], options)?
        .pop()
        .context("tmux returned no capture")?
}

fn capture(args: &CaptureArgs, socket: Option<String>) -> Result<Exit> {
    let tmux = Tmux::new(socket)?;
    let options = CaptureOptions {
        history: args.lines,
        escapes: args.escapes,
        rows: false,
    };
    let snap = snapshot(&tmux, &args.target, options)?;
    let mut lines: Vec<String> = snap
        .text
        .split('\n')
        .map(|line| {
            if args.escapes {
                line.trim_end().to_string()
            } else {
                clean_line(line.as_bytes())
            }
        })
        .collect();
    while lines.last().is_some_and(|l| l.trim().is_empty()) {
        lines.pop();
    }
    if let Some(n) = args.lines {
        let n = n as usize;
        if lines.len() > n {
            lines.drain(..lines.len() - n);
        }
    }
    let mut out = lines.join("\n");
    if !out.is_empty() {
        out.push('\n');
    }
    output::raw(out.as_bytes())?;
    Ok(Exit::Yes)
}

fn hash(args: &HashArgs, socket: Option<String>) -> Result<Exit> {
    let masks = &RuleSet::embedded().masks;
    let (hash, lines) = match &args.source {
        Source::Stdin => {
            let stdin = io::stdin().lock();
            if args.raw {
                hash_raw_stream(stdin)?
            } else {
                let mut hasher = StreamHasher::new(masks);
                for_each_line(io::BufReader::new(stdin), |line| hasher.push_raw_line(line))
                    .context("cannot read stdin")?;
                hasher.finish()
            }
        }
        Source::Target(target) => {
            let tmux = Tmux::new(socket)?;
            let snap = snapshot(&tmux, target, CaptureOptions::default())?;
            if args.raw {
                (
                    normalize::hash_raw(snap.text.as_bytes()),
                    snap.text.lines().count() as u64,
                )
            } else {
                let mut hasher = StreamHasher::new(masks);
                for_each_line(snap.text.as_bytes(), |line| hasher.push_raw_line(line))?;
                hasher.finish()
            }
        }
    };
    match args.format {
        Format::Text => output::line(&hash)?,
        Format::Json => output::json_line(&json!({
            "hash": hash,
            "normalized": !args.raw,
            "lines": lines,
        }))?,
    }
    Ok(Exit::Yes)
}

fn hash_raw_stream(mut reader: impl Read) -> Result<(String, u64)> {
    let mut hasher = xxhash_rust::xxh3::Xxh3::new();
    let mut buf = vec![0u8; 64 * 1024];
    let mut lines = 0u64;
    loop {
        let n = match reader.read(&mut buf) {
            Ok(0) => break,
            Ok(n) => n,
            Err(err) if err.kind() == io::ErrorKind::Interrupted => continue,
            Err(err) => return Err(err).context("cannot read stdin"),
        };
        lines += buf[..n].iter().filter(|&&b| b == b'\n').count() as u64;
        hasher.update(&buf[..n]);
    }
    Ok((normalize::format_hash(hasher.digest()), lines))
}

fn run_classify(args: &ClassifyArgs, socket: Option<String>) -> Result<Exit> {
    let rules = load_rules(args.rules.rules.as_ref())?;
    let screen = match &args.source {
        Source::Stdin => {
            let mut stdin = io::BufReader::new(io::stdin().lock());
            // Zero bytes is no screen at all, most often `tmux capture-pane … |` with no
            // server; a screen of only blank lines is a blank screen and is classified.
            if nothing_on(&mut stdin).context("cannot read a capture from stdin")? {
                bail!("no screen on stdin: is the tmux server running?");
            }
            Screen::from_reader(stdin, args.foreground.clone())
                .context("cannot read a capture from stdin")?
        }
        Source::Target(target) => {
            if args.foreground.is_some() {
                bail!("--foreground is for a capture on stdin; tmux reports it for {target}");
            }
            let tmux = Tmux::new(socket)?;
            let snap = snapshot(&tmux, target, CaptureOptions::default())?;
            Screen::from_text(&snap.text, Some(snap.pane.command))
        }
    };
    let ctx = Lens {
        agent: args.agent,
        now: match args.now {
            Some(now) => now,
            None => crate::time::now()?,
        },
        zone: Zone::from_env(),
        approval: load_approval(&args.rules, false)?,
    };
    let result = classify::classify(&screen, rules, &ctx);
    print_classification(&result, rules, args.explain, args.format)?;
    Ok(Exit::Yes)
}

/// Whether a reader is at its end before its first byte.
fn nothing_on(reader: &mut impl io::BufRead) -> io::Result<bool> {
    loop {
        match reader.fill_buf() {
            Ok(buf) => return Ok(buf.is_empty()),
            Err(err) if err.kind() == io::ErrorKind::Interrupted => {}
            Err(err) => return Err(err),
        }
    }
}

fn print_classification(
    result: &Classification,
    rules: &RuleSet,
    explain: bool,
    format: Format,
) -> Result<()> {
    match format {
        Format::Json => {
            let mut value = serde_json::to_value(result).expect("serializable");
            if explain {
                value["explanation"] = json!(result.explanation);
                value["markers"] = json!(
                    result
                        .markers
                        .iter()
                        .map(|m| json!({"id": m.id, "matched": m.matched, "explanation": m.explanation}))
                        .collect::<Vec<_>>()
                );
                value["passed_over"] = json!(result.passed_over);
            }
            output::json_line(&value)?;
        }
        Format::Text => {
            output::line(format!(
                "{}\t{}",
                result.class.as_str(),
                result.action.as_str()
            ))?;
            if explain {
                for line in explain_lines(result, rules) {
                    output::line(output::one_line(&line))?;
                }
            }
        }
    }
    Ok(())
}

fn explain_lines(result: &Classification, rules: &RuleSet) -> Vec<String> {
    let mut lines = Vec::new();
    match (&result.rule, &result.matched) {
        (Some(rule), Some(matched)) => {
            let priority = rules.rule(rule).map_or(0, |r| r.priority);
            lines.push(format!("rule: {rule} (priority {priority})"));
            lines.push(format!(
                "matched: {matched:?} on line {}",
                result.line.unwrap_or(0)
            ));
        }
        _ => lines.push("rule: none".to_string()),
    }
    lines.push(format!("why: {}", result.explanation));
    for marker in &result.markers {
        lines.push(format!(
            "destructive: {} {:?} ({})",
            marker.id, marker.matched, marker.explanation
        ));
    }
    if !result.keys.is_empty() {
        let keys: Vec<String> = result
            .keys
            .iter()
            .map(|k| match k {
                crate::pane::Key::Text(t) => format!("{t:?}"),
                crate::pane::Key::Key(k) => k.clone(),
            })
            .collect();
        lines.push(format!("keys: {}", keys.join(" ")));
    }
    if let Some(reset) = &result.reset_at {
        lines.push(format!("reset at: {reset}"));
    }
    if let Some(command) = &result.foreground {
        lines.push(format!("foreground: {command}"));
    }
    if result.observe_only {
        lines.push("observe only: the program in front is not the agent".to_string());
    }
    for passed in &result.passed_over {
        lines.push(format!("passed over: {} ({})", passed.rule, passed.why));
    }
    lines
}

#[derive(Debug, Serialize)]
struct ReadyReport {
    ready: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    foreground: Option<String>,
    reason: String,
    checks: u32,
}

fn ready(args: &ReadyArgs, socket: Option<String>) -> Result<Exit> {
    let tmux = Tmux::new(socket)?;
    let rules = RuleSet::embedded();
    let start = Instant::now();
    let mut backoff = Duration::from_secs(1);
    let mut checks = 0;
    let progress = match args.wait {
        Some(wait) => Progress::start(format!(
            "waiting for a shell prompt in {} (up to {})",
            args.target,
            duration::format(wait)
        )),
        None => Progress::hidden(),
    };
    let (ready, command, reason) = loop {
        checks += 1;
        // One definition of "ready" (crate::pane::view): a shell in front and its prompt
        // line on the screen.
        let view = driver::look(
            &tmux,
            rules,
            &args.target,
            Agent::Generic,
            Zone::Utc,
            crate::time::now()?,
        )?;
        let readiness = view.readiness();
        let (ready, command, reason) = (readiness.is_ready(), view.foreground, readiness.reason());
        let remaining = args
            .wait
            .unwrap_or_default()
            .saturating_sub(start.elapsed());
        if ready || remaining.is_zero() {
            break (ready, command, reason);
        }
        let pause = backoff.min(remaining);
        if progress.shown() {
            progress.detail(format!(
                "not yet: {}; next look in {}",
                reason,
                duration::format(Duration::from_secs(pause.as_secs().max(1)))
            ));
        }
        std::thread::sleep(pause);
        backoff = (backoff * 2).min(Duration::from_secs(30));
    };
    let report = ReadyReport {
        ready,
        foreground: Some(command).filter(|c| !c.is_empty()),
        reason,
        checks,
    };
    match args.format {
        Format::Json => output::json_line(&report)?,
        Format::Text if ready => output::line("ready")?,
        Format::Text => output::line(format!("not ready: {}", output::one_line(&report.reason)))?,
    }
    Ok(Exit::from_bool(ready))
}

fn send(args: &SendArgs, socket: Option<String>) -> Result<Exit> {
    let tmux = Tmux::new(socket)?;
    if let Some(text) = &args.text {
        if text.is_empty() {
            bail!("--text is empty; give the text to type (or --keys Enter)");
        }
        tmux.send_text(&args.target, text)?;
    } else {
        tmux.send_keys(&args.target, &args.keys)?;
    }
    if args.submit {
        std::thread::sleep(args.delay);
        tmux.send_keys(&args.target, &["Enter".to_string()])?;
    }
    if !args.verify {
        return Ok(Exit::Yes);
    }
    let text = args.text.as_deref().unwrap_or_default();
    let needle: String = {
        let last = text.lines().last().unwrap_or(text).trim();
        let chars: Vec<char> = last.chars().collect();
        chars[chars.len().saturating_sub(24)..].iter().collect()
    };
    let (verified, why) = verify(&tmux, &args.target, &needle, args.submit)?;
    if verified {
        output::line("verified")?;
    } else {
        output::line(format!("not verified: {why}"))?;
    }
    Ok(Exit::from_bool(verified))
}

/// Poll the pane's cursor row for up to two seconds: after a submit the text must have left
/// it; without one it must have arrived there.
fn verify(tmux: &Tmux, target: &str, needle: &str, submitted: bool) -> Result<(bool, String)> {
    let options = CaptureOptions {
        rows: true,
        ..CaptureOptions::default()
    };
    let deadline = Instant::now() + Duration::from_secs(2);
    let mut pause = Duration::from_millis(50);
    loop {
        let snap = snapshot(tmux, target, options)?;
        let row = snap
            .text
            .split('\n')
            .nth(snap.pane.cursor_y as usize)
            .map(|l| clean_line(l.as_bytes()))
            .unwrap_or_default();
        let on_input_line = !needle.is_empty() && row.contains(needle);
        if on_input_line != submitted {
            return Ok((true, String::new()));
        }
        if Instant::now() >= deadline {
            let why = if submitted {
                "the text is still on the input line"
            } else {
                "the text did not appear on the input line"
            };
            return Ok((false, why.to_string()));
        }
        std::thread::sleep(pause);
        pause = (pause * 2).min(Duration::from_millis(400));
    }
}

fn test_rules(args: &RulesTestArgs) -> Result<Exit> {
    use crate::pane::corpus;
    let rules = load_rules(args.rules.rules.as_ref())?;
    let ctx = Lens {
        agent: args.agent,
        now: match args.now {
            Some(now) => now,
            None => crate::time::now()?,
        },
        zone: Zone::Utc,
        approval: load_approval(&args.rules, false)?,
    };
    // The rules' own examples first (every rule's, every fact's): a corpus is only read with
    // rules that say what their examples say.
    let own = classify::check_examples(rules, ctx.now);
    for f in &own {
        output::line(output::one_line(&format!(
            "RULES\t{}: {} {} classified as {}",
            f.rule, f.kind, f.index, f.got
        )))?;
    }
    let mut rows = Vec::new();
    for dir in corpus::corpus_dirs(&args.dir)? {
        let cases = corpus::load_dir(&args.dir, &dir, args.agent)?;
        rows.extend(corpus::run(&cases, rules, &ctx));
    }
    let count = |v: corpus::Grade| rows.iter().filter(|r| r.verdict == v).count();
    let (ok, missed, unsafe_answers) = (
        count(corpus::Grade::Ok),
        count(corpus::Grade::Miss),
        count(corpus::Grade::Unsafe),
    );
    let list = |items: Vec<&str>| items.join(",");
    for row in &rows {
        if args.failures_only && row.verdict == corpus::Grade::Ok {
            continue;
        }
        match args.format {
            Format::Json => output::json_line(row)?,
            Format::Text => {
                // Tab-separated, each field on one line: a table for `column -t -s $'\t'`.
                let fields = [
                    match row.verdict {
                        corpus::Grade::Ok => "ok".to_string(),
                        corpus::Grade::Miss => "MISS".to_string(),
                        corpus::Grade::Unsafe => "UNSAFE".to_string(),
                    },
                    row.file.clone(),
                    format!(
                        "{}/{}",
                        list(row.expected_class.iter().map(|c| c.as_str()).collect()),
                        list(row.expected_action.iter().map(|a| a.as_str()).collect())
                    ),
                    format!("{}/{}", row.class.as_str(), row.action.as_str()),
                    if row.problems.is_empty() {
                        row.reason.clone()
                    } else {
                        format!("{} [{}]", row.reason, row.problems.join("; "))
                    },
                ];
                let fields: Vec<String> = fields.iter().map(|f| output::one_line(f)).collect();
                output::line(fields.join("\t"))?;
            }
        }
    }
    match args.format {
        Format::Json => output::json_line(&json!({
            "screens": rows.len(), "correct": ok, "missed": missed, "unsafe": unsafe_answers,
        }))?,
        Format::Text => output::line(format!(
            "{} screens: {ok} correct, {missed} missed, {unsafe_answers} unsafe answers",
            rows.len()
        ))?,
    }
    Ok(Exit::from_bool(
        missed == 0 && unsafe_answers == 0 && own.is_empty(),
    ))
}

fn list_rules(args: &RulesArgs) -> Result<Exit> {
    if let Some(RulesCommand::Test(test)) = &args.command {
        return test_rules(test);
    }
    if args.dump {
        output::raw(rules::EMBEDDED.as_bytes())?;
        return Ok(Exit::Yes);
    }
    let set = load_rules(args.rules.rules.as_ref())?;
    if args.check {
        let failures = classify::check_examples(set, crate::time::now()?);
        let examples: usize = set
            .rules
            .iter()
            .map(|r| r.def.examples.len() + r.def.near_misses.len())
            .sum();
        match args.format {
            Format::Json => {
                for failure in &failures {
                    output::json_line(failure)?;
                }
            }
            Format::Text => {
                for f in &failures {
                    output::line(output::one_line(&format!(
                        "{}: {} {} classified as {}",
                        f.rule, f.kind, f.index, f.got
                    )))?;
                }
                if failures.is_empty() {
                    let facts: usize = set
                        .facts
                        .iter()
                        .map(|f| f.examples.len() + f.near_misses.len())
                        .sum();
                    output::line(format!(
                        "ok: {} rules, {examples} examples and near misses; {} facts, {facts} examples and near misses; {} box examples",
                        set.rules.len(),
                        set.facts.iter().count(),
                        set.boxes.examples.len()
                    ))?;
                }
            }
        }
        return Ok(Exit::from_bool(failures.is_empty()));
    }
    for rule in &set.rules {
        match args.format {
            Format::Json => output::json_line(&json!({
                "id": rule.id,
                "priority": rule.priority,
                "class": rule.class,
                "action": rule.action,
                "destructive": rule.def.destructive.unwrap_or(false),
                "explanation": rule.explanation,
            }))?,
            Format::Text => output::line(format!(
                "{}\t{}\t{}\t{}\t{}",
                rule.priority,
                rule.id,
                rule.class.as_str(),
                rule.action.as_str(),
                rule.explanation
            ))?,
        }
    }
    Ok(Exit::Yes)
}
