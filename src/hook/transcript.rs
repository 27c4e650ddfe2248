//! Reading a Claude Code session transcript without reading all of it.
//!
//! The transcript (`transcript_path` in the hook input) is JSON Lines. Each line is one event;
//! the ones that matter here look like
//! `{"type":"assistant","isSidechain":false,"message":{"id":"msg_…","content":[{"type":"text",
//! "text":"…"}],"usage":{"input_tokens":…,"output_tokens":…,"cache_creation_input_tokens":…,
//! "cache_read_input_tokens":…}},"requestId":"req_…",…}` and
//! `{"type":"user","message":{"content":"…" | [{"type":"tool_result",…}]},…}`. Claude Code
//! writes one line per content block, so one API message spans several lines that share
//! `message.id` and repeat its `usage` (with `output_tokens` growing to the final count); other
//! line types (`system`, `summary`, attachments, snapshots) are skipped.
//!
//! Two readers, both bounded:
//! - [`scan_last_turn`] reads backwards from the end in chunks until it meets the line that
//!   started the last turn, so its cost is the size of the last turn, not of the file. A turn
//!   starts at a user line carrying text (a typed prompt, a slash command, or the Stop hook's
//!   own "Stop hook feedback" line, which Claude Code records as a meta user line); tool
//!   results and other meta lines (skill text, caveats, compaction summaries) do not start a
//!   turn.
//! - [`account`] reads forwards from a saved offset to the end, summing `usage` once per
//!   message, so a budget costs only what was appended since the last Stop.
//!
//! Lines longer than [`Limits::max_line`] are skipped without being held in memory, and a
//! scan that reaches [`Limits::max_scan`] bytes stops there: memory stays bounded on a
//! transcript of any size.

use std::fs::File;
use std::io::{self, Read, Seek, SeekFrom};
use std::path::Path;

use serde::de::{self, Deserializer, SeqAccess, Visitor};
use serde::{Deserialize, Serialize};

/// Bounds on how much of a transcript is read.
#[derive(Debug, Clone, Copy)]
pub struct Limits {
    /// Bytes read per backward step.
    pub chunk: usize,
    /// Longer lines are skipped (counted, never buffered whole).
    pub max_line: usize,
    /// A backward scan gives up after this many bytes.
    pub max_scan: u64,
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            chunk: 64 * 1024,
            max_line: 8 * 1024 * 1024,
            max_scan: 64 * 1024 * 1024,
        }
    }
}

/// Token counts from `message.usage`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Usage {
    #[serde(default)]
    pub input: u64,
    #[serde(default)]
    pub output: u64,
    #[serde(default)]
    pub cache_creation: u64,
    #[serde(default)]
    pub cache_read: u64,
}

impl Usage {
    /// Every token the API processed for these messages: input, output, cache writes and
    /// cache reads.
    pub fn total(&self) -> u64 {
        self.input
            .saturating_add(self.output)
            .saturating_add(self.cache_creation)
            .saturating_add(self.cache_read)
    }

    pub fn add(&mut self, other: &Usage) {
        self.input = self.input.saturating_add(other.input);
        self.output = self.output.saturating_add(other.output);
        self.cache_creation = self.cache_creation.saturating_add(other.cache_creation);
        self.cache_read = self.cache_read.saturating_add(other.cache_read);
    }

    /// Field-wise maximum (the repeated lines of one message only ever grow).
    fn max(&self, other: &Usage) -> Usage {
        Usage {
            input: self.input.max(other.input),
            output: self.output.max(other.output),
            cache_creation: self.cache_creation.max(other.cache_creation),
            cache_read: self.cache_read.max(other.cache_read),
        }
    }

    /// Field-wise `self - other`, never below zero.
    fn minus(&self, other: &Usage) -> Usage {
        Usage {
            input: self.input.saturating_sub(other.input),
            output: self.output.saturating_sub(other.output),
            cache_creation: self.cache_creation.saturating_sub(other.cache_creation),
            cache_read: self.cache_read.saturating_sub(other.cache_read),
        }
    }
}

