//! Is a shell command line harmless? Default deny: the line is read with the shell lexer
//! ([`crate::shell`]) and every simple command in it — each part of a pipeline, a `&&`/`||`/`;`
//! chain, a subshell — must be proven harmless by a named rule ([`super::programs`],
//! [`super::git`]) or a user allow rule; one part that is not makes the whole line not
//! harmless, and the answer names that part.
//!
//! What no rule can prove, whatever the program:
//! - a command or process substitution (`$(…)`, backquotes, `<(…)`) — it runs a command that
//!   is not in front of the reader; a variable (`$X`, `"$X"`) — its value is not known (a
//!   `$` in single quotes is text the program reads: `grep 'x$'`, `jq '.[] as $x | $x'`);
//! - a runner that runs the rest of the line with other powers or from other input (`sudo`,
//!   `xargs`, `eval`, `exec`, `nohup`, `watch`, …); `time`, `timeout`, `nice` and `env` with
//!   harmless variables are read through;
//! - a variable assignment other than a short list that only changes output (`RUST_BACKTRACE`,
//!   `NO_COLOR`, …): `PATH=`, `LD_PRELOAD=`, `RUSTFLAGS=` change what runs;
//! - a redirection that truncates (`>`, `>|`, `&>`; `/dev/null` excepted) or appends (`>>`)
//!   outside the project or to a sensitive path; a read (`<`) of a secret;
//! - a program written as a path other than a system directory's (`./ls` is not ls);
//! - a control character other than tab and newline (it can hide text on a screen).
//!
//! `cd DIR` is followed: later relative paths resolve against every directory the line may
//! be in (a `cd` in a subshell or after `||` may not happen), and a path counts as inside the
//! project only when it is inside from each of them.

use super::data::{DISCARDING_TARGETS, HARMLESS_VARIABLES};
use super::line::{Blocked, Line, program_name};
use super::{Context, rules::UserRule};
use crate::shell::{self, RedirectOp, SimpleCommand};

/// Longest command line read; a longer one is not provable (and reading it has a cost).
pub const MAX_SCRIPT: usize = 64 * 1024;

/// The rules that proved a line harmless, in order, without repeats.
pub type Proof = Vec<String>;

/// Judge a command line: the rules that prove it harmless, or why it is not.
pub fn judge(script: &str, ctx: &Context, allow: &[&UserRule]) -> Result<Proof, Blocked> {
    if script.len() > MAX_SCRIPT {
        return Err(Blocked::new(
            format!("{} bytes", script.len()),
            format!("longer than {MAX_SCRIPT} bytes"),
        ));
    }
    if let Some(c) = script
        .chars()
        .find(|c| c.is_control() && *c != '\n' && *c != '\t')
    {
        return Err(Blocked::new(
            format!("{c:?}"),
            "a control character can hide text",
        ));
    }
    let commands = shell::commands(script);
    if commands.is_empty() {
        return Err(Blocked::new(script, "no command"));
    }
    // As every reader: past `shell::MAX_COMMANDS` a line is not read (the destructive reading
    // names it `unreadable` before this is asked).
    if commands.len() > shell::MAX_COMMANDS {
        return Err(Blocked::new(
            format!("{} commands", commands.len()),
            format!("more than {} simple commands", shell::MAX_COMMANDS),
        ));
    }
    // A `cd` may not carry to the next command: it can fail (`cd x; y` runs y where it was),
    // or run in a subshell or a pipeline. Only in a plain `a && b && c` chain does the next
    // command run only after the `cd` succeeded; otherwise every directory stays possible.
    let plain = simple_and_chain(script);
    let mut line = Line::new(ctx);
    let mut proof = Proof::new();
    for command in &commands {
        let rules = judge_command(command, &mut line, plain, allow)?;
        for rule in rules {
            if !proof.contains(&rule) {
                proof.push(rule);
            }
        }
    }
    Ok(proof)
}

/// `a && b && c` with no other operator: a failing `cd` stops the chain, so a `cd` carries.
fn simple_and_chain(script: &str) -> bool {
    let stripped = script.replace("&&", "");
    !stripped.contains(['(', '|', '&', ';', '\n'])
}

