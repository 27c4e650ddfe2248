//! Rendering the command a supervisor types for the next step: a shell command such as
//! `claude -p "/ai-cli-task {next} {task} {args}"` (seed 001's daemon-driven loop, `--into
//! shell`), or the slash command itself typed into an agent idle at its own prompt
//! (`/ai-cli-task {next} {task} {args}`, `--into agent`).
//!
//! `{args}` is the step's own arguments, as ai-cli-task's commands take them ([`step_args`]):
//! `--checkpoint post-exec` for a step at a checkpoint, `--generate` for a plan, or the
//! annotations mode (`TASK/.tmp-annotations.json --silent`) when the module holds
//! `.tmp-annotations.json`. A placeholder that renders empty takes its word with it, and a
//! bare option word right before it (`--checkpoint {checkpoint}` with no checkpoint renders
//! to nothing, `--checkpoint={checkpoint}` too), keeping the word's quotes: no dangling
//! option, no stray space.
//!
//! The rendered text is typed into someone's interactive shell, and the template's quoting
//! context is unknown (`claude "… {task}"` or `run {task}`), so values are not escaped but
//! restricted: a substituted value may only hold letters, digits and `. _ - / : @ % + , =`,
//! and may not start with `-` (it would read as an option). That keeps out every shell
//! metacharacter (`; & | < > ( ) $ \` ' " ! * ? [ ] { } ~ #`), whitespace (which splits words in
//! an unquoted template) and control characters. `{args}` is built by autoctl from such
//! values and its own option names. The template itself may not contain `!` (bash's history
//! expansion runs on typed lines, even inside double quotes) or start with `^` (quick
//! substitution).
//!
//! [`render_prompt`] renders a prompt for the agent (the Stop hook's continuation), which no
//! shell reads: its values only may not contain quotes, `$`, backticks, backslashes or
//! control characters, and `!` is allowed in the template.

use std::collections::BTreeMap;
use std::path::Path;

use anyhow::{Result, bail};

/// The default command for `--into shell`: Claude Code in print mode runs the step's slash
/// command and returns to the shell (seed 001 typed `claude "/ai-cli-task …"`, which leaves
/// today's Claude Code open at its prompt). With autoctl's hooks passed explicitly
/// (`--settings {settings}`) and its own account of the step written to `{stream}`
/// (`--output-format stream-json`, which print mode allows only with `--verbose`), so the
/// step is read whether or not print mode runs hooks (`--bare` skips them).
pub const DEFAULT_TEMPLATE: &str = r#"claude -p --settings {settings} --output-format stream-json --verbose "/ai-cli-task {next} {task} {args}" > {stream}"#;

/// The default for `--into agent`: the slash command typed at the agent's own prompt.
pub const AGENT_TEMPLATE: &str = "/ai-cli-task {next} {task} {args}";

/// The default for `--into app-server`: `autoctl run turn`, typed at the shell, sends the step
/// to Codex CLI as a turn over its app-server. Codex has no ai-cli-task command, so the step
/// is said in words (the project's AGENTS.md says how a step is done).
pub const APP_SERVER_TEMPLATE: &str = r#"autoctl run turn "Run the {next} step of the task in {task} {args}. When it is done, write its signal with autoctl signal write.""#;

/// The placeholders a template may use.
pub const PLACEHOLDERS: &[&str] = &[
    "next",
    "checkpoint",
    "task",
    "iteration",
    "args",
    "settings",
    "stream",
];

/// The file whose presence puts ai-cli-task's plan step in annotations mode.
pub const ANNOTATIONS_FILE: &str = ".tmp-annotations.json";

/// The option names `{args}` may hold besides values.
const ARG_OPTIONS: &[&str] = &["--checkpoint", "--generate", "--silent"];

