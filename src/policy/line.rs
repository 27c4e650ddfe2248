//! What every rule reading a command shares, so the line reader ([`super::bash`]) and the
//! rules it asks ([`super::programs`], [`super::git`]) import this and not each other:
//! [`Blocked`] (why a command is not harmless), [`Line`] (the directories the line may be in,
//! and the read, write and output checks of a path) and [`program_name`].

use super::Context;
use super::paths::{self, Place};

/// Why a command line is not harmless.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Blocked {
    /// `not-harmless`, `sensitive-path` or `outside-project`.
    pub rule: &'static str,
    /// The part of the line that no rule proves harmless.
    pub part: String,
    pub why: String,
}

impl Blocked {
    pub fn new(part: impl Into<String>, why: impl Into<String>) -> Blocked {
        Blocked {
            rule: "not-harmless",
            part: part.into(),
            why: why.into(),
        }
    }

    pub fn with_rule(mut self, rule: &'static str) -> Blocked {
        self.rule = rule;
        self
    }
}

/// A directory the line may be running in.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Base {
    /// The context's working directory (maybe unknown: a screen).
    Start,
    /// A directory a `cd` went to, resolved.
    Dir(Place),
}

/// The state carried from one simple command to the next, and the helpers the rules use.
pub struct Line<'c> {
    pub ctx: &'c Context,
    /// Every directory the line may be in at this point.
    pub bases: Vec<Base>,
}

impl<'c> Line<'c> {
    pub fn new(ctx: &'c Context) -> Line<'c> {
        Line {
            ctx,
            bases: vec![Base::Start],
        }
    }

    /// Is the line still where it started (no `cd` before this command)?
    pub fn at_start(&self) -> bool {
        self.bases == [Base::Start]
    }

    /// Where `word` may point: one place per possible working directory.
    pub fn places(&self, word: &str) -> Vec<Place> {
        self.bases
            .iter()
            .map(|base| match base {
                Base::Start => paths::resolve(word, self.ctx),
                Base::Dir(Place::Absolute(dir)) => paths::resolve_in(word, Some(dir), self.ctx),
                Base::Dir(Place::Below(dir)) => {
                    if word.starts_with('/') || word.starts_with('~') {
                        paths::resolve(word, self.ctx)
                    } else {
                        paths::resolve(&dir.join(word).to_string_lossy(), self.ctx)
                    }
                }
                Base::Dir(Place::Unknown) => {
                    if word.starts_with('/') || word.starts_with('~') {
                        paths::resolve(word, self.ctx)
                    } else {
                        Place::Unknown
                    }
                }
            })
            .collect()
    }

    /// A path read: inside the project, the temporary directory or a read-only root
    /// ([`paths::readable`]) from every possible working directory, and never a secret
    /// anywhere (a pattern counts as every name it may match).
    pub fn read(&self, word: &str) -> Result<(), Blocked> {
        for place in self.places(word) {
            if let Some(why) = paths::secret_pattern(&place, word) {
                return Err(Blocked::new(word, format!("reads {why}")).with_rule("sensitive-path"));
            }
            if !paths::readable(&place, self.ctx) {
                return Err(Blocked::new(
                    word,
                    format!(
                        "reads {}, outside the project and the read-only roots",
                        paths::show(&place)
                    ),
                )
                .with_rule("outside-project"));
            }
        }
        Ok(())
    }

    /// A path written or created: inside the project (or the temporary directory when
    /// `temp_ok`) from every possible working directory, and never sensitive.
    pub fn write(&self, word: &str, temp_ok: bool) -> Result<(), Blocked> {
        if word.starts_with('-') {
            return Err(Blocked::new(word, "a path that reads as a flag"));
        }
        if word.contains(['*', '?', '[']) {
            return Err(Blocked::new(
                word,
                "a pattern: the files it writes are not known",
            ));
        }
        for place in self.places(word) {
            if let Some(why) = paths::sensitive(&place, self.ctx) {
                return Err(Blocked::new(word, format!("writes {why}")).with_rule("sensitive-path"));
            }
            if !(paths::inside_project(&place, self.ctx) || (temp_ok && paths::in_temp(&place))) {
                return Err(Blocked::new(
                    word,
                    format!("writes {}, outside the project", paths::show(&place)),
                )
                .with_rule("outside-project"));
            }
        }
        Ok(())
    }

    /// A file a runner writes its output to (`go build -o`, `-coverprofile`,
    /// `--cov-report=xml:PATH`): where [`Line::write`] may write, and then in the temporary
    /// directory, a build directory of the project (`target/`, `dist/`, `coverage/`, …), or
    /// a name that is not a source or configuration file's (`cover.out`, `app`) — never an
    /// existing source it would overwrite (`src/main.go`).
    pub fn output(&self, word: &str) -> Result<(), Blocked> {
        self.write(word, true)?;
        for place in self.places(word) {
            if paths::in_temp(&place) || paths::in_build_dir(&place, self.ctx) {
                continue;
            }
            if paths::source_like(&place) {
                return Err(Blocked::new(
                    word,
                    "a runner's output over what may be a source or configuration file",
                ));
            }
        }
        Ok(())
    }

    /// A directory a program works in (`make -C DIR`, `cargo --manifest-path`): inside the
    /// project and not sensitive.
    pub fn project_dir(&self, word: &str) -> Result<(), Blocked> {
        self.write(word, false)
    }

    pub fn cd(&mut self, target: Option<&str>, may_not_persist: bool) {
        let places = match target {
            None => vec![match &self.ctx.home {
                Some(home) => Place::Absolute(home.clone()),
                None => Place::Unknown,
            }],
            Some("-") => vec![Place::Unknown],
            Some(dir) => self.places(dir),
        };
        let new: Vec<Base> = places.into_iter().map(Base::Dir).collect();
        if may_not_persist {
            for base in new {
                if !self.bases.contains(&base) {
                    self.bases.push(base);
                }
            }
        } else {
            self.bases = new;
            self.bases.dedup();
        }
        // A pathological line of many cds: past a few, stop tracking.
        if self.bases.len() > 8 {
            self.bases = vec![Base::Dir(Place::Unknown)];
        }
    }
}

/// The program a word runs, when a rule may name it: a bare name, or a path into a system
/// directory (`/usr/bin/git`). `./ls` is a file of the project, not ls, and case matters
/// (`LS` is not `ls`).
pub fn program_name(word: &str) -> Result<&str, Blocked> {
    if let Some((dir, name)) = word.rsplit_once('/') {
        let system = matches!(
            dir,
            "/bin" | "/usr/bin" | "/usr/local/bin" | "/sbin" | "/usr/sbin" | "/usr/local/sbin"
        );
        if !system || name.is_empty() {
            return Err(Blocked::new(
                word,
                "runs a program by its path; no rule proves a file harmless",
            ));
        }
        return Ok(name);
    }
    Ok(word)
}
