//! Claude Code's StopFailure event: a turn that ended on an API error. A usage limit
//! (`rate_limit`) is a wait, not a stall (seed 000: "quota exhaustion is NOT a stall — the
//! daemon enters quota-wait mode with the timeout clock paused"), so it is recorded where the
//! supervisors look:
//!
//! - `D/.autoctl/quota-wait.json` (schema `quota-wait`): `{since, kind, reset_at?,
//!   reset_text?, detail?, session_id?, updated_at?}`, written on `rate_limit` and removed
//!   by the next `hook stop` (a finished turn means the wait is over). [`read_quota_wait`] is
//!   the reader `stall check` and `run tick` use.
//! - `D/.autoctl/stop-failure.json` (schema `stop-failure`): `{at, kind, detail?,
//!   session_id?}`, the last failure of any kind.
//!
//! The reset time comes from the error text Claude Code shows ("You've hit your session limit
//! · resets 3pm (Europe/Stockholm)", "resets Mon 12:00am", "resets at 12pm"). A named zone is
//! honoured when it is UTC or the machine's own zone; otherwise `reset_at` is left out and
//! only `reset_text` is kept, because guessing an offset would make a supervisor wake up at
//! the wrong hour.

use std::path::Path;

use chrono::{DateTime, Datelike, Duration, FixedOffset, NaiveTime, TimeZone, Utc, Weekday};
use serde::{Deserialize, Serialize};

use super::input::HookInput;
use super::state::{LoopDir, Problem};
use crate::fsx::{self, Bounded};
use crate::protocol::{document, signal::now_timestamp};

pub const QUOTA_FILE: &str = "quota-wait.json";
pub const FAILURE_FILE: &str = "stop-failure.json";
/// The StopFailure kind that means a usage or rate limit.
pub const RATE_LIMIT: &str = "rate_limit";
/// Error text kept in the records, at most.
const DETAIL_MAX_CHARS: usize = 2000;

/// `quota-wait.json`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct QuotaWait {
    pub since: String,
    pub kind: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reset_at: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reset_text: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub detail: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub session_id: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub updated_at: Option<String>,
}

impl QuotaWait {
    /// When the limit resets, if known.
    pub fn reset_time(&self) -> Option<DateTime<Utc>> {
        self.reset_at
            .as_deref()
            .and_then(|at| DateTime::parse_from_rfc3339(at).ok())
            .map(|at| at.with_timezone(&Utc))
    }

    /// Whether the wait is still on at `now`: until its reset time, or — when none is known —
    /// until a finished turn removes the file.
    pub fn waiting_at(&self, now: DateTime<Utc>) -> bool {
        self.reset_time().is_none_or(|reset| now < reset)
    }
}

/// `stop-failure.json`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct StopFailure {
    pub at: String,
    pub kind: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub detail: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub session_id: Option<String>,
}

/// The machine's time zone, as far as it can be named.
#[derive(Debug, Clone)]
pub struct LocalZone {
    pub offset: FixedOffset,
    pub name: Option<String>,
}

impl LocalZone {
    pub fn system() -> LocalZone {
        LocalZone {
            offset: *chrono::Local::now().offset(),
            name: local_zone_name(),
        }
    }
}

fn local_zone_name() -> Option<String> {
    if let Ok(tz) = std::env::var("TZ") {
        let tz = tz.trim_start_matches(':').trim();
        if !tz.is_empty() {
            return Some(tz.to_string());
        }
    }
    if let Ok(name) = std::fs::read_to_string("/etc/timezone") {
        let name = name.trim();
        if !name.is_empty() {
            return Some(name.to_string());
        }
    }
    std::fs::read_link("/etc/localtime")
        .ok()
        .and_then(|target| {
            let target = target.to_string_lossy().into_owned();
            target
                .split_once("zoneinfo/")
                .map(|(_, zone)| zone.to_string())
        })
}

