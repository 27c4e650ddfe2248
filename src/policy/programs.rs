//! The built-in harmless rules for single programs, each with the flags it lists (DESIGN.md,
//! Safety: "a rule allows only the flags it lists"):
//!
//! - `read-only`: inspection that changes nothing — `ls`, `cat`, `head`, `tail`, `grep`, `rg`,
//!   `find` without actions (`-delete`, `-exec…`, `-ok…`, `-fprint…` are not listed), `wc`,
//!   `less`, `sed` with a printing script, `awk` without commands, writes or the environment,
//!   `sort`/`uniq` without an output file, `diff`, `stat`, `file`, `du`, `df`, `jq`, `echo`,
//!   `pwd`, `which`, `date` (printing only), `cd`, `test`, `set -euo pipefail`, and the git
//!   inspections of [`super::git`]; a secret (`~/.ssh`, `.env`, keys) is never read;
//! - `runner`: build and test runners with conventional subcommands — `cargo
//!   build|test|check|clippy|fmt|doc`, `npm|pnpm|yarn test|ci|install` (no package named),
//!   `npm run` / `yarn` / `pnpm` / `make` targets in {build, test, check, lint, fmt, format,
//!   typecheck, all} or none, `pytest`, `go build|test|vet`, `tsc`, linters and formatters
//!   (ruff, eslint, prettier, mypy, black, …), and an interpreter running a script of the
//!   project (no `-c`/`-e`, no stdin, not a dependency's file, not named deploy/release/…).
//!   Approving a runner runs the project's code;
//! - `mkdir`: creating directories inside the project or the temporary directory;
//! - `write-in-project`: `touch`, `cp -n` (never overwrites), `tee -a` inside the project,
//!   never a sensitive path.
//!
//! Anything else — an unknown program, a flag not listed, a target not listed — is not
//! harmless. Every flag list, subcommand list and word list named here is data in
//! `rules/policy.json` ([`super::data`]) — jq's refused words and program-file flags, find's
//! leading options, the tests that read a file and the `-newerXY` ones, `set`'s letters, the
//! one taking a value and its `-o` names, make's count, directory and `=VALUE` flags, the
//! report flags (`--cov-report`) and the kinds that write a directory, the flags whose value
//! must be a directory of the project, the interpreter families and their flags, the run
//! wrappers, the flags that read a file or give a search's pattern, what a path operand may
//! not start with (`less +CMD`) — and so are the
//! spellings of npm's, pnpm's and yarn's subcommands, cargo's `+toolchain`,
//! `--version`/`--help`, `command -v`, `date +FORMAT`, `tee /dev/null`, `tee -a` and `cp -n`
//! (`argument_forms`, read by [`super::forms`]); how each program's operands are read is here.

use super::argv::{self, FlagError, Parsed, Spec};
pub use super::data::is_interpreter;
use super::data::{
    AWK_REFUSED_WORDS, CARGO_BUILD_ONLY_SUBCOMMANDS, CARGO_SUBCOMMAND_ALIASES, CARGO_SUBCOMMANDS,
    DISCARDING_TARGETS, FILE_READING_FLAGS, FIND_DATE_REFERENCES, FIND_LEADING_OPTIONS,
    FIND_PATH_TESTS, FIND_TESTS, FIND_VALUED_TEST_PREFIXES, FIND_VALUED_TESTS, FLAGS_CARGO,
    FLAGS_CARGO_CLIPPY_ARGS, FLAGS_CARGO_FMT_ARGS, FLAGS_CARGO_TEST_ARGS, FLAGS_CP, FLAGS_GO,
    FLAGS_MKDIR, FLAGS_PACKAGE_MANAGER, FLAGS_TEE, FLAGS_TOUCH, FLAGS_UNITTEST, GO_SUBCOMMANDS,
    JQ_ENVIRONMENT_WORDS, JQ_MODULE_WORDS, JQ_PROGRAM_FILE_FLAGS, KNOWN_PROGRAMS, MAKE_COUNT_FLAGS,
    MAKE_DIRECTORY_FLAGS, MAKE_FLAGS, MAKE_VALUED_PREFIXES, NODE_FLAGS, NODE_INTERPRETERS,
    NOT_PATH_STARTS, NPX_PROGRAMS, Operands, PATTERN_FLAGS, PATTERNLESS_FLAGS, PERL_RUBY_FLAGS,
    PERL_RUBY_INTERPRETERS, PYTHON_FLAGS, PYTHON_INTERPRETERS, PYTHON_LEADING_FLAGS,
    PYTHON_MODULES, REPORT_DIRECTORY_KINDS, REPORT_FLAGS, RISKY_SCRIPT_WORDS, RUN_WRAPPER_FLAGS,
    RUN_WRAPPERS, RUNNER_TARGETS, SCRIPT_ARGUMENT_FLAGS, SCRIPT_SUBCOMMANDS, SED_COMMANDS,
    SED_S_FLAGS, SET_LETTERS, SET_O_OPTIONS, SET_VALUED_LETTERS, SHELL_FLAGS, SHELL_INTERPRETERS,
    SHELL_O_OPTIONS, ToolOperands, argument_forms, read_only_program, runner_tool,
};
use super::forms::{self, Reading};
use super::git;
use super::line::{Blocked, Line};

/// Judge one program (runners and assignments already taken off): the rule that proves it
/// harmless. `stdin_fed`: its standard input is a pipe, a here-document or a file.
pub fn judge(
    name: &str,
    args: &[String],
    line: &Line<'_>,
    stdin_fed: bool,
) -> Result<&'static str, Blocked> {
    // `cargo --version`, `python3 --version`, `go version`: what a program is, nothing run.
    if (read_only_program(name).is_some() || is_interpreter(name) || KNOWN_PROGRAMS.contains(&name))
        && spelled("version", name, args)
    {
        return Ok("read-only");
    }
    if let Some(rule) = read_only_program(name) {
        let parsed = parse(name, &rule.spec, args)?;
        check_operands(name, &parsed, rule.operands, line)?;
        return Ok("read-only");
    }
    match name {
        "find" => find(args, line).map(|_| "read-only"),
        "date" => only_formed("date", name, args).map(|_| "read-only"),
        "set" => set(args).map(|_| "read-only"),
        "command" => command_lookup(args).map(|_| "read-only"),
        "git" => git::judge(args, line),
        "mkdir" => mkdir(args, line),
        "touch" | "cp" | "tee" => write_in_project(name, args, line),
        "cargo" => cargo(args, line),
        "npm" | "pnpm" | "yarn" => node_package_manager(name, args, line),
        "npx" => npx(args, line, stdin_fed),
        "make" | "gmake" => make(args, line),
        "go" => go(args, line),
        _ if RUN_WRAPPERS.contains(&name) => run_wrapper(name, args, line, stdin_fed),
        _ if is_interpreter(name) => interpreter(name, args, line),
        _ => tool(name, args, line),
    }
}