/// One transcript line, reduced to what the loop needs.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Entry {
    pub role: Role,
    /// A subagent's line in the parent transcript (older Claude Code versions).
    pub sidechain: bool,
    pub meta: bool,
    /// `message.id`, else `requestId`: the identity of one API message.
    pub message_id: Option<String>,
    /// Text blocks, in order.
    pub texts: Vec<String>,
    pub tool_uses: usize,
    pub tool_results: usize,
    pub usage: Option<Usage>,
    /// A `system` line of subtype `compact_boundary`: the conversation was compacted here
    /// (by `/compact` or by Claude Code itself).
    pub compaction: bool,
    /// A `system` line saying Claude Code overrode a Stop hook that blocked too often ("A hook
    /// blocked the turn from ending 9 consecutive times—overriding and ending turn."): the
    /// number of consecutive blocks it names.
    pub block_override: Option<u64>,
}

/// The start of the notice Claude Code (2.1.332) writes when it overrides a Stop hook that
/// blocked more than `CLAUDE_CODE_STOP_HOOK_BLOCK_CAP` times in a row.
pub const BLOCK_OVERRIDE_NOTICE: &str = "A hook blocked the turn from ending ";

/// The number of blocks a block-override notice names.
fn block_override(content: &str) -> Option<u64> {
    let rest = content.strip_prefix(BLOCK_OVERRIDE_NOTICE)?;
    let digits: String = rest.chars().take_while(char::is_ascii_digit).collect();
    digits.parse().ok()
}

#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum Role {
    User,
    Assistant,
    #[default]
    Other,
}

/// The text Claude Code gives the user line that carries a Stop hook's `reason`.
const STOP_HOOK_FEEDBACK: &str = "Stop hook feedback";

impl Entry {
    /// Whether this line starts a turn (see the module doc).
    pub fn starts_turn(&self) -> bool {
        self.role == Role::User
            && !self.sidechain
            && self.tool_results == 0
            && !self.texts.is_empty()
            && (!self.meta
                || self
                    .texts
                    .iter()
                    .any(|t| t.trim_start().starts_with(STOP_HOOK_FEEDBACK)))
    }
}

#[derive(Deserialize)]
struct RawLine {
    #[serde(rename = "type", default)]
    kind: Option<String>,
    #[serde(rename = "isSidechain", default)]
    sidechain: Option<bool>,
    #[serde(rename = "isMeta", default)]
    meta: Option<bool>,
    #[serde(rename = "isCompactSummary", default)]
    compact_summary: Option<bool>,
    #[serde(rename = "requestId", default)]
    request_id: Option<String>,
    #[serde(default)]
    subtype: Option<String>,
    /// A `system` line's text (other lines may carry anything here; only strings are kept).
    #[serde(default)]
    content: Option<ShortText>,
    #[serde(default)]
    message: Option<RawMessage>,
}

/// A string value, kept only up to a short prefix (notices are recognized by their start);
/// any other JSON value reads as `None` without being buffered.
struct ShortText(Option<String>);

impl<'de> Deserialize<'de> for ShortText {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct TextVisitor;
        impl<'de> Visitor<'de> for TextVisitor {
            type Value = ShortText;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("any value")
            }
            fn visit_str<E: de::Error>(self, text: &str) -> Result<ShortText, E> {
                Ok(ShortText(Some(text.chars().take(120).collect())))
            }
            fn visit_unit<E: de::Error>(self) -> Result<ShortText, E> {
                Ok(ShortText(None))
            }
            fn visit_bool<E: de::Error>(self, _: bool) -> Result<ShortText, E> {
                Ok(ShortText(None))
            }
            fn visit_i64<E: de::Error>(self, _: i64) -> Result<ShortText, E> {
                Ok(ShortText(None))
            }
            fn visit_u64<E: de::Error>(self, _: u64) -> Result<ShortText, E> {
                Ok(ShortText(None))
            }
            fn visit_f64<E: de::Error>(self, _: f64) -> Result<ShortText, E> {
                Ok(ShortText(None))
            }
            fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<ShortText, A::Error> {
                while seq.next_element::<de::IgnoredAny>()?.is_some() {}
                Ok(ShortText(None))
            }
            fn visit_map<A: de::MapAccess<'de>>(self, mut map: A) -> Result<ShortText, A::Error> {
                while map
                    .next_entry::<de::IgnoredAny, de::IgnoredAny>()?
                    .is_some()
                {}
                Ok(ShortText(None))
            }
        }
        deserializer.deserialize_any(TextVisitor)
    }
}

