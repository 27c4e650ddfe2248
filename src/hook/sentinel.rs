//! The completion sentinel: the line an agent writes to say the loop's work is done.
//!
//! A match is a whole line of the assistant's text that equals the sentinel once runs of
//! whitespace are collapsed and the ends trimmed. A substring match (seed 004's `grep`) fires
//! on "I will print <promise>…</promise> when the tests pass"; a line match does not. Lines
//! inside fenced code blocks (``` or ~~~) never count: a sentinel shown as an example is not a
//! claim of completion.

/// The default sentinel.
pub const DEFAULT: &str = "<promise>AUTOCTL COMPLETE</promise>";

/// Collapse every run of whitespace to one space and trim the ends.
pub fn normalize(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// Check a sentinel given on the command line: one non-blank line.
pub fn validate(sentinel: &str) -> Result<(), String> {
    if normalize(sentinel).is_empty() {
        return Err("--sentinel must not be blank".to_string());
    }
    if sentinel.contains(['\n', '\r']) {
        return Err("--sentinel must be a single line (it is matched as a whole line)".to_string());
    }
    if sentinel.chars().any(char::is_control) {
        return Err("--sentinel must not contain control characters".to_string());
    }
    Ok(())
}

/// Whether `text` contains `sentinel` as a whole line outside fenced code.
pub fn found_in(text: &str, sentinel: &str) -> bool {
    let wanted = normalize(sentinel);
    if wanted.is_empty() {
        return false;
    }
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
        if normalize(line) == wanted {
            return true;
        }
    }
    false
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

    #[test]
    fn mentions_quotes_and_code_do_not_match() {
        for text in [
            "I will print <promise>AUTOCTL COMPLETE</promise> when done",
            "`<promise>AUTOCTL COMPLETE</promise>`",
            "> <promise>AUTOCTL COMPLETE</promise>",
            "```\n<promise>AUTOCTL COMPLETE</promise>\n```",
            "~~~~text\n<promise>AUTOCTL COMPLETE</promise>\n~~~\n~~~~",
            "<promise>AUTOCTL COMPLETE</promise>.",
            "<promise>autoctl complete</promise>",
        ] {
            assert!(!found_in(text, DEFAULT), "{text:?}");
        }
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
    }

    #[test]
    fn sentinels_are_checked() {
        assert!(validate(DEFAULT).is_ok());
        assert!(validate("  ").is_err());
        assert!(validate("a\nb").is_err());
    }

    proptest! {
        /// Surrounding prose on other lines never hides a sentinel line, and a sentinel
        /// embedded in a longer line never matches.
        #[test]
        fn lines_decide(before in "[a-z .]{0,40}", after in "[a-z .]{0,40}") {
            let own_line = format!("{before}\n{DEFAULT}\n{after}");
            prop_assert!(found_in(&own_line, DEFAULT));
            let embedded = format!("{before}x {DEFAULT} x{after}");
            prop_assert!(!found_in(&embedded, DEFAULT));
        }
    }
}