/// Do `args` take one of the spellings of the `argument_forms` entry `entry`?
fn spelled(entry: &str, name: &str, args: &[String]) -> bool {
    argument_forms(entry).is_some_and(|forms| forms::read(forms, name, args) == Reading::Holds)
}

/// `args` of `name` read against the `argument_forms` entry `entry`: `Ok(true)` when a form
/// holds, `Ok(false)` when none does, the refusal when a form refuses an unlisted flag.
fn formed(entry: &str, name: &str, args: &[String]) -> Result<bool, Blocked> {
    match argument_forms(entry).map(|forms| forms::read(forms, name, args)) {
        Some(Reading::Holds) => Ok(true),
        Some(Reading::Refused(flag)) => Err(unlisted_flag(name, &flag)),
        Some(Reading::NoForm) | None => Ok(false),
    }
}

/// `args` of `name` in one of the spellings of the `argument_forms` entry `entry`, or its
/// `refusal`.
fn only_formed(entry: &str, name: &str, args: &[String]) -> Result<(), Blocked> {
    if formed(entry, name, args)? {
        return Ok(());
    }
    let refusal = argument_forms(entry).map_or("", |forms| forms.refusal);
    Err(Blocked::new("", refusal))
}

fn unlisted_flag(name: &str, flag: &dyn std::fmt::Display) -> Blocked {
    Blocked::new("", format!("{name} {flag} is not a listed flag"))
}

/// The values of the spec's `outputs` flags, in the order given: each a runner's output.
fn outputs(spec: &Spec, parsed: &Parsed<'_>, line: &Line<'_>) -> Result<(), Blocked> {
    for (flag, value) in &parsed.values {
        if spec.outputs.contains(&flag.as_str()) {
            line.output(value)?;
        }
    }
    Ok(())
}

/// The values of the spec's `project_dirs` flags, in the table's order: each a directory
/// inside the project.
fn project_dirs(spec: &Spec, parsed: &Parsed<'_>, line: &Line<'_>) -> Result<(), Blocked> {
    for flag in spec.project_dirs {
        for dir in parsed.values_of(flag) {
            line.project_dir(dir)?;
        }
    }
    Ok(())
}

fn parse<'a>(name: &str, spec: &Spec, args: &'a [String]) -> Result<Parsed<'a>, Blocked> {
    argv::parse(spec, args).map_err(|flag| unlisted_flag(name, &flag))
}

/// A read-only program's operands and the files its flags read, each readable as any path
/// is: its steps are the files its flags read, jq's filter, which operands are paths, and
/// reading them.
fn check_operands(
    name: &str,
    parsed: &Parsed<'_>,
    operands: Operands,
    line: &Line<'_>,
) -> Result<(), Blocked> {
    // Files some flags read (a pattern list, an ignore file, a jq program).
    for flag in FILE_READING_FLAGS {
        for value in parsed.values_of(flag) {
            line.read(value)?;
        }
    }
    if name == "jq" {
        jq_filter(parsed)?;
    }
    let paths = operand_paths(name, parsed, operands)?;
    read_paths(name, paths, operands, line)
}

/// jq's `env` and `$ENV` print the environment (its tokens too); a program from a file may
/// say the same unseen; its modules are files the line does not name.
fn jq_filter(parsed: &Parsed<'_>) -> Result<(), Blocked> {
    if JQ_PROGRAM_FILE_FLAGS
        .iter()
        .any(|f| parsed.values_of(f).next().is_some())
    {
        return Err(Blocked::new(
            "",
            "jq with a program from a file: what it reads is not in front of the reader",
        ));
    }
    // Case-folded: jq's names are case-sensitive, but refusing `.Environment` too costs
    // little beside missing a spelling that reaches `$ENV`.
    let filter = parsed.operands.first().map(|p| p.to_lowercase());
    if filter
        .as_deref()
        .is_some_and(|p| JQ_ENVIRONMENT_WORDS.iter().any(|w| p.contains(w)))
    {
        return Err(Blocked::new(
            parsed.operands[0],
            "jq's env and $ENV print the environment, its secrets too",
        ));
    }
    // `import "m" as $m;`, `include "m";` and `modulemeta` read files from jq's search
    // path (~/.jq, a `.json` data file anywhere): reads the reader cannot see.
    if filter
        .as_deref()
        .is_some_and(|p| JQ_MODULE_WORDS.iter().any(|w| p.contains(w)))
    {
        return Err(Blocked::new(
            parsed.operands[0],
            "jq's import, include and modulemeta read files the line does not name",
        ));
    }
    Ok(())
}

/// Which of a read-only program's operands are paths it reads (a sed script, an awk
/// program or a search's pattern is not), refusing what its kind of operands may not be.
fn operand_paths<'p>(
    name: &str,
    parsed: &'p Parsed<'_>,
    operands: Operands,
) -> Result<&'p [&'p str], Blocked> {
    Ok(match operands {
        Operands::None if !parsed.operands.is_empty() => {
            return Err(Blocked::new("", format!("{name} takes no operands here")));
        }
        Operands::None | Operands::Text => &[],
        Operands::Paths => &parsed.operands,
        Operands::MaxPaths(n) => {
            if parsed.operands.len() > n {
                return Err(Blocked::new(
                    "",
                    format!("{name} with {} operands writes the last one", n + 1),
                ));
            }
            &parsed.operands
        }
        Operands::SedScriptThenPaths => sed_paths(parsed)?,
        Operands::AwkProgramThenPaths => awk_paths(parsed)?,
        Operands::PatternThenPaths => {
            // A flag of the list gave the pattern (`-e`, `-f`) or says there is none
            // (`--files`).
            let pattern_given = PATTERN_FLAGS
                .iter()
                .any(|f| parsed.values_of(f).next().is_some())
                || PATTERNLESS_FLAGS.iter().any(|f| parsed.has(f));
            if pattern_given {
                &parsed.operands
            } else {
                parsed.operands.get(1..).unwrap_or(&[])
            }
        }
    })
}

