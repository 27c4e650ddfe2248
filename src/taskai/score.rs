//! Scores between 0 and 1 (D1–D6 check scores, convergence, thresholds), held as integer
//! ten-thousandths so comparisons are exact: `0.7` read from a flag and `0.70` read from a
//! profile are the same number, and the mean of six scores is compared with a threshold
//! without a rounding error deciding a verdict.

use std::fmt;

/// Ten-thousandths per unit: scores are compared at four decimal places.
pub const SCALE: u32 = 10_000;

/// A score in [0, 1], exact to four decimal places.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Score(u32);

impl Score {
    pub const ZERO: Score = Score(0);
    pub const ONE: Score = Score(SCALE);

    /// A score from ten-thousandths (clamped to [0, 1]).
    pub const fn from_units(units: u32) -> Score {
        Score(if units < SCALE { units } else { SCALE })
    }

    pub fn units(self) -> u32 {
        self.0
    }

    pub fn as_f64(self) -> f64 {
        f64::from(self.0) / f64::from(SCALE)
    }

    /// Parse `0.7`, `0.70`, `1`, `.85`: a finite number between 0 and 1, rounded to four
    /// decimal places. NaN, infinities and values outside the range are refused with a reason.
    pub fn parse(text: &str) -> Result<Score, ScoreError> {
        let trimmed = text.trim();
        if trimmed.is_empty() {
            return Err(ScoreError::Empty);
        }
        let value: f64 = trimmed
            .parse()
            .map_err(|_| ScoreError::NotANumber(trimmed.to_string()))?;
        if !value.is_finite() {
            return Err(ScoreError::NotFinite(trimmed.to_string()));
        }
        if !(0.0..=1.0).contains(&value) {
            return Err(ScoreError::OutOfRange(trimmed.to_string()));
        }
        Ok(Score((value * f64::from(SCALE)).round() as u32))
    }
}

/// Why a text is not a score.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ScoreError {
    #[error("empty score (a number between 0 and 1, such as 0.75)")]
    Empty,
    #[error("{0:?} is not a number (a score is between 0 and 1, such as 0.75)")]
    NotANumber(String),
    #[error("{0:?} is not a finite number (a score is between 0 and 1)")]
    NotFinite(String),
    #[error("{0} is outside 0–1 (scores are between 0 and 1)")]
    OutOfRange(String),
}

impl fmt::Display for Score {
    /// The shortest decimal that reads back as the same score (`0.7`, `0.755`, `1`).
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let whole = self.0 / SCALE;
        let frac = self.0 % SCALE;
        if frac == 0 {
            return write!(f, "{whole}");
        }
        let digits = format!("{frac:04}");
        write!(f, "{whole}.{}", digits.trim_end_matches('0'))
    }
}

impl serde::Serialize for Score {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_f64(self.as_f64())
    }
}

/// The overall of one or more dimension scores: their sum and count, so "overall ≥ threshold"
/// is decided as `sum ≥ threshold × count` in integers.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Overall {
    pub sum: u64,
    pub count: u64,
}

impl Overall {
    pub fn of(scores: &[Score]) -> Overall {
        Overall {
            sum: scores.iter().map(|s| u64::from(s.units())).sum(),
            count: scores.len().max(1) as u64,
        }
    }

    /// Is the mean at or above `bar`?
    pub fn at_least(&self, bar: Score) -> bool {
        self.sum >= u64::from(bar.units()) * self.count
    }

    /// Is the mean strictly below `bar`?
    pub fn below(&self, bar: Score) -> bool {
        !self.at_least(bar)
    }

    /// The mean, for display (rounded to four places).
    pub fn mean(&self) -> f64 {
        let units = (self.sum as f64 / self.count as f64).round();
        units / f64::from(SCALE)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn equal_decimals_are_equal_scores() {
        assert_eq!(Score::parse("0.7"), Score::parse("0.70"));
        assert_eq!(Score::parse(".85").unwrap().units(), 8500);
        assert_eq!(Score::parse("1").unwrap(), Score::ONE);
        assert_eq!(Score::parse("0").unwrap(), Score::ZERO);
    }

    #[test]
    fn refuses_what_is_not_a_score() {
        for bad in [
            "", "NaN", "nan", "inf", "-inf", "-0.1", "1.01", "2", "0.7x", "seventy",
        ] {
            assert!(Score::parse(bad).is_err(), "{bad:?}");
        }
    }

    #[test]
    fn display_is_the_shortest_decimal() {
        assert_eq!(Score::parse("0.70").unwrap().to_string(), "0.7");
        assert_eq!(Score::parse("0.755").unwrap().to_string(), "0.755");
        assert_eq!(Score::ONE.to_string(), "1");
        assert_eq!(Score::ZERO.to_string(), "0");
        assert_eq!(Score::parse("0.0001").unwrap().to_string(), "0.0001");
    }

    #[test]
    fn a_mean_equal_to_the_bar_is_at_least_the_bar() {
        // 0.7 six times sums to 4.199999… in binary floating point; here it is exact.
        let scores = vec![Score::parse("0.7").unwrap(); 6];
        assert!(Overall::of(&scores).at_least(Score::parse("0.70").unwrap()));
        let mixed: Vec<Score> = ["0.9", "0.5", "0.8", "0.6", "0.7", "0.7"]
            .iter()
            .map(|s| Score::parse(s).unwrap())
            .collect();
        assert!(Overall::of(&mixed).at_least(Score::parse("0.7").unwrap()));
        assert!(Overall::of(&mixed).below(Score::parse("0.7001").unwrap()));
    }

    proptest! {
        #[test]
        fn display_round_trips(units in 0u32..=SCALE) {
            let score = Score::from_units(units);
            prop_assert_eq!(Score::parse(&score.to_string()), Ok(score));
        }
    }
}