/// A reset phrase found in error text.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Reset {
    /// The phrase as written ("resets 3pm (Europe/Stockholm)").
    pub text: String,
    /// The instant, when it could be placed.
    pub at: Option<DateTime<Utc>>,
}

/// Find "resets [at] [Mon] 3pm|3:45pm|15:00 [(Zone)]" in `text` and place it after `now`.
pub fn parse_reset(text: &str, now: DateTime<Utc>, local: &LocalZone) -> Option<Reset> {
    let lower = text.to_ascii_lowercase();
    let start = lower.find("resets ")?;
    let rest = &text[start + "resets ".len()..];
    let mut words = rest.split_whitespace().peekable();
    let mut consumed = vec!["resets".to_string()];
    if words.peek().is_some_and(|w| w.eq_ignore_ascii_case("at")) {
        consumed.push(words.next()?.to_string());
    }
    let mut weekday = None;
    if let Some(day) = words.peek().and_then(|w| parse_weekday(w)) {
        weekday = Some(day);
        consumed.push(words.next()?.to_string());
    }
    let time_word = words.next()?;
    let time = parse_clock(time_word.trim_end_matches([',', '.', ';', '·']))?;
    consumed.push(time_word.to_string());
    let mut zone = None;
    if let Some(next) = words.peek()
        && next.starts_with('(')
    {
        let name = next.trim_start_matches('(');
        let name = name.split(')').next().unwrap_or(name).to_string();
        consumed.push(words.next()?.to_string());
        zone = Some(name);
    }
    let offset = match zone.as_deref() {
        None => Some(local.offset),
        Some("UTC" | "GMT" | "Etc/UTC" | "Etc/GMT" | "Z") => Some(FixedOffset::east_opt(0)?),
        Some(name) if local.name.as_deref() == Some(name) => Some(local.offset),
        Some(_) => None,
    };
    let at = offset.and_then(|offset| next_occurrence(now, offset, weekday, time));
    Some(Reset {
        text: consumed.join(" "),
        at,
    })
}

fn parse_weekday(word: &str) -> Option<Weekday> {
    let word = word.trim_end_matches(',').to_ascii_lowercase();
    let days = [
        ("mon", Weekday::Mon),
        ("tue", Weekday::Tue),
        ("wed", Weekday::Wed),
        ("thu", Weekday::Thu),
        ("fri", Weekday::Fri),
        ("sat", Weekday::Sat),
        ("sun", Weekday::Sun),
    ];
    days.iter()
        .find(|(prefix, _)| word.len() >= 3 && word.starts_with(prefix))
        .map(|(_, day)| *day)
}

/// "3pm", "3:45pm", "12:00am", "15:00".
fn parse_clock(word: &str) -> Option<NaiveTime> {
    let lower = word.to_ascii_lowercase();
    let (digits, meridiem) = if let Some(d) = lower.strip_suffix("am") {
        (d, Some(false))
    } else if let Some(d) = lower.strip_suffix("pm") {
        (d, Some(true))
    } else {
        (lower.as_str(), None)
    };
    let (hour, minute) = match digits.split_once(':') {
        Some((h, m)) => (h.parse::<u32>().ok()?, m.parse::<u32>().ok()?),
        None if meridiem.is_some() => (digits.parse::<u32>().ok()?, 0),
        None => return None,
    };
    let hour = match meridiem {
        Some(pm) => {
            if !(1..=12).contains(&hour) {
                return None;
            }
            (hour % 12) + if pm { 12 } else { 0 }
        }
        None => hour,
    };
    NaiveTime::from_hms_opt(hour, minute, 0)
}

fn next_occurrence(
    now: DateTime<Utc>,
    offset: FixedOffset,
    weekday: Option<Weekday>,
    time: NaiveTime,
) -> Option<DateTime<Utc>> {
    let local_now = now.with_timezone(&offset);
    for days in 0..=7 {
        let date = local_now.date_naive() + Duration::days(days);
        if weekday.is_some_and(|day| date.weekday() != day) {
            continue;
        }
        let candidate = offset.from_local_datetime(&date.and_time(time)).single()?;
        if candidate > local_now {
            return Some(candidate.with_timezone(&Utc));
        }
    }
    None
}

