//! The "## Auto Adaptation" section of `.type-profile.md` (seed 002): the adaptive thresholds
//! and retry limits the gate reads, and the metrics `profile learn` writes back after a loop.
//!
//! The section is a list of `- key: value` lines (blank lines, `<!-- comments -->` and `###`
//! sub-headings may sit between them); it runs from its `## Auto Adaptation` heading to the
//! next heading of level 1 or 2. Keys:
//!
//! ```text
//! - threshold.post-plan: 0.70          settings, read by `autoctl gate`
//! - retry_limit.mid-exec: 2
//! - mid_exec_check_interval: 3
//! - compaction_threshold: 82%
//! - observed.runs: 4                   metrics, rewritten by `autoctl profile learn`
//! - observed.retries.post-plan: 1
//! - observed.duration.execution: 42m
//! ```
//!
//! A file without the section means the seed's fallbacks. A section that appears twice, a
//! line that is not an entry, an unknown key, a key set twice or a value out of range is an
//! error naming the line: a gate must not silently fall back when the user's tuning is there
//! but unreadable. Headings inside fenced code blocks are not headings.
//!
//! `learn` rewrites only the section's `observed.*` lines; every other byte of the file,
//! inside the section and outside it, is kept.

use std::collections::BTreeMap;
use std::fmt;
use std::time::Duration;

use serde::Serialize;

use super::gate::Checkpoint;
use super::score::Score;
use crate::duration;

/// The file name.
pub const FILE_NAME: &str = ".type-profile.md";

/// The section's heading text (level 2, compared case-insensitively).
pub const HEADING: &str = "Auto Adaptation";

/// The largest retry limit a profile may set: more is a typo, not tuning.
pub const MAX_RETRY_LIMIT: u32 = 100;

/// The seed's fallbacks for the two settings that are not per-checkpoint.
pub const FALLBACK_MID_EXEC_CHECK_INTERVAL: u32 = 3;
pub const FALLBACK_COMPACTION_THRESHOLD: Score = Score::from_units(8_200);

/// The four phases of a task-ai loop (seed 002), for phase durations.
pub const PHASES: [&str; 4] = ["target", "planning", "execution", "acceptance"];

/// A profile problem, located by its 1-based line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ProfileError {
    pub line: usize,
    pub message: String,
}

impl fmt::Display for ProfileError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "line {}: {}", self.line, self.message)
    }
}

impl std::error::Error for ProfileError {}

/// Why one `key: value` line cannot be applied. An unknown key is reported as it is; the
/// others after the key they belong to.
#[derive(Debug, thiserror::Error)]
enum ValueError {
    #[error(
        "unknown key {0:?} (known: threshold.CHECKPOINT, retry_limit.CHECKPOINT, mid_exec_check_interval, compaction_threshold, observed.*; CHECKPOINT is post-plan, mid-exec or post-exec)"
    )]
    UnknownKey(String),
    #[error("{0:?} is not a whole number")]
    NotWhole(String),
    #[error("{n} is larger than {max}")]
    TooLarge { n: u64, max: u64 },
    #[error("{0:?} is not a percentage")]
    NotPercent(String),
    #[error("{0} is outside 0–100%")]
    PercentRange(String),
    #[error("0: the interval is at least 1 step")]
    ZeroInterval,
    #[error("{0:?} is not an RFC 3339 timestamp: {1}")]
    Time(String, chrono::ParseError),
    #[error(transparent)]
    Score(#[from] super::score::ScoreError),
    #[error(transparent)]
    Duration(#[from] duration::DurationError),
}

fn err(line: usize, message: impl Into<String>) -> ProfileError {
    ProfileError {
        line,
        message: message.into(),
    }
}

/// Metrics observed over the runs of this task type.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct Observed {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub runs: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub updated_at: Option<String>,
    /// Retries used at each checkpoint in the last run.
    #[serde(skip_serializing_if = "BTreeMap::is_empty")]
    pub retries: BTreeMap<Checkpoint, u32>,
    /// The most retries any run used at each checkpoint.
    #[serde(skip_serializing_if = "BTreeMap::is_empty")]
    pub retries_max: BTreeMap<Checkpoint, u32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub iterations: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub mid_exec_checks: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub compactions: Option<u64>,
    /// Seconds spent in each phase in the last run.
    #[serde(skip_serializing_if = "BTreeMap::is_empty")]
    pub durations: BTreeMap<String, u64>,
}