#[derive(Deserialize)]
struct RawMessage {
    #[serde(default)]
    id: Option<String>,
    #[serde(default)]
    content: Option<Content>,
    #[serde(default)]
    usage: Option<RawUsage>,
}

#[derive(Deserialize)]
struct RawBlock {
    #[serde(rename = "type", default)]
    kind: Option<String>,
    #[serde(default)]
    text: Option<String>,
}

#[derive(Deserialize)]
struct RawUsage {
    #[serde(default)]
    input_tokens: Option<u64>,
    #[serde(default)]
    output_tokens: Option<u64>,
    #[serde(default)]
    cache_creation_input_tokens: Option<u64>,
    #[serde(default)]
    cache_read_input_tokens: Option<u64>,
}

/// `message.content`: a string (a typed prompt) or a list of blocks. Written by hand because
/// serde's untagged enums buffer the whole value first, and a tool result can be megabytes.
struct Content(Vec<RawBlock>);

impl<'de> Deserialize<'de> for Content {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct ContentVisitor;
        impl<'de> Visitor<'de> for ContentVisitor {
            type Value = Content;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("a string or a list of content blocks")
            }
            fn visit_str<E: de::Error>(self, text: &str) -> Result<Content, E> {
                Ok(Content(vec![RawBlock {
                    kind: Some("text".to_string()),
                    text: Some(text.to_string()),
                }]))
            }
            fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Content, A::Error> {
                let mut blocks = Vec::new();
                while let Some(block) = seq.next_element::<BlockOrOther>()? {
                    if let BlockOrOther::Block(block) = block {
                        blocks.push(block);
                    }
                }
                Ok(Content(blocks))
            }
        }
        deserializer.deserialize_any(ContentVisitor)
    }
}

/// A list element that is a block object, or anything else (skipped).
enum BlockOrOther {
    Block(RawBlock),
    Other,
}

impl<'de> Deserialize<'de> for BlockOrOther {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct ElementVisitor;
        impl<'de> Visitor<'de> for ElementVisitor {
            type Value = BlockOrOther;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("a content block")
            }
            fn visit_map<A: de::MapAccess<'de>>(self, map: A) -> Result<BlockOrOther, A::Error> {
                RawBlock::deserialize(de::value::MapAccessDeserializer::new(map))
                    .map(BlockOrOther::Block)
            }
            fn visit_str<E: de::Error>(self, text: &str) -> Result<BlockOrOther, E> {
                Ok(BlockOrOther::Block(RawBlock {
                    kind: Some("text".to_string()),
                    text: Some(text.to_string()),
                }))
            }
            fn visit_unit<E: de::Error>(self) -> Result<BlockOrOther, E> {
                Ok(BlockOrOther::Other)
            }
            fn visit_bool<E: de::Error>(self, _: bool) -> Result<BlockOrOther, E> {
                Ok(BlockOrOther::Other)
            }
            fn visit_i64<E: de::Error>(self, _: i64) -> Result<BlockOrOther, E> {
                Ok(BlockOrOther::Other)
            }
            fn visit_u64<E: de::Error>(self, _: u64) -> Result<BlockOrOther, E> {
                Ok(BlockOrOther::Other)
            }
            fn visit_f64<E: de::Error>(self, _: f64) -> Result<BlockOrOther, E> {
                Ok(BlockOrOther::Other)
            }
            fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<BlockOrOther, A::Error> {
                while seq.next_element::<de::IgnoredAny>()?.is_some() {}
                Ok(BlockOrOther::Other)
            }
        }
        deserializer.deserialize_any(ElementVisitor)
    }
}

