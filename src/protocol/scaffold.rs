//! A new task module, as `autoctl task new` lays it out (ai-cli-task's `init`): the texts of
//! `.index.md` (front matter in draft), `.target.md` (the goal, or a stub to fill), an
//! optional `.type-profile.md`, the module's line in the task root's `.index.md` listing and
//! the root's `.gitignore` entries for the transient files. Pure: the command does the I/O.

use crate::lint::{TEMP_LEFTOVER_PATTERN, TRANSIENT_FILES};

/// The status every new module starts in (the first status of every built-in table).
pub const INITIAL_STATUS: &str = "draft";

/// The longest title accepted, in characters (it is a heading and one line of a listing).
pub const TITLE_MAX_CHARS: usize = 200;

/// The longest goal accepted, in bytes (`.target.md` is read with a 1 MiB bound; a goal is a
/// paragraph or two).
pub const GOAL_MAX_BYTES: usize = 64 * 1024;

/// What a new module is made of.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct NewModule<'a> {
    /// The module's directory name.
    pub name: &'a str,
    pub title: &'a str,
    /// The task type (`feature`, `bugfix`, …): its first tag, and a `.type-profile.md`.
    pub task_type: Option<&'a str>,
    /// What to build, the body of `.target.md`.
    pub goal: Option<&'a str>,
    /// RFC 3339, for `created` and `updated`.
    pub now: &'a str,
}

/// Why a `--title` or `--goal` cannot be written into the new module.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum TextError {
    #[error("--title is empty")]
    EmptyTitle,
    /// The character, escaped.
    #[error("--title holds a control character ({0}); a title is one line of text")]
    TitleControl(String),
    #[error("--title is longer than {TITLE_MAX_CHARS} characters; put the details in --goal")]
    LongTitle,
    #[error("--goal is empty (leave it out to get a stub to fill)")]
    EmptyGoal,
    #[error("--goal holds a control character ({0})")]
    GoalControl(String),
    #[error("--goal is larger than {}; write .target.md yourself", crate::fsx::human_size(GOAL_MAX_BYTES as u64))]
    LargeGoal,
}

/// A title is one printable line.
pub fn check_title(title: &str) -> Result<(), TextError> {
    if title.trim().is_empty() {
        return Err(TextError::EmptyTitle);
    }
    if let Some(ch) = title.chars().find(|c| c.is_control()) {
        return Err(TextError::TitleControl(ch.escape_default().to_string()));
    }
    if title.chars().count() > TITLE_MAX_CHARS {
        return Err(TextError::LongTitle);
    }
    Ok(())
}

/// A goal is text: lines and tabs, no other control characters, bounded.
pub fn check_goal(goal: &str) -> Result<(), TextError> {
    if goal.trim().is_empty() {
        return Err(TextError::EmptyGoal);
    }
    if let Some(ch) = goal
        .chars()
        .find(|c| c.is_control() && !matches!(c, '\n' | '\t'))
    {
        return Err(TextError::GoalControl(ch.escape_default().to_string()));
    }
    if goal.len() > GOAL_MAX_BYTES {
        return Err(TextError::LargeGoal);
    }
    Ok(())
}

/// `.index.md`: front matter in draft, and the title as its heading. Strings are written as
/// JSON strings, which YAML reads as double-quoted scalars, so no title can break the YAML.
pub fn index_text(module: &NewModule) -> String {
    let quoted = |text: &str| serde_json::to_string(text).expect("a string serializes");
    let mut text = format!(
        "---\ntitle: {}\nstatus: {INITIAL_STATUS}\ncreated: {}\nupdated: {}\n",
        quoted(module.title),
        module.now,
        module.now
    );
    if let Some(kind) = module.task_type {
        text.push_str(&format!("tags: [{}]\n", quoted(kind)));
    }
    text.push_str(&format!("---\n# {}\n", module.title));
    text
}

/// `.target.md`: the goal, or a stub that `autoctl next` does not plan (see
/// [`super::target::has_substantive_content`]) until someone says what to build.
pub fn target_text(goal: Option<&str>) -> String {
    match goal {
        Some(goal) => format!("# Target\n\n{}\n", goal.trim_end()),
        None => "# Target\n\n\
<!-- Say what to build: the goal, the requirements, how to check it is done. The loop plans\n\
     this task only once this file has real content (three words or more besides headings,\n\
     comments and placeholders such as {...}). -->\n\n\
## Requirements\n\n\
- [ ] {requirement}\n"
            .to_string(),
    }
}

/// `.type-profile.md` for a typed task: an empty "## Auto Adaptation" section, so `gate
/// --profile` reads the seed's fallbacks and `profile learn` has its section to fill.
pub fn type_profile_text(kind: &str) -> String {
    format!(
        "# Type profile: {kind}\n\n\
Thresholds and retry limits for tasks of this type (`autoctl profile show`); empty means the\n\
defaults. `autoctl profile learn` records what each run observed here.\n\n\
## Auto Adaptation\n"
    )
}

/// The module's line in the root listing (the form lint's `root-index-*` rules read). The
/// title's brackets and parentheses are escaped, so no title can add a link of its own.
pub fn listing_line(name: &str, title: &str) -> String {
    let mut escaped = String::with_capacity(title.len());
    for ch in title.chars() {
        if matches!(ch, '\\' | '[' | ']' | '(' | ')') {
            escaped.push('\\');
        }
        escaped.push(ch);
    }
    format!("- [{name}](./{name}/.index.md) — {escaped}\n")
}

