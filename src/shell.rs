//! Reading a shell command line the way a shell would, for every check that judges a command
//! by what it runs rather than by how it is spelled: the recovery-plan guard
//! ([`crate::wholework::plan`]), the destructive reading ([`crate::policy::destructive`]) and the
//! approval policy.
//!
//! Not a full shell: enough quoting, escaping and separators that a disguise cannot hide a
//! word from a check.
//!
//! - [`commands`] splits a line into [`SimpleCommand`]s at `;`, `&&`, `||`, `|`, `|&`, `&`,
//!   newlines and subshell parentheses. Words are unquoted (`'…'`, `"…"`, `\x`, `$'\x2d'`);
//!   the bodies of command and process substitutions (`$(…)`, `` `…` ``, `<(…)`, `>(…)`) are
//!   kept as text to read as commands of their own, and the word keeps a `$(…)` marker (its
//!   value is unknowable). Redirections (`>`, `>>`, `2>&1`, `&>`, `<`, `<<EOF`, `<<<`) are
//!   taken out of the words into [`SimpleCommand::redirects`]. A `#` outside a word starts a
//!   comment. A here-document's body is not consumed: its lines are read as commands, which
//!   errs towards seeing more commands than run.
//! - [`peel`] recognises what runs a command without being it (`sudo -u x`, `env A=1`,
//!   `command`, `exec`, `nohup`, `time`, `nice -n 5`, `timeout 10`, `xargs -n1`, `stdbuf`,
//!   `ionice`, `doas`) and shell keywords (`then`, `do`, `else`, `!`, `{`, `eval`), and
//!   returns both the runners and the command they run.
//! - [`program`] names a word's program by its base name (`/bin/rm` is rm); [`assignment`],
//!   [`expand_vars`] and [`expand_assignments`] follow variables assigned earlier in the same
//!   line (`RM=rm; $RM -rf x`); [`expand_braces`] undoes one level of `{a,b}`.
//! - [`is_long_option`] and [`GIT_GLOBAL_WITH_VALUE`] read argv the way getopt and git do.
//!
//! **Total and bounded.** Every function here returns for any input, in time linear in its
//! length, without recursion. A check that reads commands inside commands (substitution
//! bodies, `bash -c '…'` strings) does so through a [`Reader`], which follows at most
//! [`MAX_NESTING`] levels, reads at most [`MAX_LINE`] bytes of line (the most Linux passes
//! as one argument), at most [`MAX_COMMANDS`] simple commands and [`MAX_WORDS`] words and a
//! bounded amount of text in all, and reads a text it has already read only once. Past a
//! bound the reading is incomplete ([`Reader::exceeded`]) and the check's answer is "not
//! harmless": a command that cannot be read whole is never approved and never passes a guard.

use std::borrow::Cow;
use std::collections::HashMap;

/// How many levels of commands inside commands a [`Reader`] follows: substitutions (`$(…)`,
/// backquotes, `<(…)`) and quoted command strings (`bash -c '…'`, `ssh host '…'`). No command a
/// person writes goes deeper; a check that would have to is answered "not harmless".
pub const MAX_NESTING: usize = 8;

/// The longest command line a [`Reader`] reads, in bytes: 128 KiB, Linux's `MAX_ARG_STRLEN`
/// (32 pages), the longest single argument `execve` accepts. An agent's shell tool runs a
/// command as one argument (`bash -c COMMAND`), so a longer command cannot even start
/// (`E2BIG`): it is answered "not harmless" at once, before any reading.
pub const MAX_LINE: usize = 128 * 1024;

/// The most simple commands a [`Reader`] reads in all, the line's and every nested text's
/// together: 1,024. Every check judges each simple command on its own (its program, its
/// arguments, its paths), at a few microseconds each; a line of more — `ls | ls | …` or the
/// lines of a long here-document, each read as a command — is answered "not harmless"
/// unread rather than after tens of milliseconds (issue 23: at most 10 ms for any input).
/// No command an agent types by hand holds that many; a file written through a
/// here-document that long is written with the agent's file tool instead.
pub const MAX_COMMANDS: usize = 1024;

/// The most words a [`Reader`] reads in all, the line's and every nested text's together,
/// each redirection and each substitution (a text to read) counted as one: 8,192, eight for each of [`MAX_COMMANDS`]. Every
/// check reads each word several times (its program looked up, its variables expanded, its
/// paths resolved), so a 128 KiB line of 37,000 words (`rm -rf rm -rf …`, `> x 2>&1 > x …`)
/// took 15–20 ms to judge, and 16,384 words of redirections still 10.7 ms (fuzz profile,
/// load 1.7); past this bound it is answered "not harmless" after the lexing alone. No command an agent types holds that many words; a here-document that long is a
/// file, written with the agent's file tool.
pub const MAX_WORDS: usize = 8 * MAX_COMMANDS;

/// The most work a [`Reader`] does for one line, in its budget's units (bytes lexed): 256
/// KiB, the longest line ([`MAX_LINE`]) read twice over. Lexing and judging what was read
/// cost tens of nanoseconds a byte, so a reading that would go on past it (a 128 KiB line
/// nested eight deep, each level read again) is answered "not harmless" within milliseconds.
pub const MAX_WORK: usize = 2 * MAX_LINE;

/// What trying one word as a command costs, in the budget's units (bytes lexed): judging a
/// word (its program looked up in the rule tables, its arguments parsed) costs about what
/// lexing this many bytes does, so a command of many words that each run a program (`git
/// push -f git push -f …`) spends its budget in time, not in words.
pub const WORD_COST: usize = 8;

/// Which bound a reading passed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Exceeded {
    /// Commands nested deeper than [`MAX_NESTING`].
    Nesting,
    /// A line longer than [`MAX_LINE`].
    Length,
    /// More text to read in all than the line's budget (a line that unfolds).
    Size,
    /// More simple commands than [`MAX_COMMANDS`].
    Commands,
    /// More words than [`MAX_WORDS`].
    Words,
}

/// A bounded reading of one command line and the commands nested in it (see the module doc).
///
/// The budget is the text lexed in all, counted in bytes: 32 times the line plus 64 KiB,
/// enough for every nesting a person writes read several times over (a body is read once as
/// a substitution and once inside its word at each level), and far below what an
/// input built to multiply its own reading needs (each `$(…)` read both as a substitution and
/// inside its word; `A=$B$B` doubling a variable) — but never more than [`MAX_WORK`], which
/// bounds the time of a reading whatever the line's length. Work that is not lexing (trying
/// the later words of a command as programs) is charged to the same budget with
/// [`Reader::spend`].
#[derive(Debug)]
pub struct Reader {
    budget: usize,
    /// Simple commands read so far, against [`MAX_COMMANDS`].
    commands: usize,
    /// Words, redirections and substitutions read so far, against [`MAX_WORDS`].
    words: usize,
    /// Texts read so far, with the context they were read in, and the shallowest depth.
    seen: HashMap<String, usize>,
    /// The first bound passed, if any: the reading is incomplete.
    pub exceeded: Option<Exceeded>,
}

impl Reader {
    /// A reader for `line` (the whole command line a check was given).
    pub fn new(line: &str) -> Reader {
        Reader {
            budget: line
                .len()
                .saturating_mul(32)
                .saturating_add(64 * 1024)
                .min(MAX_WORK),
            commands: 0,
            words: 0,
            seen: HashMap::new(),
            exceeded: (line.len() > MAX_LINE).then_some(Exceeded::Length),
        }
    }

