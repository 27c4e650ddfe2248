//! Reading a program's arguments against the flags a rule lists: "a rule allows only the flags
//! it lists; any other flag makes the command not harmless" (DESIGN.md, Safety). A [`Spec`]
//! names the short flags (clustered as getopt allows: `-la`), the short flags that take a
//! value (`-n 5`, `-n5`), and the long flags with and without a value (`--color`,
//! `--color=auto`, `--max-count 3`). Long flags match exactly: getopt's abbreviations
//! (`--out` for `--output`) are not read, so an abbreviation is a flag no rule lists.

/// The flags one rule allows for one program.
#[derive(Debug, Clone, Copy, Default)]
pub struct Spec {
    /// Short flags without a value, as letters (`"alhR1"`).
    pub short: &'static str,
    /// Short flags that take a value (`"nc"`): the rest of the cluster or the next word.
    pub short_valued: &'static str,
    /// Long flags without a value (`"all"`); `"color="` allows `--color=VALUE` only;
    /// `"update=none"` allows that one spelling.
    pub long: &'static [&'static str],
    /// Long flags that take a value (`--name VALUE` or `--name=VALUE`).
    pub long_valued: &'static [&'static str],
    /// `-20` is a count (head, tail, grep context).
    pub numeric: bool,
    /// Flags after the first operand are operands (`echo a -n`, a script's own arguments).
    pub options_first: bool,
    /// A word that is not all listed flags is an operand (echo prints `- item` and `-x`).
    pub unknown_flags_are_text: bool,
    /// Valued flags whose value is a directory the program works in or reads code from
    /// (`npm --prefix`, `python -m unittest -s`): inside the project, never sensitive.
    pub project_dirs: &'static [&'static str],
    /// Valued flags whose value is a file a runner writes (`go build -o`): a new file or one
    /// in a build directory, never a source.
    pub outputs: &'static [&'static str],
    /// Go's flag syntax: every flag is a long one, with one dash or two (`-run`, `--run`,
    /// both read as `-run`), a value after `=` or in the next word, no clusters; a lone `-`
    /// or `--` is a flag no table lists.
    pub single_dash_long: bool,
}

/// An argument list read against a [`Spec`].
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Parsed<'a> {
    /// The flags given, as written without their values (`-l`, `--color`).
    pub flags: Vec<String>,
    /// Values of valued flags: (flag, value).
    pub values: Vec<(String, &'a str)>,
    /// Operands: everything that is not a flag or a flag's value.
    pub operands: Vec<&'a str>,
}

impl Parsed<'_> {
    /// Was the flag given (`-p`, `--parents`)?
    pub fn has(&self, flag: &str) -> bool {
        self.flags.iter().any(|f| f == flag)
    }

    /// The values given to a flag.
    pub fn values_of<'s>(&'s self, flag: &'s str) -> impl Iterator<Item = &'s str> + 's {
        self.values
            .iter()
            .filter(move |(f, _)| f == flag)
            .map(|(_, v)| *v)
    }
}

/// The first flag of an argument list that its [`Spec`] does not read, as the command wrote
/// it (printed after the program's name: "ls -z is not a listed flag").
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum FlagError {
    /// A flag the spec does not list (`-z`, `--al`, `--color`, `--all=x`).
    #[error("{0}")]
    Unlisted(String),
    /// A flag that takes a value, last in the list (`--max-count`).
    #[error("{0} without its value")]
    NoValue(String),
}

/// Read `args` against `spec`; the error names the first flag the spec does not list.
pub fn parse<'a>(spec: &Spec, args: &'a [String]) -> Result<Parsed<'a>, FlagError> {
    let mut parsed = Parsed::default();
    let mut i = 0;
    while i < args.len() {
        let arg = args[i].as_str();
        i += 1;
        if spec.single_dash_long && arg.starts_with('-') {
            single_dash_long(spec, arg, args, &mut i, &mut parsed)?;
            continue;
        }
        if arg == "--" {
            parsed.operands.extend(args[i..].iter().map(String::as_str));
            break;
        }
        if (spec.options_first && !parsed.operands.is_empty()) || unlisted_text(spec, arg) {
            parsed.operands.push(arg);
        } else if let Some(body) = arg.strip_prefix("--") {
            long(spec, body, args, &mut i, &mut parsed)?;
        } else if arg.len() > 1 && arg.starts_with('-') {
            short_cluster(spec, &arg[1..], args, &mut i, &mut parsed)?;
        } else {
            parsed.operands.push(arg);
        }
    }
    Ok(parsed)
}

