//! The agent's messages on a Claude Code screen, for seed 002's reasoning-loop detector ("the
//! same agent message three times in a row").
//!
//! What "the agent's message" is on a Claude Code screen (2.1.x; see the real captures in
//! `tests/fixtures/panes/claude-code/`): the transcript above the input box is a sequence of
//! blocks, each led by `●` (older releases: `⏺`; the pane rules' fact `message-block`) in the
//! first column, continued by indented
//! lines, and ended by the next line that starts in the first column (a `❯` user prompt, the
//! `✻ Cooked for 3s` / spinner line, the `────` rule of the input box or of a permission
//! menu, the next block). A block is either
//! - a **tool call**: `● Bash(npm test)`, `● Read(src/lib.rs)`, `● Update(notes.txt)` — a
//!   name directly followed by `(`; its `⎿` result lines belong to it; or
//! - a **text message**: anything else the agent wrote (`● Listed the files.`), without the
//!   `⎿` lines Claude Code attaches below it (`⎿  Interrupted · …`). `● API Error: …` lines
//!   are the classifier's business (api-error, rate-limit), not messages.
//!
//! Claude Code's own lines are never the agent's words (issue 29): the summary it draws for a
//! group of tool calls (`● Running 1 shell command… (ctrl+o to expand)`, `Read 3 files`,
//! `Listed 1 directory`, `Searched for 2 patterns`, indented under the text before them or a
//! block of their own) stands for tool calls, and hook lines, tips and notices are dropped.
//!
//! A screen gives its text messages in order, whether the agent's last word is a text
//! message, and a fingerprint of all blocks. A new message is one that arrives with a new
//! block list ending in a text message, so an idle screen that shows the same last message
//! at every heartbeat is never counted twice. Text messages separated only by tool calls are
//! consecutive messages, and the same message repeats only while the calls between the copies
//! repeat too: a model that writes the same preamble before different calls (`I'll run the
//! next step.` → `Bash(rm a)`, `I'll run the next step.` → `Bash(rm b)`) is making progress,
//! and a group summary hides which calls it stands for, so it never continues a run.
//!
//! Messages are compared as [`normalize_message`] prints them (terminal escapes removed,
//! whitespace runs collapsed), so a re-rendered but identical message is the same message;
//! [`trailing_repeats`] counts how many of the last ones are the same.
//!
//! Other agents' screens have no message boundaries autoctl can trust; for them no messages
//! are read (a generic screen that repeats itself is an unchanged screen: the time-based
//! stall).

use xxhash_rust::xxh3::Xxh3;

use super::rules::{Fact, Facts, RuleSet};

/// What one screen shows of the agent's messages.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Messages {
    /// The text messages, in screen order, normalized (escapes removed, whitespace collapsed).
    pub texts: Vec<String>,
    /// The last block is a text message (the agent's latest word, not a tool call).
    pub last_is_text: bool,
    /// How many of the text messages at the end are the same message, with the same tool
    /// calls between the copies (see the module doc).
    pub repeats: u32,
    /// The screen shows where that run of copies began (a text before it breaks it), so
    /// `repeats` is the whole run; otherwise earlier copies may have scrolled away.
    pub run_known: bool,
    /// The hashes of the last [`TAIL`] blocks on the screen (text and tool calls), as 16 hex
    /// digits each joined by `.`: compared with [`same_transcript`], it tells a new block
    /// from a screen that only scrolled.
    pub fingerprint: String,
}

/// How many blocks from the end the fingerprint keeps.
pub const TAIL: usize = 8;

/// Is the newer fingerprint the older one, perhaps scrolled? Scrolling removes whole blocks at
/// the top (a block whose marker line scrolled off is not read at all) and leaves the end
/// alone, so the new block list is a suffix of the old one; a block added or changed at the
/// end makes it not one. (A loop so regular that one more round scrolls the screen onto an
/// identical picture cannot be told from no news; the copies visible on screen still count.)
pub fn same_transcript(old: &str, new: &str) -> bool {
    let split = |f: &str| -> Vec<String> {
        f.split('.')
            .filter(|h| !h.is_empty())
            .map(str::to_string)
            .collect()
    };
    let (old, new) = (split(old), split(new));
    new.len() <= old.len() && old[old.len() - new.len()..] == new[..]
}

impl Messages {
    /// The latest text message, when the agent's last block is one.
    pub fn latest(&self) -> Option<&str> {
        self.last_is_text
            .then(|| self.texts.last().map(String::as_str))
            .flatten()
    }

