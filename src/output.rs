//! The only place that writes to the process's streams.
//!
//! stdout carries the answer and nothing else; every diagnostic goes through [`warn`] or
//! [`error_line`] to stderr as a single line, so `$(autoctl …)` captures exactly the answer and
//! log collectors see one event per line. (The one other writer is [`progress`], this module's child: a
//! progress line on a terminal's stderr, which every diagnostic here erases first.)

pub mod progress;

use std::io::{self, Write};

/// Print one line of the answer. A broken pipe surfaces as an error the boundary treats as a
/// clean exit. Whatever a field let through, no control character but the layout's tabs and
/// line breaks reaches the terminal ([`guarded`]): a hostile session id, log line or path
/// cannot drive it.
pub fn line(text: impl std::fmt::Display) -> io::Result<()> {
    let text = text.to_string();
    let mut out = io::stdout().lock();
    writeln!(out, "{}", guarded(&text))
}

/// Print text of several lines (a report laid out with tabs and line breaks), guarded as
/// [`line()`] is.
pub fn text(text: &str) -> io::Result<()> {
    let mut out = io::stdout().lock();
    out.write_all(guarded(text).as_bytes())?;
    out.flush()
}

/// Print a value as one line of compact JSON (JSON Lines friendly).
pub fn json_line<T: serde::Serialize>(value: &T) -> io::Result<()> {
    let mut out = io::stdout().lock();
    serde_json::to_writer(&mut out, value)?;
    out.write_all(b"\n")
}

/// Print a value as indented JSON, for documents meant to be read or piped to `jq`.
pub fn json_pretty<T: serde::Serialize>(value: &T) -> io::Result<()> {
    let mut out = io::stdout().lock();
    serde_json::to_writer_pretty(&mut out, value)?;
    out.write_all(b"\n")
}

/// Write raw bytes of an answer (documents printed as they are stored).
pub fn raw(bytes: &[u8]) -> io::Result<()> {
    let mut out = io::stdout().lock();
    out.write_all(bytes)?;
    out.flush()
}

/// A warning: the command goes on. One line on stderr, prefixed so it is greppable.
pub fn warn(message: &str) {
    diagnostic(format_args!("autoctl: warning: {}", one_line(message)));
}

/// A diagnostic that is neither a warning nor an error (a lint summary). One line on stderr.
pub fn note(message: &str) {
    diagnostic(format_args!("autoctl: {}", one_line(message)));
}

/// The error that ends the command. One line on stderr.
pub fn error_line(message: &str) {
    diagnostic(format_args!("autoctl: {}", one_line(message)));
}

/// One line on stderr, erasing a progress line first so the two never share a line.
fn diagnostic(line: std::fmt::Arguments) {
    let mut err = io::stderr().lock();
    progress::erase_for_diagnostic(&mut err);
    let _ = writeln!(err, "{line}");
}

/// A value (a path, a name) as one printable field: control characters, tabs and line breaks
/// included, are escaped (`\n`, `\t`, `\u{1b}`), so a hostile name can neither split a line
/// or a tab-separated column nor drive the user's terminal.
pub fn printable(value: &str) -> String {
    escape_controls(value, |_| false).into_owned()
}

/// Text output as the terminal gets it: every control character escaped as [`printable`]
/// escapes it, except the tabs and line breaks that lay the text out. Every text answer goes
/// through it ([`line()`], [`text()`]); a field that must not split a line or a column is
/// [`printable`] besides.
pub fn guarded(text: &str) -> std::borrow::Cow<'_, str> {
    escape_controls(text, |ch| ch == '\t' || ch == '\n')
}

/// The one escaping of control characters (`\u{1b}`, `\n`, `\t`), but those `keep` keeps.
fn escape_controls(value: &str, keep: impl Fn(char) -> bool) -> std::borrow::Cow<'_, str> {
    if !value.chars().any(|ch| ch.is_control() && !keep(ch)) {
        return std::borrow::Cow::Borrowed(value);
    }
    let mut shown = String::with_capacity(value.len() + 8);
    for ch in value.chars() {
        if ch.is_control() && !keep(ch) {
            shown.extend(ch.escape_default());
        } else {
            shown.push(ch);
        }
    }
    std::borrow::Cow::Owned(shown)
}

/// [`one_line`] of an owned message, which is returned as it is when it is one line already
/// (a path, mostly): no copy.
pub fn into_one_line(message: String) -> String {
    if is_one_line(&message) {
        message
    } else {
        one_line(&message)
    }
}

/// Whether [`one_line`] would return `message` unchanged.
fn is_one_line(message: &str) -> bool {
    !message.is_empty()
        && !message.starts_with(char::is_whitespace)
        && !message.ends_with(char::is_whitespace)
        && !message.contains(|c: char| c.is_control() || (c.is_whitespace() && c != ' '))
        && !message.contains("  ")
}

/// Collapse any line breaks so a message is always exactly one line, and drop control
/// characters so a hostile file name or document cannot drive the user's terminal.
pub fn one_line(message: &str) -> String {
    let mut out = String::with_capacity(message.len());
    for ch in message.chars() {
        if ch.is_whitespace() {
            // Any run of whitespace (line breaks and the indentation after them) is one space.
            if !out.is_empty() && !out.ends_with(' ') {
                out.push(' ');
            }
        } else if ch.is_control() {
            out.extend(ch.escape_default());
        } else {
            out.push(ch);
        }
    }
    out.truncate(out.trim_end().len());
    out
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use super::{into_one_line, is_one_line, one_line};

    #[test]
    fn text_output_keeps_its_layout_and_escapes_every_other_control() {
        assert_eq!(super::guarded("a\tb\nc"), "a\tb\nc");
        assert_eq!(
            super::guarded("id\u{1b}[2J\r\u{7}\u{9b}x\n"),
            "id\\u{1b}[2J\\r\\u{7}\\u{9b}x\n"
        );
        assert_eq!(super::printable("a\tb\u{1b}"), "a\\tb\\u{1b}");
    }

    #[test]
    fn messages_are_one_line_without_raw_controls() {
        assert_eq!(one_line("a\nb\r\n   c  d"), "a b c d");
        assert_eq!(one_line("bell\u{7}"), "bell\\u{7}");
        assert_eq!(one_line("esc\u{1b}[31m"), "esc\\u{1b}[31m");
    }

    proptest! {
        #[test]
        fn what_is_one_line_already_is_left_as_it_is(message in "[ a-z\t\n\u{7}\u{85}\u{a0}é/.]{0,12}") {
            prop_assert_eq!(into_one_line(message.clone()), one_line(&message));
            if is_one_line(&message) {
                prop_assert_eq!(one_line(&message), message);
            }
        }
    }

    #[test]
    fn a_plain_path_is_one_line_already() {
        assert!(is_one_line("./00001.json"));
        assert!(is_one_line("a b/c d.json"));
        for message in [
            "", " a", "a ", "a  b", "a\tb", "a\nb", "a\u{1b}b", "a\u{a0}b",
        ] {
            assert!(!is_one_line(message), "{message:?}");
        }
    }
}