/// With `unknown_flags_are_text`, a word that is not all listed flags is an operand.
fn unlisted_text(spec: &Spec, arg: &str) -> bool {
    spec.unknown_flags_are_text
        && arg.len() > 1
        && arg.starts_with('-')
        && !match arg.strip_prefix("--") {
            Some(name) => spec.long.contains(&name),
            None => arg[1..].chars().all(|c| spec.short.contains(c)),
        }
}

/// The value of a flag that takes one: `given` (after `=` or in the cluster), or the next
/// argument (`*i` moves past it).
fn value_of<'a>(
    flag: &str,
    given: Option<&'a str>,
    args: &'a [String],
    i: &mut usize,
) -> Result<&'a str, FlagError> {
    if let Some(value) = given {
        return Ok(value);
    }
    let next = args
        .get(*i)
        .ok_or_else(|| FlagError::NoValue(flag.to_string()))?;
    *i += 1;
    Ok(next.as_str())
}

/// A long flag (`body` is after the `--`): with a value (`--name VALUE`, `--name=VALUE`),
/// without one, or one listed only with a value (`"color="`).
fn long<'a>(
    spec: &Spec,
    body: &'a str,
    args: &'a [String],
    i: &mut usize,
    parsed: &mut Parsed<'a>,
) -> Result<(), FlagError> {
    let (name, value) = match body.split_once('=') {
        Some((name, value)) => (name, Some(value)),
        None => (body, None),
    };
    let flag = format!("--{name}");
    if spec.long_valued.contains(&name) {
        let value = value_of(&flag, value, args, i)?;
        parsed.values.push((flag, value));
    } else if value.is_none() && spec.long.contains(&name) {
        parsed.flags.push(flag);
    } else if let Some(value) =
        value.filter(|_| spec.long.iter().any(|l| l.strip_suffix('=') == Some(name)))
    {
        parsed.values.push((flag, value));
    } else if spec.long.contains(&body) {
        // A flag listed with its one allowed value (`update=none`).
        parsed.flags.push(format!("--{body}"));
    } else {
        return Err(FlagError::Unlisted(format!("--{body}")));
    }
    Ok(())
}

/// A flag in Go's syntax (`-name`, `--name`, `-name=VALUE`, `-name VALUE`), recorded as
/// `-name`; an unlisted one is named as written.
fn single_dash_long<'a>(
    spec: &Spec,
    arg: &'a str,
    args: &'a [String],
    i: &mut usize,
    parsed: &mut Parsed<'a>,
) -> Result<(), FlagError> {
    let body = arg.strip_prefix("--").unwrap_or(&arg[1..]);
    let (name, value) = match body.split_once('=') {
        Some((name, value)) => (name, Some(value)),
        None => (body, None),
    };
    let flag = format!("-{name}");
    if spec.long_valued.contains(&name) {
        let value = value_of(&flag, value, args, i)?;
        parsed.values.push((flag, value));
    } else if value.is_none() && spec.long.contains(&name) {
        parsed.flags.push(flag);
    } else {
        return Err(FlagError::Unlisted(arg.to_string()));
    }
    Ok(())
}