/// Parse one line; `None` when it is not JSON or not an object of the expected shape.
pub fn parse_line(bytes: &[u8]) -> Option<Entry> {
    let raw: RawLine = serde_json::from_slice(bytes).ok()?;
    let role = match raw.kind.as_deref() {
        Some("user") => Role::User,
        Some("assistant") => Role::Assistant,
        _ => Role::Other,
    };
    let mut entry = Entry {
        role,
        sidechain: raw.sidechain.unwrap_or(false),
        meta: raw.meta.unwrap_or(false) || raw.compact_summary.unwrap_or(false),
        ..Entry::default()
    };
    if raw.kind.as_deref() == Some("system") {
        entry.compaction = raw.subtype.as_deref() == Some("compact_boundary");
        entry.block_override = raw
            .content
            .and_then(|c| c.0)
            .and_then(|text| block_override(&text));
    }
    if let Some(message) = raw.message {
        entry.message_id = message.id.or(raw.request_id);
        for block in message.content.map(|c| c.0).unwrap_or_default() {
            match block.kind.as_deref() {
                Some("text") => entry.texts.extend(block.text),
                Some("tool_use" | "server_tool_use") => entry.tool_uses += 1,
                Some("tool_result") => entry.tool_results += 1,
                _ => {}
            }
        }
        entry.usage = message.usage.map(|u| Usage {
            input: u.input_tokens.unwrap_or(0),
            output: u.output_tokens.unwrap_or(0),
            cache_creation: u.cache_creation_input_tokens.unwrap_or(0),
            cache_read: u.cache_read_input_tokens.unwrap_or(0),
        });
    } else {
        entry.message_id = raw.request_id;
    }
    Some(entry)
}

/// A line read from the end: its offset and bytes, or only its length when it was too long.
#[derive(Debug, PartialEq, Eq)]
pub enum Line {
    Complete { offset: u64, bytes: Vec<u8> },
    TooLong { offset: u64, len: u64 },
}

/// Lines of a file from the last to the first, read in chunks. Every byte is searched for a
/// newline once and copied at most twice, whatever the line lengths.
pub struct ReverseLines<R> {
    reader: R,
    /// Bytes before this offset are not read yet.
    pos: u64,
    /// Read bytes starting at `pos` whose lines are not returned yet (may hold newlines).
    head: Vec<u8>,
    /// The rest of the current line (after `head`), as chunks from the latest read to the
    /// earliest, i.e. in reverse file order; empty once the line outgrew `max_line`.
    parts: Vec<Vec<u8>>,
    /// Length of the current line so far, beyond `head`.
    tail_len: u64,
    /// The current line outgrew `max_line`; its bytes were dropped.
    overflow: bool,
    chunk: usize,
    max_line: usize,
    /// Never read more than this many bytes in all.
    budget: u64,
    /// The line at offset 0 was returned.
    done: bool,
    /// Reading stopped at `budget` before the start of the file.
    truncated: bool,
    /// Total bytes read so far.
    pub read: u64,
}

impl<R: Read + Seek> ReverseLines<R> {
    /// Start at `end` (normally the file length). A last line without a newline is yielded
    /// like any other; callers that need complete lines check for it.
    pub fn new(reader: R, end: u64, limits: &Limits) -> ReverseLines<R> {
        ReverseLines {
            reader,
            pos: end,
            head: Vec::new(),
            parts: Vec::new(),
            tail_len: 0,
            overflow: false,
            chunk: limits.chunk.max(1),
            max_line: limits.max_line.max(1),
            budget: limits.max_scan.max(1),
            done: end == 0,
            truncated: false,
            read: 0,
        }
    }

    /// Whether reading stopped at the scan limit, before the start of the file.
    pub fn truncated(&self) -> bool {
        self.truncated
    }

    /// Where reading stands: no line before this offset was returned.
    pub fn position(&self) -> u64 {
        self.pos
    }

    /// Close the current line, whose first byte is at `offset` and whose start is `first`.
    fn finish(&mut self, offset: u64, first: Vec<u8>) -> Line {
        let len = first.len() as u64 + self.tail_len;
        let overflow = std::mem::take(&mut self.overflow) || len > self.max_line as u64;
        let parts = std::mem::take(&mut self.parts);
        self.tail_len = 0;
        if overflow {
            return Line::TooLong { offset, len };
        }
        let mut bytes = first;
        bytes.reserve(len as usize - bytes.len());
        for part in parts.iter().rev() {
            bytes.extend_from_slice(part);
        }
        Line::Complete { offset, bytes }
    }

