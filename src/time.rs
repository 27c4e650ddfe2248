//! The one clock every command reads, and the time formats autoctl stores.
//!
//! [`now`] is the current time at millisecond precision. Test hook, like jj's
//! `JJ_TIMESTAMP`: when `AUTOCTL_NOW` ([`NOW_VAR`]) holds an RFC 3339 time, that is the time,
//! for every command (`run`, `stall check`, `lock`, `hook`, the timestamps `signal write` and
//! `stop write` put in documents). Tests use it to replay half an hour of a loop in a second;
//! nothing else should set it. An unreadable value is an error, never silently the wall
//! clock.
//!
//! Decisions never call the clock: they take a [`Time`] argument, so the pure cores are
//! driven with any time in unit tests. Durations measured for timeouts inside one process
//! (`Instant`) are not the clock and are not faked.

use std::time::Duration;

use anyhow::{Context, Result};
use chrono::{DateTime, SecondsFormat, Utc};

/// A point in time.
pub type Time = DateTime<Utc>;

/// The environment variable of the clock test hook.
pub const NOW_VAR: &str = "AUTOCTL_NOW";

/// The clock: the wall clock, or the fixed time `AUTOCTL_NOW` names.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Clock {
    fixed: Option<Time>,
}

impl Clock {
    /// The clock this process runs on: `AUTOCTL_NOW` when set and not empty, else the wall
    /// clock. Err when `AUTOCTL_NOW` is not an RFC 3339 time.
    pub fn from_env() -> Result<Clock> {
        let fixed = match std::env::var_os(NOW_VAR) {
            Some(text) if !text.is_empty() => Some(
                text.to_str()
                    .and_then(parse_time)
                    .with_context(|| format!("{NOW_VAR}={text:?} is not an RFC 3339 time"))?,
            ),
            _ => None,
        };
        Ok(Clock { fixed })
    }

    /// A clock stopped at `time` (tests).
    pub fn fixed(time: Time) -> Clock {
        Clock { fixed: Some(time) }
    }

    /// The current time, truncated to milliseconds (the precision every stored time has).
    pub fn now(&self) -> Time {
        let time = self.fixed.unwrap_or_else(Utc::now);
        DateTime::from_timestamp_millis(time.timestamp_millis()).unwrap_or(time)
    }
}

/// The current time (see the module doc for `AUTOCTL_NOW`).
pub fn now() -> Result<Time> {
    Ok(Clock::from_env()?.now())
}

/// `later - earlier`, zero when the clock went backwards.
pub fn between(earlier: Time, later: Time) -> Duration {
    (later - earlier).to_std().unwrap_or(Duration::ZERO)
}

/// Add a duration to a time, saturating far in the future.
pub fn plus(time: Time, duration: Duration) -> Time {
    chrono::Duration::from_std(duration)
        .ok()
        .and_then(|d| time.checked_add_signed(d))
        .unwrap_or(DateTime::<Utc>::MAX_UTC)
}

/// The text form of every time autoctl stores for itself (the run registry, lock
/// heartbeats): RFC 3339, UTC, milliseconds, `Z`. One fixed width so that text comparison
/// (in SQL) is time comparison.
pub fn format_time(time: Time) -> String {
    time.to_rfc3339_opts(SecondsFormat::Millis, true)
}

/// An RFC 3339 time in any offset, as UTC.
pub fn parse_time(text: &str) -> Option<Time> {
    DateTime::parse_from_rfc3339(text)
        .ok()
        .map(|t| t.with_timezone(&Utc))
}

/// Serde for a [`Time`] field stored as autoctl stores every time ([`format_time`]):
/// `#[serde(with = "crate::time::stamp")]`.
pub mod stamp {
    use serde::{Deserialize, Deserializer, Serializer, de::Error};

    use super::{Time, format_time, parse_time};

    pub fn serialize<S: Serializer>(time: &Time, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&format_time(*time))
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Time, D::Error> {
        let text = String::deserialize(d)?;
        parse_time(&text)
            .ok_or_else(|| D::Error::custom(format!("{text:?} is not an RFC 3339 time")))
    }

    /// The same for an `Option<Time>` (with `default` and `skip_serializing_if`).
    pub mod option {
        use serde::{Deserialize, Deserializer, Serializer};

        use super::super::Time;

        pub fn serialize<S: Serializer>(time: &Option<Time>, s: S) -> Result<S::Ok, S::Error> {
            match time {
                Some(time) => super::serialize(time, s),
                None => s.serialize_none(),
            }
        }

        pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Option<Time>, D::Error> {
            #[derive(Deserialize)]
            struct Wrapped(#[serde(with = "super")] Time);
            Ok(Option::<Wrapped>::deserialize(d)?.map(|Wrapped(t)| t))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(secs: i64) -> Time {
        DateTime::from_timestamp(1_700_000_000 + secs, 0).unwrap()
    }

    #[test]
    fn stored_times_sort_as_text() {
        let a = format_time(at(0));
        let b = format_time(at(0) + chrono::Duration::milliseconds(1));
        let c = format_time(at(86_400 * 400));
        assert!(a < b && b < c, "{a} {b} {c}");
        assert_eq!(parse_time(&a), Some(at(0)));
    }

    #[test]
    fn a_fixed_clock_is_truncated_to_milliseconds() {
        let time = at(0) + chrono::Duration::microseconds(1_234_567);
        assert_eq!(
            format_time(Clock::fixed(time).now()),
            "2023-11-14T22:13:21.234Z"
        );
        assert_eq!(between(at(10), at(0)), Duration::ZERO);
        assert_eq!(plus(at(0), Duration::from_secs(5)), at(5));
        assert_eq!(plus(at(0), Duration::MAX), DateTime::<Utc>::MAX_UTC);
    }
}