/// sed's paths: its operands after the script (none taken when the scripts came with
/// `-e`); every script only prints.
fn sed_paths<'p>(parsed: &'p Parsed<'_>) -> Result<&'p [&'p str], Blocked> {
    let given: Vec<&str> = parsed
        .values_of("-e")
        .chain(parsed.values_of("--expression"))
        .collect();
    let (scripts, paths) = if given.is_empty() {
        match parsed.operands.split_first() {
            Some((script, paths)) => (vec![*script], paths),
            None => return Err(Blocked::new("", "sed without a script")),
        }
    } else {
        (given, &parsed.operands[..])
    };
    for script in scripts {
        sed_script(script).map_err(|why| {
            Blocked::new(script, format!("sed: {why} is not in a printing script"))
        })?;
    }
    Ok(paths)
}

/// awk's paths: its operands after the program, which may not run commands, read what the
/// line does not name or write files.
fn awk_paths<'p>(parsed: &'p Parsed<'_>) -> Result<&'p [&'p str], Blocked> {
    let Some((program, paths)) = parsed.operands.split_first() else {
        return Err(Blocked::new("", "awk without a program"));
    };
    if let Some(word) = AWK_REFUSED_WORDS.iter().find(|w| program.contains(*w)) {
        return Err(Blocked::new(
            *program,
            format!(
                "an awk program with {word} may run commands or read what the line does not name"
            ),
        ));
    }
    if awk_writes(program) {
        return Err(Blocked::new(
            *program,
            "an awk program with print > FILE or printf >> FILE writes files",
        ));
    }
    Ok(paths)
}

/// Read every path; with none, the program reads its input or the working directory (`grep
/// -r token`, `ls`), which must be readable too.
fn read_paths(
    name: &str,
    paths: &[&str],
    operands: Operands,
    line: &Line<'_>,
) -> Result<(), Blocked> {
    // `less +CMD`, `more +CMD` run CMD; `tail +5`, `sort +1` are old options: not files.
    for path in paths {
        if let Some(start) = NOT_PATH_STARTS.iter().find(|s| path.starts_with(*s)) {
            return Err(Blocked::new(
                *path,
                format!(
                    "{name}: an operand starting with {start} is a command or an option, not a file"
                ),
            ));
        }
    }
    for path in paths {
        line.read(path)?;
    }
    if paths.is_empty()
        && matches!(
            operands,
            Operands::Paths
                | Operands::PatternThenPaths
                | Operands::SedScriptThenPaths
                | Operands::AwkProgramThenPaths
        )
    {
        line.read(".")?;
    }
    Ok(())
}

/// Does an awk program write a file (`print > "f"`, `printf "%s", $1 >> f`)? Only print and
/// printf redirect, so a `>` writes only after one of them, outside the parentheses opened
/// after it; any other compares (`$3 > 5`, `if ($3 > 5) print`, `print ($1 > 2)`).
/// Strings are skipped. Read over-cautiously where the reading could be misled: with a `/`
/// (a regular expression may hold quotes and parentheses) or a line continuation, every `>`
/// after the first `print` writes; a newline does not end a print statement (`print a,⏎ b >
/// f` is one); a name holding `print` counts as the keyword.
pub fn awk_writes(program: &str) -> bool {
    let Some(print) = program.find("print") else {
        // A line continuation could split the keyword.
        return program.contains("\\\n") && program.contains('>');
    };
    if program.contains('/') || program.contains("\\\n") {
        return program[print..].contains('>');
    }
    let b = program.as_bytes();
    let mut depth = 0i64;
    // The parenthesis depth at the print keyword of the statement being read.
    let mut printing: Option<i64> = None;
    let mut i = 0;
    while i < b.len() {
        match b[i] {
            b'"' => {
                i += 1;
                while i < b.len() && b[i] != b'"' {
                    i += if b[i] == b'\\' { 2 } else { 1 };
                }
            }
            b'(' => depth += 1,
            b')' => depth -= 1,
            b';' | b'{' | b'}' => printing = None,
            b'>' if printing.is_some_and(|at| depth <= at) => return true,
            b'p' if b[i..].starts_with(b"print") => printing = Some(depth),
            _ => {}
        }
        i += 1;
    }
    false
}

/// A sed script that only prints (`sed -n '1,20p'`, `s/a/b/g`): every command one of
/// [`SED_COMMANDS`], every `s` flag one of [`SED_S_FLAGS`], after addresses (`1,20`, `$`,
/// `/re/`, `\%re%`, `first~step`, `addr,+N`), `!`, and `{ … }` blocks; anything else —
/// `w FILE`, `r FILE`, `e CMD`, `s///w` or `s///e`, labels, text commands — is not read,
/// so not harmless.
fn sed_script(script: &str) -> Result<(), SedPart> {
    let mut sed = SedReader {
        s: script.chars().collect(),
        i: 0,
    };
    let mut depth = 0usize;
    loop {
        sed.skip_blanks();
        let Some(c) = sed.peek() else {
            break;
        };
        if c == '}' {
            depth = depth.checked_sub(1).ok_or(SedPart::CloseWithoutOpen)?;
            sed.i += 1;
            continue;
        }
        sed.addresses()?;
        match sed.command()? {
            '{' => depth += 1,
            _ => sed.command_end()?,
        }
    }
    if depth > 0 {
        return Err(SedPart::OpenWithoutClose);
    }
    Ok(())
}