    /// How many of the visible text messages at the end are the same message (with the same
    /// tool calls between them).
    pub fn trailing_repeats(&self) -> u32 {
        self.repeats
    }
}

/// What a block of the transcript is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    /// The agent's words.
    Text,
    /// One tool call and its results (`Bash(npm test)`).
    Tool,
    /// Claude Code's summary of a group of tool calls (`Running 1 shell command…`): calls
    /// whose identity the screen does not show.
    Summary,
}

struct Block {
    text: String,
    kind: Kind,
}

impl Block {
    fn is_text(&self) -> bool {
        self.kind == Kind::Text && !is_api_error(&self.text)
    }

    /// What a tool block stands for when two runs of calls are compared: the call itself
    /// (its first line), not its results, which carry timings.
    fn call(&self) -> &str {
        self.text.split(" ⎿").next().unwrap_or(&self.text)
    }
}

/// Read the messages of a Claude Code screen (plain text, as `capture-pane -p -J` gives it).
pub fn claude(screen: &str) -> Messages {
    claude_with(screen, &RuleSet::embedded().facts)
}

/// What follows a block's marker when `line` starts a block: the pane rules' fact
/// `message-block` (Claude Code's `●`, `⏺` in 1.x/2.0.x) matched in the first column.
fn block_start<'l>(line: &'l str, marker: &Fact) -> Option<&'l str> {
    marker
        .find(line)
        .filter(|m| m.start() == 0 && !m.is_empty())
        .map(|m| &line[m.end()..])
}

/// [`claude`] with the wording of a rule set.
pub fn claude_with(screen: &str, facts: &Facts) -> Messages {
    let marker = facts.get("message-block");
    let mut blocks: Vec<Block> = Vec::new();
    let mut current: Option<(Vec<&str>, Kind)> = None;
    let mut results = false;
    let flush = |current: &mut Option<(Vec<&str>, Kind)>, blocks: &mut Vec<Block>| {
        if let Some((lines, kind)) = current.take() {
            blocks.push(Block {
                text: normalize_message(&lines.join("\n")),
                kind,
            });
        }
    };
    for line in screen.lines() {
        let starts_in_first_column = line.chars().next().is_some_and(|c| !c.is_whitespace());
        if let Some(rest) = block_start(line, marker) {
            flush(&mut current, &mut blocks);
            let rest = rest.trim_start();
            let kind = if is_tool_call(rest) {
                Kind::Tool
            } else if is_group_summary(rest) {
                Kind::Summary
            } else {
                Kind::Text
            };
            current = Some((vec![rest], kind));
            results = false;
            continue;
        }
        if starts_in_first_column {
            flush(&mut current, &mut blocks);
            continue;
        }
        let Some((lines, kind)) = current.as_mut() else {
            continue;
        };
        let trimmed = line.trim_start();
        if *kind == Kind::Text && !results && is_group_summary(trimmed) {
            // The calls after the text, summarised under it: the text ends here.
            flush(&mut current, &mut blocks);
            current = Some((vec![trimmed], Kind::Summary));
            continue;
        }
        if trimmed.starts_with('⎿') {
            results = true;
        }
        // A tool's results are part of the call; a text message ends where Claude Code's
        // own notes under it (`⎿  Interrupted`) begin.
        if *kind != Kind::Text || !results {
            lines.push(line);
        }
    }
    flush(&mut current, &mut blocks);
    blocks.retain(|b| !b.text.is_empty() && !is_claude_ui(&b.text));
    let fingerprint = blocks[blocks.len().saturating_sub(TAIL)..]
        .iter()
        .map(|block| {
            let mut hasher = Xxh3::new();
            hasher.update(&[u8::from(block.kind != Kind::Text)]);
            hasher.update(block.text.as_bytes());
            format!("{:016x}", hasher.digest())
        })
        .collect::<Vec<_>>()
        .join(".");
    let last_is_text = blocks.last().is_some_and(Block::is_text);
    let (repeats, run_known) = repeats(&blocks);
    Messages {
        texts: blocks
            .into_iter()
            .filter(Block::is_text)
            .map(|b| b.text)
            .collect(),
        last_is_text,
        repeats,
        run_known,
        fingerprint,
    }
}