    /// The simple commands of `text` at nesting `depth` (0: the line itself), or `None` when
    /// there is nothing (more) to read: a bound is passed (recorded in
    /// [`Reader::exceeded`]), or the same text was read already, in the same `context` (a
    /// caller's fingerprint of what else decides the reading, such as known variables), at
    /// this depth or shallower — whatever it holds was found then.
    ///
    /// Read a command's substitution bodies before its words (or breadth first): a body comes
    /// back inside its word one level deeper, and only the shallower reading may count.
    pub fn read(&mut self, text: &str, depth: usize, context: &str) -> Option<Vec<SimpleCommand>> {
        if self.exceeded.is_some() {
            return None;
        }
        let mut key = String::with_capacity(context.len() + 1 + text.len());
        key.push_str(context);
        key.push('\0');
        key.push_str(text);
        // Seen first: a body read as a substitution at depth d comes back inside its word's
        // reading at d + 1, which is no reason to call the line too deep.
        match self.seen.get(&key) {
            Some(&at) if at <= depth => return None,
            _ => {}
        }
        if depth > MAX_NESTING {
            self.exceeded = Some(Exceeded::Nesting);
            return None;
        }
        if !self.spend(text.len() + context.len()) {
            return None;
        }
        self.seen.insert(key, depth);
        let commands = commands(text);
        self.commands = self.commands.saturating_add(commands.len());
        if self.commands > MAX_COMMANDS {
            self.exceeded = Some(Exceeded::Commands);
            return None;
        }
        let words: usize = commands
            .iter()
            .map(|c| c.words.len() + c.redirects.len() + c.substitutions.len())
            .sum();
        self.words = self.words.saturating_add(words);
        if self.words > MAX_WORDS {
            self.exceeded = Some(Exceeded::Words);
            return None;
        }
        Some(commands)
    }

    /// Charge trying `words` words as a command ([`WORD_COST`] each) to the budget.
    pub fn spend_words(&mut self, words: usize) -> bool {
        self.spend(words.saturating_mul(WORD_COST))
    }

    /// Charge `work` to the budget; `false` (and the reading is incomplete) when it is spent.
    pub fn spend(&mut self, work: usize) -> bool {
        if self.exceeded.is_some() {
            return false;
        }
        match self.budget.checked_sub(work) {
            Some(left) => {
                self.budget = left;
                true
            }
            None => {
                self.budget = 0;
                self.exceeded = Some(Exceeded::Size);
                false
            }
        }
    }

    /// Record that a check had to go deeper than [`MAX_NESTING`] on its own (a runner that
    /// runs a runner that runs …).
    pub fn too_deep(&mut self) {
        self.exceeded.get_or_insert(Exceeded::Nesting);
    }

    /// [`expand_assignments`], charging the text the expansion adds to the budget: `None`
    /// (and the reading is incomplete) when it is spent, so a line of `B=$A$A`, `C=$B$B`, …
    /// cannot build more text than the budget however the assignments chain.
    pub fn expand(&mut self, words: &[String], vars: &mut Vars) -> Option<Vec<String>> {
        let mut out = Vec::with_capacity(words.len());
        let mut assignments_only = true;
        for word in words {
            let expanded = expand_vars(word, vars);
            if expanded.len() > word.len() && !self.spend(expanded.len()) {
                return None;
            }
            if assignments_only {
                if let Some((name, value)) = assignment(&expanded) {
                    vars.insert(name, value);
                    continue;
                }
                assignments_only = false;
            }
            out.push(expanded);
        }
        Some(out)
    }
}

impl Exceeded {
    /// One line for a reason: why the command is not harmless (the numbers are
    /// [`MAX_NESTING`], [`MAX_LINE`], [`MAX_COMMANDS`] and [`MAX_WORDS`]; a test keeps them in
    /// step).
    pub fn explanation(self) -> &'static str {
        match self {
            Exceeded::Nesting => {
                "commands nested deeper than 8 levels cannot be read, so they are not harmless"
            }
            Exceeded::Length => {
                "a command longer than 128 KiB cannot be run as one argument of `bash -c` (Linux's MAX_ARG_STRLEN), so it is not read and not harmless"
            }
            Exceeded::Size => {
                "a command line that unfolds into more text than its reading budget cannot be read, so it is not harmless"
            }
            Exceeded::Commands => {
                "a command line of more than 1024 simple commands cannot be read, so it is not harmless"
            }
            Exceeded::Words => {
                "a command line of more than 8192 words cannot be read, so it is not harmless"
            }
        }
    }
}

/// Variables assigned earlier in a command line, by name.
pub type Vars = HashMap<String, String>;

/// One simple command: a program and its arguments, with its redirections apart.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SimpleCommand {
    /// The unquoted words (argv, leading `NAME=value` assignments included), without
    /// redirections.
    pub words: Vec<String>,
    /// The redirections, in the order written.
    pub redirects: Vec<Redirect>,
    /// Bodies of command and process substitutions in this command (`$(…)`, `` `…` ``,
    /// `<(…)`, `>(…)`), to read as commands of their own.
    pub substitutions: Vec<String>,
    /// Its standard input is the previous command's output (`a | b`, `a |& b`, `a | (b)`).
    pub piped: bool,
    /// A `$` outside single quotes and escapes (`$X`, `${X}`, `"$1"`, `$$`): the shell
    /// expands it, so some word's value is not known before the line runs. A `$` in single
    /// quotes (`awk '{print $1}'`, `grep 'x$'`) or escaped (`\$`) is text.
    pub expands: bool,
}

/// A redirection such as `2>&1`, `> out.txt`, `<<EOF`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Redirect {
    /// The file descriptor written before the operator (`2` in `2>err`), if any.
    pub fd: Option<u32>,
    pub op: RedirectOp,
    /// The unquoted word after the operator: a file, a descriptor (`1` in `2>&1`), `-`, or a
    /// here-document's delimiter. Empty when the line ended before it.
    pub target: String,
    /// How many words of [`SimpleCommand::words`] came before it.
    pub position: usize,
}

/// The redirection operators.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RedirectOp {
    /// `<`
    Read,
    /// `>`
    Write,
    /// `>>`
    Append,
    /// `>|`
    Clobber,
    /// `<>`
    ReadWrite,
    /// `<&`
    DupIn,
    /// `>&`
    DupOut,
    /// `&>`: standard output and error to a file.
    WriteAll,
    /// `&>>`
    AppendAll,
    /// `<<` and `<<-`: a here-document.
    HereDoc,
    /// `<<<`: a here-string.
    HereString,
}

impl RedirectOp {
    /// The operator as written.
    pub fn as_str(self) -> &'static str {
        match self {
            RedirectOp::Read => "<",
            RedirectOp::Write => ">",
            RedirectOp::Append => ">>",
            RedirectOp::Clobber => ">|",
            RedirectOp::ReadWrite => "<>",
            RedirectOp::DupIn => "<&",
            RedirectOp::DupOut => ">&",
            RedirectOp::WriteAll => "&>",
            RedirectOp::AppendAll => "&>>",
            RedirectOp::HereDoc => "<<",
            RedirectOp::HereString => "<<<",
        }
    }

    /// Does it open its target for writing (creating or truncating a file)?
    pub fn writes(self) -> bool {
        matches!(
            self,
            RedirectOp::Write
                | RedirectOp::Append
                | RedirectOp::Clobber
                | RedirectOp::ReadWrite
                | RedirectOp::WriteAll
                | RedirectOp::AppendAll
        )
    }
}

impl SimpleCommand {
    /// The command as written: its words with each redirection put back where it stood, as
    /// two tokens (`2>`, `err.txt`). For checks that judge every word, redirection targets
    /// included.
    pub fn tokens(&self) -> Vec<String> {
        if self.redirects.is_empty() {
            return self.words.clone();
        }
        let mut tokens = Vec::with_capacity(self.words.len() + 2 * self.redirects.len());
        let mut redirects = self.redirects.iter().peekable();
        for i in 0..=self.words.len() {
            while let Some(r) = redirects.next_if(|r| r.position <= i) {
                let fd = r.fd.map(|fd| fd.to_string()).unwrap_or_default();
                tokens.push(format!("{fd}{}", r.op.as_str()));
                if !r.target.is_empty() {
                    tokens.push(r.target.clone());
                }
            }
            if let Some(word) = self.words.get(i) {
                tokens.push(word.clone());
            }
        }
        tokens
    }
}

