//! The completion sentinel: what an agent writes to say the loop's work is done.
//!
//! Two shapes, two rules:
//! - a tag sentinel, `<promise>TEXT</promise>` (the default, as in seed 004 and its peers),
//!   counts **anywhere** in the message — models end a sentence with it ("All tests pass.
//!   <promise>AUTOCTL COMPLETE</promise>") as often as they put it on a line of its own;
//!   missing such a tag is the loop bug peers see filed most. The tag's text is compared with
//!   runs of whitespace collapsed, case-sensitively.
//! - any other sentinel must be a whole line (whitespace-normalized): a bare word such as
//!   `DONE` inside prose is not a claim of completion.
//!
//! The tag rule applies to the turn's last message; in the earlier messages of a turn only a
//! whole line counts ([`found_as_line`]): "I will print the tag once the tests pass" is a
//! plan, not a claim.
//!
//! Either way, text inside code never counts: fenced blocks (``` or ~~~, as CommonMark
//! closes them) and inline code spans (`` `…` ``). A sentinel shown as an example is not a
//! claim.

/// The default sentinel.
pub const DEFAULT: &str = "<promise>AUTOCTL COMPLETE</promise>";

const OPEN: &str = "<promise>";
const CLOSE: &str = "</promise>";

/// Collapse every run of whitespace to one space and trim the ends.
pub fn normalize(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// Why a sentinel cannot be matched as a whole line.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum SentinelError {
    #[error("--sentinel must not be blank")]
    Blank,
    #[error("--sentinel must be a single line (it is matched as a whole line)")]
    MultiLine,
    #[error("--sentinel must not contain control characters")]
    Control,
}

/// Check a sentinel given on the command line: one non-blank line.
pub fn validate(sentinel: &str) -> Result<(), SentinelError> {
    if normalize(sentinel).is_empty() {
        return Err(SentinelError::Blank);
    }
    if sentinel.contains(['\n', '\r']) {
        return Err(SentinelError::MultiLine);
    }
    if sentinel.chars().any(char::is_control) {
        return Err(SentinelError::Control);
    }
    Ok(())
}

/// The text of a tag sentinel (`<promise>TEXT</promise>`), normalized; `None` for any other.
fn tag_text(sentinel: &str) -> Option<String> {
    let inner = sentinel.trim().strip_prefix(OPEN)?.strip_suffix(CLOSE)?;
    let text = normalize(inner);
    (!text.is_empty() && !text.contains(OPEN) && !text.contains(CLOSE)).then_some(text)
}

/// Whether `text` claims completion with `sentinel` (see the module doc for the rules).
pub fn found_in(text: &str, sentinel: &str) -> bool {
    let wanted = normalize(sentinel);
    if wanted.is_empty() {
        return false;
    }
    let tag = tag_text(sentinel);
    let prose = outside_code(text);
    match tag {
        Some(tag) => {
            prose
                .iter()
                .any(|line| tags_in(line).any(|t| normalize(t) == tag))
                || tag_across_lines(&prose, &tag)
        }
        None => prose.iter().any(|line| normalize(line) == wanted),
    }
}

/// The contents of `<promise>…</promise>` tags within one line.
fn tags_in(line: &str) -> impl Iterator<Item = &str> {
    let mut rest = line;
    std::iter::from_fn(move || {
        let start = rest.find(OPEN)? + OPEN.len();
        let end = rest[start..].find(CLOSE)? + start;
        let inner = &rest[start..end];
        rest = &rest[end + CLOSE.len()..];
        Some(inner)
    })
}

/// Whether `text` holds `sentinel` as a whole line outside code, whatever its shape: the rule
/// for the earlier messages of a turn, where a tag mentioned in passing ("I will print
/// <promise>…</promise> once the tests pass") is a plan, not a claim.
pub fn found_as_line(text: &str, sentinel: &str) -> bool {
    let wanted = normalize(sentinel);
    !wanted.is_empty()
        && outside_code(text)
            .iter()
            .any(|line| normalize(line) == wanted)
}

/// A tag whose text wraps over lines of prose (`<promise>AUTOCTL\nCOMPLETE</promise>`).
fn tag_across_lines(prose: &[String], tag: &str) -> bool {
    let joined = prose.join("\n");
    tags_in(&joined.replace('\n', " ")).any(|t| normalize(t) == tag)
}

/// The lines of `text` with fenced code blocks removed and inline code spans blanked.
fn outside_code(text: &str) -> Vec<String> {
    let mut lines = Vec::new();
    let mut fence: Option<(char, usize)> = None;
    for line in text.lines() {
        let trimmed = line.trim_start();
        let indent = line.len() - trimmed.len();
        if let Some((ch, len)) = fence {
            // A closing fence: the same character, at least as many, nothing else.
            let run = trimmed.chars().take_while(|c| *c == ch).count();
            if indent <= 3 && run >= len && trimmed[run * ch.len_utf8()..].trim().is_empty() {
                fence = None;
            }
            continue;
        }
        if indent <= 3
            && let Some(ch) = trimmed.chars().next().filter(|c| *c == '`' || *c == '~')
        {
            let run = trimmed.chars().take_while(|c| *c == ch).count();
            if run >= 3 {
                fence = Some((ch, run));
                continue;
            }
        }
        lines.push(without_inline_code(line));
    }
    lines
}

