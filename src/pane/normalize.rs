//! From captured bytes to the text rules read and the hash stall detection compares.
//!
//! Three layers, each a pure function of its input:
//! 1. [`clean_line`]: drop terminal escape sequences and control characters, trim the end, so
//!    a capture with `-e` and one without read the same and nothing hostile reaches a terminal.
//! 2. [`mask_line`]: replace volatile text (spinner glyphs, elapsed timers, token counters,
//!    countdowns, clocks, a drawn cursor) by fixed tokens, using the masks of the rules file,
//!    so a screen that only ticks a clock hashes the same. Every replacement is a fixed point
//!    of every mask, which makes normalization idempotent (a property test checks it).
//! 3. [`StreamHasher`]: xxh3-64 of the masked lines joined by `\n`, trailing blank lines
//!    dropped. xxh3 is specified and seedless here, so a hash is the same on every platform
//!    and release for the same normalized text.
//!
//! Input is read as a stream of lines with bounded memory ([`for_each_line`]): a line longer
//! than [`LINE_CAP`] is cut into pieces, so a 100 MB pane costs 64 KiB of line buffer.

use std::borrow::Cow;
use std::io::{self, BufRead};

use anyhow::{Result, bail};
use xxhash_rust::xxh3::Xxh3;

use super::rules::Mask;

/// The longest line handled as one; longer lines are cut into pieces of this many bytes.
pub const LINE_CAP: usize = 64 * 1024;

/// Call `f` with every line of `reader` (without the `\n`), never buffering more than
/// [`LINE_CAP`] bytes. A NUL byte means the input is not a terminal capture: that is an
/// error, not a screen.
pub fn for_each_line(mut reader: impl BufRead, mut f: impl FnMut(&[u8])) -> Result<()> {
    let mut line: Vec<u8> = Vec::new();
    let mut offset: u64 = 0;
    let mut ended_with_newline = true;
    loop {
        let chunk = match reader.fill_buf() {
            Ok(chunk) => chunk,
            Err(err) if err.kind() == io::ErrorKind::Interrupted => continue,
            Err(err) => return Err(err.into()),
        };
        if chunk.is_empty() {
            break;
        }
        if let Some(nul) = memchr_nul(chunk) {
            bail!(
                "input is binary, not a pane capture (NUL byte at offset {})",
                offset + nul as u64
            );
        }
        let len = chunk.len();
        let mut rest = chunk;
        while !rest.is_empty() {
            match memchr::memchr(b'\n', rest) {
                Some(end) => {
                    push_capped(&mut line, &rest[..end], &mut f);
                    f(&line);
                    line.clear();
                    rest = &rest[end + 1..];
                    ended_with_newline = true;
                }
                None => {
                    push_capped(&mut line, rest, &mut f);
                    rest = &[];
                    ended_with_newline = false;
                }
            }
        }
        offset += len as u64;
        reader.consume(len);
    }
    if !ended_with_newline || !line.is_empty() {
        f(&line);
    }
    Ok(())
}

fn memchr_nul(bytes: &[u8]) -> Option<usize> {
    memchr::memchr(0, bytes)
}

fn push_capped(line: &mut Vec<u8>, mut bytes: &[u8], f: &mut impl FnMut(&[u8])) {
    while line.len() + bytes.len() > LINE_CAP {
        let take = LINE_CAP - line.len();
        line.extend_from_slice(&bytes[..take]);
        f(line);
        line.clear();
        bytes = &bytes[take..];
    }
    line.extend_from_slice(bytes);
}

/// Decode one captured line (invalid UTF-8 becomes U+FFFD) and clean it: escape sequences
/// (CSI, OSC, DCS, two-byte ESC sequences, C1 controls) removed, tabs made spaces, other
/// control characters dropped, trailing whitespace trimmed.
pub fn clean_line(raw: &[u8]) -> String {
    // Fast path: most captured lines are plain text with no control bytes at all.
    if !has_control_bytes(raw)
        && let Ok(text) = std::str::from_utf8(raw)
    {
        return text.trim_end().to_string();
    }
    let text = String::from_utf8_lossy(raw);
    let mut out = String::with_capacity(text.len());
    let mut chars = text.chars().peekable();
    while let Some(ch) = chars.next() {
        match ch {
            '\u{1b}' => match chars.next() {
                // CSI: parameters and intermediates, then one final byte in @..~.
                Some('[') => {
                    for c in chars.by_ref() {
                        if ('@'..='~').contains(&c) {
                            break;
                        }
                    }
                }
                // OSC, DCS, SOS, PM, APC: until BEL or ST (ESC \).
                Some(']' | 'P' | 'X' | '^' | '_') => skip_string(&mut chars),
                // Character-set designations take one more byte.
                Some('(' | ')' | '*' | '+' | '-' | '.' | '/' | '#' | '%') => {
                    chars.next();
                }
                _ => {}
            },
            '\u{9b}' => {
                for c in chars.by_ref() {
                    if ('@'..='~').contains(&c) {
                        break;
                    }
                }
            }
            '\u{9d}' | '\u{90}' | '\u{98}' | '\u{9e}' | '\u{9f}' => skip_string(&mut chars),
            '\t' => out.push(' '),
            c if c.is_control() => {}
            c => out.push(c),
        }
    }
    let trimmed = out.trim_end().len();
    out.truncate(trimmed);
    out
}

