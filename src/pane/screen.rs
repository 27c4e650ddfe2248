//! A captured screen and the shape a terminal program draws on it: box borders and the menu
//! waiting for a choice.
//!
//! Agents draw their prompts in boxes (`│ … │`, nested in Gemini's approval box) and as menus
//! with a cursor on one option. Both are layout, not what the program says: a line is read
//! with its borders stripped (`content`), and a menu's lines are the dialog's own interface,
//! never newer output that makes a message above them stale. Reading that shape in one place
//! keeps the rules ([`super::classify`]) and the safety policy
//! ([`super::classify::safety`]) agreeing on what a line says and where the live menu is.

use std::collections::VecDeque;
use std::io::BufRead;

use anyhow::Result;

use super::normalize::{clean_line, for_each_line};
use super::rules::Pattern;

/// How many lines of a screen are kept: rules look at the bottom, so a 100 MB capture costs
/// this many lines of memory.
pub const KEEP_LINES: usize = 1000;

/// How many bytes of a screen are kept, from the bottom (issue 23: every reader bounded in
/// size): 128 KiB holds a whole 300-column, 140-row pane drawn in box characters (3 bytes
/// each), more than any terminal shows at once; a larger capture is scrollback above it,
/// which no rule reads. The bottom line alone past it keeps its first 128 KiB (rules read a
/// line from its start). Reading a screen, and every rule and the policy on it, costs at
/// most this much text whatever the capture's size.
pub const KEEP_BYTES: usize = 128 * 1024;

/// A captured screen: clean lines (no escapes, no trailing blank lines) and, when known, the
/// pane's foreground command.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Screen {
    pub lines: Vec<String>,
    pub foreground: Option<String>,
    /// tmux says the pane's program has exited (`#{pane_dead}`, with `remain-on-exit`): the
    /// pane takes no keys.
    pub dead: bool,
}

impl Screen {
    pub fn from_text(text: &str, foreground: Option<String>) -> Screen {
        // Only the bottom [`KEEP_BYTES`] of the text are cleaned at all (cleaning only
        // shortens a line); the first line of the cut, likely partial, is dropped.
        let text = text.trim_end_matches(['\n', '\r', ' ', '\t']);
        let text = match text.len().checked_sub(KEEP_BYTES) {
            Some(from) if from > 0 => {
                let from = ceil_char_boundary(text, from);
                let cut = &text[from..];
                match cut.find('\n') {
                    Some(nl) if text.as_bytes()[from - 1] != b'\n' => &cut[nl + 1..],
                    _ => cut,
                }
            }
            _ => text,
        };
        let mut lines: Vec<String> = text.split('\n').map(|l| clean_line(l.as_bytes())).collect();
        keep_bottom(&mut lines);
        trim_trailing_blank(&mut lines);
        Screen {
            lines,
            foreground,
            dead: false,
        }
    }

    /// The same screen, marked dead or alive as tmux reports it.
    pub fn with_dead(mut self, dead: bool) -> Screen {
        self.dead = dead;
        self
    }

    /// Read a screen from a stream, keeping only the last [`KEEP_LINES`] lines.
    pub fn from_reader(reader: impl BufRead, foreground: Option<String>) -> Result<Screen> {
        let mut kept: VecDeque<String> = VecDeque::with_capacity(KEEP_LINES);
        // The bytes of the kept lines, each with its newline: lines past the bounds above
        // are dropped as they stream by (a 64 KiB piece at most is held beyond them).
        let mut bytes = 0;
        for_each_line(reader, |raw| {
            let line = clean_line(raw);
            bytes += line.len() + 1;
            kept.push_back(line);
            while kept.len() > KEEP_LINES || (bytes > KEEP_BYTES && kept.len() > 1) {
                bytes -= kept.pop_front().map_or(0, |l| l.len() + 1);
            }
        })?;
        let mut lines: Vec<String> = kept.into();
        trim_trailing_blank(&mut lines);
        keep_bottom(&mut lines);
        Ok(Screen {
            lines,
            foreground,
            dead: false,
        })
    }
}

/// Keep the bottom [`KEEP_LINES`] lines and [`KEEP_BYTES`] bytes (each line counted with
/// its newline); a bottom line alone longer keeps its first [`KEEP_BYTES`].
fn keep_bottom(lines: &mut Vec<String>) {
    let mut total = 0;
    let mut first = lines.len();
    while first > 0 && lines.len() - first < KEEP_LINES {
        let len = lines[first - 1].len() + 1;
        if total + len > KEEP_BYTES {
            break;
        }
        total += len;
        first -= 1;
    }
    if first == lines.len() {
        // The bottom line alone is longer than the bound.
        if let Some(last) = lines.pop() {
            let end = floor_char_boundary(&last, KEEP_BYTES - 1);
            lines.clear();
            lines.push(last[..end].to_string());
        }
        return;
    }
    lines.drain(..first);
}