/// `line` with every inline code span (a run of backticks up to the next run of the same
/// length) replaced by a space; an unmatched run is literal text, as in CommonMark.
fn without_inline_code(line: &str) -> String {
    let bytes = line.as_bytes();
    let mut out = String::with_capacity(line.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] != b'`' {
            let next = line[i..].find('`').map_or(line.len(), |at| i + at);
            out.push_str(&line[i..next]);
            i = next;
            continue;
        }
        let run = bytes[i..].iter().take_while(|b| **b == b'`').count();
        let mut j = i + run;
        let mut closed = None;
        while j < bytes.len() {
            if bytes[j] == b'`' {
                let other = bytes[j..].iter().take_while(|b| **b == b'`').count();
                if other == run {
                    closed = Some(j + other);
                    break;
                }
                j += other;
            } else {
                j += 1;
            }
        }
        match closed {
            Some(after) => {
                out.push(' ');
                i = after;
            }
            None => {
                out.push_str(&line[i..i + run]);
                i += run;
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn a_line_of_its_own_matches_with_any_spacing() {
        assert!(found_in(
            "All done.\n\n<promise>AUTOCTL COMPLETE</promise>\n",
            DEFAULT
        ));
        assert!(found_in(
            "  <promise>AUTOCTL   COMPLETE</promise>\t",
            DEFAULT
        ));
        assert!(found_in(
            "x\r\n<promise>AUTOCTL COMPLETE</promise>\r\n",
            DEFAULT
        ));
    }

    /// Item 6: models end a sentence with the tag; it counts anywhere outside code.
    #[test]
    fn a_promise_tag_counts_anywhere_in_prose() {
        for text in [
            "All 214 tests pass. <promise>AUTOCTL COMPLETE</promise>",
            "Done <promise>AUTOCTL COMPLETE</promise>.",
            "> <promise>AUTOCTL COMPLETE</promise>",
            "<promise> AUTOCTL\tCOMPLETE </promise> — the task is finished",
            "Finished: <promise>AUTOCTL\nCOMPLETE</promise>",
            "`code` then <promise>AUTOCTL COMPLETE</promise>",
        ] {
            assert!(found_in(text, DEFAULT), "{text:?}");
        }
    }

    #[test]
    fn code_and_other_texts_do_not_match() {
        for text in [
            "`<promise>AUTOCTL COMPLETE</promise>`",
            "print it with ``<promise>AUTOCTL COMPLETE</promise>`` when done",
            "```\n<promise>AUTOCTL COMPLETE</promise>\n```",
            "~~~~text\n<promise>AUTOCTL COMPLETE</promise>\n~~~\n~~~~",
            "<promise>autoctl complete</promise>",
            "<promise>AUTOCTL COMPLETE",
            "AUTOCTL COMPLETE",
            "<promise>AUTOCTL COMPLETE NOT YET</promise>",
        ] {
            assert!(!found_in(text, DEFAULT), "{text:?}");
        }
    }

    #[test]
    fn earlier_messages_need_the_line() {
        let plan = "I will print <promise>AUTOCTL COMPLETE</promise> once the tests pass.";
        assert!(found_in(plan, DEFAULT));
        assert!(!found_as_line(plan, DEFAULT));
        assert!(found_as_line(
            "ok\n<promise>AUTOCTL COMPLETE</promise>",
            DEFAULT
        ));
    }

    #[test]
    fn a_plain_sentinel_must_be_a_line_of_its_own() {
        assert!(found_in("work\nDONE\n", "DONE"));
        assert!(!found_in("I am DONE with the parser", "DONE"));
        assert!(!found_in("```\nDONE\n```", "DONE"));
    }

    #[test]
    fn text_after_a_closed_fence_counts() {
        assert!(found_in(
            "```sh\necho hi\n```\n<promise>AUTOCTL COMPLETE</promise>",
            DEFAULT
        ));
        // An unclosed fence runs to the end of the text.
        assert!(!found_in(
            "```\n<promise>AUTOCTL COMPLETE</promise>",
            DEFAULT
        ));
        // An unmatched backtick is literal.
        assert!(found_in(
            "a ` b <promise>AUTOCTL COMPLETE</promise>",
            DEFAULT
        ));
    }

    #[test]
    fn sentinels_are_checked() {
        assert!(validate(DEFAULT).is_ok());
        assert!(validate("  ").is_err());
        assert!(validate("a\nb").is_err());
    }

    proptest! {
        /// Surrounding prose never hides a promise tag, and code never shows one.
        #[test]
        fn prose_finds_and_code_hides(before in "[a-z .]{0,40}", after in "[a-z .]{0,40}") {
            let embedded = format!("{before}{DEFAULT}{after}");
            prop_assert!(found_in(&embedded, DEFAULT));
            let own_line = format!("{before}\n{DEFAULT}\n{after}");
            prop_assert!(found_in(&own_line, DEFAULT));
            let spanned = format!("{before}`{DEFAULT}`{after}");
            prop_assert!(!found_in(&spanned, DEFAULT));
            let fenced = format!("{before}\n```\n{DEFAULT}\n```\n{after}");
            prop_assert!(!found_in(&fenced, DEFAULT));
        }
    }
}