/// The parsed section.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct Adaptation {
    #[serde(skip_serializing_if = "BTreeMap::is_empty")]
    pub thresholds: BTreeMap<Checkpoint, Score>,
    #[serde(skip_serializing_if = "BTreeMap::is_empty")]
    pub retry_limits: BTreeMap<Checkpoint, u32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub mid_exec_check_interval: Option<u32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub compaction_threshold: Option<Score>,
    pub observed: Observed,
}

/// Where the section is in the text (byte offsets, and the heading's line).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Section {
    pub heading_line: usize,
    /// Offset of the first byte after the heading line.
    pub body_start: usize,
    /// Offset of the next level-1/2 heading, or the end of the text.
    pub end: usize,
}

/// One line with its terminator, its offset and its 1-based number.
struct Line<'a> {
    number: usize,
    start: usize,
    /// The line without `\n` / `\r\n`.
    text: &'a str,
    /// The line including its terminator.
    full: &'a str,
}

fn lines(text: &str) -> impl Iterator<Item = Line<'_>> {
    let mut offset = 0;
    text.split_inclusive('\n')
        .enumerate()
        .map(move |(i, full)| {
            let start = offset;
            offset += full.len();
            let text = full.strip_suffix('\n').unwrap_or(full);
            let text = text.strip_suffix('\r').unwrap_or(text);
            Line {
                number: i + 1,
                start,
                text,
                full,
            }
        })
}

/// The level and text of an ATX heading (`## Title ##`), if the line is one.
fn heading(line: &str) -> Option<(usize, &str)> {
    let indent = line.len() - line.trim_start_matches(' ').len();
    if indent > 3 {
        return None;
    }
    let rest = &line[indent..];
    let level = rest.len() - rest.trim_start_matches('#').len();
    if level == 0 || level > 6 {
        return None;
    }
    let after = &rest[level..];
    if !(after.is_empty() || after.starts_with(' ') || after.starts_with('\t')) {
        return None;
    }
    let title = after.trim();
    // A closing sequence of #s is not part of the title.
    let title = title.trim_end_matches('#').trim_end();
    Some((level, title))
}

/// The fence that opens a code block (``` or ~~~, three or more), if the line is one.
fn fence(line: &str) -> Option<(char, usize)> {
    let trimmed = line.trim_start_matches(' ');
    if line.len() - trimmed.len() > 3 {
        return None;
    }
    let ch = trimmed.chars().next()?;
    if ch != '`' && ch != '~' {
        return None;
    }
    let run = trimmed.len() - trimmed.trim_start_matches(ch).len();
    (run >= 3).then_some((ch, run))
}

/// Find the section; an error when it appears twice.
pub fn find_section(text: &str) -> Result<Option<Section>, ProfileError> {
    let mut found: Option<Section> = None;
    let mut open_fence: Option<(char, usize)> = None;
    for line in lines(text) {
        if let Some((ch, run)) = open_fence {
            if fence(line.text).is_some_and(|(c, r)| c == ch && r >= run)
                && line.text.trim().chars().all(|c| c == ch)
            {
                open_fence = None;
            }
            continue;
        }
        if let Some(opened) = fence(line.text) {
            open_fence = Some(opened);
            continue;
        }
        let Some((level, title)) = heading(line.text) else {
            continue;
        };
        if level > 2 {
            continue;
        }
        if let Some(section) = found.as_mut()
            && section.end == text.len()
        {
            section.end = line.start;
        }
        if level == 2 && title.eq_ignore_ascii_case(HEADING) {
            if let Some(first) = found {
                return Err(err(
                    line.number,
                    format!(
                        "a second \"## {HEADING}\" section (the first is on line {}); keep one",
                        first.heading_line
                    ),
                ));
            }
            found = Some(Section {
                heading_line: line.number,
                body_start: line.start + line.full.len(),
                end: text.len(),
            });
        }
    }
    Ok(found)
}

/// What one line of the section body is.
enum Entry<'a> {
    /// Blank, comment or sub-heading: kept as it is.
    Other,
    KeyValue {
        key: &'a str,
        value: &'a str,
    },
}

