//! When a quota resets, read from the banner that announced it.
//!
//! Banners seen in the wild: "Your limit will reset at 3pm (America/Bogota).", "resets 1am",
//! "resets 3:45pm", "resets Mon 12:00am", "resets Nov 27, 9am (Europe/Berlin)", Codex 0.171's
//! "… or try again at 1:18 PM.", and the
//! machine form "Claude AI usage limit reached|1750708800" (epoch seconds). A zone named in
//! the banner wins; otherwise the banner speaks the machine's local time (the caller passes
//! it). A time already past means the next occurrence: tomorrow, next week, next year.
//! The clock is an argument, so this is a pure function.

use std::str::FromStr;
use std::sync::OnceLock;

use chrono::{
    DateTime, Datelike, Duration, FixedOffset, NaiveDate, NaiveDateTime, NaiveTime, TimeZone, Utc,
    Weekday,
};
use regex::Regex;

/// The zone a banner without a zone name speaks.
#[derive(Debug, Clone, Copy)]
pub enum Zone {
    Utc,
    Named(chrono_tz::Tz),
    /// The machine's local zone (`TZ`, `/etc/localtime`).
    Local,
}

impl Zone {
    /// `TZ` when it names an IANA zone, else the machine's local zone.
    pub fn from_env() -> Zone {
        std::env::var("TZ")
            .ok()
            .map(|tz| tz.trim_start_matches(':').to_string())
            .and_then(|tz| chrono_tz::Tz::from_str(&tz).ok())
            .map_or(Zone::Local, Zone::Named)
    }
}

fn epoch_regex() -> &'static Regex {
    static RE: OnceLock<Regex> = OnceLock::new();
    RE.get_or_init(|| Regex::new(r"\|([0-9]{10})\b").expect("valid"))
}

fn banner_regex() -> &'static Regex {
    static RE: OnceLock<Regex> = OnceLock::new();
    RE.get_or_init(|| {
        Regex::new(concat!(
            r"(?i)\b(?:resets?(?:\s+at)?|(?:continue|continuing) automatically at|try again at)\s+",
            r"(?:(?P<wday>mon|tue|wed|thu|fri|sat|sun)[a-z]*\.?,?\s+)?",
            r"(?:(?P<month>jan|feb|mar|apr|may|jun|jul|aug|sep|oct|nov|dec)[a-z]*\.?\s+(?P<day>[0-9]{1,2})(?:st|nd|rd|th)?,?\s+(?:at\s+)?)?",
            r"(?P<hour>[0-9]{1,2})(?::(?P<minute>[0-9]{2}))?\s*(?P<ampm>am|pm)?",
            r"(?:\s*\((?P<zone>[A-Za-z_]+(?:/[A-Za-z0-9_+-]+)*)\))?",
        ))
        .expect("valid")
    })
}

/// A reset announcement found in text.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Found {
    /// The phrase as written ("resets 3pm (Europe/Stockholm)", "|1750708800").
    pub text: String,
    /// The instant, in the banner's zone; `None` when the phrase names a zone this build does
    /// not know (guessing an offset would wake a supervisor at the wrong hour).
    pub at: Option<DateTime<FixedOffset>>,
}

/// The reset time announced in `text`, as an RFC 3339-ready instant in the banner's zone.
pub fn reset_at(text: &str, now: DateTime<Utc>, zone: Zone) -> Option<DateTime<FixedOffset>> {
    find(text, now, zone)?.at
}