/// A cluster of short flags (`body` is after the `-`): a count (`-20`, with `numeric`), or
/// letters, the first that takes a value taking the rest of the cluster or the next argument.
fn short_cluster<'a>(
    spec: &Spec,
    body: &'a str,
    args: &'a [String],
    i: &mut usize,
    parsed: &mut Parsed<'a>,
) -> Result<(), FlagError> {
    if spec.numeric && body.bytes().all(|b| b.is_ascii_digit()) {
        parsed.values.push(("-n".to_string(), body));
        return Ok(());
    }
    for (at, letter) in body.char_indices() {
        if spec.short_valued.contains(letter) {
            let flag = format!("-{letter}");
            let rest = &body[at + letter.len_utf8()..];
            let value = value_of(&flag, Some(rest).filter(|r| !r.is_empty()), args, i)?;
            parsed.values.push((flag, value));
            return Ok(());
        }
        if spec.short.contains(letter) {
            parsed.flags.push(format!("-{letter}"));
        } else {
            return Err(FlagError::Unlisted(format!("-{letter}")));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn w(items: &[&str]) -> Vec<String> {
        items.iter().map(|s| s.to_string()).collect()
    }

    const LS: Spec = Spec {
        short: "lahR",
        short_valued: "I",
        long: &["all", "color=", "block-size=1"],
        long_valued: &["sort"],
        numeric: false,
        options_first: false,
        unknown_flags_are_text: false,
        project_dirs: &[],
        outputs: &[],
        single_dash_long: false,
    };

    #[test]
    fn listed_flags_pass_and_others_are_named() {
        let args = w(&[
            "-la",
            "--all",
            "--color=auto",
            "--sort",
            "size",
            "-Ifoo",
            "src",
        ]);
        let parsed = parse(&LS, &args).unwrap();
        assert!(parsed.has("-l") && parsed.has("-a") && parsed.has("--all"));
        assert_eq!(parsed.operands, ["src"]);
        assert_eq!(parsed.values_of("--sort").collect::<Vec<_>>(), ["size"]);
        assert_eq!(parsed.values_of("-I").collect::<Vec<_>>(), ["foo"]);
        let unlisted = |flag: &str| FlagError::Unlisted(flag.to_string());
        assert_eq!(parse(&LS, &w(&["-lz"])).unwrap_err(), unlisted("-z"));
        assert_eq!(parse(&LS, &w(&["--al"])).unwrap_err(), unlisted("--al"));
        assert_eq!(
            parse(&LS, &w(&["--color"])).unwrap_err(),
            unlisted("--color")
        );
        assert_eq!(
            parse(&LS, &w(&["--all=x"])).unwrap_err(),
            unlisted("--all=x")
        );
        assert!(
            parse(&LS, &w(&["--block-size=1"]))
                .unwrap()
                .has("--block-size=1")
        );
        let other = parse(&LS, &w(&["--block-size=2"])).unwrap_err();
        assert_eq!(other, unlisted("--block-size=2"));
        let no_value = parse(&LS, &w(&["-l", "--sort"])).unwrap_err();
        assert_eq!(no_value, FlagError::NoValue("--sort".to_string()));
        assert_eq!(no_value.to_string(), "--sort without its value");
        assert_eq!(
            parse(&LS, &w(&["-I"])).unwrap_err().to_string(),
            "-I without its value"
        );
        let args = w(&["--", "-rf"]);
        let after = parse(&LS, &args).unwrap();
        assert_eq!(after.operands, ["-rf"]);
    }

    #[test]
    fn go_s_flags_take_one_dash_or_two_and_no_clusters() {
        let go = Spec {
            long: &["v", "race"],
            long_valued: &["run", "o"],
            single_dash_long: true,
            ..Spec::default()
        };
        let args = w(&["-v", "--race", "./...", "-run=X", "--o", "bin/app"]);
        let parsed = parse(&go, &args).unwrap();
        assert!(parsed.has("-v") && parsed.has("-race"));
        assert_eq!(parsed.values_of("-run").collect::<Vec<_>>(), ["X"]);
        assert_eq!(parsed.values_of("-o").collect::<Vec<_>>(), ["bin/app"]);
        assert_eq!(parsed.operands, ["./..."]);
        let unlisted = |flag: &str| FlagError::Unlisted(flag.to_string());
        for (arg, error) in [
            ("-vrace", unlisted("-vrace")),
            ("-v=true", unlisted("-v=true")),
            ("--exec=/tmp/x", unlisted("--exec=/tmp/x")),
            ("-", unlisted("-")),
            ("--", unlisted("--")),
            ("--run", FlagError::NoValue("-run".to_string())),
        ] {
            assert_eq!(parse(&go, &w(&[arg])).unwrap_err(), error, "{arg}");
        }
    }

    #[test]
    fn numeric_counts_and_options_first() {
        let head = Spec {
            numeric: true,
            ..Spec::default()
        };
        assert_eq!(parse(&head, &w(&["-20", "f"])).unwrap().operands, ["f"]);
        let echo = Spec {
            short: "n",
            options_first: true,
            ..Spec::default()
        };
        assert_eq!(
            parse(&echo, &w(&["-n", "a", "-rf"])).unwrap().operands,
            ["a", "-rf"]
        );
        let echo = Spec {
            short: "n",
            options_first: true,
            unknown_flags_are_text: true,
            ..Spec::default()
        };
        let args = w(&["-n", "- item", "-x"]);
        let parsed = parse(&echo, &args).unwrap();
        assert!(parsed.has("-n"));
        assert_eq!(parsed.operands, ["- item", "-x"]);
        assert_eq!(parse(&echo, &w(&["-nx"])).unwrap().operands, ["-nx"]);
    }
}