/// The root listing with the module's line appended, or `None` when a line already links to
/// the module. A missing listing starts with a heading naming the root.
pub fn listing_with(existing: Option<&str>, root: &str, name: &str, title: &str) -> Option<String> {
    let mut text = match existing {
        Some(text) => {
            let listed = text.lines().enumerate().any(|(i, line)| {
                crate::lint::root_index::links(line, i + 1)
                    .iter()
                    .any(|entry| entry.name == name)
            });
            if listed {
                return None;
            }
            let mut text = text.to_string();
            if !text.is_empty() && !text.ends_with('\n') {
                text.push('\n');
            }
            text
        }
        None => format!("# {root}\n\n"),
    };
    text.push_str(&listing_line(name, title));
    Some(text)
}

/// The root's `.gitignore` with every transient file of the protocol listed (and the
/// temporary files a crashed write leaves), or `None` when it already lists them all.
pub fn gitignore_with(existing: Option<&str>) -> Option<String> {
    let existing = existing.unwrap_or("");
    let present = |name: &str| {
        existing
            .lines()
            .map(str::trim)
            .any(|line| line == name || line.strip_prefix('/') == Some(name))
    };
    let missing: Vec<&str> = TRANSIENT_FILES
        .iter()
        .copied()
        .chain([TEMP_LEFTOVER_PATTERN])
        .filter(|name| !present(name))
        .collect();
    if missing.is_empty() {
        return None;
    }
    let mut text = existing.to_string();
    if !text.is_empty() && !text.ends_with('\n') {
        text.push('\n');
    }
    if text.is_empty() {
        text.push_str(
            "# Written by the loop while it runs; never committed (autoctl lint checks).\n",
        );
    }
    for name in missing {
        text.push_str(name);
        text.push('\n');
    }
    Some(text)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::protocol::{index, target};

    fn module<'a>(title: &'a str, kind: Option<&'a str>, goal: Option<&'a str>) -> NewModule<'a> {
        NewModule {
            name: "auth",
            title,
            task_type: kind,
            goal,
            now: "2027-01-15T09:00:00Z",
        }
    }

    #[test]
    fn the_index_parses_and_carries_its_fields() {
        for title in [
            "Say hello",
            "a: b # c",
            "\"quoted\" 'and' \\ back",
            "- [x] {y}",
            "用户认证",
        ] {
            let text = index_text(&module(title, Some("bug-fix"), None));
            let map = index::parse_front_matter(&text).unwrap();
            assert_eq!(map["title"], title, "{text}");
            assert_eq!(map["status"], "draft");
            assert_eq!(map["created"], "2027-01-15T09:00:00Z");
            assert_eq!(map["tags"], serde_json::json!(["bug-fix"]));
            assert!(
                crate::schema::violations("index-front-matter", &serde_json::Value::Object(map))
                    .is_empty()
            );
        }
        let map = index::parse_front_matter(&index_text(&module("t", None, None))).unwrap();
        assert!(!map.contains_key("tags"));
    }

    proptest::proptest! {
        /// Whatever title passes the check, the front matter parses back to exactly it, and
        /// the listing line links the module.
        #[test]
        fn any_accepted_title_round_trips(title in "\\PC{1,80}") {
            proptest::prop_assume!(check_title(&title).is_ok());
            let text = index_text(&module(&title, None, None));
            let map = index::parse_front_matter(&text).unwrap();
            proptest::prop_assert_eq!(map["title"].as_str(), Some(title.as_str()));
            let line = listing_line("auth", &title);
            let links = crate::lint::root_index::links(line.trim_end(), 1);
            proptest::prop_assert_eq!(links.len(), 1);
            proptest::prop_assert_eq!(links[0].name.as_str(), "auth");
        }
    }

    #[test]
    fn the_stub_is_not_a_goal_and_a_goal_is() {
        assert!(!target::has_substantive_content(&target_text(None)));
        assert!(target::has_substantive_content(&target_text(Some(
            "Write hello.txt saying hello"
        ))));
    }

    #[test]
    fn titles_and_goals_are_checked() {
        assert!(check_title("Say hello").is_ok());
        assert!(check_title(" ").is_err());
        assert!(check_title("two\nlines").is_err());
        assert!(check_title(&"x".repeat(TITLE_MAX_CHARS + 1)).is_err());
        assert!(check_goal("line one\n\tline two").is_ok());
        assert!(check_goal("").is_err());
        assert!(check_goal("bell\u{7}").is_err());
    }

    #[test]
    fn the_listing_gains_one_line_once() {
        let fresh = listing_with(None, "TASK", "auth", "Auth").unwrap();
        assert_eq!(fresh, "# TASK\n\n- [auth](./auth/.index.md) — Auth\n");
        let more = listing_with(Some("# Tasks\n- [db](db/)"), "TASK", "auth", "Auth").unwrap();
        assert_eq!(
            more,
            "# Tasks\n- [db](db/)\n- [auth](./auth/.index.md) — Auth\n"
        );
        assert_eq!(listing_with(Some(&more), "TASK", "auth", "Other"), None);
        assert_eq!(
            listing_with(Some("see [auth](auth/)\n"), "TASK", "auth", "A"),
            None
        );
        assert_eq!(
            listing_line("a", "x [b](./b/.index.md)"),
            "- [a](./a/.index.md) — x \\[b\\]\\(./b/.index.md\\)\n"
        );
    }

    #[test]
    fn gitignore_gains_only_what_is_missing() {
        let fresh = gitignore_with(None).unwrap();
        for name in TRANSIENT_FILES {
            assert!(fresh.lines().any(|l| l == *name), "{fresh}");
        }
        assert_eq!(gitignore_with(Some(&fresh)), None);
        let partial = gitignore_with(Some("target/\n/.auto-signal")).unwrap();
        assert_eq!(
            partial,
            "target/\n/.auto-signal\n.auto-stop\n.auto-retry\n.tmp-annotations.json\n.*.tmp\n"
        );
    }
}