/// The reset phrase in `text` and, when it can be placed, its instant after `now`. `None` when
/// the text announces no reset time ("resets soon", "resets 13pm").
pub fn find(text: &str, now: DateTime<Utc>, zone: Zone) -> Option<Found> {
    if let Some(caps) = epoch_regex().captures(text) {
        let secs: i64 = caps[1].parse().ok()?;
        let at = Utc.timestamp_opt(secs, 0).single()?.fixed_offset();
        return Some(Found {
            text: caps[0].to_string(),
            at: Some(at),
        });
    }
    let caps = banner_regex().captures(text)?;
    let mut hour: u32 = caps["hour"].parse().ok()?;
    let minute: u32 = match caps.name("minute") {
        Some(m) => m.as_str().parse().ok()?,
        None => 0,
    };
    match caps.name("ampm").map(|m| m.as_str().to_ascii_lowercase()) {
        Some(ampm) => {
            if !(1..=12).contains(&hour) {
                return None;
            }
            hour %= 12;
            if ampm == "pm" {
                hour += 12;
            }
        }
        // "resets 15" is not a time; "resets 15:00" is.
        None if caps.name("minute").is_none() => return None,
        None => {}
    }
    let time = NaiveTime::from_hms_opt(hour, minute, 0)?;
    let spec = Spec {
        time,
        weekday: caps.name("wday").and_then(|m| weekday(m.as_str())),
        month_day: match (caps.name("month"), caps.name("day")) {
            (Some(month), Some(day)) => {
                Some((month_index(month.as_str())?, day.as_str().parse().ok()?))
            }
            _ => None,
        },
    };
    let zone = match caps.name("zone") {
        Some(name) => chrono_tz::Tz::from_str(name.as_str()).ok().map(Zone::Named),
        None => Some(zone),
    };
    let at = zone.and_then(|zone| match zone {
        Zone::Utc => spec.next_after(now, &Utc),
        Zone::Named(tz) => spec.next_after(now, &tz),
        Zone::Local => spec.next_after(now, &chrono::Local),
    });
    Some(Found {
        text: caps[0].trim_end().to_string(),
        at,
    })
}

struct Spec {
    time: NaiveTime,
    weekday: Option<Weekday>,
    month_day: Option<(u32, u32)>,
}

impl Spec {
    fn next_after<Z: TimeZone>(
        &self,
        now: DateTime<Utc>,
        zone: &Z,
    ) -> Option<DateTime<FixedOffset>> {
        let local_now = now.with_timezone(zone).naive_local();
        let today = local_now.date();
        let candidates: Vec<NaiveDate> = if let Some((month, day)) = self.month_day {
            (0..=1)
                .filter_map(|years| NaiveDate::from_ymd_opt(today.year() + years, month, day))
                .collect()
        } else if let Some(weekday) = self.weekday {
            let ahead = (7 + weekday.num_days_from_monday() as i64
                - today.weekday().num_days_from_monday() as i64)
                % 7;
            let first = today + Duration::days(ahead);
            vec![first, first + Duration::days(7)]
        } else {
            vec![today, today + Duration::days(1)]
        };
        candidates
            .into_iter()
            .filter_map(|date| resolve(zone, date.and_time(self.time)))
            .find(|at| at.with_timezone(&Utc) > now)
    }
}

/// A local time in `zone`; in a DST gap, the first valid time after it.
fn resolve<Z: TimeZone>(zone: &Z, local: NaiveDateTime) -> Option<DateTime<FixedOffset>> {
    (0..=2)
        .find_map(|hours| {
            zone.from_local_datetime(&(local + Duration::hours(hours)))
                .earliest()
        })
        .map(|at| at.fixed_offset())
}

fn weekday(text: &str) -> Option<Weekday> {
    Weekday::from_str(&text[..3]).ok()
}