/// Classify the body lines, tracking multi-line HTML comments.
fn entries(body: &str, first_line: usize) -> Result<Vec<(Line<'_>, Entry<'_>)>, ProfileError> {
    let mut out = Vec::new();
    let mut in_comment = false;
    for mut line in lines(body) {
        line.number += first_line - 1;
        let trimmed = line.text.trim();
        if in_comment {
            if trimmed.contains("-->") {
                in_comment = false;
                if !trimmed.ends_with("-->") {
                    return Err(err(line.number, "text after the end of a comment"));
                }
            }
            out.push((line, Entry::Other));
            continue;
        }
        if trimmed.is_empty() || heading(line.text).is_some_and(|(level, _)| level >= 3) {
            out.push((line, Entry::Other));
            continue;
        }
        if let Some(rest) = trimmed.strip_prefix("<!--") {
            match rest.find("-->") {
                Some(end) if rest[end + 3..].trim().is_empty() => {}
                Some(_) => return Err(err(line.number, "text after the end of a comment")),
                None => in_comment = true,
            }
            out.push((line, Entry::Other));
            continue;
        }
        let Some(item) = trimmed
            .strip_prefix("- ")
            .or_else(|| trimmed.strip_prefix("* "))
        else {
            return Err(err(
                line.number,
                format!(
                    "expected \"- key: value\" in \"## {HEADING}\", found {:?}",
                    shorten(trimmed)
                ),
            ));
        };
        let Some((key, value)) = item.split_once(':') else {
            return Err(err(
                line.number,
                format!(
                    "expected \"- key: value\", found {:?} (no colon)",
                    shorten(trimmed)
                ),
            ));
        };
        let (key, value) = (key.trim(), value.trim());
        // `observed.updated_at` holds a timestamp whose colons belong to the value.
        out.push((line, Entry::KeyValue { key, value }));
    }
    if in_comment {
        return Err(err(
            first_line + body.lines().count().saturating_sub(1),
            "a comment in the section is never closed (-->)",
        ));
    }
    Ok(out)
}

fn shorten(text: &str) -> String {
    if text.chars().count() > 60 {
        let cut: String = text.chars().take(57).collect();
        format!("{cut}...")
    } else {
        text.to_string()
    }
}

/// Every key a section may hold, for error messages.
pub fn known_keys() -> Vec<String> {
    let mut keys = Vec::new();
    for cp in Checkpoint::ALL {
        keys.push(format!("threshold.{cp}"));
    }
    for cp in Checkpoint::ALL {
        keys.push(format!("retry_limit.{cp}"));
    }
    keys.push("mid_exec_check_interval".into());
    keys.push("compaction_threshold".into());
    keys.push("observed.runs".into());
    keys.push("observed.updated_at".into());
    for cp in Checkpoint::ALL {
        keys.push(format!("observed.retries.{cp}"));
    }
    for cp in Checkpoint::ALL {
        keys.push(format!("observed.retries_max.{cp}"));
    }
    keys.push("observed.iterations".into());
    keys.push("observed.mid_exec_checks".into());
    keys.push("observed.compactions".into());
    for phase in PHASES {
        keys.push(format!("observed.duration.{phase}"));
    }
    keys
}

fn parse_count(value: &str, max: u64) -> Result<u64, ValueError> {
    let n: u64 = value
        .parse()
        .map_err(|_| ValueError::NotWhole(value.to_string()))?;
    if n > max {
        return Err(ValueError::TooLarge { n, max });
    }
    Ok(n)
}

fn parse_fraction_or_percent(value: &str) -> Result<Score, ValueError> {
    match value.strip_suffix('%') {
        Some(percent) => {
            let n: f64 = percent
                .trim()
                .parse()
                .map_err(|_| ValueError::NotPercent(value.to_string()))?;
            if !n.is_finite() || !(0.0..=100.0).contains(&n) {
                return Err(ValueError::PercentRange(value.to_string()));
            }
            Ok(Score::from_units((n * 100.0).round() as u32))
        }
        None => Ok(Score::parse(value)?),
    }
}

