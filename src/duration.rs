//! Durations on the command line (`--timeout 30m`, `--stale 5m`, `--heartbeat 60s`): a
//! sequence of `<integer><unit>` with units ms, s, m, h, d (`1h30m`). A bare number is refused
//! because "30" means minutes in the seeds and seconds everywhere else.

use std::time::Duration;

const UNITS: &[(&str, u64)] = &[
    ("ms", 1),
    ("s", 1_000),
    ("m", 60_000),
    ("h", 3_600_000),
    ("d", 86_400_000),
];

/// The longest duration accepted: a year of anything is a typo.
pub const MAX: Duration = Duration::from_secs(366 * 86_400);

/// Why a duration on the command line was refused; each says what to write instead.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum DurationError {
    #[error("empty duration (examples: 90s, 30m, 1h30m)")]
    Empty,
    #[error("{0:?} is negative; durations are positive (examples: 90s, 30m)")]
    Negative(String),
    #[error("{0:?} is not a duration (examples: 90s, 30m, 1h30m)")]
    NotADuration(String),
    #[error("{0:?} is too large")]
    TooLarge(String),
    #[error("{0:?} needs a unit: ms, s, m, h or d (a bare number is ambiguous)")]
    NoUnit(String),
    #[error("{text:?}: unknown unit {unit:?} (use ms, s, m, h or d)")]
    UnknownUnit { text: String, unit: String },
    #[error("{0:?} is longer than a year")]
    OverAYear(String),
    #[error("{0:?} is zero; give a positive duration (examples: 90s, 30m)")]
    Zero(String),
}

/// Parse a duration such as `90s`, `30m`, `1h30m`, `250ms`.
pub fn parse(text: &str) -> Result<Duration, DurationError> {
    let text = text.trim();
    if text.is_empty() {
        return Err(DurationError::Empty);
    }
    if text.starts_with('-') {
        return Err(DurationError::Negative(text.to_string()));
    }
    let mut total: u64 = 0;
    let mut rest = text;
    while !rest.is_empty() {
        let digits = rest.bytes().take_while(u8::is_ascii_digit).count();
        if digits == 0 {
            return Err(DurationError::NotADuration(text.to_string()));
        }
        let number: u64 = rest[..digits]
            .parse()
            .map_err(|_| DurationError::TooLarge(text.to_string()))?;
        rest = &rest[digits..];
        let unit_len = rest.bytes().take_while(u8::is_ascii_alphabetic).count();
        let unit = &rest[..unit_len];
        if unit.is_empty() {
            return Err(DurationError::NoUnit(text.to_string()));
        }
        let Some((_, millis)) = UNITS.iter().find(|(name, _)| *name == unit) else {
            return Err(DurationError::UnknownUnit {
                text: text.to_string(),
                unit: unit.to_string(),
            });
        };
        total = number
            .checked_mul(*millis)
            .and_then(|ms| total.checked_add(ms))
            .ok_or_else(|| DurationError::TooLarge(text.to_string()))?;
        rest = &rest[unit_len..];
    }
    let duration = Duration::from_millis(total);
    if duration > MAX {
        return Err(DurationError::OverAYear(text.to_string()));
    }
    Ok(duration)
}

/// Parse a duration that must be greater than zero (timeouts, intervals, staleness).
pub fn parse_positive(text: &str) -> Result<Duration, DurationError> {
    let duration = parse(text)?;
    if duration.is_zero() {
        return Err(DurationError::Zero(text.to_string()));
    }
    Ok(duration)
}

/// Format a duration the way `parse` reads it, largest units first (`1h30m`, `250ms`, `0s`).
pub fn format(duration: Duration) -> String {
    let mut millis = duration.as_millis() as u64;
    if millis == 0 {
        return "0s".to_string();
    }
    let mut out = String::new();
    for (name, size) in UNITS.iter().rev() {
        if millis >= *size {
            out.push_str(&format!("{}{name}", millis / size));
            millis %= size;
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn parses_units_and_sequences() {
        assert_eq!(parse("90s"), Ok(Duration::from_secs(90)));
        assert_eq!(parse("30m"), Ok(Duration::from_secs(1800)));
        assert_eq!(parse("1h30m"), Ok(Duration::from_secs(5400)));
        assert_eq!(parse("250ms"), Ok(Duration::from_millis(250)));
        assert_eq!(parse("0s"), Ok(Duration::ZERO));
    }

    #[test]
    fn refuses_what_would_be_a_guess() {
        for bad in [
            "",
            "30",
            "-5m",
            "1y",
            "5 m",
            "m",
            "1.5h",
            "400d",
            "99999999999999999999s",
        ] {
            assert!(parse(bad).is_err(), "{bad:?}");
        }
        assert!(parse_positive("0m").is_err());
    }

    proptest! {
        #[test]
        fn format_round_trips(ms in 0u64..(300 * 86_400_000)) {
            let d = Duration::from_millis(ms);
            prop_assert_eq!(parse(&format(d)), Ok(d));
        }
    }
}