/// Split a command line into simple commands with unquoted words (see the module doc).
pub fn commands(line: &str) -> Vec<SimpleCommand> {
    Lexer::new(line).run()
}

/// A lexer over the line's bytes: every character the shell treats specially is ASCII, and no
/// byte of a multi-byte UTF-8 character is, so runs of ordinary text are copied whole and a
/// slice boundary is always a character boundary. Reads exactly as a reading char by char
/// (`reference::Lexer` in the tests, held equal on generated lines), in a single pass.
struct Lexer<'a> {
    text: &'a str,
    bytes: &'a [u8],
    i: usize,
    commands: Vec<SimpleCommand>,
    current: SimpleCommand,
    word: String,
    in_word: bool,
    /// Part of the current word was quoted (so `"2">x` has no descriptor).
    quoted: bool,
    /// A redirection whose target is the next word.
    pending: Option<Redirect>,
}

/// ASCII whitespace as `char::is_whitespace` has it (`\x0b` included, unlike
/// `u8::is_ascii_whitespace`).
fn ascii_space(b: u8) -> bool {
    matches!(b, b' ' | b'\t' | b'\n' | b'\x0b' | b'\x0c' | b'\r')
}

/// A byte that ends a run of ordinary word text: whitespace, quotes, escapes, `$`, operators.
fn special(b: u8) -> bool {
    ascii_space(b)
        || matches!(
            b,
            b'\\'
                | b'\''
                | b'"'
                | b'$'
                | b'`'
                | b'<'
                | b'>'
                | b'&'
                | b'#'
                | b';'
                | b'|'
                | b'('
                | b')'
        )
}