/// Apply one `key: value` to the adaptation.
fn apply(adaptation: &mut Adaptation, key: &str, value: &str) -> Result<(), ValueError> {
    let per_checkpoint = |prefix: &str| -> Option<Checkpoint> {
        key.strip_prefix(prefix).and_then(Checkpoint::from_name)
    };
    let obs = &mut adaptation.observed;
    if let Some(cp) = per_checkpoint("threshold.") {
        adaptation.thresholds.insert(cp, Score::parse(value)?);
    } else if let Some(cp) = per_checkpoint("retry_limit.") {
        adaptation
            .retry_limits
            .insert(cp, parse_count(value, u64::from(MAX_RETRY_LIMIT))? as u32);
    } else if key == "mid_exec_check_interval" {
        let n = parse_count(value, 1000)? as u32;
        if n == 0 {
            return Err(ValueError::ZeroInterval);
        }
        adaptation.mid_exec_check_interval = Some(n);
    } else if key == "compaction_threshold" {
        adaptation.compaction_threshold = Some(parse_fraction_or_percent(value)?);
    } else if key == "observed.runs" {
        obs.runs = Some(parse_count(value, u64::MAX)?);
    } else if key == "observed.updated_at" {
        chrono::DateTime::parse_from_rfc3339(value)
            .map_err(|e| ValueError::Time(value.to_string(), e))?;
        obs.updated_at = Some(value.to_string());
    } else if let Some(cp) = per_checkpoint("observed.retries.") {
        obs.retries
            .insert(cp, parse_count(value, u64::from(u32::MAX))? as u32);
    } else if let Some(cp) = per_checkpoint("observed.retries_max.") {
        obs.retries_max
            .insert(cp, parse_count(value, u64::from(u32::MAX))? as u32);
    } else if key == "observed.iterations" {
        obs.iterations = Some(parse_count(value, u64::MAX)?);
    } else if key == "observed.mid_exec_checks" {
        obs.mid_exec_checks = Some(parse_count(value, u64::MAX)?);
    } else if key == "observed.compactions" {
        obs.compactions = Some(parse_count(value, u64::MAX)?);
    } else if let Some(phase) = key
        .strip_prefix("observed.duration.")
        .filter(|p| PHASES.contains(p))
    {
        let d = duration::parse(value)?;
        obs.durations.insert(phase.to_string(), d.as_secs());
    } else {
        return Err(ValueError::UnknownKey(key.to_string()));
    }
    Ok(())
}

/// Parse the section out of a whole profile. `None` when the file has no section (the seed's
/// fallbacks apply).
pub fn parse(text: &str) -> Result<Option<Adaptation>, ProfileError> {
    let Some(section) = find_section(text)? else {
        return Ok(None);
    };
    let body = &text[section.body_start..section.end];
    let mut adaptation = Adaptation::default();
    let mut seen: BTreeMap<&str, usize> = BTreeMap::new();
    for (line, entry) in entries(body, section.heading_line + 1)? {
        let Entry::KeyValue { key, value } = entry else {
            continue;
        };
        if let Some(first) = seen.get(key) {
            return Err(err(
                line.number,
                format!("{key} is set twice (first on line {first})"),
            ));
        }
        if value.is_empty() {
            return Err(err(line.number, format!("{key} has no value")));
        }
        apply(&mut adaptation, key, value).map_err(|m| match m {
            ValueError::UnknownKey(_) => err(line.number, m.to_string()),
            _ => err(line.number, format!("{key}: {m}")),
        })?;
        seen.insert(key, line.number);
    }
    Ok(Some(adaptation))
}

/// The thresholds and limits a gate uses, with where each came from.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Resolved {
    pub threshold: Score,
    pub threshold_from_profile: bool,
    pub retry_limit: u32,
    pub retry_limit_from_profile: bool,
}

/// Resolution order (seed 002): profile section, else the fallback table.
pub fn resolve(adaptation: Option<&Adaptation>, cp: Checkpoint) -> Resolved {
    let threshold = adaptation.and_then(|a| a.thresholds.get(&cp).copied());
    let limit = adaptation.and_then(|a| a.retry_limits.get(&cp).copied());
    Resolved {
        threshold: threshold.unwrap_or(cp.fallback_threshold()),
        threshold_from_profile: threshold.is_some(),
        retry_limit: limit.unwrap_or(cp.fallback_retry_limit()),
        retry_limit_from_profile: limit.is_some(),
    }
}

/// What one loop run observed, as `profile learn` receives it.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct RunMetrics {
    pub retries: BTreeMap<Checkpoint, u32>,
    pub iterations: Option<u64>,
    pub mid_exec_checks: Option<u64>,
    pub compactions: Option<u64>,
    /// Seconds per phase (names from [`PHASES`]).
    pub durations: BTreeMap<String, u64>,
}

impl RunMetrics {
    pub fn is_empty(&self) -> bool {
        self.retries.is_empty()
            && self.iterations.is_none()
            && self.mid_exec_checks.is_none()
            && self.compactions.is_none()
            && self.durations.is_empty()
    }
}