    /// The next line towards the start of the file.
    pub fn next_line(&mut self) -> io::Result<Option<Line>> {
        loop {
            // A newline inside what is buffered ends the current line.
            if let Some(newline) = self.head.iter().rposition(|b| *b == b'\n') {
                let first = self.head.split_off(newline + 1);
                self.head.truncate(newline);
                let offset = self.pos + newline as u64 + 1;
                return Ok(Some(self.finish(offset, first)));
            }
            // No newline: all of `head` belongs to the current line.
            let head = std::mem::take(&mut self.head);
            self.tail_len += head.len() as u64;
            if self.overflow || self.tail_len > self.max_line as u64 {
                self.overflow = true;
                self.parts.clear();
            } else if !head.is_empty() {
                self.parts.push(head);
            }
            if self.pos == 0 {
                // What is left is the first line (possibly empty, before a newline).
                if self.done {
                    return Ok(None);
                }
                self.done = true;
                return Ok(Some(self.finish(0, Vec::new())));
            }
            if self.read >= self.budget {
                self.truncated = true;
                return Ok(None);
            }
            let step = (self.chunk as u64)
                .min(self.pos)
                .min(self.budget - self.read);
            self.pos -= step;
            self.reader.seek(SeekFrom::Start(self.pos))?;
            let mut chunk = vec![0; step as usize];
            self.reader.read_exact(&mut chunk)?;
            self.read += step;
            self.head = chunk;
        }
    }
}

/// What the end of a transcript says about the last turn.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct TurnScan {
    /// Assistant text blocks of the last turn, oldest first.
    pub texts: Vec<String>,
    /// The text blocks of the turn's last assistant message that has text (one API message,
    /// by its id), oldest first.
    pub last_message_texts: Vec<String>,
    /// tool_use blocks in the last turn.
    pub tool_uses: usize,
    /// Offset of the first line of the last turn (after the line that started it); `None`
    /// when the scan reached its limit or the start of the file without finding that line.
    pub turn_start: Option<u64>,
    /// Where the scan stopped (the turn starts at or after it).
    pub scanned_from: u64,
    /// The file length when scanned.
    pub len: u64,
    /// Lines that are not JSON objects of a known shape.
    pub unreadable_lines: usize,
    /// Lines skipped for being longer than the limit.
    pub long_lines: usize,
    /// The last user or assistant line is an assistant line with text: the turn's final
    /// message is written. When false, the transcript may lag behind the session.
    pub ends_with_text: bool,
}

/// Read the last turn of a transcript from its end.
pub fn scan_last_turn<R: Read + Seek>(
    reader: R,
    len: u64,
    limits: &Limits,
) -> io::Result<TurnScan> {
    let mut lines = ReverseLines::new(reader, len, limits);
    let mut scan = TurnScan {
        len,
        scanned_from: len,
        ..TurnScan::default()
    };
    let mut texts_reversed: Vec<String> = Vec::new();
    let mut last_reversed: Vec<String> = Vec::new();
    // The id of the last message with text (`Some(None)` when it has no id: one line only).
    let mut last_message: Option<Option<String>> = None;
    let mut last_message_done = false;
    let mut seen_relevant = false;
    while let Some(line) = lines.next_line()? {
        let (after, entry) = match line {
            Line::TooLong { offset, .. } => {
                scan.long_lines += 1;
                scan.scanned_from = offset;
                continue;
            }
            Line::Complete { offset, bytes } => {
                scan.scanned_from = offset;
                if bytes.iter().all(u8::is_ascii_whitespace) {
                    continue;
                }
                // The line after this one starts past its newline (the very last line may
                // have none yet).
                let after = (offset + bytes.len() as u64 + 1).min(len);
                match parse_line(&bytes) {
                    Some(entry) => (after, entry),
                    None => {
                        scan.unreadable_lines += 1;
                        continue;
                    }
                }
            }
        };
        if entry.sidechain || entry.role == Role::Other {
            continue;
        }
        if !seen_relevant {
            seen_relevant = true;
            scan.ends_with_text = entry.role == Role::Assistant && !entry.texts.is_empty();
        }
        if entry.starts_turn() {
            scan.turn_start = Some(after);
            break;
        }
        if entry.role == Role::Assistant {
            scan.tool_uses += entry.tool_uses;
            if !entry.texts.is_empty() {
                match &last_message {
                    None => last_message = Some(entry.message_id.clone()),
                    Some(id) if *id == entry.message_id && id.is_some() => {}
                    Some(_) => last_message_done = true,
                }
                if !last_message_done {
                    last_reversed.extend(entry.texts.iter().rev().cloned());
                }
            }
            texts_reversed.extend(entry.texts.into_iter().rev());
        }
    }
    if lines.truncated() {
        scan.scanned_from = lines.position();
    }
    texts_reversed.reverse();
    scan.texts = texts_reversed;
    last_reversed.reverse();
    scan.last_message_texts = last_reversed;
    Ok(scan)
}