/// The part of a sed script that makes it more than a printing script (printed as "sed:
/// PART is not in a printing script").
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum SedPart {
    #[error("a {0} inside brackets")]
    DelimiterInBrackets(char),
    #[error("a newline inside a pattern")]
    NewlineInPattern,
    #[error("an unterminated pattern")]
    UnterminatedPattern,
    #[error("a \\ at the end")]
    BackslashAtEnd,
    #[error("a bad address delimiter")]
    BadAddressDelimiter,
    #[error("a }} without {{")]
    CloseWithoutOpen,
    #[error("an address without a command")]
    NoCommand,
    #[error("an unterminated s")]
    UnterminatedS,
    #[error("{0} with a bad delimiter")]
    BadDelimiter(char),
    #[error("s///{0}")]
    SFlag(char),
    #[error("the sed command {0}")]
    Command(char),
    #[error("{0} after a command")]
    AfterCommand(char),
    #[error("a {{ without }}")]
    OpenWithoutClose,
}

/// A sed script read one character at a time, for [`sed_script`].
struct SedReader {
    s: Vec<char>,
    i: usize,
}

impl SedReader {
    fn peek(&self) -> Option<char> {
        self.s.get(self.i).copied()
    }

    /// Is the character at the reading point one of `set`?
    fn at(&self, set: &str) -> bool {
        self.peek().is_some_and(|c| set.contains(c))
    }

    fn skip_while(&mut self, keep: impl Fn(char) -> bool) {
        while self.peek().is_some_and(&keep) {
            self.i += 1;
        }
    }

    fn skip_blanks(&mut self) {
        self.skip_while(|c| matches!(c, ' ' | '\t' | '\n' | ';'));
    }

    /// Text up to the unescaped delimiter `d`; the reading point ends past it. A delimiter
    /// inside a bracket expression is refused: seds differ on where it ends.
    fn delimited(&mut self, d: char) -> Result<(), SedPart> {
        let mut in_bracket = false;
        while let Some(c) = self.peek() {
            if c == '\\' {
                self.i += 2;
                continue;
            }
            if c == '[' {
                in_bracket = true;
            } else if c == ']' {
                in_bracket = false;
            }
            if c == d {
                if in_bracket {
                    return Err(SedPart::DelimiterInBrackets(d));
                }
                self.i += 1;
                return Ok(());
            }
            if c == '\n' {
                return Err(SedPart::NewlineInPattern);
            }
            self.i += 1;
        }
        Err(SedPart::UnterminatedPattern)
    }

    /// One address: `$`, `/re/`, `\%re%` (with `I`/`M` flags), `N` or `first~step`.
    fn address(&mut self) -> Result<(), SedPart> {
        let Some(c) = self.peek() else {
            return Ok(());
        };
        match c {
            '$' => self.i += 1,
            '/' => {
                self.i += 1;
                self.delimited('/')?;
                self.skip_while(|c| matches!(c, 'I' | 'M'));
            }
            '\\' => {
                let d = *self.s.get(self.i + 1).ok_or(SedPart::BackslashAtEnd)?;
                if d == '\n' || d == '\\' {
                    return Err(SedPart::BadAddressDelimiter);
                }
                self.i += 2;
                self.delimited(d)?;
                self.skip_while(|c| matches!(c, 'I' | 'M'));
            }
            c if c.is_ascii_digit() => {
                self.skip_while(|c| c.is_ascii_digit());
                if self.at("~") {
                    self.i += 1;
                    self.skip_while(|c| c.is_ascii_digit());
                }
            }
            _ => {}
        }
        Ok(())
    }

    /// An address or a range (`addr,addr`, `addr,+N`, `addr,~N`), then blanks and `!`.
    fn addresses(&mut self) -> Result<(), SedPart> {
        self.address()?;
        if self.at(",") {
            self.i += 1;
            if self.at("+~") {
                self.i += 1;
                self.skip_while(|c| c.is_ascii_digit());
            } else {
                self.address()?;
            }
        }
        self.skip_while(|c| matches!(c, ' ' | '\t' | '!'));
        Ok(())
    }

    /// One command: one of [`SED_COMMANDS`] (an `s` with only [`SED_S_FLAGS`]), or `{`.
    fn command(&mut self) -> Result<char, SedPart> {
        let Some(command) = self.peek() else {
            return Err(SedPart::NoCommand);
        };
        self.i += 1;
        match command {
            '{' => {}
            's' | 'y' => {
                let d = self.peek().ok_or(SedPart::UnterminatedS)?;
                if d == '\\' || d == '\n' {
                    return Err(SedPart::BadDelimiter(command));
                }
                self.i += 1;
                self.delimited(d)?;
                self.delimited(d)?;
                if command == 's' {
                    while let Some(flag) = self.peek().filter(|c| !";\n} \t".contains(*c)) {
                        if !SED_S_FLAGS.iter().any(|f| f.starts_with(flag)) {
                            return Err(SedPart::SFlag(flag));
                        }
                        self.i += 1;
                    }
                }
            }
            'q' | 'Q' | 'l' | 'L' if SED_COMMANDS.contains(&command.to_string().as_str()) => {
                // An exit code or line length.
                self.skip_while(|c| c.is_ascii_digit() || c == ' ');
            }
            c if SED_COMMANDS.contains(&c.to_string().as_str()) => {}
            c => return Err(SedPart::Command(c)),
        }
        Ok(command)
    }

    /// A command ends at `;`, a newline, `}` or the end.
    fn command_end(&mut self) -> Result<(), SedPart> {
        self.skip_while(|c| matches!(c, ' ' | '\t'));
        match self.peek() {
            Some(c) if !matches!(c, ';' | '\n' | '}') => Err(SedPart::AfterCommand(c)),
            _ => Ok(()),
        }
    }
}

