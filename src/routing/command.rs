//! Rendering the command a supervisor types into an agent's terminal for the next step, e.g.
//! `claude "/ai-cli-task {next} {task}"` (seed 001's daemon-driven loop).
//!
//! The rendered text is typed into someone's shell, so every substituted value is checked:
//! quotes, `$`, backticks, backslashes and control characters are refused rather than
//! escaped, because the template's quoting context is unknown.

use std::collections::BTreeMap;

use anyhow::{Result, bail};

/// The default command template: seed 000/001's invocation of the ai-cli-task skill.
pub const DEFAULT_TEMPLATE: &str = r#"claude "/ai-cli-task {next} {task}""#;

/// The placeholders a template may use.
pub const PLACEHOLDERS: &[&str] = &["next", "checkpoint", "task", "iteration"];

/// Render `template`, replacing `{name}` with `vars[name]`; `{{` and `}}` are literal braces.
pub fn render(template: &str, vars: &BTreeMap<&str, String>) -> Result<String> {
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
                if let Some(bad) = value.chars().find(|c| is_unsafe(*c)) {
                    bail!(
                        "refusing to render {{{name}}}: its value contains {:?}, which could change the command typed into the terminal",
                        bad
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

fn is_unsafe(c: char) -> bool {
    c.is_control() || matches!(c, '"' | '\'' | '`' | '$' | '\\')
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
        }
        assert!(render("{bogus}", &vars("x")).is_err());
        assert!(render("{next", &vars("x")).is_err());
        assert!(render("{iteration}", &vars("x")).is_err());
    }
}