fn bounded_detail(text: Option<String>) -> Option<String> {
    text.map(|t| {
        let t = t.trim();
        if t.chars().count() > DETAIL_MAX_CHARS {
            let cut: String = t.chars().take(DETAIL_MAX_CHARS).collect();
            format!("{cut}…")
        } else {
            t.to_string()
        }
    })
}

/// What `hook stop-failure` wrote.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Recorded {
    pub failure: StopFailure,
    pub quota: Option<QuotaWait>,
}

/// The records for one StopFailure input (pure: the edge writes them). A wait already on
/// record keeps its `since`.
pub fn records(
    input: &HookInput,
    previous: Option<&QuotaWait>,
    now: DateTime<Utc>,
    local: &LocalZone,
) -> Recorded {
    let kind = input.failure_kind();
    let detail = bounded_detail(input.failure_detail());
    let session_id = input.session().map(str::to_string);
    let stamp = now_timestamp(now);
    let failure = StopFailure {
        at: stamp.clone(),
        kind: kind.clone(),
        detail: detail.clone(),
        session_id: session_id.clone(),
    };
    let quota = (kind == RATE_LIMIT).then(|| {
        let reset = detail
            .as_deref()
            .and_then(|text| parse_reset(text, now, local))
            .or_else(|| {
                input
                    .last_assistant_message
                    .as_deref()
                    .and_then(|text| parse_reset(text, now, local))
            });
        QuotaWait {
            since: previous
                .map(|p| p.since.clone())
                .unwrap_or_else(|| stamp.clone()),
            kind,
            reset_at: reset.as_ref().and_then(|r| r.at).map(now_timestamp),
            reset_text: reset.map(|r| r.text),
            detail,
            session_id,
            updated_at: Some(stamp),
        }
    });
    Recorded { failure, quota }
}

fn read_doc<T: serde::de::DeserializeOwned>(
    path: &Path,
    schema: &str,
) -> Result<Option<T>, Problem> {
    let bytes = match fsx::read_bounded(path, fsx::DOCUMENT_LIMIT) {
        Ok(Bounded::Complete(bytes)) => bytes,
        Ok(Bounded::TooLarge { .. }) => {
            return Err(Problem(format!("{} is too large", path.display())));
        }
        Err(err) if err.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(err) => return Err(Problem(format!("cannot read {}: {err}", path.display()))),
    };
    document::parse_with_schema(&bytes, schema)
        .and_then(|_| document::parse_typed(&bytes))
        .map(Some)
        .map_err(|problems| Problem(format!("{} is invalid: {}", path.display(), problems[0])))
}

/// Read `PROJECT/.autoctl/quota-wait.json`: `Ok(None)` when there is no wait on record.
pub fn read_quota_wait(project: &Path) -> Result<Option<QuotaWait>, Problem> {
    read_doc(&LoopDir::new(project).dir.join(QUOTA_FILE), "quota-wait")
}

/// Read `PROJECT/.autoctl/stop-failure.json`.
pub fn read_stop_failure(project: &Path) -> Result<Option<StopFailure>, Problem> {
    read_doc(
        &LoopDir::new(project).dir.join(FAILURE_FILE),
        "stop-failure",
    )
}

/// Write the records into the loop directory.
pub fn write(dir: &LoopDir, recorded: &Recorded) -> anyhow::Result<()> {
    let mut bytes = serde_json::to_vec_pretty(&recorded.failure)?;
    bytes.push(b'\n');
    fsx::atomic_write(&dir.dir.join(FAILURE_FILE), &bytes)?;
    if let Some(quota) = &recorded.quota {
        let mut bytes = serde_json::to_vec_pretty(quota)?;
        bytes.push(b'\n');
        fsx::atomic_write(&dir.dir.join(QUOTA_FILE), &bytes)?;
    }
    Ok(())
}