/// Where the budget reader stands in a transcript (kept in the loop state between Stops).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Cursor {
    /// The transcript this cursor was read from, for people: the cursor belongs to the file
    /// with this device and inode, whatever path names it (`/d/./t.jsonl`, a symlink).
    pub path: String,
    /// Device and inode: the file's identity. A transcript replaced under the same path is a
    /// new file and starts over.
    pub dev: u64,
    pub ino: u64,
    /// Bytes before this offset are counted.
    pub offset: u64,
    /// The message whose lines were counted last, and how much of it: its later lines only
    /// add their growth.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_message_id: Option<String>,
    #[serde(default)]
    pub last_message_usage: Usage,
}

/// What a forward read added.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Accounted {
    pub added: Usage,
    pub unreadable_lines: usize,
    pub long_lines: usize,
    /// Compactions (`compact_boundary` lines) among the lines read.
    pub compactions: u32,
    /// Claude Code overrode a blocking Stop hook among the lines read (the block count it
    /// named).
    pub block_override: Option<u64>,
}

/// Sum the usage of the complete lines from `cursor.offset` to `end`, once per message, and
/// move the cursor past them. A trailing line without its newline is left for next time (the
/// transcript is written asynchronously).
pub fn account<R: Read + Seek>(
    reader: R,
    cursor: &mut Cursor,
    end: u64,
    limits: &Limits,
) -> io::Result<Accounted> {
    let mut accounted = Accounted::default();
    if end <= cursor.offset {
        return Ok(accounted);
    }
    let mut reader = io::BufReader::with_capacity(limits.chunk.max(4096), reader);
    reader.seek(SeekFrom::Start(cursor.offset))?;
    let mut reader = reader.take(end - cursor.offset);
    let mut line = Vec::new();
    loop {
        line.clear();
        // Read up to the next newline, but never hold more than max_line bytes of it.
        let (complete, consumed) = read_line_bounded(&mut reader, &mut line, limits.max_line)?;
        if consumed == 0 || !complete {
            break;
        }
        cursor.offset += consumed;
        if line.len() as u64 != consumed - 1 {
            // Truncated at max_line: too long to be a usage line worth parsing.
            accounted.long_lines += 1;
            continue;
        }
        if line.iter().all(u8::is_ascii_whitespace) {
            continue;
        }
        let Some(entry) = parse_line(&line) else {
            accounted.unreadable_lines += 1;
            continue;
        };
        if entry.compaction && !entry.sidechain {
            accounted.compactions = accounted.compactions.saturating_add(1);
        }
        if entry.block_override.is_some() && !entry.sidechain {
            accounted.block_override = entry.block_override;
        }
        if entry.role != Role::Assistant {
            continue;
        }
        let Some(usage) = entry.usage else { continue };
        match &entry.message_id {
            Some(id) if cursor.last_message_id.as_deref() == Some(id.as_str()) => {
                let grown = usage.max(&cursor.last_message_usage);
                accounted
                    .added
                    .add(&grown.minus(&cursor.last_message_usage));
                cursor.last_message_usage = grown;
            }
            id => {
                accounted.added.add(&usage);
                cursor.last_message_id = id.clone();
                cursor.last_message_usage = usage;
            }
        }
    }
    Ok(accounted)
}