impl<'a> Lexer<'a> {
    fn new(line: &'a str) -> Lexer<'a> {
        Lexer {
            text: line,
            bytes: line.as_bytes(),
            i: 0,
            commands: Vec::new(),
            current: SimpleCommand::default(),
            word: String::new(),
            in_word: false,
            quoted: false,
            pending: None,
        }
    }

    fn peek(&self, ahead: usize) -> Option<u8> {
        self.bytes.get(self.i + ahead).copied()
    }

    /// The character starting at byte `at` (a character boundary).
    fn char_at(&self, at: usize) -> Option<char> {
        self.text[at..].chars().next()
    }

    fn finish_word(&mut self) {
        if self.in_word {
            let word = std::mem::take(&mut self.word);
            match self.pending.take() {
                Some(mut redirect) => {
                    redirect.target = word;
                    self.current.redirects.push(redirect);
                }
                None => self.current.words.push(word),
            }
            self.in_word = false;
            self.quoted = false;
        }
    }

    fn finish_command(&mut self) {
        self.finish_word();
        if let Some(redirect) = self.pending.take() {
            self.current.redirects.push(redirect);
        }
        let c = &self.current;
        if !c.words.is_empty() || !c.substitutions.is_empty() || !c.redirects.is_empty() {
            self.commands.push(std::mem::take(&mut self.current));
        }
    }

    /// The body of a substitution (`$(…)`, `<(…)`), kept in the word as `{open}(body)`.
    fn substitution(&mut self, open: &str, paren: usize) {
        let (body, end) = balanced(self.bytes, paren);
        let body = &self.text[body];
        self.word.reserve(open.len() + body.len() + 2);
        self.word.push_str(open);
        self.word.push('(');
        self.word.push_str(body);
        self.word.push(')');
        self.current.substitutions.push(body.to_string());
        self.in_word = true;
        self.i = end;
    }

    fn run(mut self) -> Vec<SimpleCommand> {
        while self.i < self.bytes.len() {
            let c = self.bytes[self.i];
            match c {
                b'\\' => self.escaped(),
                b'\'' => self.single_quoted(),
                b'"' => self.double_quoted(),
                b'$' if self.peek(1) == Some(b'\'') => self.ansi_c_quoted(),
                // The word keeps a marker: its value is unknowable (a push destination from a
                // substitution could be main).
                b'$' if self.peek(1) == Some(b'(') => self.substitution("$", self.i + 1),
                b'`' => self.backquoted(),
                // Process substitution: `<(curl …)` runs its body as a command.
                b'<' | b'>' if self.peek(1) == Some(b'(') => {
                    let open = if c == b'<' { "<" } else { ">" };
                    self.substitution(open, self.i + 1);
                }
                b'<' | b'>' => self.redirect(),
                b'&' if self.peek(1) == Some(b'>') => self.redirect(),
                b'#' if !self.in_word => {
                    self.i = find_from(self.bytes, self.i, b'\n');
                }
                b';' | b'&' | b'|' | b'\n' | b'(' | b')' => self.separator(c),
                c if ascii_space(c) => {
                    self.finish_word();
                    self.i += 1;
                }
                b'$' | b'#' => {
                    if c == b'$' {
                        self.current.expands = true;
                    }
                    self.word.push(c as char);
                    self.in_word = true;
                    self.i += 1;
                }
                _ => self.plain(),
            }
        }
        self.finish_command();
        self.commands
    }

    /// A backslash at `self.i`: the next character, taken literally (a newline after it joins
    /// the lines).
    fn escaped(&mut self) {
        match self.char_at(self.i + 1) {
            Some(next) => {
                if next != '\n' {
                    self.word.push(next);
                    self.in_word = true;
                    self.quoted = true;
                }
                self.i += 1 + next.len_utf8();
            }
            None => self.i += 1,
        }
    }

    /// A `'…'` string at `self.i`: its text, taken literally.
    fn single_quoted(&mut self) {
        let end = find_from(self.bytes, self.i + 1, b'\'');
        self.word.push_str(&self.text[self.i + 1..end]);
        self.in_word = true;
        self.quoted = true;
        self.i = end + 1;
    }

    /// A `$'…'` string at `self.i`: its escapes decoded.
    fn ansi_c_quoted(&mut self) {
        let (text, end) = ansi_c(self.text, self.i + 2);
        self.word.push_str(&text);
        self.in_word = true;
        self.quoted = true;
        self.i = end;
    }

    /// A `` `…` `` substitution at `self.i`, kept in the word with its backquotes.
    fn backquoted(&mut self) {
        let end = find_from(self.bytes, self.i + 1, b'`');
        let body = &self.text[self.i + 1..end];
        self.word.push('`');
        self.word.push_str(body);
        self.word.push('`');
        self.current.substitutions.push(body.to_string());
        self.in_word = true;
        self.i = end + 1;
    }

    /// A byte that ends the simple command (`;`, `&`, `|`, a newline, `(`, `)`), noting
    /// whether the next one reads the output of this one.
    fn separator(&mut self, c: u8) {
        let piped = self.current.piped;
        self.finish_command();
        let before = self.i.checked_sub(1).map(|b| self.bytes[b]);
        let after = self.peek(1);
        // `|` (not `||`) pipes into the next command; `|&` and a `(` after a pipe keep
        // piping; anything else starts a new pipeline.
        self.current.piped = match c {
            b'|' => after != Some(b'|') && before != Some(b'|'),
            b'&' => before == Some(b'|') && piped,
            b'(' => piped,
            _ => false,
        };
        self.i += 1;
    }

    /// A run of ordinary text at `self.i` (not a special byte): copied into the word whole.
    /// A character that is whitespace outside ASCII (`\u{a0}`, `\u{3000}`) ends the word as a
    /// space does.
    fn plain(&mut self) {
        let start = self.i;
        let mut j = start;
        while j < self.bytes.len() {
            let b = self.bytes[j];
            if b < 0x80 {
                if special(b) {
                    break;
                }
                j += 1;
            } else {
                let ch = self.char_at(j).expect("a character boundary");
                if ch.is_whitespace() {
                    break;
                }
                j += ch.len_utf8();
            }
        }
        if j == start {
            // Whitespace outside ASCII.
            let ch = self.char_at(start).expect("a character boundary");
            self.finish_word();
            self.i += ch.len_utf8();
            return;
        }
        self.word.push_str(&self.text[start..j]);
        self.in_word = true;
        self.i = j;
    }

    fn double_quoted(&mut self) {
        let (text, bytes) = (self.text, self.bytes);
        let mut j = self.i + 1;
        // The start of the text not yet copied into the word.
        let mut run = j;
        while j < bytes.len() && bytes[j] != b'"' {
            let b = bytes[j];
            if b == b'\\'
                && j + 1 < bytes.len()
                && matches!(bytes[j + 1], b'"' | b'\\' | b'$' | b'`')
            {
                self.word.push_str(&text[run..j]);
                self.word.push(bytes[j + 1] as char);
                j += 2;
                run = j;
                continue;
            }
            if b == b'$' && bytes.get(j + 1) == Some(&b'(') {
                self.word.push_str(&text[run..j]);
                let (body, end) = balanced(bytes, j + 1);
                let body = &text[body];
                self.word.push_str("$(");
                self.word.push_str(body);
                self.word.push(')');
                self.current.substitutions.push(body.to_string());
                j = end;
                run = j;
                continue;
            }
            if b == b'`' {
                self.word.push_str(&text[run..j]);
                let end = find_from(bytes, j + 1, b'`');
                self.current
                    .substitutions
                    .push(text[j + 1..end].to_string());
                j = end + 1;
                run = j;
                continue;
            }
            if b == b'$' {
                self.current.expands = true;
            }
            j += 1;
        }
        let end = j.min(bytes.len());
        self.word.push_str(&text[run.min(end)..end]);
        self.in_word = true;
        self.quoted = true;
        self.i = j + 1;
    }

    /// A redirection operator at `self.i` (`<`, `>` or `&>`); a word of digits just before
    /// it is its descriptor.
    fn redirect(&mut self) {
        let fd = (self.in_word && !self.quoted && !self.word.is_empty())
            .then(|| self.word.parse::<u32>().ok())
            .flatten();
        if fd.is_some() {
            self.word.clear();
            self.in_word = false;
        } else {
            self.finish_word();
        }
        // An operator right after another (`> >x`) leaves the first without a target.
        if let Some(redirect) = self.pending.take() {
            self.current.redirects.push(redirect);
        }
        let rest = &self.bytes[self.i..(self.i + 3).min(self.bytes.len())];
        let (op, len) = [
            (&b"&>>"[..], RedirectOp::AppendAll),
            (b"&>", RedirectOp::WriteAll),
            (b"<<<", RedirectOp::HereString),
            (b"<<-", RedirectOp::HereDoc),
            (b"<<", RedirectOp::HereDoc),
            (b"<&", RedirectOp::DupIn),
            (b"<>", RedirectOp::ReadWrite),
            (b"<", RedirectOp::Read),
            (b">>", RedirectOp::Append),
            (b">&", RedirectOp::DupOut),
            (b">|", RedirectOp::Clobber),
            (b">", RedirectOp::Write),
        ]
        .into_iter()
        .find(|(text, _)| rest.starts_with(text))
        .map(|(text, op)| (op, text.len()))
        .unwrap_or((RedirectOp::Write, 1));
        self.pending = Some(Redirect {
            fd,
            op,
            target: String::new(),
            position: self.current.words.len(),
        });
        self.i += len;
    }
}

/// The index of the next `byte` at or after `from`, else the end.
fn find_from(bytes: &[u8], from: usize, byte: u8) -> usize {
    let from = from.min(bytes.len());
    bytes[from..]
        .iter()
        .position(|&b| b == byte)
        .map_or(bytes.len(), |p| p + from)
}

/// The body of `( … )` starting at `open` (which holds `(`), as a range of the line, and the
/// index after it.
fn balanced(bytes: &[u8], open: usize) -> (std::ops::Range<usize>, usize) {
    let mut depth = 0usize;
    let mut j = open;
    while j < bytes.len() {
        match bytes[j] {
            b'(' => depth += 1,
            b')' => {
                depth -= 1;
                if depth == 0 {
                    return (open + 1..j, j + 1);
                }
            }
            _ => {}
        }
        j += 1;
    }
    ((open + 1).min(bytes.len())..bytes.len(), bytes.len())
}

/// Decode a `$'…'` string starting at byte `start` (after the opening quote); the decoded
/// text and the byte index after the closing quote.
fn ansi_c(text: &str, start: usize) -> (String, usize) {
    let start = start.min(text.len());
    let mut out = String::new();
    let mut chars = text[start..].char_indices().peekable();
    // The digits of `radix` next, at most `max` of them, consumed.
    let digits = |chars: &mut std::iter::Peekable<std::str::CharIndices<'_>>,
                  max: usize,
                  radix: u32|
     -> String {
        let mut out = String::new();
        while out.len() < max
            && let Some(&(_, c)) = chars.peek()
            && c.is_digit(radix)
        {
            out.push(c);
            chars.next();
        }
        out
    };
    while let Some((at, c)) = chars.next() {
        if c == '\'' {
            return (out, start + at + 1);
        }
        if c == '\\'
            && let Some((_, e)) = chars.next()
        {
            match e {
                'n' => out.push('\n'),
                't' => out.push('\t'),
                'x' | 'u' | 'U' => {
                    let max = match e {
                        'x' => 2,
                        'u' => 4,
                        _ => 8,
                    };
                    let hex = digits(&mut chars, max, 16);
                    if let Some(ch) = u32::from_str_radix(&hex, 16).ok().and_then(char::from_u32) {
                        out.push(ch);
                    }
                }
                '0'..='7' => {
                    let oct = format!("{e}{}", digits(&mut chars, 2, 8));
                    if let Some(ch) = u32::from_str_radix(&oct, 8).ok().and_then(char::from_u32) {
                        out.push(ch);
                    }
                }
                other => out.push(other),
            }
            continue;
        }
        out.push(c);
    }
    (out, text.len() + 1)
}

/// The longest file name, in bytes (Linux's `NAME_MAX`): a longer base name names no program.
const NAME_MAX: usize = 255;

/// The program name of a word: its base name, lower-cased (a case-insensitive file system
/// runs `GIT` as git). Borrowed when the base name is lower-case ASCII already, as nearly every
/// word is: checks ask it of every word of a command. A base name longer than `NAME_MAX`
/// names no program that can run and is returned as written: lower-casing a 128 KiB word of
/// wide characters, asked several times a command, took most of 11 ms.
pub fn program(word: &str) -> Cow<'_, str> {
    let base = word.rsplit('/').next().unwrap_or(word);
    if base.len() > NAME_MAX || (base.is_ascii() && !base.bytes().any(|b| b.is_ascii_uppercase())) {
        Cow::Borrowed(base)
    } else {
        Cow::Owned(base.to_lowercase())
    }
}

/// A command with the runners in front of it taken apart (see [`peel`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Peeled<'a> {
    /// The runners and keywords in front, by program name (`sudo`, `env`, `then`), in order.
    pub runners: Vec<String>,
    /// The command they run: its program first.
    pub command: &'a [String],
}