fn month_index(text: &str) -> Option<u32> {
    const MONTHS: [&str; 12] = [
        "jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec",
    ];
    let lower = text.to_ascii_lowercase();
    MONTHS
        .iter()
        .position(|m| lower.starts_with(m))
        .map(|i| i as u32 + 1)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(rfc3339: &str) -> DateTime<Utc> {
        DateTime::parse_from_rfc3339(rfc3339)
            .unwrap()
            .with_timezone(&Utc)
    }

    fn reset(text: &str, now: &str, zone: Zone) -> Option<String> {
        reset_at(text, at(now), zone).map(|t| t.to_rfc3339())
    }

    #[test]
    fn named_zones_win_and_a_past_time_means_tomorrow() {
        let text = "Claude usage limit reached. Your limit will reset at 3pm (America/Bogota).";
        // 10:00 in Bogota (UTC-5): today at 15:00.
        assert_eq!(
            reset(text, "2025-06-23T15:00:00Z", Zone::Utc).as_deref(),
            Some("2025-06-23T15:00:00-05:00")
        );
        // 16:00 in Bogota: already past, so tomorrow.
        assert_eq!(
            reset(text, "2025-06-23T21:00:00Z", Zone::Utc).as_deref(),
            Some("2025-06-24T15:00:00-05:00")
        );
        assert_eq!(
            reset(
                "5-hour limit reached · resets 3pm (Europe/Stockholm) · /upgrade to Max 20x",
                "2025-01-10T08:00:00Z",
                Zone::Utc
            )
            .as_deref(),
            Some("2025-01-10T15:00:00+01:00")
        );
    }

    /// Codex 0.171's usage limit (a real capture, the banner wrapped at the pane's edge).
    #[test]
    fn codex_says_try_again_at_a_time() {
        assert_eq!(
            reset(
                "usage to purchase more credits or try again at 1:18 PM.",
                "2026-11-28T11:21:27Z",
                Zone::Utc
            )
            .as_deref(),
            Some("2026-11-28T13:18:00+00:00")
        );
        assert_eq!(
            reset("please try again later", "2026-11-28T11:21:27Z", Zone::Utc),
            None
        );
    }

    #[test]
    fn without_a_zone_the_given_local_zone_is_used() {
        let berlin = Zone::Named(chrono_tz::Europe::Berlin);
        assert_eq!(
            reset(
                "5-hour limit reached ∙ resets 1am",
                "2025-07-01T12:00:00Z",
                berlin
            )
            .as_deref(),
            Some("2025-07-02T01:00:00+02:00")
        );
        assert_eq!(
            reset(
                "You've hit your session limit · resets 3:45pm",
                "2025-07-01T12:00:00Z",
                berlin
            )
            .as_deref(),
            Some("2025-07-01T15:45:00+02:00")
        );
        assert_eq!(
            reset(
                "Approaching usage limit · resets at 12pm",
                "2025-07-01T12:00:00Z",
                Zone::Utc
            )
            .as_deref(),
            Some("2025-07-02T12:00:00+00:00"),
            "exactly now is already past"
        );
    }

    #[test]
    fn weekdays_dates_and_epochs() {
        // 2025-07-02 is a Wednesday; the next Monday is 2025-07-07.
        assert_eq!(
            reset(
                "You've hit your weekly limit · resets Mon 12:00am",
                "2025-07-02T12:00:00Z",
                Zone::Utc
            )
            .as_deref(),
            Some("2025-07-07T00:00:00+00:00")
        );
        assert_eq!(
            reset(
                "Weekly limit reached ∙ resets Nov 27, 9am (Europe/Berlin)",
                "2025-12-01T00:00:00Z",
                Zone::Utc
            )
            .as_deref(),
            Some("2026-11-27T09:00:00+01:00")
        );
        assert_eq!(
            reset(
                "Claude AI usage limit reached|1750708800",
                "2025-06-01T00:00:00Z",
                Zone::Utc
            )
            .as_deref(),
            Some("2025-06-23T20:00:00+00:00")
        );
    }

    #[test]
    fn what_is_not_a_time_gives_nothing() {
        for text in [
            "Claude usage limit reached.",
            "resets 15",
            "resets 13pm",
            "resets 3pm (Mars/Olympus_Mons)",
            "You've hit your limit",
        ] {
            assert_eq!(
                reset(text, "2025-07-01T12:00:00Z", Zone::Utc),
                None,
                "{text}"
            );
        }
    }

    #[test]
    fn the_phrase_is_kept_even_when_its_zone_is_unknown() {
        let now = at("2025-07-01T12:00:00Z");
        let found = find(
            "Limit hit · resets 3pm (Mars/Olympus_Mons) · /upgrade",
            now,
            Zone::Utc,
        )
        .unwrap();
        assert_eq!(found.text, "resets 3pm (Mars/Olympus_Mons)");
        assert_eq!(found.at, None);
        let found = find("You've hit your limit · resets 5pm", now, Zone::Utc).unwrap();
        assert_eq!(found.text, "resets 5pm");
        assert_eq!(
            found.at.map(|t| t.to_rfc3339()).as_deref(),
            Some("2025-07-01T17:00:00+00:00")
        );
        assert_eq!(find("resets soon", now, Zone::Utc), None);
    }

    #[test]
    fn a_dst_gap_moves_forward() {
        // 2025-03-30 02:30 does not exist in Berlin.
        assert_eq!(
            reset(
                "resets 2:30am",
                "2025-03-29T12:00:00Z",
                Zone::Named(chrono_tz::Europe::Berlin)
            )
            .as_deref(),
            Some("2025-03-30T03:30:00+02:00")
        );
    }
}