/// Read one line into `line` (without its newline), keeping at most `max` bytes. Returns
/// whether a newline ended it and how many bytes were consumed in all.
fn read_line_bounded<R: io::BufRead>(
    reader: &mut R,
    line: &mut Vec<u8>,
    max: usize,
) -> io::Result<(bool, u64)> {
    let mut consumed = 0u64;
    loop {
        let buffer = reader.fill_buf()?;
        if buffer.is_empty() {
            return Ok((false, consumed));
        }
        let (part, found) = match buffer.iter().position(|b| *b == b'\n') {
            Some(i) => (&buffer[..i], Some(i)),
            None => (buffer, None),
        };
        let room = max.saturating_sub(line.len());
        line.extend_from_slice(&part[..part.len().min(room)]);
        let used = found.map_or(buffer.len(), |i| i + 1);
        reader.consume(used);
        consumed += used as u64;
        if found.is_some() {
            return Ok((true, consumed));
        }
    }
}

/// A transcript file opened for reading, with the identity a cursor records.
pub struct Opened {
    pub file: File,
    pub len: u64,
    pub dev: u64,
    pub ino: u64,
}

pub fn open(path: &Path) -> io::Result<Opened> {
    use std::os::unix::fs::MetadataExt;
    let file = crate::fsx::open_regular(path)?;
    let meta = file.metadata()?;
    Ok(Opened {
        len: meta.len(),
        dev: meta.dev(),
        ino: meta.ino(),
        file,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn small() -> Limits {
        Limits {
            chunk: 7,
            max_line: 64,
            max_scan: 1 << 20,
        }
    }

    fn all_lines(data: &[u8], limits: &Limits) -> Vec<Line> {
        let mut lines = ReverseLines::new(std::io::Cursor::new(data), data.len() as u64, limits);
        let mut out = Vec::new();
        while let Some(line) = lines.next_line().unwrap() {
            out.push(line);
        }
        out.reverse();
        out
    }

    proptest! {
        /// Reading backwards in tiny chunks yields exactly the lines a forward split gives,
        /// with their offsets; lines over the limit come back as their lengths.
        #[test]
        fn reverse_lines_agree_with_a_forward_split(
            lines in proptest::collection::vec("[a-z{}\":, ]{0,90}", 0..20),
            trailing_newline: bool,
        ) {
            let mut data = lines.join("\n");
            if trailing_newline && !data.is_empty() {
                data.push('\n');
            }
            let limits = small();
            let got = all_lines(data.as_bytes(), &limits);
            let mut expected = Vec::new();
            let mut offset = 0u64;
            let pieces: Vec<&str> = data.split('\n').collect();
            for piece in pieces {
                if piece.len() > limits.max_line {
                    expected.push(Line::TooLong { offset, len: piece.len() as u64 });
                } else {
                    expected.push(Line::Complete { offset, bytes: piece.as_bytes().to_vec() });
                }
                offset += piece.len() as u64 + 1;
            }
            if data.is_empty() {
                expected.clear();
            }
            // Over-long lines may report any length above the limit; compare kinds and offsets.
            prop_assert_eq!(got.len(), expected.len());
            for (g, e) in got.iter().zip(&expected) {
                match (g, e) {
                    (Line::TooLong { offset: a, len }, Line::TooLong { offset: b, .. }) => {
                        prop_assert_eq!(a, b);
                        prop_assert!(*len as usize > limits.max_line);
                    }
                    (g, e) => prop_assert_eq!(g, e),
                }
            }
        }
    }

    fn user(text: &str) -> String {
        serde_json::json!({"type":"user","message":{"role":"user","content":text}}).to_string()
    }
    fn assistant(id: &str, block: serde_json::Value, out: u64) -> String {
        serde_json::json!({"type":"assistant","message":{"id":id,"role":"assistant",
            "content":[block],"usage":{"input_tokens":10,"output_tokens":out,
            "cache_creation_input_tokens":100,"cache_read_input_tokens":1000}}})
        .to_string()
    }
    fn text(t: &str) -> serde_json::Value {
        serde_json::json!({"type":"text","text":t})
    }
    fn tool_use() -> serde_json::Value {
        serde_json::json!({"type":"tool_use","id":"t1","name":"Bash","input":{"command":"ls"}})
    }
    fn tool_result() -> String {
        serde_json::json!({"type":"user","message":{"role":"user","content":[
            {"type":"tool_result","tool_use_id":"t1","content":"a b c"}]}})
        .to_string()
    }

    fn scan(lines: &[String]) -> TurnScan {
        let data = lines.join("\n") + "\n";
        scan_last_turn(
            std::io::Cursor::new(data.as_bytes()),
            data.len() as u64,
            &Limits::default(),
        )
        .unwrap()
    }

    #[test]
    fn the_last_turn_starts_at_the_last_prompt() {
        let lines = vec![
            user("first"),
            assistant("m1", text("old"), 5),
            user("second"),
            assistant("m2", text("new"), 5),
            assistant("m2", tool_use(), 6),
            tool_result(),
            assistant("m3", text("final"), 7),
        ];
        let scan = scan(&lines);
        assert_eq!(scan.texts, ["new", "final"]);
        assert_eq!(scan.tool_uses, 1);
        assert!(scan.ends_with_text);
        let start = lines[..3].iter().map(|l| l.len() + 1).sum::<usize>() as u64;
        assert_eq!(scan.turn_start, Some(start));
    }

    #[test]
    fn stop_hook_feedback_starts_a_turn_but_other_meta_lines_do_not() {
        let feedback = serde_json::json!({"type":"user","isMeta":true,"message":{"role":"user",
            "content":[{"type":"text","text":"Stop hook feedback:\nkeep going"}]}})
        .to_string();
        let skill = serde_json::json!({"type":"user","isMeta":true,"message":{"role":"user",
            "content":[{"type":"text","text":"Base directory for this skill: /x"}]}})
        .to_string();
        let lines = vec![
            user("go"),
            assistant("m1", text("one"), 1),
            feedback,
            assistant("m2", text("two"), 1),
            skill,
            assistant("m3", text("three"), 1),
        ];
        assert_eq!(scan(&lines).texts, ["two", "three"]);
    }

    #[test]
    fn a_turn_ending_in_tool_calls_is_flagged_as_possibly_lagging() {
        let lines = vec![
            user("go"),
            assistant("m1", text("done"), 1),
            assistant("m1", tool_use(), 2),
        ];
        let scan = scan(&lines);
        assert!(!scan.ends_with_text);
        assert_eq!(scan.texts, ["done"]);
    }

    #[test]
    fn garbage_and_sidechains_are_skipped() {
        let side = serde_json::json!({"type":"assistant","isSidechain":true,"message":{
            "content":[{"type":"text","text":"sub"}]}})
        .to_string();
        let lines = vec![
            user("go"),
            "not json".to_string(),
            side,
            assistant("m", text("t"), 1),
        ];
        let scan = scan(&lines);
        assert_eq!(scan.texts, ["t"]);
        assert_eq!(scan.unreadable_lines, 1);
    }

    #[test]
    fn usage_counts_each_message_once_and_only_complete_lines() {
        let lines = [
            user("go"),
            assistant("m1", text("a"), 1),
            assistant("m1", tool_use(), 9),
            tool_result(),
            assistant("m2", text("b"), 4),
        ];
        let mut data = lines.join("\n") + "\n";
        let partial = assistant("m3", text("c"), 100);
        data.push_str(&partial[..20]);
        let mut cursor = Cursor::default();
        let got = account(
            std::io::Cursor::new(data.as_bytes()),
            &mut cursor,
            data.len() as u64,
            &Limits::default(),
        )
        .unwrap();
        // m1 counted once with its final output (9), m2 once; m3 is incomplete.
        assert_eq!(
            got.added,
            Usage {
                input: 20,
                output: 13,
                cache_creation: 200,
                cache_read: 2000
            }
        );
        assert_eq!(cursor.offset as usize, data.len() - 20);
        // The rest of m3 arrives: only it is added.
        data.push_str(&partial[20..]);
        data.push('\n');
        let more = account(
            std::io::Cursor::new(data.as_bytes()),
            &mut cursor,
            data.len() as u64,
            &Limits::default(),
        )
        .unwrap();
        assert_eq!(more.added.output, 100);
        assert_eq!(cursor.offset as usize, data.len());
        // A line of m3 repeated later adds only its growth.
        data.push_str(&assistant("m3", tool_use(), 130));
        data.push('\n');
        let again = account(
            std::io::Cursor::new(data.as_bytes()),
            &mut cursor,
            data.len() as u64,
            &Limits::default(),
        )
        .unwrap();
        assert_eq!(
            again.added,
            Usage {
                output: 30,
                ..Usage::default()
            }
        );
    }
}