/// How many text messages at the end are the same message with the same calls between the
/// copies: the run stops at a different text, at calls that differ from the calls after the
/// last copy, and at a group summary (its calls are unknown). Empty texts are dropped before.
/// Also: whether the screen shows what broke the run (else it may go on above the screen).
fn repeats(blocks: &[Block]) -> (u32, bool) {
    // Each text with the calls that follow it, up to the next text.
    let mut segments: Vec<(&str, Vec<&Block>)> = Vec::new();
    for block in blocks {
        if block.is_text() {
            segments.push((&block.text, Vec::new()));
        } else if let Some((_, calls)) = segments.last_mut()
            && !is_api_error(&block.text)
        {
            calls.push(block);
        }
    }
    let Some(((last, _), earlier)) = segments.split_last() else {
        return (0, false);
    };
    let calls_of = |calls: &[&Block]| -> Option<Vec<String>> {
        calls
            .iter()
            .map(|b| (b.kind == Kind::Tool).then(|| b.call().to_string()))
            .collect()
    };
    let mut count = 1;
    let mut between: Option<Vec<String>> = None;
    for (text, calls) in earlier.iter().rev() {
        let Some(calls) = calls_of(calls) else {
            return (count, true);
        };
        if text != last || between.as_ref().is_some_and(|b| *b != calls) {
            return (count, true);
        }
        between = Some(calls);
        count += 1;
    }
    (count, false)
}

/// `Bash(npm test)`, `Read(src/x.rs)`, `mcp__github__create_issue(…)`: a name and `(`.
fn is_tool_call(first_line: &str) -> bool {
    let name_len = first_line
        .find(|c: char| !(c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | ':' | '.')))
        .unwrap_or(first_line.len());
    name_len > 0
        && first_line.as_bytes()[0].is_ascii_alphabetic()
        && first_line[name_len..].starts_with('(')
}

/// Claude Code's own lines in the transcript, which are not the agent's: the hook status
/// lines it prints after a blocked Stop (`● Ran 1 stop hook (ctrl+o to expand)` with
/// `⎿  Stop hook reported a problem` under it, 2.1.332), older releases' `Stop says: …` and
/// `Stop hook feedback: …`, hook errors (`PostToolUse hook error`), tips and notices. Taken
/// for messages they repeat after every turn of a Stop-hook loop and look like a reasoning
/// loop although the model says something new each time.
fn is_claude_ui(text: &str) -> bool {
    let words: Vec<&str> = text.split(' ').take(4).collect();
    let ran_hooks = words.first() == Some(&"Ran")
        && words.get(1).is_some_and(|n| n.parse::<u32>().is_ok())
        && words[2..]
            .iter()
            .any(|w| w.starts_with("hook") || w.starts_with("hooks"));
    let hook_note = words.len() >= 3
        && words[..3].contains(&"hook")
        && words[..3].iter().any(|w| {
            matches!(
                w.trim_end_matches(':'),
                "feedback" | "error" | "says" | "reported" | "blocked" | "cancelled"
            )
        });
    ran_hooks
        || hook_note
        || text.starts_with("Stop says:")
        || text.starts_with("Tip:")
        || text.starts_with("Notice:")
}

/// Claude Code's summary of a group of tool calls (2.1.332), as it draws it while the calls
/// run and after: `Running 1 shell command…`, `Ran 2 shell commands`, `Read 3 files`,
/// `Listed 1 directory`, `Searched for 2 patterns, read 1 file`, `Called 2 tools`, each
/// perhaps followed by `(ctrl+o to expand)`. Its first item is a verb of Claude Code's list
/// with a count and a noun of its list (so "Ran 3 checks", the model's words, is not one),
/// or any of its verbs with the `(ctrl+o to expand)` hint.
fn is_group_summary(line: &str) -> bool {
    const VERBS: [&str; 24] = [
        "Running",
        "Ran",
        "Reading",
        "Read",
        "Listing",
        "Listed",
        "Searching for",
        "Searched for",
        "Calling",
        "Called",
        "Recalling",
        "Recalled",
        "Writing",
        "Wrote",
        "Editing",
        "Edited",
        "Making",
        "Made",
        "Publishing",
        "Published",
        "Thinking",
        "Thought",
        "Did not run",
        "No result recorded for",
    ];
    const NOUNS: [&str; 14] = [
        "shell command",
        "file",
        "director",
        "pattern",
        "tool",
        "agent",
        "memor",
        "call",
        "other call",
        "scratchpad edit",
        "time",
        "PreToolUse hook",
        "MCP",
        "hook",
    ];
    let line = line.trim();
    let hinted = line.contains("(ctrl+o to expand)");
    let Some(rest) = VERBS
        .iter()
        .find_map(|verb| line.strip_prefix(verb).filter(|r| r.starts_with(' ')))
    else {
        return false;
    };
    if hinted {
        return true;
    }
    let rest = rest.trim_start();
    let digits = rest.chars().take_while(char::is_ascii_digit).count();
    if digits == 0 {
        return false;
    }
    let noun = rest[digits..].trim_start();
    // The item ends at the first `,` or `…`; nothing but more items may follow.
    let item = noun.split([',', '…']).next().unwrap_or(noun).trim_end();
    NOUNS.iter().any(|n| {
        item.strip_prefix(n)
            .is_some_and(|tail| matches!(tail, "" | "s" | "y" | "ies" | "es"))
    })
}