/// The observed metrics after one more run: last-run values replace the previous run's (a
/// metric this run did not report is dropped, so nothing stale reads as current), the run
/// count goes up by one, and the per-checkpoint maximum of retries is kept across runs.
pub fn observe(previous: &Observed, run: &RunMetrics, now: &str) -> Observed {
    let mut retries_max = previous.retries_max.clone();
    for (cp, n) in &run.retries {
        let max = retries_max.entry(*cp).or_insert(0);
        *max = (*max).max(*n);
    }
    Observed {
        runs: Some(previous.runs.unwrap_or(0).saturating_add(1)),
        updated_at: Some(now.to_string()),
        retries: run.retries.clone(),
        retries_max,
        iterations: run.iterations,
        mid_exec_checks: run.mid_exec_checks,
        compactions: run.compactions,
        durations: run.durations.clone(),
    }
}

/// The `- observed.*` lines for `observed`, in a fixed order, each ending in `eol`.
pub fn render_observed(observed: &Observed, eol: &str) -> String {
    let mut out = String::new();
    let mut push = |key: String, value: String| {
        out.push_str(&format!("- {key}: {value}{eol}"));
    };
    if let Some(runs) = observed.runs {
        push("observed.runs".into(), runs.to_string());
    }
    if let Some(at) = &observed.updated_at {
        push("observed.updated_at".into(), at.clone());
    }
    for (cp, n) in &observed.retries {
        push(format!("observed.retries.{cp}"), n.to_string());
    }
    for (cp, n) in &observed.retries_max {
        push(format!("observed.retries_max.{cp}"), n.to_string());
    }
    if let Some(n) = observed.iterations {
        push("observed.iterations".into(), n.to_string());
    }
    if let Some(n) = observed.mid_exec_checks {
        push("observed.mid_exec_checks".into(), n.to_string());
    }
    if let Some(n) = observed.compactions {
        push("observed.compactions".into(), n.to_string());
    }
    for phase in PHASES {
        if let Some(secs) = observed.durations.get(phase) {
            push(
                format!("observed.duration.{phase}"),
                duration::format(Duration::from_secs(*secs)),
            );
        }
    }
    out
}