fn text(words: &[String]) -> String {
    words.join(" ")
}

fn judge_command(
    command: &SimpleCommand,
    line: &mut Line<'_>,
    plain: bool,
    allow: &[&UserRule],
) -> Result<Vec<String>, Blocked> {
    let tokens = command.tokens();
    let whole = text(&tokens);
    if !command.substitutions.is_empty() || tokens.iter().any(|t| t.contains('`')) {
        return Err(Blocked::new(
            whole,
            "a command substitution runs a command that is not shown",
        ));
    }
    // Only a `$` the shell expands: one in single quotes (`awk '{print $1}'`, `grep 'x$'`)
    // is the program's own text.
    if command.expands {
        let word = tokens.iter().find(|t| t.contains('$')).unwrap_or(&whole);
        return Err(Blocked::new(
            word.clone(),
            "a variable's value is not known",
        ));
    }
    // A user's allow rule covers the command as written (with its redirections when the
    // pattern spells them).
    let words_text = text(&command.words);
    let mut rules = Vec::new();
    if let Some(rule) = allow.iter().find(|r| r.matches_text(&whole)) {
        return Ok(vec![rule.label()]);
    }
    if let Some(rule) = allow.iter().find(|r| r.matches_text(&words_text)) {
        rules.push(rule.label());
        judge_redirects(command, line, &mut rules)?;
        return Ok(rules);
    }
    judge_redirects(command, line, &mut rules)?;
    let words = peel(&command.words)?;
    let Some(first) = words.first() else {
        // Only redirections (`< f`), judged above.
        return Ok(rules);
    };
    let name = program_name(first)?;
    let args = &words[1..];
    let interpreter_stdin = command.redirects.iter().any(|r| {
        matches!(
            r.op,
            RedirectOp::HereDoc | RedirectOp::HereString | RedirectOp::Read
        )
    }) || command.piped;
    if name == "cd" {
        let target = match args {
            [] => None,
            [flag, dir] if flag == "-P" || flag == "-L" => Some(dir.as_str()),
            [dir] if !dir.starts_with('-') || dir == "-" => Some(dir.as_str()),
            _ => return Err(Blocked::new(text(words), "cd takes one directory")),
        };
        line.cd(target, !plain);
        rules.push("read-only".to_string());
        return Ok(rules);
    }
    let rule =
        super::programs::judge(name, args, line, interpreter_stdin).map_err(|mut blocked| {
            if blocked.part.is_empty() {
                blocked.part = text(words);
            }
            blocked
        })?;
    rules.push(rule.to_string());
    Ok(rules)
}

fn judge_redirects(
    command: &SimpleCommand,
    line: &Line<'_>,
    rules: &mut Vec<String>,
) -> Result<(), Blocked> {
    for redirect in &command.redirects {
        let target = redirect.target.as_str();
        let shown = format!("{}{}", redirect.op.as_str(), target);
        if target.is_empty() {
            return Err(Blocked::new(shown, "a redirection without its target"));
        }
        let harmless_sink = DISCARDING_TARGETS.contains(&target);
        match redirect.op {
            RedirectOp::Read => line.read(target)?,
            RedirectOp::HereDoc | RedirectOp::HereString => {}
            RedirectOp::DupIn | RedirectOp::DupOut
                if target == "-" || target.bytes().all(|b| b.is_ascii_digit()) => {}
            RedirectOp::Append | RedirectOp::AppendAll => {
                if !harmless_sink {
                    line.write(target, false)?;
                    if !rules.iter().any(|r| r == "write-in-project") {
                        rules.push("write-in-project".to_string());
                    }
                }
            }
            _ if harmless_sink => {}
            _ => {
                return Err(Blocked::new(
                    shown,
                    "a > redirection empties its target file first",
                ));
            }
        }
    }
    Ok(())
}

fn harmless_assignment(word: &str) -> bool {
    match shell::assignment(word) {
        Some((name, value)) => {
            HARMLESS_VARIABLES.contains(&name.as_str())
                && (!matches!(name.as_str(), "PAGER" | "GIT_PAGER") || value == "cat")
        }
        None => false,
    }
}