fn is_api_error(text: &str) -> bool {
    text.starts_with("API Error")
}

/// A message as it is compared: ANSI/terminal escape sequences removed, every run of
/// whitespace one space, no leading or trailing whitespace.
pub fn normalize_message(message: &str) -> String {
    let mut out = String::with_capacity(message.len());
    let mut chars = message.chars().peekable();
    while let Some(ch) = chars.next() {
        if ch == '\u{1b}' {
            // CSI (ESC [ … final byte) and OSC (ESC ] … BEL or ESC \) sequences.
            match chars.peek() {
                Some('[') => {
                    chars.next();
                    for c in chars.by_ref() {
                        if ('@'..='~').contains(&c) {
                            break;
                        }
                    }
                }
                Some(']') => {
                    chars.next();
                    while let Some(c) = chars.next() {
                        if c == '\u{7}' {
                            break;
                        }
                        if c == '\u{1b}' && chars.peek() == Some(&'\\') {
                            chars.next();
                            break;
                        }
                    }
                }
                _ => {
                    chars.next();
                }
            }
            continue;
        }
        if ch.is_whitespace() {
            if !out.is_empty() && !out.ends_with(' ') {
                out.push(' ');
            }
        } else if !ch.is_control() {
            out.push(ch);
        }
    }
    out.truncate(out.trim_end().len());
    out
}