/// The step's arguments for ai-cli-task's commands (seed 001's routing table): `--checkpoint
/// C` at a checkpoint; a plan without one is `--generate`, or, when the module holds
/// `.tmp-annotations.json`, the annotations mode (the file, then `--silent`: nobody answers
/// its questions in an unattended loop).
pub fn step_args(next: &str, checkpoint: &str, task: Option<&str>, annotations: bool) -> String {
    match (next, checkpoint, task) {
        (_, c, _) if !c.is_empty() => format!("--checkpoint {c}"),
        ("plan", _, Some(task)) if annotations => {
            format!("{}/{ANNOTATIONS_FILE} --silent", task.trim_end_matches('/'))
        }
        ("plan", _, _) => "--generate".to_string(),
        _ => String::new(),
    }
}

/// Whether a task module holds the annotations file (plan's annotations mode).
pub fn has_annotations(task: &Path) -> bool {
    task.join(ANNOTATIONS_FILE).is_file()
}

/// The values of every placeholder for one step: `{task}` and `{iteration}` only when known.
pub fn step_vars(
    next: &str,
    checkpoint: &str,
    task: Option<&str>,
    iteration: Option<u64>,
    annotations: bool,
) -> BTreeMap<&'static str, String> {
    let mut vars = BTreeMap::from([
        ("next", next.to_string()),
        ("checkpoint", checkpoint.to_string()),
        ("args", step_args(next, checkpoint, task, annotations)),
    ]);
    if let Some(task) = task {
        vars.insert("task", task.to_string());
    }
    if let Some(iteration) = iteration {
        vars.insert("iteration", iteration.to_string());
    }
    vars
}

/// Render a command typed into a shell: `template` with `{name}` replaced by `vars[name]`;
/// `{{` and `}}` are literal braces.
pub fn render(template: &str, vars: &BTreeMap<&str, String>) -> Result<String> {
    if template.contains('!') {
        bail!(
            "command template contains '!', which an interactive bash expands from its history when the line is typed"
        );
    }
    if template.starts_with('^') {
        bail!(
            "command template starts with '^', which an interactive bash reads as a history substitution"
        );
    }
    render_with(template, vars, shell_unsafe)
}

/// Render a prompt typed into the agent (no shell reads it).
pub fn render_prompt(template: &str, vars: &BTreeMap<&str, String>) -> Result<String> {
    render_with(template, vars, prompt_unsafe)
}

/// One word of a template (split on spaces), rendered.
struct Word {
    text: String,
    /// It held a placeholder, and every one rendered empty.
    vanished: bool,
    /// Quotes before its first placeholder and after it (kept when the word vanishes).
    lead: String,
    trail: String,
    /// A bare option (`--checkpoint`): no placeholder, starts with `-`, no `=`.
    option: bool,
}

fn render_with(
    template: &str,
    vars: &BTreeMap<&str, String>,
    unsafe_value: fn(&str) -> Option<String>,
) -> Result<String> {
    let mut words: Vec<Word> = Vec::new();
    for raw in template.split(' ') {
        let word = render_word(raw, vars, unsafe_value)?;
        if !word.vanished {
            words.push(word);
            continue;
        }
        // `--checkpoint {checkpoint}` with no checkpoint: the option goes too.
        let mut trail = word.trail;
        if words.last().is_some_and(|w| w.option) {
            let option = words.pop().expect("checked");
            trail = format!("{}{trail}", quotes(&option.text));
        }
        match words.last_mut() {
            Some(previous) => previous.text.push_str(&trail),
            None if !trail.is_empty() => words.push(literal(trail)),
            None => {}
        }
        if !word.lead.is_empty() {
            words.push(Word {
                vanished: true,
                ..literal(word.lead)
            });
        }
    }
    // A vanished word's leading quotes open the word after it.
    let mut out: Vec<String> = Vec::with_capacity(words.len());
    let mut carry = String::new();
    for word in words {
        if word.vanished {
            carry.push_str(&word.text);
        } else {
            out.push(format!("{}{}", std::mem::take(&mut carry), word.text));
        }
    }
    if !carry.is_empty() {
        match out.last_mut() {
            Some(last) => last.push_str(&carry),
            None => out.push(carry),
        }
    }
    Ok(out.join(" "))
}