/// The largest character boundary of `text` at or below `at`.
fn floor_char_boundary(text: &str, at: usize) -> usize {
    let mut at = at.min(text.len());
    while !text.is_char_boundary(at) {
        at -= 1;
    }
    at
}

/// The smallest character boundary of `text` at or above `at`.
fn ceil_char_boundary(text: &str, at: usize) -> usize {
    let mut at = at.min(text.len());
    while !text.is_char_boundary(at) {
        at += 1;
    }
    at
}

fn trim_trailing_blank(lines: &mut Vec<String>) {
    while lines.last().is_some_and(|l| l.trim().is_empty()) {
        lines.pop();
    }
}

const BORDERS: &[char] = &['│', '┃', '║', '▌', '▐', '┆', '┇', '┊', '┋', '╎', '╏'];

/// A line's text with the box borders around it stripped; a line drawn only of box lines or
/// blanks has none (`""`).
pub(super) fn content(line: &str) -> &str {
    // Boxes nest (Gemini draws the command in a box inside the approval box): strip border
    // after border from both ends.
    let mut text = line.trim();
    loop {
        let inner = text.trim_matches(BORDERS).trim();
        if inner.len() == text.len() {
            break;
        }
        text = inner;
    }
    let decoration = text
        .chars()
        .all(|c| c.is_whitespace() || ('\u{2500}'..='\u{257f}').contains(&c));
    if decoration { "" } else { text }
}

/// Column where a line's text starts, box borders on the left skipped.
fn indent(line: &str) -> usize {
    line.chars()
        .take_while(|c| c.is_whitespace() || BORDERS.contains(c))
        .count()
}

/// A menu at the bottom of the screen: options, one of them highlighted by a cursor glyph
/// (`❯`, `›`, `>`, `●`), numbered (`1. Yes`) or not (`No, exit`), usually with a hint line
/// below (`Enter to confirm · Esc to cancel`). Its lines are the dialog's own interface: they
/// are never "newer output" that makes a message above them stale.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Menu {
    /// Screen line of the highlighted option.
    pub cursor: usize,
    /// The highlighted option's label (number, cursor and check marks removed).
    pub default: String,
    /// Every option's label, top to bottom.
    pub options: Vec<String>,
    /// Screen lines from the first option to the hint line (or the last option).
    pub span: std::ops::RangeInclusive<usize>,
}

const CURSORS: &[char] = &['❯', '›', '>', '●', '▸', '→'];

/// Is `text` a line drawn with a cursor in front (`❯ No, exit`, `› 1. Yes`)?
fn cursor_line(text: &str) -> bool {
    let mut chars = text.chars();
    matches!(chars.next(), Some(c) if CURSORS.contains(&c))
        && matches!(chars.next(), Some(c) if c == ' ' || c.is_ascii_digit())
        && !text[text.char_indices().nth(1).map_or(text.len(), |(i, _)| i)..]
            .trim()
            .is_empty()
}

/// An option's label: the cursor, a number (`1.`), check marks and a trailing shortcut such
/// as `(y)` stay out.
fn option_label(text: &str) -> (bool, String) {
    let text = text.trim_start_matches(CURSORS).trim_start();
    let digits = text.bytes().take_while(u8::is_ascii_digit).count();
    let (numbered, rest) = match text[digits..].strip_prefix(['.', ')']) {
        Some(rest) if (1..=2).contains(&digits) => (true, rest),
        _ => (false, text),
    };
    let rest = rest
        .trim()
        .trim_start_matches(['✔', '✓', '☐', '☑', '◯', '◉'])
        .trim();
    (numbered, rest.to_string())
}