/// C0 controls, DEL, and the UTF-8 encodings of C1 controls (U+0080..U+009F).
fn has_control_bytes(raw: &[u8]) -> bool {
    static CONTROL: std::sync::OnceLock<regex::bytes::Regex> = std::sync::OnceLock::new();
    CONTROL
        .get_or_init(|| {
            regex::bytes::Regex::new(r"(?-u)[\x00-\x1f\x7f]|\xc2[\x80-\x9f]").expect("valid")
        })
        .is_match(raw)
}

fn skip_string(chars: &mut std::iter::Peekable<std::str::Chars<'_>>) {
    while let Some(c) = chars.next() {
        if c == '\u{7}' || c == '\u{9c}' {
            return;
        }
        if c == '\u{1b}' && chars.peek() == Some(&'\\') {
            chars.next();
            return;
        }
    }
}

/// Apply every mask, in order, to one clean line.
pub fn mask_line<'a>(line: &'a str, masks: &[Mask]) -> Cow<'a, str> {
    if !any_mask_matches(line, masks) {
        return Cow::Borrowed(line);
    }
    let mut current = Cow::Borrowed(line);
    for mask in masks {
        if let Cow::Owned(replaced) = mask.regex().replace_all(&current, mask.replace.as_str()) {
            current = Cow::Owned(replaced);
        }
    }
    match current {
        Cow::Borrowed(line) => Cow::Borrowed(line),
        Cow::Owned(mut owned) => {
            let trimmed = owned.trim_end().len();
            owned.truncate(trimmed);
            Cow::Owned(owned)
        }
    }
}

/// One pass over the line with all masks at once (most lines have nothing to mask).
fn any_mask_matches(line: &str, masks: &[Mask]) -> bool {
    match super::rules::mask_set(masks) {
        Some(set) => set.is_match(line),
        None => masks.iter().any(|m| m.regex().is_match(line)),
    }
}

/// Joins normalized lines the way [`normalize`] does, feeding them to a sink: lines are
/// separated by `\n` and trailing blank lines are dropped (a pane's unused rows).
struct Joiner {
    pending_blank: usize,
    started: bool,
}

impl Joiner {
    fn new() -> Joiner {
        Joiner {
            pending_blank: 0,
            started: false,
        }
    }

    fn push(&mut self, line: &str, mut sink: impl FnMut(&str)) {
        if line.is_empty() {
            self.pending_blank += 1;
            return;
        }
        for _ in 0..self.pending_blank {
            if self.started {
                sink("\n");
            }
            self.started = true;
        }
        self.pending_blank = 0;
        if self.started {
            sink("\n");
        }
        sink(line);
        self.started = true;
    }
}

/// The normalized text of a capture: clean, masked lines joined by `\n`, without the
/// trailing blank lines.
pub fn normalize(text: &str, masks: &[Mask]) -> String {
    let mut out = String::with_capacity(text.len());
    let mut joiner = Joiner::new();
    for raw in text.split('\n') {
        let clean = clean_line(raw.as_bytes());
        let masked = mask_line(&clean, masks);
        joiner.push(&masked, |s| out.push_str(s));
    }
    out
}

/// Hash of normalized lines, fed one line at a time (bounded memory).
pub struct StreamHasher<'m> {
    masks: &'m [Mask],
    hasher: Xxh3,
    joiner: Joiner,
    lines: u64,
}

impl<'m> StreamHasher<'m> {
    pub fn new(masks: &'m [Mask]) -> StreamHasher<'m> {
        StreamHasher {
            masks,
            hasher: Xxh3::new(),
            joiner: Joiner::new(),
            lines: 0,
        }
    }

    pub fn push_raw_line(&mut self, raw: &[u8]) {
        let clean = clean_line(raw);
        let masked = mask_line(&clean, self.masks);
        let hasher = &mut self.hasher;
        self.joiner.push(&masked, |s| hasher.update(s.as_bytes()));
        self.lines += 1;
    }

    /// The hash as 16 lowercase hex digits, and the number of lines read.
    pub fn finish(self) -> (String, u64) {
        (format_hash(self.hasher.digest()), self.lines)
    }
}

/// xxh3-64 as 16 lowercase hex digits.
pub fn format_hash(hash: u64) -> String {
    format!("{hash:016x}")
}

/// The hash of a capture's normalized text.
pub fn hash(text: &str, masks: &[Mask]) -> String {
    format_hash(xxhash_rust::xxh3::xxh3_64(
        normalize(text, masks).as_bytes(),
    ))
}

/// The hash of the bytes exactly as captured.
pub fn hash_raw(bytes: &[u8]) -> String {
    format_hash(xxhash_rust::xxh3::xxh3_64(bytes))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::pane::rules::RuleSet;
    use proptest::prelude::*;

    fn masks() -> &'static [Mask] {
        &RuleSet::embedded().masks
    }