fn literal(text: String) -> Word {
    Word {
        text,
        vanished: false,
        lead: String::new(),
        trail: String::new(),
        option: false,
    }
}

fn quotes(text: &str) -> String {
    text.chars().filter(|c| matches!(c, '"' | '\'')).collect()
}

fn render_word(
    raw: &str,
    vars: &BTreeMap<&str, String>,
    unsafe_value: fn(&str) -> Option<String>,
) -> Result<Word> {
    let mut out = String::with_capacity(raw.len() + 32);
    let mut residue = String::new();
    let (mut placeholders, mut empty) = (0usize, 0usize);
    let mut lead = None;
    let mut chars = raw.chars().peekable();
    while let Some(ch) = chars.next() {
        match ch {
            '{' if chars.peek() == Some(&'{') => {
                chars.next();
                out.push('{');
                residue.push('{');
            }
            '}' if chars.peek() == Some(&'}') => {
                chars.next();
                out.push('}');
                residue.push('}');
            }
            '{' => {
                let mut name = String::new();
                loop {
                    match chars.next() {
                        Some('}') => break,
                        Some(c) => name.push(c),
                        None => bail!("command template has an unclosed {{"),
                    }
                }
                if !PLACEHOLDERS.contains(&name.as_str()) {
                    bail!(
                        "command template uses {{{name}}}; known placeholders: {}",
                        PLACEHOLDERS
                            .iter()
                            .map(|p| format!("{{{p}}}"))
                            .collect::<Vec<_>>()
                            .join(", ")
                    );
                }
                let Some(value) = vars.get(name.as_str()) else {
                    bail!("command template uses {{{name}}} but there is no value for it here");
                };
                let problem = if name == "args" {
                    value
                        .split(' ')
                        .filter(|w| !ARG_OPTIONS.contains(w))
                        .find_map(unsafe_value)
                } else {
                    unsafe_value(value)
                };
                if let Some(why) = problem {
                    bail!(
                        "refusing to render {{{name}}}: its value {why}, which could change the command typed into the terminal"
                    );
                }
                lead.get_or_insert_with(|| quotes(&residue));
                placeholders += 1;
                empty += usize::from(value.is_empty());
                out.push_str(value);
            }
            '}' => bail!("command template has an unmatched }}"),
            c if c.is_control() => bail!("command template contains a control character"),
            c => {
                out.push(c);
                residue.push(c);
            }
        }
    }
    let bare: String = residue
        .chars()
        .filter(|c| !matches!(c, '"' | '\''))
        .collect();
    let vanished = placeholders > 0
        && empty == placeholders
        && (bare.is_empty() || (bare.starts_with('-') && bare.ends_with('=')));
    let mut lead = lead.unwrap_or_default();
    let mut trail = quotes(&residue)[lead.len()..].to_string();
    // Quotes that pair up around the placeholder (`'{args}'`) go with it.
    if vanished && lead.chars().rev().eq(trail.chars()) {
        lead.clear();
        trail.clear();
    }
    Ok(Word {
        option: placeholders == 0 && bare.starts_with('-') && !bare.contains('='),
        text: out,
        vanished,
        lead,
        trail,
    })
}
/// Why a value may not go into a command line, if it may not.
fn shell_unsafe(value: &str) -> Option<String> {
    if value.starts_with('-') {
        return Some("starts with '-' (it would read as an option)".to_string());
    }
    let allowed = |c: char| {
        c.is_alphanumeric()
            || matches!(c, '.' | '_' | '-' | '/' | ':' | '@' | '%' | '+' | ',' | '=')
    };
    value
        .chars()
        .find(|&c| !allowed(c))
        .map(|c| format!("contains {c:?} (allowed: letters, digits and . _ - / : @ % + , =)"))
}