/// Take apart what runs a command without being it: `sudo -u x`, `env A=1`, `command`,
/// `nohup`, `time`, `nice -n 5`, `timeout 10`, `xargs`, `exec`, and the shell keywords that
/// can stand before a command (`then`, `do`, `else`, `!`, `{`, `eval`).
pub fn peel(words: &[String]) -> Peeled<'_> {
    let mut runners = Vec::new();
    let mut rest = words;
    while let Some(first) = rest.first() {
        let name = program(first);
        let takes_value: &[&str] = match &*name {
            "sudo" | "doas" => &["-u", "-g", "-C", "-D", "-h", "-p", "-r", "-t", "-U"],
            "env" => &["-u", "-C", "-S"],
            "nice" => &["-n"],
            "ionice" => &["-c", "-n", "-p"],
            "timeout" => &["-s", "-k"],
            "xargs" => &["-I", "-L", "-n", "-P", "-s", "-d", "-E", "-a"],
            "stdbuf" => &["-i", "-o", "-e"],
            "command" | "builtin" | "exec" | "nohup" | "time" | "eval" | "then" | "do" | "else"
            | "!" | "{" => &[],
            _ => break,
        };
        rest = &rest[1..];
        while let Some(word) = rest.first() {
            if word == "--" {
                rest = &rest[1..];
                break;
            }
            if takes_value.contains(&word.as_str()) {
                rest = &rest[rest.len().min(2)..];
            } else if word.starts_with('-') || assignment(word).is_some() {
                rest = &rest[1..];
            } else if name == "timeout" && word.chars().next().is_some_and(|c| c.is_ascii_digit()) {
                // timeout's duration.
                rest = &rest[1..];
                break;
            } else {
                break;
            }
        }
        runners.push(name.into_owned());
    }
    Peeled {
        runners,
        command: rest,
    }
}

/// The command after its runners (see [`peel`]).
pub fn strip_runners(words: &[String]) -> &[String] {
    peel(words).command
}

/// `NAME=value` → (NAME, value).
pub fn assignment(word: &str) -> Option<(String, String)> {
    let (name, value) = word.split_once('=')?;
    let valid = name
        .chars()
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_');
    valid.then(|| (name.to_string(), value.to_string()))
}

/// The longest word [`expand_vars`] builds: past it a reference is left as written (so it
/// reads as unknowable), which keeps `A=xx; B=$A$A; C=$B$B; …` from doubling without end.
pub const MAX_EXPANDED: usize = 64 * 1024;

/// Replace `$NAME` and `${NAME}` with values assigned earlier in the line; unknown ones are
/// left as they are (a check treats them as unknowable), as is any reference whose value
/// would make the word longer than [`MAX_EXPANDED`].
pub fn expand_vars(word: &str, vars: &Vars) -> String {
    if !word.contains('$') || vars.is_empty() {
        return word.to_string();
    }
    let mut out = String::new();
    let chars: Vec<char> = word.chars().collect();
    // The next `}` at or after a position, found by a cursor that only moves forward, so a
    // word of many `${` is read once, not once per `${`.
    let mut close: Option<usize> = None;
    let mut i = 0;
    while i < chars.len() {
        if chars[i] == '$' && i + 1 < chars.len() {
            let (name, next) = if chars[i + 1] == '{' {
                if close.is_none_or(|c| c < i + 2) {
                    let from = close.map_or(i + 2, |c| c.max(i + 2));
                    close = chars[from..]
                        .iter()
                        .position(|&c| c == '}')
                        .map(|p| p + from)
                        .or(Some(usize::MAX));
                }
                let end = close.filter(|&c| c != usize::MAX);
                match end {
                    Some(end) => (chars[i + 2..end].iter().collect::<String>(), end + 1),
                    None => (String::new(), i + 1),
                }
            } else {
                let len = chars[i + 1..]
                    .iter()
                    .take_while(|c| c.is_ascii_alphanumeric() || **c == '_')
                    .count();
                (chars[i + 1..i + 1 + len].iter().collect(), i + 1 + len)
            };
            if let Some(value) = vars.get(&name).filter(|_| !name.is_empty())
                && out.len() + value.len() + (chars.len() - next) <= MAX_EXPANDED
            {
                out.push_str(value);
                i = next;
                continue;
            }
        }
        out.push(chars[i]);
        i += 1;
    }
    out
}

/// A command's words with variables assigned earlier substituted ([`expand_vars`]) and its
/// leading `NAME=value` assignments moved into `vars` (`RM=rm; $RM -rf x` is rm).
pub fn expand_assignments(words: &[String], vars: &mut Vars) -> Vec<String> {
    let mut out = Vec::with_capacity(words.len());
    let mut assignments_only = true;
    for word in words {
        let expanded = expand_vars(word, vars);
        if assignments_only {
            if let Some((name, value)) = assignment(&expanded) {
                vars.insert(name, value);
                continue;
            }
            assignments_only = false;
        }
        out.push(expanded);
    }
    out
}

/// One level of `pre{a,b}post` brace expansion, enough to undo `git push origin {main,}`.
pub fn expand_braces(word: &str) -> Vec<String> {
    let (Some(open), Some(close)) = (word.find('{'), word.rfind('}')) else {
        return vec![word.to_string()];
    };
    if close < open || !word[open..close].contains(',') || word.contains("${") {
        return vec![word.to_string()];
    }
    let (pre, inner, post) = (&word[..open], &word[open + 1..close], &word[close + 1..]);
    inner
        .split(',')
        .map(|alt| format!("{pre}{alt}{post}"))
        .filter(|w| !w.is_empty())
        .collect()
}

/// A word quoted for a shell so [`commands`] reads it back as one word.
pub fn quote(word: &str) -> String {
    format!("'{}'", word.replace('\'', "'\\''"))
}

/// A word for `sh` that reads back as itself: as it is when every character is plain, else
/// single-quoted like [`quote`] (for commands a person reads, such as an installed hook).
pub fn quote_if_needed(text: &str) -> String {
    if !text.is_empty()
        && text
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "-_./=:,@%+".contains(c))
    {
        return text.to_string();
    }
    format!("'{}'", text.replace('\'', r"'\''"))
}

/// Is `arg` the long option `--name`, or an abbreviation of it getopt (and git) would accept
/// (at least `min` characters), or `--name=…`?
pub fn is_long_option(arg: &str, name: &str, min: usize) -> bool {
    let Some(body) = arg.strip_prefix("--") else {
        return false;
    };
    let body = body.split('=').next().unwrap_or(body);
    body.len() >= min && name.starts_with(body)
}