/// The menu waiting for a choice at the bottom of the screen, if any: `texts` are the
/// non-blank lines with borders stripped (screen line, text), `hints` the rules' patterns for
/// a hint line (`Enter to confirm · Esc to cancel`).
pub(super) fn find_menu(
    lines: &[String],
    texts: &[(usize, &str)],
    hints: &[Pattern],
) -> Option<Menu> {
    // Only the bottom: a menu waits where the program reads input.
    let tail = &texts[texts.len().saturating_sub(16)..];
    let at = tail.iter().rposition(|&(_, text)| cursor_line(text))?;
    let (cursor, cursor_text) = tail[at];
    let (numbered, default) = option_label(cursor_text);
    let is_hint = |text: &str| hints.iter().any(|p| p.is_match(text));
    let hint = tail[at + 1..]
        .iter()
        .take(8)
        .find(|&&(_, text)| is_hint(text))
        .map(|&(index, _)| index);
    let mut options: Vec<(usize, String)> = vec![(cursor, default.clone())];
    if numbered {
        // Numbered: the other numbered lines around the cursor, up to the hint.
        let end = hint.unwrap_or(usize::MAX);
        for &(index, text) in tail {
            if index == cursor || index > end {
                continue;
            }
            let stripped = text.trim_start_matches(CURSORS).trim_start();
            if menu_option(stripped).is_some() {
                options.push((index, option_label(text).1));
            }
        }
        if options.len() < 2 {
            return None;
        }
    } else {
        // Not numbered: siblings on the rows right above and below, their text in the
        // column of the cursor line's text, and a hint line below (a wrapped prompt echo
        // has neither).
        hint?;
        let column = indent(&lines[cursor]) + 2;
        let sibling = |index: usize| {
            let line = &lines[index];
            let text = content(line);
            (!text.is_empty() && indent(line) == column && !is_hint(text))
                .then(|| option_label(text).1)
        };
        let mut index = cursor;
        while index > 0 {
            index -= 1;
            match sibling(index) {
                Some(label) => options.push((index, label)),
                None => break,
            }
        }
        let mut index = cursor + 1;
        while index < lines.len() {
            match sibling(index) {
                Some(label) => options.push((index, label)),
                None => break,
            }
            index += 1;
        }
        if options.len() < 2 {
            return None;
        }
    }
    options.sort_by_key(|&(index, _)| index);
    let first = options[0].0;
    let last = hint.unwrap_or(options[options.len() - 1].0);
    Some(Menu {
        cursor,
        default,
        options: options.into_iter().map(|(_, label)| label).collect(),
        span: first..=last,
    })
}

/// A numbered menu option: `❯ 1. Yes`, `2) No`, Gemini's `● 1. Allow once`.
pub(super) fn menu_option(text: &str) -> Option<(&str, &str)> {
    let text = text.trim_start_matches(['❯', '>', '›', '●', ' ']);
    let digits = text.bytes().take_while(u8::is_ascii_digit).count();
    if digits == 0 || digits > 2 {
        return None;
    }
    let rest = text[digits..].strip_prefix(['.', ')'])?;
    if !rest.starts_with(' ') {
        return None;
    }
    Some((&text[..digits], rest.trim()))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn kept_bytes(screen: &Screen) -> usize {
        screen.lines.iter().map(|l| l.len() + 1).sum()
    }

    /// Issue 23: a screen is bounded in size whatever the capture, and the bottom, where every
    /// rule looks, is what is kept (on a14af3d a 2 MB text was kept whole).
    #[test]
    fn a_screen_keeps_its_bottom_within_the_bounds() {
        let bottom =
            "╭────╮\n│ Bash command │\n│   find . -exec { │\n Do you want to proceed?\n ❯ 1. Yes";
        for filler in [
            "scrollback line é❯\n",
            "\u{1b}[31mred\u{1b}[0m\n",
            "x\n",
            "\n",
        ] {
            let text = format!(
                "{}{bottom}\n\n  \n",
                filler.repeat(2 * 1024 * 1024 / filler.len())
            );
            let from_text = Screen::from_text(&text, None);
            let from_reader = Screen::from_reader(text.as_bytes(), None).unwrap();
            for screen in [&from_text, &from_reader] {
                assert!(kept_bytes(screen) <= KEEP_BYTES, "{filler:?}");
                assert!(screen.lines.len() <= KEEP_LINES, "{filler:?}");
                assert_eq!(screen.lines.last().unwrap(), " ❯ 1. Yes", "{filler:?}");
                assert!(screen.lines.iter().any(|l| l == " Do you want to proceed?"));
            }
            // Both readings keep whole lines only (the first cut line is dropped).
            assert!(
                filler == "\n"
                    || from_text.lines[0] == clean_line(filler.trim_end().as_bytes())
                    || from_text.lines[0].is_empty(),
                "{:?}",
                from_text.lines[0]
            );
        }
        // One line longer than the bound keeps its start (a stream cuts it in pieces of
        // `LINE_CAP` first, and keeps the last pieces).
        let long = format!("{}{}", "é".repeat(KEEP_BYTES), "tail");
        let screen = Screen::from_text(&long, None);
        assert_eq!(screen.lines.len(), 1);
        assert!(kept_bytes(&screen) <= KEEP_BYTES);
        assert!(screen.lines[0].starts_with("éé"));
        let screen = Screen::from_reader(long.as_bytes(), None).unwrap();
        assert!(kept_bytes(&screen) <= KEEP_BYTES);
        assert!(screen.lines.last().unwrap().ends_with("tail"));
        // A small screen is kept whole.
        let small = "a\nb\n\nc\n\n";
        assert_eq!(Screen::from_text(small, None).lines, ["a", "b", "", "c"]);
        assert_eq!(
            Screen::from_reader(small.as_bytes(), None).unwrap().lines,
            ["a", "b", "", "c"]
        );
    }
}