    #[test]
    fn escapes_and_controls_are_removed() {
        assert_eq!(clean_line(b"\x1b[1;31mred\x1b[0m text  "), "red text");
        assert_eq!(clean_line(b"\x1b]0;title\x07after"), "after");
        assert_eq!(
            clean_line(b"\x1b]8;;http://x\x1b\\link\x1b]8;;\x1b\\"),
            "link"
        );
        assert_eq!(clean_line(b"a\tb\x07c\r"), "a bc");
        assert_eq!(
            clean_line(b"bad \xff\xfe utf8"),
            "bad \u{fffd}\u{fffd} utf8"
        );
        assert_eq!(clean_line("c1 \u{9b}31mcsi".as_bytes()), "c1 csi");
    }

    #[test]
    fn a_ticking_spinner_hashes_the_same() {
        let a = "⏺ Running tests\n\n✻ Thinking… (2m 18s · ↓ 1.2k tokens · esc to interrupt)\n\n> \n\n\n";
        let b = "⏺ Running tests\n\n✽ Pondering… (2m 19s · ↓ 1.3k tokens · esc to interrupt)\n\n> ";
        assert_eq!(hash(a, masks()), hash(b, masks()));
        let c = "⏺ Running tests\n⏺ Tests pass\n\n✽ Pondering… (2m 19s · esc to interrupt)\n\n> ";
        assert_ne!(hash(a, masks()), hash(c, masks()));
    }

    #[test]
    fn countdowns_clocks_and_cursors_are_masked() {
        let n = |t: &str| normalize(t, masks());
        assert_eq!(
            n("Retrying in 5 seconds… (attempt 2/10)"),
            n("Retrying in 4 seconds… (attempt 2/10)")
        );
        assert_ne!(
            n("Retrying in 5 seconds… (attempt 2/10)"),
            n("Retrying in 5 seconds… (attempt 3/10)"),
            "a new attempt is progress"
        );
        assert_eq!(n("12:01:59 build"), n("12:02:00 build"));
        assert_eq!(n("> fix it█"), n("> fix it"));
        assert_eq!(n("⠋ loading"), n("⠙ loading"));
    }

    #[test]
    fn streamed_hash_equals_in_memory_hash() {
        let text = "\n\nfirst\n\n  \nsecond ✻ 3s\n\n\n";
        let mut stream = StreamHasher::new(masks());
        for_each_line(text.as_bytes(), |line| stream.push_raw_line(line)).unwrap();
        assert_eq!(stream.finish().0, hash(text, masks()));
    }

    #[test]
    fn long_lines_are_cut_and_nul_is_refused() {
        let long = vec![b'x'; LINE_CAP * 2 + 10];
        let mut sizes = Vec::new();
        for_each_line(&long[..], |line| sizes.push(line.len())).unwrap();
        assert_eq!(sizes, vec![LINE_CAP, LINE_CAP, 10]);
        let err = for_each_line(&b"ok\nbad\0"[..], |_| {}).unwrap_err();
        assert!(err.to_string().contains("NUL byte at offset 6"), "{err}");
    }

    #[test]
    fn raw_hash_is_xxh3_of_the_bytes() {
        // A published xxh3-64 test vector: the empty input.
        assert_eq!(hash_raw(b""), "2d06800538d394c2");
    }

    fn screen_text() -> impl Strategy<Value = String> {
        let piece = prop_oneof![
            Just("✻ Thinking… ".to_string()),
            Just("(2m 18s · ↓ 1.2k tokens · esc to interrupt)".to_string()),
            Just("Retrying in 5 seconds".to_string()),
            Just("12:30:01".to_string()),
            Just("⠋⠙".to_string()),
            Just("█".to_string()),
            Just("\x1b[31m".to_string()),
            Just("\t".to_string()),
            Just("\n".to_string()),
            Just(" ".to_string()),
            Just("* <busy>…".to_string()),
            Just("<t> <n> tokens <clock>".to_string()),
            "[a-z0-9 ·:.()↓ms]{0,12}",
        ];
        prop::collection::vec(piece, 0..24).prop_map(|pieces| pieces.concat())
    }

    proptest! {
        #[test]
        fn normalization_is_idempotent(text in screen_text()) {
            let once = normalize(&text, masks());
            prop_assert_eq!(normalize(&once, masks()), once);
        }

        #[test]
        fn any_bytes_clean_to_text_without_controls(bytes in prop::collection::vec(any::<u8>(), 0..200)) {
            let clean = clean_line(&bytes);
            prop_assert!(!clean.chars().any(char::is_control));
            prop_assert_eq!(clean_line(clean.as_bytes()), clean.clone());
        }
    }
}