/// How many of the last messages are the same message (after normalization). Empty
/// messages carry no content: they neither count nor break a run.
pub fn trailing_repeats<S: AsRef<str>>(messages: &[S]) -> u32 {
    let mut normalized = messages
        .iter()
        .rev()
        .map(|m| normalize_message(m.as_ref()))
        .filter(|m| !m.is_empty());
    let Some(last) = normalized.next() else {
        return 0;
    };
    1 + normalized.take_while(|m| *m == last).count() as u32
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `message-block` starts a block exactly where the two marker characters it replaced did,
    /// on every line of every captured screen and on generated lines.
    #[test]
    fn the_block_fact_starts_blocks_where_the_markers_did() {
        let marker = RuleSet::embedded().facts.get("message-block");
        let mut lines = 0;
        let mut blocks = 0;
        for line in crate::fixtures::fixture_lines("panes") {
            let old = line.strip_prefix(['●', '⏺']);
            assert_eq!(block_start(&line, marker), old, "{line:?}");
            lines += 1;
            blocks += usize::from(old.is_some());
        }
        assert!(
            lines > 5_000 && blocks > 50,
            "{lines} lines, {blocks} blocks"
        );
    }

    proptest::proptest! {
        #[test]
        fn the_block_fact_agrees_with_the_markers_on_any_line(line in "[●⏺⎿❯ a(]{0,6}") {
            let marker = RuleSet::embedded().facts.get("message-block");
            proptest::prop_assert_eq!(block_start(&line, marker), line.strip_prefix(['●', '⏺']));
        }
    }

    /// The real screen after a Stop-hook loop (Claude Code 2.1.332): five different model
    /// messages, each but the last followed by `● Ran 1 stop hook`.
    const STOP_LOOP: &str =
        include_str!("../../tests/fixtures/hook/claude-code/stop-loop/screen-after-stop-loop.txt");

    #[test]
    fn claude_codes_hook_lines_are_not_messages() {
        let m = claude(STOP_LOOP);
        assert!(
            m.texts.iter().all(|t| !t.contains("stop hook")),
            "{:?}",
            m.texts
        );
        assert_eq!(m.texts.len(), 5, "{:?}", m.texts);
        assert_eq!(
            m.latest(),
            Some("Checked the benchmark: parsing is 3% faster than before.")
        );
        assert_eq!(m.trailing_repeats(), 1);
        for ui in [
            "Ran 1 stop hook (ctrl+o to expand)",
            "Ran 2 PreToolUse hooks",
            "Stop says: keep going",
            "Stop hook feedback: run the tests",
            "PostToolUse hook error: exit 1",
            "Tip: use /compact",
        ] {
            assert!(is_claude_ui(ui), "{ui}");
        }
        for agent in [
            "Ran the tests: 3 passed.",
            "The hook is installed.",
            "Ran 3 checks",
        ] {
            assert!(!is_claude_ui(agent), "{agent}");
        }
    }

    fn fixture(name: &str) -> String {
        let path = format!(
            "{}/tests/fixtures/panes/claude-code/{name}.txt",
            env!("CARGO_MANIFEST_DIR")
        );
        std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"))
    }

    #[test]
    fn the_last_text_block_of_real_captures() {
        for (name, latest) in [
            (
                "idle-after-reply",
                Some(
                    "Hello! This is a canned reply from the fake API server. Nothing was changed.",
                ),
            ),
            ("idle-after-auto-approved-ls", Some("Listed the files.")),
            ("idle-after-bash-child", Some("Waited 30 seconds.")),
            // Streaming: the message so far is the agent's latest word.
            (
                "working-streaming",
                Some(
                    "Streaming slowly, word by word, so the spinner, the elapsed timer and the token counter stay visible. Streaming",
                ),
            ),
            // A tool call waiting for approval is the last block: no new message.
            ("permission-bash-safe", None),
            // The API error is the classifier's, not a message.
            ("mixed-old-errors-then-working", None),
            ("idle-fresh-start", None),
        ] {
            let messages = claude(&fixture(name));
            assert_eq!(messages.latest(), latest, "{name}: {messages:?}");
        }
        let interrupted = claude(&fixture("idle-after-interrupt"));
        let text = interrupted.latest().unwrap();
        assert!(
            text.ends_with("word by word,") && !text.contains("Interrupted"),
            "{text}"
        );
        let tool_then_text = claude(&fixture("idle-after-bash-child"));
        assert_eq!(tool_then_text.texts, ["Waited 30 seconds."]);
    }

    #[test]
    fn the_fingerprint_moves_with_the_blocks_not_with_the_chrome() {
        let idle = fixture("idle-after-reply");
        // The footer and the spinner line are not blocks.
        let ticked = idle.replace("Cooked for 0s", "Cooked for 9s");
        assert_eq!(claude(&idle).fingerprint, claude(&ticked).fingerprint);
        let early = claude(&fixture("working-streaming"));
        let later = claude(&fixture("working-streaming-later"));
        assert_ne!(early.fingerprint, later.fingerprint);
        assert_ne!(early.latest(), later.latest());
    }

    #[test]
    fn repeated_messages_between_tool_calls_are_consecutive() {
        let screen = "\
❯ fix the test

● Let me check the tests.

● Bash(cargo test)
  ⎿  test result: FAILED. 1 passed; 1 failed

● Let me check the tests.

● Bash(cargo test)
  ⎿  test result: FAILED. 1 passed; 1 failed

● Let me check
  the tests.

✻ Brewed for 3m 3s

────────────────────────
❯ 
────────────────────────
  ? for shortcuts
";
        let messages = claude(screen);
        assert_eq!(messages.latest(), Some("Let me check the tests."));
        assert_eq!(messages.trailing_repeats(), 3);
        assert_eq!(messages.texts.len(), 3);
        // Old marker glyph, same reading.
        let old = claude(&screen.replace('●', "⏺"));
        assert_eq!(old.trailing_repeats(), 3);
        assert_eq!(old.fingerprint, messages.fingerprint);
    }

    /// The same-preamble model of issue 29 (a real 2.1.332 screen, `tests/live/`): the same
    /// words before each of several different calls are no repeated message.
    #[test]
    fn the_same_preamble_before_different_calls_is_no_repeat() {
        let screen = "\
❯ Clean up

● I'll run the next step.

● Bash(touch f0)
  ⎿  Done
  ⎿  Allowed by PermissionRequest hook

● I'll run the next step.

● Bash(rm -rf dir0)
  ⎿  Done

● I'll run the next step.
";
        let messages = claude(screen);
        assert_eq!(messages.latest(), Some("I'll run the next step."));
        assert_eq!(messages.texts.len(), 3);
        assert_eq!(messages.trailing_repeats(), 2, "the last two copies");
        assert!(
            messages.run_known,
            "the first copy, before other calls, breaks the run"
        );
        // The same call between every copy is a repeat (results and timings aside).
        let same = claude(&screen.replace("rm -rf dir0", "touch f0"));
        assert_eq!(same.trailing_repeats(), 3);
        assert!(
            !same.run_known,
            "the first copy is the first text on screen"
        );
    }

    #[test]
    fn claude_codes_group_summaries_are_calls_not_words() {
        // The line issue 29's run took for the agent's words, as its own block.
        let screen = "\
❯ Clean up

● Running 1 shell command… (ctrl+o to expand)

● Running 1 shell command…

● Running 1 shell command… (ctrl+o to expand)
";
        let messages = claude(screen);
        assert!(messages.texts.is_empty(), "{:?}", messages.texts);
        assert_eq!(messages.latest(), None);
        assert_eq!(messages.trailing_repeats(), 0);
        // Under the text before it (a real 2.1.332 screen): the text ends at the summary,
        // and the agent's last word is the call.
        let under = "\
● I'll run the next step.
  Listed 1 directory (ctrl+o to expand)

● I'll run the next step.
  Read 2 files (ctrl+o to expand)

● I'll run the next step.
  Ran 1 shell command
";
        let messages = claude(under);
        assert_eq!(messages.texts, ["I'll run the next step."; 3]);
        assert_eq!(messages.latest(), None);
        // A summary hides its calls: it never continues a run of copies.
        assert_eq!(messages.trailing_repeats(), 1);
        assert_eq!(
            claude(&format!("{under}\n● I'll run the next step.\n")).trailing_repeats(),
            1
        );
        for ui in [
            "Running 1 shell command…",
            "Running 1 shell command… (ctrl+o to expand)",
            "Ran 2 shell commands",
            "Read 1 file (ctrl+o to expand)",
            "Reading 3 files…",
            "Listed 2 directories",
            "Searched for 2 patterns, read 1 file (ctrl+o to expand)",
            "Called 3 tools",
            "Thought for 4s (ctrl+o to expand)",
            "Did not run 1 call",
        ] {
            assert!(is_group_summary(ui), "{ui}");
        }
        for words in [
            "Ran 3 checks",
            "Running the tests now.",
            "Read the parser and found the bug.",
            "Read 3 files and fixed the bug.",
            "Listed the files.",
            "I ran 1 shell command",
        ] {
            assert!(!is_group_summary(words), "{words}");
        }
    }

    fn screen(blocks: &[String]) -> String {
        blocks.iter().map(|b| format!("● {b}\n\n")).collect()
    }

    proptest::proptest! {
        /// Scrolling (blocks gone at the top) is never news; a block added at the end of a
        /// screen with room for it always is.
        #[test]
        fn scrolling_is_not_news_and_a_new_block_is(
            blocks in proptest::collection::vec("(Bash\\(x\\)|Read\\(y\\)|[A-Z][a-z]{0,6}\\.)", 1..14),
            scrolled in 0usize..14,
            added in "[A-Z][a-z]{0,6}\\.",
        ) {
            let old = claude(&screen(&blocks)).fingerprint;
            let scrolled = claude(&screen(&blocks[scrolled.min(blocks.len())..])).fingerprint;
            proptest::prop_assert!(same_transcript(&old, &scrolled));
            let mut more = blocks.clone();
            more.push(added);
            let new = claude(&screen(&more)).fingerprint;
            if blocks.len() < TAIL {
                proptest::prop_assert!(!same_transcript(&old, &new));
            }
            proptest::prop_assert!(new.split('.').count() <= TAIL);
        }
    }

    #[test]
    fn tool_calls_are_told_from_text() {
        for tool in [
            "Bash(npm test)",
            "Read(src/lib.rs)",
            "Update(notes.txt)",
            "mcp__github__create_issue(title: x)",
        ] {
            assert!(is_tool_call(tool), "{tool}");
        }
        for text in [
            "Done.",
            "Listed the files.",
            "(parenthetical) remark",
            "I ran Bash(ls) for you",
            "",
        ] {
            assert!(!is_tool_call(text), "{text}");
        }
    }
}