/// git's global options (before the subcommand) that take a separate value.
pub const GIT_GLOBAL_WITH_VALUE: [&str; 7] = [
    "-C",
    "-c",
    "--git-dir",
    "--work-tree",
    "--namespace",
    "--super-prefix",
    "--config-env",
];

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn words(line: &str) -> Vec<Vec<String>> {
        commands(line).into_iter().map(|c| c.words).collect()
    }

    fn w(items: &[&str]) -> Vec<String> {
        items.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn separators_split_simple_commands() {
        assert_eq!(
            words("a 1; b 2 && c || d | e |& f & g\nh (i; j) k"),
            vec![
                w(&["a", "1"]),
                w(&["b", "2"]),
                w(&["c"]),
                w(&["d"]),
                w(&["e"]),
                w(&["f"]),
                w(&["g"]),
                w(&["h"]),
                w(&["i"]),
                w(&["j"]),
                w(&["k"]),
            ]
        );
    }

    #[test]
    fn pipes_are_marked() {
        let piped: Vec<bool> = commands("a | b || c |& d; e | (f)")
            .iter()
            .map(|c| c.piped)
            .collect();
        assert_eq!(piped, [false, true, false, true, false, true]);
    }

    #[test]
    fn quotes_and_escapes_are_undone() {
        assert_eq!(
            words(r#"git push '--force' "-f" $'\x2df' \-\-mirror "a\"b" 'it'\''s'"#),
            vec![w(&[
                "git", "push", "--force", "-f", "-f", "--mirror", "a\"b", "it's"
            ])]
        );
        assert_eq!(words("echo a\\\nb"), vec![w(&["echo", "ab"])]);
        assert_eq!(words("echo hi # rm -rf /"), vec![w(&["echo", "hi"])]);
    }

    #[test]
    fn substitutions_are_commands_of_their_own() {
        let c = &commands("echo \"$(rm -rf x)\" `id` <(curl u) $(a $(b))")[0];
        assert_eq!(c.substitutions, ["rm -rf x", "id", "curl u", "a $(b)"]);
        assert_eq!(c.words[0], "echo");
        assert_eq!(c.words[1], "$(rm -rf x)");
        assert_eq!(c.words[3], "<(curl u)");
    }

    #[test]
    fn redirections_leave_the_words() {
        let c = &commands("cargo test 2>&1 >out.txt < in &>> all <<EOF <<< 'here'")[0];
        assert_eq!(c.words, w(&["cargo", "test"]));
        let seen: Vec<(Option<u32>, RedirectOp, &str)> = c
            .redirects
            .iter()
            .map(|r| (r.fd, r.op, r.target.as_str()))
            .collect();
        assert_eq!(
            seen,
            [
                (Some(2), RedirectOp::DupOut, "1"),
                (None, RedirectOp::Write, "out.txt"),
                (None, RedirectOp::Read, "in"),
                (None, RedirectOp::AppendAll, "all"),
                (None, RedirectOp::HereDoc, "EOF"),
                (None, RedirectOp::HereString, "here"),
            ]
        );
        // `2>&1` and `&>` do not split the command at `&`.
        assert_eq!(commands("a 2>&1 | b").len(), 2);
        assert!(commands("a 2>&1 | b")[1].piped);
        // A quoted or mixed word before the operator is not a descriptor.
        let c = &commands("echo \"2\">x a2>y")[0];
        assert_eq!(c.words, w(&["echo", "2", "a2"]));
        assert_eq!(c.redirects[0].fd, None);
        assert_eq!(c.redirects[1].fd, None);
        // `: > f` truncates: a command with no program but a writing redirection.
        let c = &commands("> f")[0];
        assert!(c.words.is_empty());
        assert!(c.redirects[0].op.writes());
    }

    #[test]
    fn only_a_dollar_the_shell_expands_is_an_expansion() {
        for (line, expands) in [
            ("echo $HOME", true),
            ("echo \"$HOME\"", true),
            ("echo ${HOME}", true),
            ("ls > $OUT", true),
            ("echo a; echo $$", true),
            ("awk '{print $1}' f", false),
            ("grep 'x$' f", false),
            ("echo \\$HOME", false),
            ("echo \"\\$HOME\"", false),
            ("echo $'a\\tb'", false),
            ("echo $(date)", false),
        ] {
            let commands = commands(line);
            assert_eq!(
                commands.iter().any(|c| c.expands),
                expands,
                "{line}: {commands:?}"
            );
        }
        // Each command carries its own.
        let c = commands("grep 'x$' f && echo $X");
        assert_eq!((c[0].expands, c[1].expands), (false, true));
    }

    #[test]
    fn tokens_put_redirections_back_where_they_stood() {
        let c = &commands("> rm -rf x 2>/dev/null y")[0];
        assert_eq!(
            c.tokens(),
            w(&[">", "rm", "-rf", "x", "2>", "/dev/null", "y"])
        );
        let c = &commands("echo >")[0];
        assert_eq!(c.tokens(), w(&["echo", ">"]));
    }

    #[test]
    fn runners_are_peeled() {
        let argv = w(&[
            "sudo", "-u", "root", "env", "A=1", "nice", "-n", "5", "timeout", "10", "xargs", "-n1",
            "command", "rm", "-rf", "x",
        ]);
        let peeled = peel(&argv);
        assert_eq!(
            peeled.runners,
            ["sudo", "env", "nice", "timeout", "xargs", "command"]
        );
        assert_eq!(peeled.command, &w(&["rm", "-rf", "x"])[..]);
        assert_eq!(strip_runners(&w(&["ls"])), &w(&["ls"])[..]);
        assert_eq!(program("/usr/bin/GIT"), "git");
        assert_eq!(program(&"É".repeat(127)), "é".repeat(127));
        // Longer than a file name may be: no program, returned as written.
        assert_eq!(program(&"É".repeat(128)), "É".repeat(128));
    }

    #[test]
    fn variables_assigned_earlier_are_followed() {
        let mut vars = Vars::new();
        let mut seen = Vec::new();
        for c in commands("RM=rm; F=-rf X=1 $RM ${F} x") {
            seen.push(expand_assignments(&c.words, &mut vars));
        }
        assert_eq!(seen, vec![vec![], w(&["rm", "-rf", "x"])]);
        assert_eq!(
            expand_braces("origin/{main,}"),
            w(&["origin/main", "origin/"])
        );
        assert_eq!(commands(&quote("it's a")).remove(0).words, w(&["it's a"]));
        assert!(is_long_option("--forc", "force", 3));
        assert!(is_long_option("--force=yes", "force", 3));
        assert!(!is_long_option("--fo", "force", 3));
    }

    #[test]
    fn a_reader_follows_nesting_to_its_bound_and_no_further() {
        let nest = |n: usize| "echo $(".repeat(n) + "ls" + &")".repeat(n);
        // Breadth first, as the checks read: a body is read as a substitution before it comes
        // back, one level deeper, inside its word.
        let read_all = |line: &str| {
            let mut reader = Reader::new(line);
            let mut pending = std::collections::VecDeque::from([(line.to_string(), 0)]);
            let mut deepest = 0;
            while let Some((text, depth)) = pending.pop_front() {
                if let Some(commands) = reader.read(&text, depth, "") {
                    deepest = deepest.max(depth);
                    for c in commands {
                        pending.extend(c.substitutions.into_iter().map(|b| (b, depth + 1)));
                        for w in c.words.into_iter().filter(|w| w.contains(' ')) {
                            pending.push_back((w, depth + 1));
                        }
                    }
                }
            }
            (deepest, reader.exceeded)
        };
        assert_eq!(read_all(&nest(MAX_NESTING)), (MAX_NESTING, None));
        assert_eq!(read_all(&nest(MAX_NESTING + 1)).1, Some(Exceeded::Nesting));
        assert_eq!(read_all(&nest(1_000)).1, Some(Exceeded::Nesting));
        // A long line nested deep spends `MAX_WORK` before it reaches the depth bound.
        assert_eq!(read_all(&nest(10_000)).1, Some(Exceeded::Size));
        assert_eq!(
            Reader::new(&"x".repeat(MAX_LINE + 1)).exceeded,
            Some(Exceeded::Length)
        );
        assert_eq!(Reader::new(&"x".repeat(MAX_LINE)).exceeded, None);
        // The same text in the same context is read once.
        let mut reader = Reader::new("a b");
        assert!(reader.read("a b", 1, "").is_some());
        assert!(reader.read("a b", 2, "").is_none());
        assert!(reader.read("a b", 2, "X=1").is_some());
        assert!(reader.exceeded.is_none());
        // The explanations name the bounds.
        assert!(
            Exceeded::Nesting
                .explanation()
                .contains(&MAX_NESTING.to_string())
        );
        assert!(
            Exceeded::Length
                .explanation()
                .contains(&format!("{} KiB", MAX_LINE >> 10))
        );
        assert!(
            Exceeded::Commands
                .explanation()
                .contains(&MAX_COMMANDS.to_string())
        );
        assert!(
            Exceeded::Words
                .explanation()
                .contains(&MAX_WORDS.to_string())
        );
    }

    /// However long the line, a reading lexes at most `MAX_WORK` bytes in all: a line of
    /// `MAX_LINE` bytes is read whole, and read again once, but not a third time.
    #[test]
    fn a_reader_works_at_most_max_work() {
        let line = "x".repeat(MAX_LINE);
        let mut reader = Reader::new(&line);
        assert!(reader.read(&line, 0, "").is_some());
        assert!(reader.read(&line[1..], 1, "").is_some());
        assert!(reader.read(&line[2..], 1, "").is_none());
        assert_eq!(reader.exceeded, Some(Exceeded::Size));
    }

    /// A reading holds at most `MAX_COMMANDS` simple commands in all, the line's and its
    /// nested texts' together: one more and it is incomplete, however short the line.
    #[test]
    fn a_reader_reads_at_most_max_commands() {
        let pipes = |n: usize| vec!["ls"; n].join(" | ");
        let mut reader = Reader::new(&pipes(MAX_COMMANDS));
        assert_eq!(
            reader.read(&pipes(MAX_COMMANDS), 0, "").map(|c| c.len()),
            Some(MAX_COMMANDS)
        );
        assert_eq!(reader.exceeded, None);
        assert!(
            reader.read("ls", 1, "").is_none(),
            "one more in a nested text"
        );
        assert_eq!(reader.exceeded, Some(Exceeded::Commands));
        let line = pipes(MAX_COMMANDS + 1);
        let mut reader = Reader::new(&line);
        assert!(reader.read(&line, 0, "").is_none());
        assert_eq!(reader.exceeded, Some(Exceeded::Commands));
    }

    /// A reading holds at most `MAX_WORDS` words in all, a redirection or a substitution
    /// counted as one, the line's and its nested texts' together: one more and it is
    /// incomplete.
    #[test]
    fn a_reader_reads_at_most_max_words() {
        // `rm` and its redirections `> x`: a word each.
        let line = |n: usize| format!("rm{}", " > x".repeat(n));
        let words = |commands: Vec<SimpleCommand>| -> usize {
            commands
                .iter()
                .map(|c| c.words.len() + c.redirects.len())
                .sum()
        };
        let mut reader = Reader::new(&line(MAX_WORDS - 3));
        assert_eq!(
            reader.read(&line(MAX_WORDS - 3), 0, "").map(words),
            Some(MAX_WORDS - 2)
        );
        assert!(reader.read("ls -l", 1, "").is_some(), "two more, nested");
        assert_eq!(reader.exceeded, None);
        assert!(reader.read("ls", 1, "").is_none(), "one more");
        assert_eq!(reader.exceeded, Some(Exceeded::Words));
        let plain = |n: usize| "a ".repeat(n);
        let mut reader = Reader::new(&plain(MAX_WORDS));
        assert!(reader.read(&plain(MAX_WORDS), 0, "").is_some());
        let mut reader = Reader::new(&plain(MAX_WORDS + 1));
        assert!(reader.read(&plain(MAX_WORDS + 1), 0, "").is_none());
        assert_eq!(reader.exceeded, Some(Exceeded::Words));
        // One word of many empty substitutions: each is a text to read.
        let backquotes = |n: usize| format!("echo {}", "``".repeat(n));
        let mut reader = Reader::new(&backquotes(MAX_WORDS - 2));
        assert!(reader.read(&backquotes(MAX_WORDS - 2), 0, "").is_some());
        let mut reader = Reader::new(&backquotes(MAX_WORDS - 1));
        assert!(reader.read(&backquotes(MAX_WORDS - 1), 0, "").is_none());
        assert_eq!(reader.exceeded, Some(Exceeded::Words));
    }

    #[test]
    fn expansion_cannot_multiply_without_end() {
        // Each assignment quadruples the last: 4^30 bytes if nothing stopped it.
        let mut line = String::from("A=aaaaaaaa");
        let names: Vec<char> = ('B'..='Z').collect();
        let mut prev = 'A';
        for name in &names {
            line.push_str(&format!("; {name}=${prev}${prev}${prev}${prev}"));
            prev = *name;
        }
        let mut reader = Reader::new(&line);
        let mut vars = Vars::new();
        let mut built = 0;
        for c in commands(&line) {
            match reader.expand(&c.words, &mut vars) {
                Some(words) => built += words.iter().map(String::len).sum::<usize>(),
                None => break,
            }
        }
        assert!(vars.values().all(|v| v.len() <= MAX_EXPANDED), "{built}");
        // A word of many `${` without a `}` is read once (this took minutes when each `${`
        // searched the rest of the word).
        let mut vars = Vars::new();
        vars.insert("A".to_string(), "1".to_string());
        let word = "${".repeat(200_000);
        assert_eq!(expand_vars(&word, &vars), word);
        assert_eq!(expand_vars("${A}${B}$A", &vars), "1${B}1");
    }

    proptest! {
        #[test]
        fn any_text_is_read_without_panicking(line in "\\PC{0,80}") {
            for c in commands(&line) {
                let _ = c.tokens();
                let _ = peel(&c.words);
            }
        }

        #[test]
        fn the_byte_lexer_reads_as_the_reference(
            parts in prop::collection::vec(prop_oneof![
                4 => prop::sample::select(&[
                    "\\", "'", "\"", "$", "$'", "$(", "(", ")", "`", "<(", ">(", "<", ">", "<<",
                    "<<<", "<<-", "&>", "&>>", ">&", "<&", ">|", "<>", "2", "&", "&&", "|", "||",
                    "|&", ";", "#", "\n", " ", "\t", "\x0b", "\r", "\u{a0}", "\u{3000}",
                    "\u{85}", "é", "❯", "\\x41", "\\u00e9", "\\101", "\\n", "\\é", "a", "rm",
                    "-rf", "{a,b}", "${A}", "$A", "=", "x\"y", "\\\"",
                ][..]).prop_map(str::to_string),
                1 => "\\PC{0,6}",
                1 => any::<String>().prop_map(|s| s.chars().take(6).collect()),
            ], 0..40)
        ) {
            let line: String = parts.concat();
            prop_assert_eq!(commands(&line), reference::commands(&line), "{:?}", line);
        }

        #[test]
        fn a_quoted_word_is_one_word(word in "[^\\x00]{0,40}") {
            let read = commands(&format!("echo {}", quote(&word)));
            prop_assert_eq!(read.len(), 1);
            prop_assert_eq!(&read[0].words, &vec!["echo".to_string(), word]);
        }
    }
}

/// The lexer as it was, character by character: the byte lexer above must read every line
/// exactly as it does (`the_byte_lexer_reads_as_the_reference`).
#[cfg(test)]
mod reference {
    use super::{Redirect, RedirectOp, SimpleCommand};

    pub(super) fn commands(line: &str) -> Vec<SimpleCommand> {
        Lexer::new(line).run()
    }

    pub(super) struct Lexer {
        chars: Vec<char>,
        i: usize,
        commands: Vec<SimpleCommand>,
        current: SimpleCommand,
        word: String,
        in_word: bool,
        /// Part of the current word was quoted (so `"2">x` has no descriptor).
        quoted: bool,
        /// A redirection whose target is the next word.
        pending: Option<Redirect>,
    }

    impl Lexer {
        fn new(line: &str) -> Lexer {
            Lexer {
                chars: line.chars().collect(),
                i: 0,
                commands: Vec::new(),
                current: SimpleCommand::default(),
                word: String::new(),
                in_word: false,
                quoted: false,
                pending: None,
            }
        }

        fn peek(&self, ahead: usize) -> Option<char> {
            self.chars.get(self.i + ahead).copied()
        }

        fn finish_word(&mut self) {
            if self.in_word {
                let word = std::mem::take(&mut self.word);
                match self.pending.take() {
                    Some(mut redirect) => {
                        redirect.target = word;
                        self.current.redirects.push(redirect);
                    }
                    None => self.current.words.push(word),
                }
                self.in_word = false;
                self.quoted = false;
            }
        }

        fn finish_command(&mut self) {
            self.finish_word();
            if let Some(redirect) = self.pending.take() {
                self.current.redirects.push(redirect);
            }
            let c = &self.current;
            if !c.words.is_empty() || !c.substitutions.is_empty() || !c.redirects.is_empty() {
                self.commands.push(std::mem::take(&mut self.current));
            }
        }

        fn run(mut self) -> Vec<SimpleCommand> {
            while self.i < self.chars.len() {
                let c = self.chars[self.i];
                match c {
                    '\\' => {
                        if let Some(next) = self.peek(1) {
                            if next != '\n' {
                                self.word.push(next);
                                self.in_word = true;
                                self.quoted = true;
                            }
                            self.i += 2;
                        } else {
                            self.i += 1;
                        }
                    }
                    '\'' => {
                        let end = self.find_from(self.i + 1, '\'');
                        self.word.extend(&self.chars[self.i + 1..end]);
                        self.in_word = true;
                        self.quoted = true;
                        self.i = end + 1;
                    }
                    '"' => self.double_quoted(),
                    '$' if self.peek(1) == Some('\'') => {
                        let (text, end) = ansi_c(&self.chars, self.i + 2);
                        self.word.push_str(&text);
                        self.in_word = true;
                        self.quoted = true;
                        self.i = end;
                    }
                    '$' if self.peek(1) == Some('(') => {
                        let (body, end) = balanced(&self.chars, self.i + 1);
                        // The word keeps a marker: its value is unknowable (a push destination
                        // from a substitution could be main).
                        self.word.push_str(&format!("$({body})"));
                        self.current.substitutions.push(body);
                        self.in_word = true;
                        self.i = end;
                    }
                    '`' => {
                        let end = self.find_from(self.i + 1, '`');
                        let body: String = self.chars[self.i + 1..end].iter().collect();
                        self.word.push_str(&format!("`{body}`"));
                        self.current.substitutions.push(body);
                        self.in_word = true;
                        self.i = end + 1;
                    }
                    // Process substitution: `<(curl …)` runs its body as a command.
                    '<' | '>' if self.peek(1) == Some('(') => {
                        let (body, end) = balanced(&self.chars, self.i + 1);
                        self.word.push(c);
                        self.word.push_str(&format!("({body})"));
                        self.current.substitutions.push(body);
                        self.in_word = true;
                        self.i = end;
                    }
                    '<' | '>' => self.redirect(),
                    '&' if self.peek(1) == Some('>') => self.redirect(),
                    '#' if !self.in_word => {
                        while self.i < self.chars.len() && self.chars[self.i] != '\n' {
                            self.i += 1;
                        }
                    }
                    ';' | '&' | '|' | '\n' | '(' | ')' => {
                        let piped = self.current.piped;
                        self.finish_command();
                        let before = self.i.checked_sub(1).map(|b| self.chars[b]);
                        let after = self.peek(1);
                        // `|` (not `||`) pipes into the next command; `|&` and a `(` after a
                        // pipe keep piping; anything else starts a new pipeline.
                        self.current.piped = match c {
                            '|' => after != Some('|') && before != Some('|'),
                            '&' => before == Some('|') && piped,
                            '(' => piped,
                            _ => false,
                        };
                        self.i += 1;
                    }
                    c if c.is_whitespace() => {
                        self.finish_word();
                        self.i += 1;
                    }
                    _ => {
                        if c == '$' {
                            self.current.expands = true;
                        }
                        self.word.push(c);
                        self.in_word = true;
                        self.i += 1;
                    }
                }
            }
            self.finish_command();
            self.commands
        }

        /// The index of the next `close` at or after `from`, else the end.
        fn find_from(&self, from: usize, close: char) -> usize {
            self.chars[from.min(self.chars.len())..]
                .iter()
                .position(|&c| c == close)
                .map_or(self.chars.len(), |p| p + from)
        }

        fn double_quoted(&mut self) {
            let chars = &self.chars;
            let mut j = self.i + 1;
            while j < chars.len() && chars[j] != '"' {
                if chars[j] == '\\'
                    && j + 1 < chars.len()
                    && matches!(chars[j + 1], '"' | '\\' | '$' | '`')
                {
                    self.word.push(chars[j + 1]);
                    j += 2;
                    continue;
                }
                if chars[j] == '$' && chars.get(j + 1) == Some(&'(') {
                    let (body, end) = balanced(chars, j + 1);
                    self.word.push_str(&format!("$({body})"));
                    self.current.substitutions.push(body);
                    j = end;
                    continue;
                }
                if chars[j] == '`' {
                    let end = chars[j + 1..]
                        .iter()
                        .position(|&c| c == '`')
                        .map_or(chars.len(), |p| p + j + 1);
                    self.current
                        .substitutions
                        .push(chars[j + 1..end].iter().collect());
                    j = end + 1;
                    continue;
                }
                if chars[j] == '$' {
                    self.current.expands = true;
                }
                self.word.push(chars[j]);
                j += 1;
            }
            self.in_word = true;
            self.quoted = true;
            self.i = j + 1;
        }

        /// A redirection operator at `self.i` (`<`, `>` or `&>`); a word of digits just before
        /// it is its descriptor.
        fn redirect(&mut self) {
            let fd = (self.in_word && !self.quoted && !self.word.is_empty())
                .then(|| self.word.parse::<u32>().ok())
                .flatten();
            if fd.is_some() {
                self.word.clear();
                self.in_word = false;
            } else {
                self.finish_word();
            }
            // An operator right after another (`> >x`) leaves the first without a target.
            if let Some(redirect) = self.pending.take() {
                self.current.redirects.push(redirect);
            }
            let rest: String = self.chars[self.i..].iter().take(3).collect();
            let (op, len) = [
                ("&>>", RedirectOp::AppendAll),
                ("&>", RedirectOp::WriteAll),
                ("<<<", RedirectOp::HereString),
                ("<<-", RedirectOp::HereDoc),
                ("<<", RedirectOp::HereDoc),
                ("<&", RedirectOp::DupIn),
                ("<>", RedirectOp::ReadWrite),
                ("<", RedirectOp::Read),
                (">>", RedirectOp::Append),
                (">&", RedirectOp::DupOut),
                (">|", RedirectOp::Clobber),
                (">", RedirectOp::Write),
            ]
            .into_iter()
            .find(|(text, _)| rest.starts_with(text))
            .map(|(text, op)| (op, text.chars().count()))
            .unwrap_or((RedirectOp::Write, 1));
            self.pending = Some(Redirect {
                fd,
                op,
                target: String::new(),
                position: self.current.words.len(),
            });
            self.i += len;
        }
    }

    /// The body of `( … )` starting at `open` (which holds `(`), and the index after it.
    fn balanced(chars: &[char], open: usize) -> (String, usize) {
        let mut depth = 0;
        let mut j = open;
        while j < chars.len() {
            match chars[j] {
                '(' => depth += 1,
                ')' => {
                    depth -= 1;
                    if depth == 0 {
                        return (chars[open + 1..j].iter().collect(), j + 1);
                    }
                }
                _ => {}
            }
            j += 1;
        }
        (
            chars[(open + 1).min(chars.len())..].iter().collect(),
            chars.len(),
        )
    }

    /// Decode a `$'…'` string starting after the opening quote.
    fn ansi_c(chars: &[char], start: usize) -> (String, usize) {
        let mut out = String::new();
        let mut j = start;
        let digits = |j: usize, max: usize, radix: u32| -> String {
            chars[j.min(chars.len())..]
                .iter()
                .take(max)
                .take_while(|c| c.is_digit(radix))
                .collect()
        };
        while j < chars.len() && chars[j] != '\'' {
            if chars[j] == '\\' && j + 1 < chars.len() {
                let e = chars[j + 1];
                j += 2;
                match e {
                    'n' => out.push('\n'),
                    't' => out.push('\t'),
                    'x' | 'u' | 'U' => {
                        let max = match e {
                            'x' => 2,
                            'u' => 4,
                            _ => 8,
                        };
                        let hex = digits(j, max, 16);
                        j += hex.len();
                        if let Some(ch) =
                            u32::from_str_radix(&hex, 16).ok().and_then(char::from_u32)
                        {
                            out.push(ch);
                        }
                    }
                    '0'..='7' => {
                        let oct = format!("{e}{}", digits(j, 2, 8));
                        j += oct.len() - 1;
                        if let Some(ch) = u32::from_str_radix(&oct, 8).ok().and_then(char::from_u32)
                        {
                            out.push(ch);
                        }
                    }
                    other => out.push(other),
                }
                continue;
            }
            out.push(chars[j]);
            j += 1;
        }
        (out, j + 1)
    }
}