/// Why a value may not go into an agent prompt, if it may not.
fn prompt_unsafe(value: &str) -> Option<String> {
    value
        .chars()
        .find(|&c| c.is_control() || matches!(c, '"' | '\'' | '`' | '$' | '\\'))
        .map(|c| format!("contains {c:?}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `--into shell`'s files, as the tick names them.
    fn with_files(mut vars: BTreeMap<&'static str, String>) -> BTreeMap<&'static str, String> {
        vars.insert("settings", "/st/claude/step-settings.json".into());
        vars.insert("stream", "/st/streams/r/3.jsonl".into());
        vars
    }

    fn vars(task: &str) -> BTreeMap<&'static str, String> {
        let mut vars = step_vars("exec", "", Some(task), None, false);
        vars.remove("args");
        vars.insert("args", String::new());
        with_files(vars)
    }

    fn step(next: &str, checkpoint: &str, annotations: bool) -> BTreeMap<&'static str, String> {
        with_files(step_vars(
            next,
            checkpoint,
            Some("TASK/auth"),
            Some(3),
            annotations,
        ))
    }

    const SHELL: &str =
        "claude -p --settings /st/claude/step-settings.json --output-format stream-json --verbose";
    const TO: &str = "> /st/streams/r/3.jsonl";

    #[test]
    fn renders_the_default() {
        assert_eq!(
            render(DEFAULT_TEMPLATE, &vars("TASK/auth")).unwrap(),
            format!(r#"{SHELL} "/ai-cli-task exec TASK/auth" {TO}"#)
        );
        // Without the files (a tick that could not name them) the default does not render.
        let mut bare = vars("TASK/auth");
        bare.remove("stream");
        assert!(render(DEFAULT_TEMPLATE, &bare).is_err());
        assert_eq!(
            render(AGENT_TEMPLATE, &vars("TASK/auth")).unwrap(),
            "/ai-cli-task exec TASK/auth"
        );
        assert_eq!(
            render("{{literal}} {next}", &vars("x")).unwrap(),
            "{literal} exec"
        );
    }

    #[test]
    fn refuses_values_that_escape_quoting() {
        for task in ["a\"; rm -rf ~; \"", "$(reboot)", "`id`", "a\nb", "x\\"] {
            assert!(render(DEFAULT_TEMPLATE, &vars(task)).is_err(), "{task:?}");
            assert!(
                render_prompt(DEFAULT_TEMPLATE, &vars(task)).is_err(),
                "{task:?}"
            );
        }
        assert!(render("{bogus}", &vars("x")).is_err());
        assert!(render("{next", &vars("x")).is_err());
        assert!(render("{iteration}", &vars("x")).is_err());
    }

    /// Seed 001's routing table: each step carries its arguments.
    #[test]
    fn the_step_arguments_follow_seed_001() {
        let cases = [
            ("plan", "", false, "/ai-cli-task plan TASK/auth --generate"),
            (
                "plan",
                "",
                true,
                "/ai-cli-task plan TASK/auth TASK/auth/.tmp-annotations.json --silent",
            ),
            (
                "check",
                "post-plan",
                false,
                "/ai-cli-task check TASK/auth --checkpoint post-plan",
            ),
            (
                "check",
                "post-exec",
                true,
                "/ai-cli-task check TASK/auth --checkpoint post-exec",
            ),
            (
                "exec",
                "mid-exec",
                false,
                "/ai-cli-task exec TASK/auth --checkpoint mid-exec",
            ),
            ("exec", "", false, "/ai-cli-task exec TASK/auth"),
            ("report", "", false, "/ai-cli-task report TASK/auth"),
        ];
        for (next, checkpoint, annotations, want) in cases {
            let vars = step(next, checkpoint, annotations);
            assert_eq!(render(AGENT_TEMPLATE, &vars).unwrap(), want);
            assert_eq!(
                render(DEFAULT_TEMPLATE, &vars).unwrap(),
                format!("{SHELL} \"{want}\" {TO}")
            );
            assert_eq!(render_prompt(AGENT_TEMPLATE, &vars).unwrap(), want);
        }
    }

    /// An empty placeholder takes its word, the option before it and no quote with it.
    #[test]
    fn empty_placeholders_render_to_nothing_cleanly() {
        let exec = step("exec", "", false);
        let check = step("check", "post-exec", false);
        let cases = [
            (
                r#"claude "/ai-cli-task {next} {task} --checkpoint {checkpoint}""#,
                r#"claude "/ai-cli-task exec TASK/auth""#,
                r#"claude "/ai-cli-task check TASK/auth --checkpoint post-exec""#,
            ),
            (
                "agent --step {next} --checkpoint={checkpoint} {task}",
                "agent --step exec TASK/auth",
                "agent --step check --checkpoint=post-exec TASK/auth",
            ),
            (
                "run {checkpoint} {task}",
                "run TASK/auth",
                "run post-exec TASK/auth",
            ),
            (
                r#"x "{checkpoint} {task}""#,
                r#"x "TASK/auth""#,
                r#"x "post-exec TASK/auth""#,
            ),
            ("{checkpoint}", "", "post-exec"),
            ("a '{args}' b", "a b", "a '--checkpoint post-exec' b"),
            ("{next}{checkpoint} z", "exec z", "checkpost-exec z"),
        ];
        for (template, empty, full) in cases {
            assert_eq!(render(template, &exec).unwrap(), empty, "{template}");
            assert_eq!(render(template, &check).unwrap(), full, "{template}");
        }
    }

    /// `{args}` holds autoctl's own option names, never a value that starts with `-`.
    #[test]
    fn args_values_are_checked_like_any_value() {
        let mut vars = step("check", "post-exec", false);
        vars.insert("args", "--checkpoint --dangerously-skip-permissions".into());
        assert!(render(AGENT_TEMPLATE, &vars).is_err());
        vars.insert("args", "--checkpoint a;b".into());
        assert!(render(AGENT_TEMPLATE, &vars).is_err());
    }

    /// Task directory names a hostile checkout could hold, in a quoted and an unquoted
    /// template: each is refused with one line naming the character.
    #[test]
    fn malicious_task_dir_names_are_refused_in_any_template() {
        for task in [
            "TASK/x;rm -rf ~",
            "TASK/x&&id",
            "TASK/x|sh",
            "TASK/x>~/.bashrc",
            "TASK/x<y",
            "TASK/(x)",
            "TASK/$HOME",
            "TASK/${IFS}",
            "TASK/`id`",
            "TASK/a!b",
            "TASK/!!",
            "TASK/x*",
            "TASK/x?",
            "TASK/[ab]",
            "TASK/{a,b}",
            "~root/x",
            "TASK/#x",
            "TASK/a b --dangerously-skip-permissions",
            "TASK/a\tb",
            "TASK/a\u{7f}",
            "TASK/a'b",
            "TASK/a\"b",
            "--dangerously-skip-permissions",
            "-rf",
        ] {
            for template in [DEFAULT_TEMPLATE, "claude -p /ai-cli-task {next} {task}"] {
                let err = format!("{:#}", render(template, &vars(task)).unwrap_err());
                assert!(
                    err.contains("{task}") && !err.contains('\n'),
                    "{task:?}: {err}"
                );
            }
        }
        for task in [
            "/home/dev/work/TASK/auth",
            "TASK/login-rate-limit_2",
            "/srv/ü/task.v2",
            "a:b@c%d+e,f=g",
        ] {
            assert!(render(DEFAULT_TEMPLATE, &vars(task)).is_ok(), "{task:?}");
        }
    }

    #[test]
    fn history_expansion_in_the_template_is_refused_for_shells_only() {
        for template in [
            "claude \"/ai-cli-task {next} {task}!\"",
            "!! {task}",
            "^a^b {task}",
        ] {
            let err = format!("{:#}", render(template, &vars("x")).unwrap_err());
            assert!(err.contains("history"), "{template}: {err}");
        }
        assert_eq!(
            render_prompt("Go on with {task}!", &vars("x")).unwrap(),
            "Go on with x!"
        );
        // A prompt is not read by a shell: a path with a space is fine there.
        assert!(render_prompt("/ai-cli-task {next} {task}", &vars("My Tasks/a")).is_ok());
    }
}
