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
//! · resets 3pm (Europe/Stockholm)", "resets Mon 12:00am", "resets Nov 28, 5:43am (UTC)"),
//! read by the same parser as the pane classifier's quota banners ([`crate::pane::reset`]): a
//! zone named in the text is honoured (IANA names), a time already past means the next
//! occurrence, and without a zone the text speaks the machine's zone (`TZ`, else
//! `/etc/localtime`). A phrase whose zone is unknown keeps only `reset_text`: guessing an
//! offset would make a supervisor wake up at the wrong hour.

use std::path::Path;

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};

use super::input::HookInput;
use super::state::{LoopDir, Problem};
use crate::fsx::{self, Bounded};
use crate::pane::reset::{self, Zone};
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
        self.reset_at.as_deref().and_then(crate::time::parse_time)
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
    zone: Zone,
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
            .and_then(|text| reset::find(text, now, zone))
            .or_else(|| {
                input
                    .last_assistant_message
                    .as_deref()
                    .and_then(|text| reset::find(text, now, zone))
            });
        QuotaWait {
            since: previous
                .map(|p| p.since.clone())
                .unwrap_or_else(|| stamp.clone()),
            kind,
            reset_at: reset
                .as_ref()
                .and_then(|r| r.at)
                .map(|at| now_timestamp(at.with_timezone(&Utc))),
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
        .and_then(|value| document::typed_from_value(&value))
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
    use chrono::{Duration, TimeZone};

    /// 2026-11-25 10:00 UTC, a Wednesday.
    fn now() -> DateTime<Utc> {
        Utc.with_ymd_and_hms(2026, 11, 25, 10, 0, 0).unwrap()
    }

    fn recorded(detail: &str, zone: Zone) -> QuotaWait {
        let payload = serde_json::json!({
            "session_id": "s",
            "hook_event_name": "StopFailure",
            "error": "rate_limit",
            "error_details": detail,
        });
        let input = super::super::input::parse(payload.to_string().as_bytes()).unwrap();
        records(&input, None, now(), zone).quota.unwrap()
    }

    #[test]
    fn reset_phrases_from_the_corpus() {
        for (detail, expected) in [
            (
                "You've hit your session limit · resets 3:45pm",
                "2026-11-25T15:45:00Z",
            ),
            ("5-hour limit reached ∙ resets 1am", "2026-11-26T01:00:00Z"),
            (
                "You've hit your weekly limit · resets Mon 12:00am",
                "2026-11-30T00:00:00Z",
            ),
            (
                "You've hit your weekly limit · resets Nov 28, 5:43am (UTC)",
                "2026-11-28T05:43:00Z",
            ),
        ] {
            let quota = recorded(detail, Zone::Utc);
            assert_eq!(quota.reset_at.as_deref(), Some(expected), "{detail}");
        }
    }

    #[test]
    fn named_zones_are_honoured_and_unknown_ones_keep_only_the_text() {
        // The same parser as the pane classifier: Stockholm is UTC+1 in November, whatever
        // the machine's zone.
        let quota = recorded(
            "5-hour limit reached · resets 3pm (Europe/Stockholm) · /upgrade",
            Zone::Utc,
        );
        assert_eq!(quota.reset_at.as_deref(), Some("2026-11-25T14:00:00Z"));
        assert_eq!(
            quota.reset_text.as_deref(),
            Some("resets 3pm (Europe/Stockholm)")
        );
        let quota = recorded("limit · resets 3pm (Mars/Olympus_Mons)", Zone::Utc);
        assert_eq!(quota.reset_at, None);
        assert_eq!(
            quota.reset_text.as_deref(),
            Some("resets 3pm (Mars/Olympus_Mons)")
        );
        // Without a zone, the machine's zone (here given as Berlin, UTC+1).
        let quota = recorded(
            "You've hit your limit · resets 5pm",
            Zone::Named(chrono_tz::Europe::Berlin),
        );
        assert_eq!(quota.reset_at.as_deref(), Some("2026-11-25T16:00:00Z"));
    }

    #[test]
    fn no_phrase_no_reset() {
        for detail in [
            "Server is temporarily limiting requests",
            "resets soon",
            "resets 13pm",
        ] {
            let quota = recorded(detail, Zone::Utc);
            assert_eq!(
                (&quota.reset_at, &quota.reset_text),
                (&None, &None),
                "{detail}"
            );
            assert!(
                quota.waiting_at(now() + Duration::days(30)),
                "until cleared"
            );
        }
    }

    #[test]
    fn a_rate_limit_is_a_wait_that_keeps_its_start() {
        let input = super::super::input::parse(
            br#"{"session_id":"s","hook_event_name":"StopFailure","error":"rate_limit",
                 "error_details":"You have hit your limit - resets 5pm"}"#,
        )
        .unwrap();
        let first = records(&input, None, now(), Zone::Utc);
        let quota = first.quota.clone().unwrap();
        assert_eq!(quota.since, "2026-11-25T10:00:00Z");
        assert_eq!(quota.reset_at.as_deref(), Some("2026-11-25T17:00:00Z"));
        assert!(quota.waiting_at(now()));
        assert!(!quota.waiting_at(now() + Duration::hours(8)));
        let later = records(
            &input,
            Some(&quota),
            now() + Duration::minutes(5),
            Zone::Utc,
        );
        assert_eq!(later.quota.unwrap().since, quota.since);
        let server = super::super::input::parse(br#"{"error":"server_error"}"#).unwrap();
        let recorded = records(&server, None, now(), Zone::Utc);
        assert_eq!(recorded.quota, None);
        assert_eq!(recorded.failure.kind, "server_error");
    }
}