/// `find` with tests and printing only: the actions that delete, run or write files are not
/// listed.
fn find(args: &[String], line: &Line<'_>) -> Result<(), Blocked> {
    let mut i = 0;
    let mut searched = false;
    while i < args.len() && FIND_LEADING_OPTIONS.contains(&args[i].as_str()) {
        i += 1;
    }
    // The starting points end at the first test, option or operator (`(`, `!`).
    while i < args.len() {
        let arg = args[i].as_str();
        if arg.starts_with('-') || FIND_TESTS.contains(&arg) {
            break;
        }
        line.read(arg)?;
        i += 1;
        searched = true;
    }
    if !searched {
        line.read(".")?;
    }
    while i < args.len() {
        let arg = args[i].as_str();
        if FIND_TESTS.contains(&arg) {
            i += 1;
        } else if FIND_VALUED_TESTS.contains(&arg)
            || FIND_VALUED_TEST_PREFIXES
                .iter()
                .any(|p| arg.strip_prefix(p).is_some_and(|xy| xy.len() == 2))
        {
            if i + 1 >= args.len() {
                return Err(Blocked::new("", format!("find {arg} without its value")));
            }
            // `-newerXY FILE` reads FILE's time, unless Y says the value is a date.
            let newer_file = FIND_VALUED_TEST_PREFIXES.iter().any(|p| {
                arg.strip_prefix(p).is_some_and(|xy| {
                    xy.len() == 2 && !FIND_DATE_REFERENCES.iter().any(|d| xy.ends_with(d))
                })
            });
            if FIND_PATH_TESTS.contains(&arg) || newer_file {
                line.read(&args[i + 1])?;
            }
            i += 2;
        } else {
            return Err(Blocked::new(
                "",
                format!(
                    "find {arg} is not a listed test (actions such as -delete and -exec are not)"
                ),
            ));
        }
    }
    Ok(())
}

/// `set -e`, `set -o pipefail` and friends: shell options for the rest of the line.
fn set(args: &[String]) -> Result<(), Blocked> {
    if args.is_empty() {
        return Err(Blocked::new(
            "",
            "set without options prints every variable, the environment's secrets too",
        ));
    }
    let mut i = 0;
    while i < args.len() {
        let arg = args[i].as_str();
        let body = arg.strip_prefix(['-', '+']).unwrap_or("");
        if body.is_empty() {
            return Err(Blocked::new(
                "",
                format!("set {arg} is not a listed option"),
            ));
        }
        let listed = |c: char| SET_LETTERS.iter().any(|l| l.len() == 1 && l.starts_with(c));
        if body.chars().all(listed) {
            let valued = |c: char| SET_VALUED_LETTERS.iter().any(|l| l.starts_with(c));
            if let Some(letter) = body.chars().find(|c| valued(*c)) {
                i += 1;
                if !args
                    .get(i)
                    .is_some_and(|o| SET_O_OPTIONS.contains(&o.as_str()))
                {
                    return Err(Blocked::new(
                        "",
                        format!("set -{letter} takes {}", either(SET_O_OPTIONS)),
                    ));
                }
            }
            i += 1;
        } else {
            return Err(Blocked::new(
                "",
                format!("set {arg} is not a listed option"),
            ));
        }
    }
    Ok(())
}

/// `a, b or c`.
fn either(words: &[&str]) -> String {
    match words.split_last() {
        Some((last, [])) => last.to_string(),
        Some((last, rest)) => format!("{} or {last}", rest.join(", ")),
        None => String::new(),
    }
}

/// `command -v NAME`: where a program is.
fn command_lookup(args: &[String]) -> Result<(), Blocked> {
    if spelled("command", "command", args) {
        return Ok(());
    }
    Err(Blocked::new(
        "",
        "command runs a program; only command -v NAME is listed",
    ))
}