/// End a quota wait (a turn finished).
pub fn clear_quota_wait(dir: &LoopDir) -> anyhow::Result<bool> {
    fsx::remove_if_exists(&dir.dir.join(QUOTA_FILE))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn zone(hours: i32, name: Option<&str>) -> LocalZone {
        LocalZone {
            offset: FixedOffset::east_opt(hours * 3600).unwrap(),
            name: name.map(str::to_string),
        }
    }

    /// 2026-11-25 10:00 UTC, a Wednesday.
    fn now() -> DateTime<Utc> {
        Utc.with_ymd_and_hms(2026, 11, 25, 10, 0, 0).unwrap()
    }

    fn at(text: &str, local: &LocalZone) -> Option<String> {
        parse_reset(text, now(), local)
            .and_then(|r| r.at)
            .map(now_timestamp)
    }

    #[test]
    fn reset_phrases_from_the_corpus() {
        let utc = zone(0, Some("UTC"));
        assert_eq!(
            at("You've hit your session limit · resets 3:45pm", &utc).as_deref(),
            Some("2026-11-25T15:45:00Z")
        );
        assert_eq!(
            at("5-hour limit reached ∙ resets 1am", &utc).as_deref(),
            Some("2026-11-26T01:00:00Z")
        );
        assert_eq!(
            at("You've hit your weekly limit · resets Mon 12:00am", &utc).as_deref(),
            Some("2026-11-30T00:00:00Z")
        );
        assert_eq!(
            at("Approaching usage limit · resets at 12pm", &utc).as_deref(),
            Some("2026-11-25T12:00:00Z")
        );
    }

    #[test]
    fn named_zones_are_placed_only_when_known() {
        let stockholm = zone(1, Some("Europe/Stockholm"));
        let text = "5-hour limit reached · resets 3pm (Europe/Stockholm) · /upgrade";
        assert_eq!(
            at(text, &stockholm).as_deref(),
            Some("2026-11-25T14:00:00Z")
        );
        let reset = parse_reset(text, now(), &zone(0, Some("UTC"))).unwrap();
        assert_eq!(reset.at, None);
        assert_eq!(reset.text, "resets 3pm (Europe/Stockholm)");
    }

    #[test]
    fn no_phrase_no_reset() {
        assert_eq!(
            parse_reset(
                "Server is temporarily limiting requests",
                now(),
                &zone(0, None)
            ),
            None
        );
        assert_eq!(parse_reset("resets soon", now(), &zone(0, None)), None);
        assert_eq!(parse_reset("resets 13pm", now(), &zone(0, None)), None);
    }

    #[test]
    fn a_rate_limit_is_a_wait_that_keeps_its_start() {
        let input = super::super::input::parse(
            br#"{"session_id":"s","hook_event_name":"StopFailure","error":"rate_limit",
                 "error_details":"You have hit your limit - resets 5pm"}"#,
        )
        .unwrap();
        let first = records(&input, None, now(), &zone(0, None));
        let quota = first.quota.clone().unwrap();
        assert_eq!(quota.since, "2026-11-25T10:00:00Z");
        assert_eq!(quota.reset_at.as_deref(), Some("2026-11-25T17:00:00Z"));
        assert!(quota.waiting_at(now()));
        assert!(!quota.waiting_at(now() + Duration::hours(8)));
        let later = records(
            &input,
            Some(&quota),
            now() + Duration::minutes(5),
            &zone(0, None),
        );
        assert_eq!(later.quota.unwrap().since, quota.since);
        let server = super::super::input::parse(br#"{"error":"server_error"}"#).unwrap();
        let recorded = records(&server, None, now(), &zone(0, None));
        assert_eq!(recorded.quota, None);
        assert_eq!(recorded.failure.kind, "server_error");
    }
}
