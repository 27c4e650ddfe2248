//! Rendering the command a supervisor types into an agent's terminal for the next step, e.g.
//! `claude "/ai-cli-task {next} {task}"` (seed 001's daemon-driven loop).
//!
//! The rendered text is typed into someone's interactive shell, and the template's quoting
//! context is unknown (`claude "… {task}"` or `run {task}`), so values are not escaped but
//! restricted: a substituted value may only hold letters, digits and `. _ - / : @ % + , =`,
//! and may not start with `-` (it would read as an option). That keeps out every shell
//! metacharacter (`; & | < > ( ) $ \` ' " ! * ? [ ] { } ~ #`), whitespace (which splits words in
//! an unquoted template) and control characters. The template itself may not contain `!`
//! (bash's history expansion runs on typed lines, even inside double quotes) or start with
//! `^` (quick substitution).
//!
//! [`render_prompt`] renders a prompt for the agent (the Stop hook's continuation), which no
//! shell reads: its values only may not contain quotes, `$`, backticks, backslashes or
//! control characters, and `!` is allowed in the template.

use std::collections::BTreeMap;

use anyhow::{Result, bail};

/// The default command template: seed 000/001's invocation of the ai-cli-task skill.
pub const DEFAULT_TEMPLATE: &str = r#"claude "/ai-cli-task {next} {task}""#;

/// The placeholders a template may use.
pub const PLACEHOLDERS: &[&str] = &["next", "checkpoint", "task", "iteration"];

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

fn render_with(
    template: &str,
    vars: &BTreeMap<&str, String>,
    unsafe_value: fn(&str) -> Option<String>,
) -> Result<String> {
    let mut out = String::with_capacity(template.len() + 64);
    let mut chars = template.chars().peekable();
    while let Some(ch) = chars.next() {
        match ch {
            '{' if chars.peek() == Some(&'{') => {
                chars.next();
                out.push('{');
            }
            '}' if chars.peek() == Some(&'}') => {
                chars.next();
                out.push('}');
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
                if let Some(why) = unsafe_value(value) {
                    bail!(
                        "refusing to render {{{name}}}: its value {why}, which could change the command typed into the terminal"
                    );
                }
                out.push_str(value);
            }
            '}' => bail!("command template has an unmatched }}"),
            c if c.is_control() => bail!("command template contains a control character"),
            c => out.push(c),
        }
    }
    Ok(out)
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

    fn vars(task: &str) -> BTreeMap<&'static str, String> {
        BTreeMap::from([("next", "exec".to_string()), ("task", task.to_string())])
    }

    #[test]
    fn renders_the_default() {
        assert_eq!(
            render(DEFAULT_TEMPLATE, &vars("TASK/auth")).unwrap(),
            r#"claude "/ai-cli-task exec TASK/auth""#
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