fn mkdir(args: &[String], line: &Line<'_>) -> Result<&'static str, Blocked> {
    let parsed = parse("mkdir", &FLAGS_MKDIR, args)?;
    if parsed.operands.is_empty() {
        return Err(Blocked::new("", "mkdir without a directory"));
    }
    for dir in &parsed.operands {
        line.write(dir, true)?;
    }
    Ok("mkdir")
}

/// Writes that cannot lose data: `touch`, `cp -n` (never overwrites), `tee -a` (appends).
fn write_in_project(name: &str, args: &[String], line: &Line<'_>) -> Result<&'static str, Blocked> {
    match name {
        "touch" => {
            let parsed = parse(name, &FLAGS_TOUCH, args)?;
            if parsed.operands.is_empty() {
                return Err(Blocked::new("", "touch without a file"));
            }
            for file in &parsed.operands {
                line.write(file, false)?;
            }
        }
        "cp" => {
            // The forms say which flags never overwrite; here, which operand is written.
            only_formed("cp", name, args)?;
            let parsed = parse(name, &FLAGS_CP, args)?;
            let target = parsed
                .values_of("--target-directory")
                .chain(parsed.values_of("-t"))
                .next();
            let (sources, dest): (&[&str], &str) = match (target, parsed.operands.split_last()) {
                (Some(dir), _) => (&parsed.operands, dir),
                (None, Some((dest, sources))) if !sources.is_empty() => (sources, dest),
                _ => return Err(Blocked::new("", "cp needs a source and a destination")),
            };
            for source in sources {
                line.read(source)?;
            }
            line.write(dest, false)?;
        }
        _ => {
            // `tee /dev/null` only prints (a form of `tee`); else it appends (`tee append`).
            if formed("tee", name, args)? {
                return Ok("read-only");
            }
            only_formed("tee append", name, args)?;
            let parsed = parse(name, &FLAGS_TEE, args)?;
            // A file that throws its text away or shows it (`lists.discarding_targets`).
            for file in &parsed.operands {
                if !DISCARDING_TARGETS.contains(file) {
                    line.write(file, false)?;
                }
            }
        }
    }
    Ok("write-in-project")
}

/// `cargo build|test|check|clippy|fmt|doc` (and the build-only ones with `--no-run`): the
/// subcommand, cargo's own flags and operands, and the arguments after `--`.
fn cargo(args: &[String], line: &Line<'_>) -> Result<&'static str, Blocked> {
    let (sub, rest) = cargo_subcommand(args)?;
    let (own, after) = split_at_dashes(rest);
    let parsed = parse("cargo", &FLAGS_CARGO, own)?;
    cargo_own(sub, &parsed, line)?;
    cargo_after(sub, after, line)?;
    Ok("runner")
}

/// The arguments before a `--` and those after it.
fn split_at_dashes(args: &[String]) -> (&[String], &[String]) {
    match args.iter().position(|a| a == "--") {
        Some(at) => (&args[..at], &args[at + 1..]),
        None => (args, &args[args.len()..]),
    }
}

/// cargo's listed subcommand (a `+toolchain` before it taken off, an alias read as what it
/// stands for) and the arguments after it.
fn cargo_subcommand(args: &[String]) -> Result<(&'static str, &[String]), Blocked> {
    let mut args = args;
    if args
        .first()
        .is_some_and(|first| spelled("cargo toolchain", "cargo", std::slice::from_ref(first)))
    {
        args = &args[1..];
    }
    let Some(sub) = args.first() else {
        return Err(Blocked::new("", "cargo without a subcommand"));
    };
    let alias = CARGO_SUBCOMMAND_ALIASES
        .iter()
        .find_map(|a| a.strip_prefix(sub.as_str())?.strip_prefix(' '));
    let Some(sub) = CARGO_SUBCOMMANDS
        .iter()
        .chain(CARGO_BUILD_ONLY_SUBCOMMANDS)
        .copied()
        .find(|s| *s == sub || Some(*s) == alias)
    else {
        return Err(Blocked::new(
            "",
            format!(
                "cargo {sub} is not a listed subcommand ({})",
                CARGO_SUBCOMMANDS.join(", ")
            ),
        ));
    };
    Ok((sub, &args[1..]))
}

/// cargo's own flags and operands: a build-only subcommand only with `--no-run`, `--fix`
/// only for clippy, directories inside the project, a test filter only for `test`.
fn cargo_own(sub: &str, parsed: &Parsed<'_>, line: &Line<'_>) -> Result<(), Blocked> {
    if CARGO_BUILD_ONLY_SUBCOMMANDS.contains(&sub) && !parsed.has("--no-run") {
        return Err(Blocked::new(
            "",
            format!("cargo {sub} runs what it builds; only cargo {sub} --no-run is listed"),
        ));
    }
    if sub != "clippy" && parsed.has("--fix") {
        return Err(Blocked::new("", format!("cargo {sub} --fix is not listed")));
    }
    for dir in parsed.values_of("--target-dir") {
        line.write(dir, true)?;
    }
    project_dirs(&FLAGS_CARGO, parsed, line)?;
    // Test names filter tests; other operands are not listed.
    let test_filter = sub == "test" && parsed.operands.len() <= 1;
    if !(parsed.operands.is_empty() || test_filter) {
        return Err(Blocked::new(
            "",
            format!("cargo {sub} {} is not a listed operand", parsed.operands[0]),
        ));
    }
    Ok(())
}

/// The arguments after `--`: the test binary's, clippy's or rustfmt's listed flags; rustfmt's
/// files are rewritten (inside the project); no other subcommand takes operands there.
fn cargo_after(sub: &str, after: &[String], line: &Line<'_>) -> Result<(), Blocked> {
    let after_spec = match sub {
        "test" => FLAGS_CARGO_TEST_ARGS,
        "clippy" => FLAGS_CARGO_CLIPPY_ARGS,
        "fmt" => FLAGS_CARGO_FMT_ARGS,
        _ => Spec::default(),
    };
    let parsed_after = parse("cargo", &after_spec, after)?;
    match sub {
        "test" => {}
        "fmt" => {
            for file in &parsed_after.operands {
                line.write(file, false)?;
            }
        }
        _ if !parsed_after.operands.is_empty() => {
            return Err(Blocked::new(
                "",
                format!("cargo {sub} -- {} is not listed", parsed_after.operands[0]),
            ));
        }
        _ => {}
    }
    Ok(())
}

/// `npm test`, `npm ci`, `npm install` (no package), `npm run TARGET`; pnpm and yarn alike.
fn node_package_manager(
    name: &str,
    args: &[String],
    line: &Line<'_>,
) -> Result<&'static str, Blocked> {
    let (own, after) = split_at_dashes(args);
    let parsed = parse(name, &FLAGS_PACKAGE_MANAGER, own)?;
    project_dirs(&FLAGS_PACKAGE_MANAGER, &parsed, line)?;
    let operands = parsed.operands.as_slice();
    let ok = argument_forms(name).is_some_and(|forms| forms::holds_for(forms, name, operands));
    if !ok {
        return Err(Blocked::new(
            "",
            format!(
                "{name} {} is not a listed command (test, ci, install without a package, run {})",
                operands.join(" "),
                RUNNER_TARGETS.join("|")
            ),
        ));
    }
    script_arguments(name, after)?;
    Ok("runner")
}

/// Arguments passed to a project's test or build script after `--`: filters, and flags that
/// only change how it reports.
fn script_arguments(name: &str, after: &[String]) -> Result<(), Blocked> {
    for arg in after {
        // The package manager appends them to the script's line, which a shell reads (npm
        // 7 quotes them, npm 6 and others may not): `npm test -- '$(id)'` could run id.
        if arg.contains([
            '$', '`', ';', '|', '&', '<', '>', '(', ')', '\n', '\\', '\'', '"',
        ]) {
            return Err(Blocked::new(
                arg.as_str(),
                format!("{name} passes script arguments to a shell: {arg} may run there"),
            ));
        }
        if arg.starts_with('-') && !SCRIPT_ARGUMENT_FLAGS.contains(&arg.as_str()) {
            return Err(Blocked::new(
                "",
                format!("{name} -- {arg} is not a listed flag"),
            ));
        }
    }
    Ok(())
}

fn npx(args: &[String], line: &Line<'_>, stdin_fed: bool) -> Result<&'static str, Blocked> {
    let mut rest = args;
    while rest
        .first()
        .is_some_and(|a| a == "--no-install" || a == "--no")
    {
        rest = &rest[1..];
    }
    match rest.first().map(String::as_str) {
        Some(tool) if NPX_PROGRAMS.contains(&tool) => judge(tool, &rest[1..], line, stdin_fed),
        Some(other) => Err(Blocked::new(
            "",
            format!("npx {other}: only {} are listed", NPX_PROGRAMS.join(", ")),
        )),
        None => Err(Blocked::new("", "npx without a program")),
    }
}

/// `make` with a listed target or none; `-C DIR` inside the project.
fn make(args: &[String], line: &Line<'_>) -> Result<&'static str, Blocked> {
    // A count, as `-j` takes one (make reads none as no limit).
    let count = |n: &str| n.bytes().all(|b| b.is_ascii_digit());
    let mut targets = Vec::new();
    let mut i = 0;
    while i < args.len() {
        let arg = args[i].as_str();
        i += 1;
        match arg {
            _ if MAKE_FLAGS.contains(&arg) => {
                if MAKE_COUNT_FLAGS.contains(&arg) && args.get(i).is_some_and(|n| count(n)) {
                    i += 1;
                }
            }
            _ if MAKE_DIRECTORY_FLAGS.contains(&arg) => {
                let Some(dir) = args.get(i) else {
                    return Err(Blocked::new("", "make -C without a directory"));
                };
                line.project_dir(dir)?;
                i += 1;
            }
            _ if MAKE_COUNT_FLAGS
                .iter()
                .any(|flag| arg.strip_prefix(flag).is_some_and(count)) => {}
            _ if MAKE_VALUED_PREFIXES.iter().any(|p| arg.starts_with(p)) => {}
            _ if arg.starts_with('-') => {
                return Err(Blocked::new("", format!("make {arg} is not a listed flag")));
            }
            _ => targets.push(arg),
        }
    }
    if let Some(target) = targets.iter().find(|t| !RUNNER_TARGETS.contains(t)) {
        return Err(Blocked::new(
            "",
            format!(
                "make {target} is not a listed target ({})",
                RUNNER_TARGETS.join(", ")
            ),
        ));
    }
    Ok("runner")
}

/// `go build|test|vet` with the flags of `flag_tables.go` (Go's flag syntax); its
/// `outputs` (`-o`, profiles) write a new file or one in a build directory.
fn go(args: &[String], line: &Line<'_>) -> Result<&'static str, Blocked> {
    let Some(sub) = args.first() else {
        return Err(Blocked::new("", "go without a subcommand"));
    };
    if !GO_SUBCOMMANDS.contains(&sub.as_str()) {
        return Err(Blocked::new(
            "",
            format!(
                "go {sub} is not a listed subcommand ({})",
                GO_SUBCOMMANDS.join(", ")
            ),
        ));
    }
    let parsed = argv::parse(&FLAGS_GO, &args[1..]).map_err(|error| match error {
        FlagError::NoValue(flag) => Blocked::new("", format!("go {flag} without its value")),
        FlagError::Unlisted(flag) => unlisted_flag("go", &flag),
    })?;
    outputs(&FLAGS_GO, &parsed, line)?;
    Ok("runner")
}

/// `uv run TOOL`, `poetry run TOOL`, `pipenv run TOOL`: the tool is judged.
fn run_wrapper(
    name: &str,
    args: &[String],
    line: &Line<'_>,
    stdin_fed: bool,
) -> Result<&'static str, Blocked> {
    let mut rest = match args.first().map(String::as_str) {
        Some("run") => &args[1..],
        _ => {
            return Err(Blocked::new(
                "",
                format!("{name}: only {name} run TOOL is listed"),
            ));
        }
    };
    while rest
        .first()
        .is_some_and(|a| RUN_WRAPPER_FLAGS.contains(&a.as_str()))
    {
        rest = &rest[1..];
    }
    let Some(tool) = rest.first() else {
        return Err(Blocked::new("", format!("{name} run without a program")));
    };
    let tool = super::line::program_name(tool)?;
    if RUN_WRAPPERS.contains(&tool) {
        return Err(Blocked::new("", format!("{name} run {tool} is not listed")));
    }
    judge(tool, &rest[1..], line, stdin_fed)
}

/// `python3 scripts/check.py ARGS`, `bash scripts/test.sh`, `node tools/gen.js`: a script of
/// the project, with no inline code and no code on stdin.
fn interpreter(name: &str, args: &[String], line: &Line<'_>) -> Result<&'static str, Blocked> {
    let base = name.trim_end_matches(|c: char| c.is_ascii_digit() || c == '.');
    // `python -m pytest`: a listed tool run as a module.
    if PYTHON_INTERPRETERS.contains(&base) {
        let mut rest = args;
        while rest
            .first()
            .is_some_and(|a| PYTHON_LEADING_FLAGS.contains(&a.as_str()))
        {
            rest = &rest[1..];
        }
        if rest.first().is_some_and(|a| a == "-m") {
            return match rest.get(1).map(String::as_str) {
                Some(module) if PYTHON_MODULES.contains(&module) => tool(module, &rest[2..], line),
                Some("unittest") => unittest(&rest[2..], line),
                Some(other) => Err(Blocked::new(
                    "",
                    format!("{name} -m {other} is not a listed module"),
                )),
                None => Err(Blocked::new("", format!("{name} -m without a module"))),
            };
        }
    }
    let flags: &[&str] = [
        (PYTHON_INTERPRETERS, PYTHON_FLAGS),
        (NODE_INTERPRETERS, NODE_FLAGS),
        (SHELL_INTERPRETERS, SHELL_FLAGS),
        (PERL_RUBY_INTERPRETERS, PERL_RUBY_FLAGS),
    ]
    .iter()
    .find(|(names, _)| names.contains(&base))
    .map_or(&[], |(_, flags)| flags);
    let mut i = 0;
    while i < args.len() && args[i].starts_with('-') {
        let flag = args[i].as_str();
        if !flags.contains(&flag) {
            return Err(Blocked::new(
                "",
                format!("{name} {flag}: inline code, stdin or a flag no rule lists"),
            ));
        }
        if flag.ends_with('o') && flag.len() <= 4 && base.ends_with("sh") {
            i += 1;
            if !args
                .get(i)
                .is_some_and(|o| SHELL_O_OPTIONS.contains(&o.as_str()))
            {
                return Err(Blocked::new(
                    "",
                    format!("{name} -o takes pipefail, errexit or nounset"),
                ));
            }
        }
        i += 1;
    }
    let Some(script) = args.get(i) else {
        return Err(Blocked::new(
            "",
            format!("{name} without a script file reads code from stdin"),
        ));
    };
    project_script(name, script, line)?;
    script_subcommand(name, script, &args[i + 1..], line)?;
    Ok("runner")
}

/// What a project script may be asked to do: `manage.py test`, `tasks.py lint`, or a path
/// of the project as its first operand. Anything else (`manage.py flush --noinput`,
/// `migrate`, `deploy`, `publish`) is the script's own command, which no rule can read.
fn script_subcommand(
    name: &str,
    script: &str,
    rest: &[String],
    line: &Line<'_>,
) -> Result<(), Blocked> {
    let Some(first) = rest.iter().find(|a| !a.starts_with('-')) else {
        return Ok(());
    };
    if SCRIPT_SUBCOMMANDS.contains(&first.as_str()) {
        return Ok(());
    }
    if first.contains('/') || first.contains('.') {
        return line.read(first);
    }
    Err(Blocked::new(
        "",
        format!(
            "{name} {script} {first}: a script's own subcommand other than {}",
            SCRIPT_SUBCOMMANDS.join(", ")
        ),
    ))
}

/// A script the project holds: inside it, not sensitive, not a dependency's, and not named
/// for work the targets leave to a person (deploy, release, clean, …).
fn project_script(name: &str, script: &str, line: &Line<'_>) -> Result<(), Blocked> {
    if script.contains(['*', '?', '[']) {
        return Err(Blocked::new(
            "",
            format!("{name} {script}: a pattern is not a script"),
        ));
    }
    for place in line.places(script) {
        if !super::paths::inside_project(&place, line.ctx) {
            return Err(Blocked::new(
                "",
                format!("{name} runs {script}, which is not a script of the project"),
            )
            .with_rule("outside-project"));
        }
        if let Some(why) = super::paths::sensitive(&place, line.ctx) {
            return Err(Blocked::new("", format!("{name} runs {why}")).with_rule("sensitive-path"));
        }
        if super::paths::in_dependencies(&place) {
            return Err(Blocked::new(
                "",
                format!("{name} runs {script}, a dependency's file, not the project's"),
            ));
        }
    }
    let lower = script.to_ascii_lowercase();
    let stem = lower.rsplit('/').next().unwrap_or(&lower);
    if let Some(word) = stem
        .split(|c: char| !c.is_ascii_alphanumeric())
        .find(|w| RISKY_SCRIPT_WORDS.contains(w))
    {
        return Err(Blocked::new(
            "",
            format!("{script} is named for {word}: only a policy rule can allow it"),
        ));
    }
    Ok(())
}

fn unittest(args: &[String], line: &Line<'_>) -> Result<&'static str, Blocked> {
    let parsed = parse("unittest", &FLAGS_UNITTEST, args)?;
    // Discovery imports every test module it finds: only the project's.
    project_dirs(&FLAGS_UNITTEST, &parsed, line)?;
    // `discover` and module names are words; a path is a directory or a test file.
    for operand in &parsed.operands {
        if operand.contains('/') {
            line.project_dir(operand)?;
        }
    }
    Ok("runner")
}

/// Test runners, type checkers, linters and formatters: each with its listed flags; paths
/// they may rewrite (formatters, `--fix`) must be inside the project.
fn tool(name: &str, args: &[String], line: &Line<'_>) -> Result<&'static str, Blocked> {
    let Some(super::data::Tool {
        spec,
        subcommands,
        operands,
    }) = runner_tool(name)
    else {
        return Err(Blocked::new(
            "",
            format!("{name} is not on any harmless rule"),
        ));
    };
    let args = if subcommands.is_empty() {
        args
    } else {
        match args.first() {
            Some(sub) if subcommands.contains(&sub.as_str()) => &args[1..],
            // vitest without `run` watches unless --run; ruff alone prints help.
            _ if name == "vitest" => args,
            Some(sub) => {
                return Err(Blocked::new(
                    "",
                    format!(
                        "{name} {sub} is not a listed subcommand ({})",
                        subcommands.join(", ")
                    ),
                ));
            }
            None => return Err(Blocked::new("", format!("{name} without a subcommand"))),
        }
    };
    let parsed = parse(name, &spec, args)?;
    // `--cov-report=xml:PATH` (also html:, lcov:, json:, annotate:) writes a report.
    for report in REPORT_FLAGS.iter().flat_map(|flag| parsed.values_of(flag)) {
        match report.split_once(':') {
            // A directory of reports: a build directory or the temporary one only.
            Some((kind, dir)) if REPORT_DIRECTORY_KINDS.contains(&kind) => {
                line.output(&format!("{dir}/index.html"))?
            }
            Some((_, path)) => line.output(path)?,
            None => {}
        }
    }
    for operand in &parsed.operands {
        // pytest node ids: `tests/test_x.py::test_y`.
        let path = operand.split("::").next().unwrap_or(operand);
        match operands {
            ToolOperands::Rewrites => line.write(path, false)?,
            // A test runner imports and runs what it is pointed at: only the project's.
            ToolOperands::Runs => line.project_dir(path)?,
            ToolOperands::Reads => line.read(path)?,
        }
    }
    Ok("runner")
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Each part of a sed script that is not printing is its own kind, printed as before.
    #[test]
    fn a_sed_script_that_does_more_than_print_names_the_part() {
        for (script, part, printed) in [
            (
                "s/[/]/x/",
                SedPart::DelimiterInBrackets('/'),
                "a / inside brackets",
            ),
            (
                "/a\nb/p",
                SedPart::NewlineInPattern,
                "a newline inside a pattern",
            ),
            (
                "s/a/b",
                SedPart::UnterminatedPattern,
                "an unterminated pattern",
            ),
            ("\\", SedPart::BackslashAtEnd, "a \\ at the end"),
            (
                "\\\\a\\p",
                SedPart::BadAddressDelimiter,
                "a bad address delimiter",
            ),
            ("}", SedPart::CloseWithoutOpen, "a } without {"),
            ("1,2", SedPart::NoCommand, "an address without a command"),
            ("s", SedPart::UnterminatedS, "an unterminated s"),
            (
                "y\\a\\b\\",
                SedPart::BadDelimiter('y'),
                "y with a bad delimiter",
            ),
            ("s/a/b/w", SedPart::SFlag('w'), "s///w"),
            ("w out", SedPart::Command('w'), "the sed command w"),
            ("p x", SedPart::AfterCommand('x'), "x after a command"),
            ("1{p", SedPart::OpenWithoutClose, "a { without }"),
        ] {
            assert_eq!(sed_script(script), Err(part), "{script:?}");
            assert_eq!(part.to_string(), printed);
        }
        assert_eq!(sed_script("1,20p; s/a/b/g; /x/{p;}"), Ok(()));
    }
}
