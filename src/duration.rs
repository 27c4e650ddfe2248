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

/// Parse a duration such as `90s`, `30m`, `1h30m`, `250ms`.
pub fn parse(text: &str) -> Result<Duration, String> {
    let text = text.trim();
    if text.is_empty() {
        return Err("empty duration (examples: 90s, 30m, 1h30m)".to_string());
    }
    if text.starts_with('-') {
        return Err(format!(
            "{text:?} is negative; durations are positive (examples: 90s, 30m)"
        ));
    }
    let mut total: u64 = 0;
    let mut rest = text;
    while !rest.is_empty() {
        let digits = rest.bytes().take_while(u8::is_ascii_digit).count();
        if digits == 0 {
            return Err(format!(
                "{text:?} is not a duration (examples: 90s, 30m, 1h30m)"
            ));
        }
        let number: u64 = rest[..digits]
            .parse()
            .map_err(|_| format!("{text:?} is too large"))?;
        rest = &rest[digits..];
        let unit_len = rest.bytes().take_while(u8::is_ascii_alphabetic).count();
        let unit = &rest[..unit_len];
        if unit.is_empty() {
            return Err(format!(
                "{text:?} needs a unit: ms, s, m, h or d (a bare number is ambiguous)"
            ));
        }
        let Some((_, millis)) = UNITS.iter().find(|(name, _)| *name == unit) else {
            return Err(format!(
                "{text:?}: unknown unit {unit:?} (use ms, s, m, h or d)"
            ));
        };
        total = number
            .checked_mul(*millis)
            .and_then(|ms| total.checked_add(ms))
            .ok_or_else(|| format!("{text:?} is too large"))?;
        rest = &rest[unit_len..];
    }
    let duration = Duration::from_millis(total);
    if duration > MAX {
        return Err(format!("{text:?} is longer than a year"));
    }
    Ok(duration)
}

/// Parse a duration that must be greater than zero (timeouts, intervals, staleness).
pub fn parse_positive(text: &str) -> Result<Duration, String> {
    let duration = parse(text)?;
    if duration.is_zero() {
        return Err(format!(
            "{text:?} is zero; give a positive duration (examples: 90s, 30m)"
        ));
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