/// Take the harmless runners and assignments off the front: `time`, `timeout DURATION`,
/// `nice [-n N]`, `env NAME=VALUE…`, `command`, leading assignments and the shell keywords
/// that can stand before a command. Anything that runs the rest in another way is refused.
pub fn peel(words: &[String]) -> Result<&[String], Blocked> {
    let mut rest = words;
    loop {
        let Some(first) = rest.first() else {
            return Ok(rest);
        };
        if shell::assignment(first).is_some() {
            harmless(first)?;
            rest = &rest[1..];
            continue;
        }
        rest = match first.as_str() {
            "time" => skip_if(&rest[1..], |w| w == "-p"),
            "nice" => peel_nice(&rest[1..], words)?,
            "timeout" => peel_timeout(&rest[1..], words)?,
            "env" => peel_env(&rest[1..], words)?,
            "command" if rest.get(1).is_some_and(|w| !w.starts_with('-')) => &rest[1..],
            "!" | "{" | "then" | "do" | "else" | "if" | "elif" | "while" | "until" => &rest[1..],
            "fi" | "done" | "}" | "esac" if rest.len() == 1 => return Ok(&rest[1..]),
            _ => return Ok(rest),
        };
    }
}

/// An assignment that cannot change what runs, or the refusal.
fn harmless(word: &str) -> Result<(), Blocked> {
    if harmless_assignment(word) {
        return Ok(());
    }
    Err(Blocked::new(
        word.to_string(),
        "sets a variable that can change what runs",
    ))
}

/// `rest` without its first word when `skip` holds for it.
fn skip_if(rest: &[String], skip: impl Fn(&String) -> bool) -> &[String] {
    match rest.first() {
        Some(first) if skip(first) => &rest[1..],
        _ => rest,
    }
}

/// After `nice`: `-n N` or `-N`, a number.
fn peel_nice<'a>(rest: &'a [String], words: &[String]) -> Result<&'a [String], Blocked> {
    if rest.first().is_some_and(|w| w == "-n") && rest.len() > 1 {
        if rest[1].parse::<i32>().is_err() {
            return Err(Blocked::new(text(words), "nice -n takes a number"));
        }
        return Ok(&rest[2..]);
    }
    Ok(skip_if(rest, |w| {
        w.strip_prefix('-')
            .is_some_and(|n| !n.is_empty() && n.parse::<i32>().is_ok())
    }))
}

/// After `timeout`: its options, then a duration.
fn peel_timeout<'a>(rest: &'a [String], words: &[String]) -> Result<&'a [String], Blocked> {
    let mut rest = rest;
    loop {
        match rest.first().map(String::as_str) {
            Some("--preserve-status" | "--foreground" | "-v" | "--verbose") => {
                rest = &rest[1..];
            }
            Some("-s" | "-k" | "--signal" | "--kill-after") if rest.len() > 1 => {
                rest = &rest[2..];
            }
            Some(w) if w.starts_with("--signal=") || w.starts_with("--kill-after=") => {
                rest = &rest[1..];
            }
            _ => break,
        }
    }
    match rest.first() {
        Some(duration) if is_duration(duration) => Ok(&rest[1..]),
        _ => Err(Blocked::new(text(words), "timeout without a duration")),
    }
}

/// After `env`: harmless assignments, no flags.
fn peel_env<'a>(rest: &'a [String], words: &[String]) -> Result<&'a [String], Blocked> {
    let mut rest = rest;
    while let Some(word) = rest.first() {
        if word.starts_with('-') {
            return Err(Blocked::new(
                text(words),
                format!("env {word} is not a listed flag"),
            ));
        }
        if shell::assignment(word).is_none() {
            break;
        }
        harmless(word)?;
        rest = &rest[1..];
    }
    Ok(rest)
}

fn is_duration(word: &str) -> bool {
    let number = word.trim_end_matches(['s', 'm', 'h', 'd']);
    !number.is_empty()
        && word.len() - number.len() <= 1
        && number.bytes().all(|b| b.is_ascii_digit() || b == b'.')
}