/// The profile with one more run learned: only the section's `observed.*` lines change (or
/// the section is appended when the file has none). Fails, changing nothing, when the
/// profile is malformed.
pub fn learn(text: &str, run: &RunMetrics, now: &str) -> Result<String, ProfileError> {
    let eol = if text.split('\n').next().is_some_and(|l| l.ends_with('\r')) && text.contains('\n') {
        "\r\n"
    } else {
        "\n"
    };
    let previous = parse(text)?;
    let observed = observe(
        previous
            .as_ref()
            .map(|a| &a.observed)
            .unwrap_or(&Observed::default()),
        run,
        now,
    );
    let rendered = render_observed(&observed, eol);
    let Some(section) = find_section(text)? else {
        let mut out = String::with_capacity(text.len() + rendered.len() + 32);
        out.push_str(text);
        if !text.is_empty() {
            if !text.ends_with('\n') {
                out.push_str(eol);
            }
            out.push_str(eol);
        }
        out.push_str(&format!("## {HEADING}{eol}{eol}"));
        out.push_str(&rendered);
        return Ok(out);
    };
    let body = &text[section.body_start..section.end];
    let classified = entries(body, section.heading_line + 1)?;
    // Where the observed block goes: where the first observed line was, else after the last
    // non-blank line of the section.
    let mut insert_at: Option<usize> = None;
    let mut last_content_end = 0;
    let mut kept = String::with_capacity(body.len());
    for (line, entry) in &classified {
        let observed_line =
            matches!(entry, Entry::KeyValue { key, .. } if key.starts_with("observed."));
        if observed_line {
            insert_at.get_or_insert(kept.len());
            continue;
        }
        kept.push_str(line.full);
        if !line.text.trim().is_empty() {
            last_content_end = kept.len();
        }
    }
    let at = insert_at.unwrap_or(last_content_end);
    let mut new_body = String::with_capacity(kept.len() + rendered.len() + 2);
    new_body.push_str(&kept[..at]);
    if at > 0 && !new_body.ends_with('\n') {
        new_body.push_str(eol);
    }
    if at == 0 && insert_at.is_none() {
        // An empty section: keep a blank line under the heading.
        new_body.push_str(eol);
    }
    new_body.push_str(&rendered);
    let rest = &kept[at..];
    if at == kept.len() && section.end < text.len() && !rest.starts_with('\n') {
        // The section ran straight into the next heading: keep them apart.
        new_body.push_str(eol);
    }
    new_body.push_str(rest);
    let mut out = String::with_capacity(text.len() + rendered.len());
    out.push_str(&text[..section.body_start]);
    if section.body_start > 0 && !text[..section.body_start].ends_with('\n') {
        // The heading is the last line, without a line break.
        out.push_str(eol);
    }
    out.push_str(&new_body);
    out.push_str(&text[section.end..]);
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    const PROFILE: &str = "\
# Type profile: bugfix

Some prose about the type.

## Auto Adaptation

<!-- tuned for small bug fixes -->
- threshold.post-plan: 0.60
- threshold.post-exec: 0.65
- retry_limit.post-plan: 2
- compaction_threshold: 88%

## Other section

```md
## Auto Adaptation
this fenced heading is not a heading
```
";

    fn run() -> RunMetrics {
        RunMetrics {
            retries: BTreeMap::from([(Checkpoint::PostPlan, 1), (Checkpoint::MidExec, 2)]),
            iterations: Some(12),
            mid_exec_checks: Some(4),
            compactions: Some(1),
            durations: BTreeMap::from([
                ("planning".to_string(), 300),
                ("execution".to_string(), 2520),
            ]),
        }
    }

    #[test]
    fn reads_the_settings_and_ignores_fenced_headings() {
        let adaptation = parse(PROFILE).unwrap().unwrap();
        assert_eq!(
            adaptation.thresholds[&Checkpoint::PostPlan],
            Score::parse("0.6").unwrap()
        );
        assert_eq!(adaptation.thresholds.get(&Checkpoint::MidExec), None);
        assert_eq!(adaptation.retry_limits[&Checkpoint::PostPlan], 2);
        assert_eq!(
            adaptation.compaction_threshold,
            Some(Score::parse("0.88").unwrap())
        );
        let resolved = resolve(Some(&adaptation), Checkpoint::MidExec);
        assert_eq!(resolved.threshold, Checkpoint::MidExec.fallback_threshold());
        assert!(!resolved.threshold_from_profile);
        let resolved = resolve(Some(&adaptation), Checkpoint::PostPlan);
        assert!(resolved.threshold_from_profile && resolved.retry_limit_from_profile);
    }

    #[test]
    fn no_section_means_fallbacks() {
        assert_eq!(parse("# Profile\n\n## Notes\n- a: b\n").unwrap(), None);
        assert_eq!(parse("").unwrap(), None);
        let resolved = resolve(None, Checkpoint::PostExec);
        assert_eq!(resolved.threshold, Score::parse("0.75").unwrap());
        assert_eq!(resolved.retry_limit, 3);
    }

    #[test]
    fn malformed_sections_name_the_line() {
        let cases = [
            (
                "## Auto Adaptation\n- threshold.post-plan: 0.6\n## auto adaptation\n",
                3,
                "second",
            ),
            (
                "## Auto Adaptation\n\nthresholds are lower here\n",
                3,
                "expected \"- key: value\"",
            ),
            (
                "## Auto Adaptation\n- threshold.post-plan 0.6\n",
                2,
                "no colon",
            ),
            (
                "## Auto Adaptation\n- treshold.post-plan: 0.6\n",
                2,
                "unknown key",
            ),
            (
                "## Auto Adaptation\n- threshold.post-plan: 1.4\n",
                2,
                "outside 0–1",
            ),
            (
                "## Auto Adaptation\n- threshold.post-plan: NaN\n",
                2,
                "not a finite number",
            ),
            (
                "## Auto Adaptation\n- retry_limit.mid-exec: -1\n",
                2,
                "not a whole number",
            ),
            (
                "## Auto Adaptation\n- retry_limit.mid-exec: 1000\n",
                2,
                "larger than 100",
            ),
            (
                "## Auto Adaptation\n- threshold.mid-exec: 0.5\n\n- threshold.mid-exec: 0.6\n",
                4,
                "set twice (first on line 2)",
            ),
            (
                "## Auto Adaptation\n- mid_exec_check_interval: 0\n",
                2,
                "at least 1",
            ),
            (
                "## Auto Adaptation\n- compaction_threshold: 120%\n",
                2,
                "outside 0–100%",
            ),
            (
                "## Auto Adaptation\n- threshold.post-exec:\n",
                2,
                "no value",
            ),
            (
                "## Auto Adaptation\n- observed.duration.execution: 5 minutes\n",
                2,
                "observed.duration.execution",
            ),
            (
                "## Auto Adaptation\n<!-- open\n- threshold.post-exec: 0.7\n",
                3,
                "never closed",
            ),
        ];
        for (text, line, needle) in cases {
            let error = parse(text).unwrap_err();
            assert_eq!(error.line, line, "{text:?}: {error}");
            assert!(error.to_string().contains(needle), "{text:?}: {error}");
        }
    }

    #[test]
    fn learn_appends_a_section_when_there_is_none() {
        let text = "# Profile\n\nprose";
        let learned = learn(text, &run(), "2026-01-01T00:00:00Z").unwrap();
        assert!(learned.starts_with(text));
        assert_eq!(
            &learned[text.len()..],
            "\n\n## Auto Adaptation\n\n\
             - observed.runs: 1\n\
             - observed.updated_at: 2026-01-01T00:00:00Z\n\
             - observed.retries.post-plan: 1\n\
             - observed.retries.mid-exec: 2\n\
             - observed.retries_max.post-plan: 1\n\
             - observed.retries_max.mid-exec: 2\n\
             - observed.iterations: 12\n\
             - observed.mid_exec_checks: 4\n\
             - observed.compactions: 1\n\
             - observed.duration.planning: 5m\n\
             - observed.duration.execution: 42m\n"
        );
        assert_eq!(
            learn("", &run(), "2026-01-01T00:00:00Z")
                .unwrap()
                .lines()
                .next(),
            Some("## Auto Adaptation")
        );
    }

    #[test]
    fn learn_keeps_settings_and_counts_runs() {
        let once = learn(PROFILE, &run(), "2026-01-01T00:00:00Z").unwrap();
        let mut second = RunMetrics::default();
        second.retries.insert(Checkpoint::PostPlan, 0);
        second.iterations = Some(7);
        let twice = learn(&once, &second, "2026-01-02T00:00:00Z").unwrap();
        let adaptation = parse(&twice).unwrap().unwrap();
        assert_eq!(
            adaptation.thresholds[&Checkpoint::PostPlan],
            Score::parse("0.6").unwrap()
        );
        let obs = adaptation.observed;
        assert_eq!(obs.runs, Some(2));
        assert_eq!(obs.retries[&Checkpoint::PostPlan], 0);
        assert_eq!(
            obs.retries_max[&Checkpoint::PostPlan],
            1,
            "the max survives a calmer run"
        );
        assert_eq!(obs.retries_max[&Checkpoint::MidExec], 2);
        assert_eq!(obs.iterations, Some(7));
        assert_eq!(
            obs.compactions, None,
            "not reported this run: dropped, not stale"
        );
        assert_eq!(obs.updated_at.as_deref(), Some("2026-01-02T00:00:00Z"));
        // Everything but the observed lines is unchanged.
        let strip = |t: &str| {
            t.lines()
                .filter(|l| !l.starts_with("- observed."))
                .collect::<Vec<_>>()
                .join("\n")
        };
        assert_eq!(strip(&twice), strip(PROFILE));
    }

    #[test]
    fn learn_handles_edges_of_the_section() {
        let now = "2026-01-01T00:00:00Z";
        for (text, expected_start) in [
            (
                "## Auto Adaptation",
                "## Auto Adaptation\n\n- observed.runs: 1\n",
            ),
            (
                "## Auto Adaptation\n## Next\n",
                "## Auto Adaptation\n\n- observed.runs: 1\n",
            ),
            (
                "## Auto Adaptation\n- retry_limit.post-exec: 4",
                "## Auto Adaptation\n- retry_limit.post-exec: 4\n- observed.runs: 1\n",
            ),
        ] {
            let learned = learn(
                text,
                &RunMetrics {
                    iterations: Some(1),
                    ..Default::default()
                },
                now,
            )
            .unwrap();
            assert!(
                learned.starts_with(expected_start),
                "{text:?} -> {learned:?}"
            );
            assert!(parse(&learned).unwrap().is_some());
            if text.contains("## Next") {
                assert!(learned.ends_with("\n\n## Next\n"), "{learned:?}");
            }
        }
        let crlf = "# P\r\n\r\n## Auto Adaptation\r\n- threshold.mid-exec: 0.7\r\n\r\n## Next\r\n";
        let learned = learn(
            crlf,
            &RunMetrics {
                iterations: Some(3),
                ..Default::default()
            },
            now,
        )
        .unwrap();
        assert!(
            !learned.replace("\r\n", "").contains('\n'),
            "line endings stay CRLF: {learned:?}"
        );
        assert_eq!(
            parse(&learned).unwrap().unwrap().observed.iterations,
            Some(3)
        );
    }

    #[test]
    fn learn_refuses_a_malformed_profile() {
        assert!(
            learn(
                "## Auto Adaptation\nnot an entry\n",
                &run(),
                "2026-01-01T00:00:00Z"
            )
            .is_err()
        );
    }

    /// Lines that cannot open, close or duplicate the section.
    fn outside_line() -> impl Strategy<Value = String> {
        prop_oneof![
            "[a-zA-Z0-9 ,.:*-]{0,30}",
            Just("# Title".to_string()),
            Just("### Deeper".to_string()),
            Just("- threshold.post-plan: 0.1".to_string()),
            Just("".to_string()),
            Just("\t indented".to_string()),
        ]
    }

    fn section_line() -> impl Strategy<Value = String> {
        prop_oneof![
            Just("".to_string()),
            Just("<!-- note -->".to_string()),
            Just("### Sub".to_string()),
            Just("- threshold.mid-exec: 0.65".to_string()),
            Just("- observed.runs: 9".to_string()),
            Just("- observed.iterations: 4".to_string()),
            Just("* retry_limit.post-exec: 4".to_string()),
        ]
    }

    proptest! {
        /// `learn` changes nothing outside the section, byte for byte, whatever surrounds it.
        #[test]
        fn learn_preserves_everything_outside_the_section(
            before in proptest::collection::vec(outside_line(), 0..8),
            inside in proptest::collection::vec(section_line(), 0..8),
            after in proptest::collection::vec(outside_line(), 0..8),
            crlf in any::<bool>(),
            final_newline in any::<bool>(),
            iterations in 0u64..1000,
        ) {
            let eol = if crlf { "\r\n" } else { "\n" };
            let mut inside = inside;
            // A key may appear once.
            let mut seen = std::collections::HashSet::new();
            inside.retain(|l| !l.contains(':') || seen.insert(l.split(':').next().unwrap().trim_start_matches(['-', '*', ' ']).to_string()));
            let head: String = before.iter().map(|l| format!("{l}{eol}")).collect();
            let section: String = std::iter::once("## Auto Adaptation".to_string())
                .chain(inside)
                .map(|l| format!("{l}{eol}"))
                .collect();
            let mut tail: String = std::iter::once("## After".to_string())
                .chain(after)
                .map(|l| format!("{l}{eol}"))
                .collect();
            if !final_newline {
                tail.truncate(tail.len() - eol.len());
            }
            let text = format!("{head}{section}{tail}");
            let run = RunMetrics { iterations: Some(iterations), ..Default::default() };
            let learned = learn(&text, &run, "2026-01-01T00:00:00Z").unwrap();
            prop_assert!(learned.starts_with(&head));
            prop_assert!(learned.ends_with(&tail));
            let parsed = parse(&learned).unwrap().unwrap();
            prop_assert_eq!(parsed.observed.iterations, Some(iterations));
            // Settings survive.
            let before_settings = parse(&text).unwrap().unwrap();
            prop_assert_eq!(parsed.thresholds, before_settings.thresholds);
            prop_assert_eq!(parsed.retry_limits, before_settings.retry_limits);
            prop_assert_eq!(parsed.observed.runs, Some(before_settings.observed.runs.unwrap_or(0) + 1));
        }

        /// Appending to a file without the section keeps the whole file as its prefix.
        #[test]
        fn learn_without_a_section_keeps_the_file_as_prefix(
            before in proptest::collection::vec(outside_line(), 0..10),
            final_newline in any::<bool>(),
        ) {
            let mut text: String = before.iter().map(|l| format!("{l}\n")).collect();
            if !final_newline { text.pop(); }
            let learned = learn(&text, &RunMetrics { compactions: Some(2), ..Default::default() }, "2026-01-01T00:00:00Z").unwrap();
            prop_assert!(learned.starts_with(&text));
            prop_assert_eq!(parse(&learned).unwrap().unwrap().observed.compactions, Some(2));
        }
    }
}
