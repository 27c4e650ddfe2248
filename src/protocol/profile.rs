//! `.type-profile.md` "## Auto Adaptation": the per-checkpoint score thresholds and retry
//! limits task-ai adapts from past runs (seed 002), read as plain data.
//!
//! The seed fixes the section's name and meaning, not its layout, so the reader accepts the
//! shapes people and agents write, and says which lines it takes as settings:
//! - `key: value` lines, as list items or not, with `**bold**` or `` `code` `` keys;
//! - nesting by indentation (`thresholds:` then `  post-plan: 0.70`), by `###` sub-headings
//!   (`### Retry limits` then `- post-plan: 3`), and YAML inside fenced code blocks;
//! - inline maps (`thresholds: {post-plan: 0.7, post-exec: 0.75}`);
//! - Markdown tables whose header names the column (`| Checkpoint | Threshold | Retry Limit |`).
//!
//! A setting is a threshold when its key (or the key it is nested under) says "threshold",
//! and a retry limit when it says "retry limit", "max retries", or is just "retries". Keys
//! about changes ("delta", "adjust") and observations ("used", "actual") are not limits.
//! Only values that start like a number are checked, so prose such as "Thresholds: lower for
//! bugfix tasks" is left alone.

/// The file name.
pub const FILE_NAME: &str = ".type-profile.md";

/// The section's heading text (level 2).
pub const SECTION: &str = "Auto Adaptation";

/// What a setting is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// A score threshold: a number from 0 to 1 (or a percentage).
    Threshold,
    /// A retry limit: a positive integer.
    RetryLimit,
    /// Anything else (intervals, counts, observations): not checked here.
    Other,
}

/// One `key: value` of the section.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Setting {
    /// 1-based line of the value in the file.
    pub line: usize,
    /// 1-based column (characters) where the value starts.
    pub column: usize,
    /// The key with the keys it is nested under, joined by " / " ("thresholds / post-plan").
    pub key: String,
    pub kind: Kind,
    /// The value as written.
    pub raw: String,
}

/// The section, when the profile has one.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Section {
    /// 1-based line of the heading.
    pub line: usize,
    pub settings: Vec<Setting>,
}

/// A setting whose value is out of range.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SettingProblem {
    pub line: usize,
    pub column: usize,
    pub message: String,
}

/// Read the "## Auto Adaptation" section of a profile text.
pub fn auto_adaptation(text: &str) -> Option<Section> {
    let lines: Vec<&str> = text.lines().collect();
    let start = find_section(&lines)?;
    let mut reader = Reader::default();
    for (index, line) in lines.iter().enumerate().skip(start + 1) {
        if !reader.line(index + 1, line) {
            break;
        }
    }
    Some(Section {
        line: start + 1,
        settings: reader.settings,
    })
}

/// Every threshold outside 0–1 and every retry limit that is not a positive integer.
pub fn problems(section: &Section) -> Vec<SettingProblem> {
    section
        .settings
        .iter()
        .filter_map(|setting| {
            let verdict = match setting.kind {
                Kind::Threshold => threshold(&setting.raw).map(|_| ()),
                Kind::RetryLimit => retry_limit(&setting.raw).map(|_| ()),
                Kind::Other => Ok(()),
            };
            verdict.err().map(|why| SettingProblem {
                line: setting.line,
                column: setting.column,
                message: format!("{}: {why}", setting.key),
            })
        })
        .collect()
}

/// A threshold's value: `0.70` or `70%`, within 0–1.
pub fn threshold(raw: &str) -> Result<f64, String> {
    let token = first_token(raw);
    let (number, percent) = match token.strip_suffix('%') {
        Some(number) => (number, true),
        None => (token, false),
    };
    let value: f64 = number
        .parse()
        .ok()
        .filter(|v: &f64| v.is_finite())
        .ok_or_else(|| format!("threshold {token:?} is not a number"))?;
    let value = if percent { value / 100.0 } else { value };
    if (0.0..=1.0).contains(&value) {
        Ok(value)
    } else if percent {
        Err(format!("threshold {token} is outside 0%-100%"))
    } else {
        Err(format!(
            "threshold {token} is outside 0-1 (write 0.70 or 70% for seventy percent)"
        ))
    }
}

/// A retry limit's value: a whole number of at least 1.
pub fn retry_limit(raw: &str) -> Result<u64, String> {
    let token = first_token(raw);
    if !token.bytes().all(|b| b.is_ascii_digit()) {
        return Err(format!(
            "retry limit {token:?} is not a positive integer (whole number of at least 1)"
        ));
    }
    match token.parse::<u64>() {
        Ok(0) => Err("retry limit 0 is not a positive integer (at least 1)".to_string()),
        Ok(value) => Ok(value),
        Err(_) => Err(format!("retry limit {token:?} is too large")),
    }
}

/// The value's first word, without trailing punctuation ("3 replans" -> "3").
fn first_token(raw: &str) -> &str {
    raw.split_whitespace()
        .next()
        .unwrap_or("")
        .trim_end_matches([',', ';', ')'])
}

/// Whether a value starts like a number (so prose values are not checked).
fn numeric_like(raw: &str) -> bool {
    let token = first_token(raw);
    let unsigned = token.strip_prefix(['-', '+']).unwrap_or(token);
    let unsigned = unsigned.strip_prefix('.').unwrap_or(unsigned);
    unsigned.starts_with(|c: char| c.is_ascii_digit())
}

fn heading_level(line: &str) -> Option<(usize, &str)> {
    let trimmed = line.trim_start();
    if line.len() - trimmed.len() > 3 {
        return None;
    }
    let level = trimmed.bytes().take_while(|b| *b == b'#').count();
    if level == 0 || level > 6 {
        return None;
    }
    let rest = &trimmed[level..];
    if !rest.is_empty() && !rest.starts_with([' ', '\t']) {
        return None;
    }
    Some((level, rest.trim().trim_end_matches('#').trim()))
}

fn find_section(lines: &[&str]) -> Option<usize> {
    let mut fenced = false;
    for (index, line) in lines.iter().enumerate() {
        if is_fence(line) {
            fenced = !fenced;
            continue;
        }
        if !fenced
            && let Some((2, title)) = heading_level(line)
            && title.eq_ignore_ascii_case(SECTION)
        {
            return Some(index);
        }
    }
    None
}

fn is_fence(line: &str) -> bool {
    let trimmed = line.trim_start();
    trimmed.starts_with("```") || trimmed.starts_with("~~~")
}

#[derive(Default)]
struct Reader {
    settings: Vec<Setting>,
    fenced: bool,
    /// The current `###` sub-heading, if any.
    heading: Option<String>,
    /// Keys with an empty value, by indentation: the context of more-indented lines.
    stack: Vec<(usize, String)>,
    /// The header cells of the table being read.
    table: Option<Vec<String>>,
}

impl Reader {
    /// Read one line of the section; `false` when the section ended.
    fn line(&mut self, number: usize, line: &str) -> bool {
        if is_fence(line) {
            self.fenced = !self.fenced;
            self.stack.clear();
            return true;
        }
        if !self.fenced
            && let Some((level, title)) = heading_level(line)
        {
            if level <= 2 {
                return false;
            }
            self.heading = Some(title.to_string());
            self.stack.clear();
            self.table = None;
            return true;
        }
        let trimmed = line.trim();
        if trimmed.is_empty() {
            self.table = None;
            return true;
        }
        if !self.fenced && trimmed.starts_with('|') {
            self.table_row(number, line);
            return true;
        }
        self.table = None;
        self.key_value(number, line);
        true
    }

    fn table_row(&mut self, number: usize, line: &str) {
        let cells = split_cells(line);
        let Some(headers) = self.table.clone() else {
            self.table = Some(cells.into_iter().map(|(_, text)| clean(&text)).collect());
            return;
        };
        if cells
            .iter()
            .all(|(_, text)| !text.is_empty() && text.chars().all(|c| matches!(c, '-' | ':' | ' ')))
        {
            return;
        }
        let Some((_, name)) = cells.first() else {
            return;
        };
        let name = clean(name);
        for ((column, text), header) in cells.iter().zip(headers.iter()).skip(1) {
            let mut path = self.context();
            path.push(name.clone());
            path.push(header.clone());
            self.push(number, *column, &path, text.trim());
        }
    }

    fn key_value(&mut self, number: usize, line: &str) {
        let indent = line.chars().take_while(|c| c.is_whitespace()).count();
        while self.stack.last().is_some_and(|(i, _)| *i >= indent) {
            self.stack.pop();
        }
        let content = strip_list_marker(line.trim_start());
        let Some(colon) = find_key_colon(content) else {
            return;
        };
        let key = clean(&content[..colon]);
        if key.is_empty() || key.chars().count() > 60 {
            return;
        }
        let value = content[colon + 1..].trim().trim_start_matches("**").trim();
        if value.is_empty() {
            self.stack.push((indent, key));
            return;
        }
        // `content` is a suffix of `line`, so positions in it map back by its length.
        let after_colon = line.len() - content.len() + colon + 1;
        let value_start = after_colon + line[after_colon..].find(value).unwrap_or(0);
        let column = line[..value_start].chars().count() + 1;
        let mut path = self.context();
        path.push(key);
        if let Some(inner) = value
            .strip_prefix('{')
            .and_then(|rest| rest.trim_end().strip_suffix('}'))
        {
            // An inline map: each `name: value` is a setting nested under the key.
            let mut offset = column + 1;
            for pair in inner.split(',') {
                if let Some((name, raw)) = pair.split_once(':') {
                    let mut inner_path = path.clone();
                    inner_path.push(clean(name));
                    let raw_column = offset + pair.find(raw.trim()).unwrap_or(0);
                    self.push(number, raw_column, &inner_path, raw.trim());
                }
                offset += pair.chars().count() + 1;
            }
            return;
        }
        self.push(number, column, &path, value);
    }

    fn context(&self) -> Vec<String> {
        self.heading
            .iter()
            .cloned()
            .chain(self.stack.iter().map(|(_, key)| key.clone()))
            .collect()
    }

    fn push(&mut self, line: usize, column: usize, path: &[String], raw: &str) {
        let kind = classify(path);
        if kind != Kind::Other && !numeric_like(raw) {
            return;
        }
        self.settings.push(Setting {
            line,
            column,
            key: path.join(" / "),
            kind,
            raw: raw.to_string(),
        });
    }
}

/// The colon that ends a key: the first one outside backticks.
fn find_key_colon(content: &str) -> Option<usize> {
    let mut in_code = false;
    for (index, ch) in content.char_indices() {
        match ch {
            '`' => in_code = !in_code,
            ':' if !in_code => return Some(index),
            _ => {}
        }
    }
    None
}

fn strip_list_marker(text: &str) -> &str {
    for marker in ["- ", "* ", "+ "] {
        if let Some(rest) = text.strip_prefix(marker) {
            return rest.trim_start();
        }
    }
    let digits = text.bytes().take_while(u8::is_ascii_digit).count();
    if digits > 0 {
        let rest = &text[digits..];
        if let Some(rest) = rest.strip_prefix(". ").or_else(|| rest.strip_prefix(") ")) {
            return rest.trim_start();
        }
    }
    text
}

/// Cells of a table row with the column (1-based characters) where each starts.
fn split_cells(line: &str) -> Vec<(usize, String)> {
    let mut cells = Vec::new();
    let mut column = 0;
    let mut start: Option<usize> = None;
    let mut current = String::new();
    for ch in line.chars() {
        column += 1;
        if ch == '|' {
            if let Some(begin) = start {
                let leading = current.chars().take_while(|c| c.is_whitespace()).count();
                cells.push((begin + leading, current.trim().to_string()));
            }
            start = Some(column + 1);
            current.clear();
        } else if start.is_some() {
            current.push(ch);
        }
    }
    // A row without a closing pipe still has its last cell.
    if let Some(begin) = start
        && !current.trim().is_empty()
    {
        let leading = current.chars().take_while(|c| c.is_whitespace()).count();
        cells.push((begin + leading, current.trim().to_string()));
    }
    cells
}

/// A key without emphasis or code markers.
fn clean(text: &str) -> String {
    text.replace("**", "")
        .replace("__", "")
        .replace('`', "")
        .trim()
        .trim_matches('*')
        .trim()
        .to_string()
}

fn normalize(component: &str) -> String {
    component
        .to_lowercase()
        .replace(['_', '-'], " ")
        .split_whitespace()
        .collect::<Vec<_>>()
        .join(" ")
}

fn classify(path: &[String]) -> Kind {
    // The nearest key that says what it is decides ("retry limits / post-plan threshold" is a
    // threshold); a key about a change or an observation is never a limit.
    for component in path.iter().rev() {
        let key = normalize(component);
        if ["delta", "adjust", "change", "used", "actual", "observed"]
            .iter()
            .any(|word| key.contains(word))
        {
            return Kind::Other;
        }
        if key.contains("threshold") {
            return Kind::Threshold;
        }
        if [
            "retry limit",
            "retries limit",
            "max retries",
            "max retry",
            "retry max",
        ]
        .iter()
        .any(|phrase| key.contains(phrase))
            || key == "retries"
            || key == "retry"
        {
            return Kind::RetryLimit;
        }
    }
    Kind::Other
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn settings(text: &str) -> Vec<(String, Kind, String, usize, usize)> {
        auto_adaptation(text)
            .unwrap()
            .settings
            .into_iter()
            .map(|s| (s.key, s.kind, s.raw, s.line, s.column))
            .collect()
    }

    #[test]
    fn list_items_with_bold_keys() {
        let text = "# Type Profile: software\n\n## Auto Adaptation\n- **post-plan threshold**: 0.60\n- post-exec threshold: 65%\n- **post-plan retry limit:** 2\n- mid-exec check interval: 3\n\n## Sources\n- threshold: 7\n";
        assert_eq!(
            settings(text),
            vec![
                (
                    "post-plan threshold".into(),
                    Kind::Threshold,
                    "0.60".into(),
                    4,
                    28
                ),
                (
                    "post-exec threshold".into(),
                    Kind::Threshold,
                    "65%".into(),
                    5,
                    24
                ),
                (
                    "post-plan retry limit".into(),
                    Kind::RetryLimit,
                    "2".into(),
                    6,
                    30
                ),
                (
                    "mid-exec check interval".into(),
                    Kind::Other,
                    "3".into(),
                    7,
                    28
                ),
            ]
        );
        assert!(problems(&auto_adaptation(text).unwrap()).is_empty());
    }

    #[test]
    fn nesting_by_indentation_headings_and_yaml_fences() {
        let text = "## Auto Adaptation\nthresholds:\n  post-plan: 0.7\n  mid-exec: 1.5\nretry_limits:\n  post-exec: 0\n### Retry limits\n- mid-exec: 2.5\n```yaml\n# a comment, not a heading\nthresholds:\n  post-exec: 75\n```\n";
        let section = auto_adaptation(text).unwrap();
        let found: Vec<(String, usize)> = problems(&section)
            .into_iter()
            .map(|p| (p.message, p.line))
            .collect();
        assert_eq!(found.len(), 4, "{found:?}");
        assert!(
            found[0]
                .0
                .starts_with("thresholds / mid-exec: threshold 1.5 is outside 0-1")
        );
        assert_eq!(found[0].1, 4);
        assert!(
            found[1]
                .0
                .starts_with("retry_limits / post-exec: retry limit 0")
        );
        assert!(
            found[2]
                .0
                .starts_with("Retry limits / mid-exec: retry limit \"2.5\"")
        );
        // The sub-heading still applies; the nearest key (thresholds) decides the kind.
        assert!(
            found[3]
                .0
                .starts_with("Retry limits / thresholds / post-exec: threshold 75")
        );
        assert_eq!(found[3].1, 12);
    }

    #[test]
    fn tables_and_inline_maps() {
        let text = "## Auto Adaptation\n\n| Checkpoint | Threshold | Retry Limit |\n|---|---|---|\n| post-plan | 0.70 | 3 replans |\n| mid-exec | 0.6 | -1 |\n\nthresholds: {post-plan: 0.7, post-exec: 2}\n";
        let section = auto_adaptation(text).unwrap();
        let found: Vec<(usize, usize, String)> = problems(&section)
            .into_iter()
            .map(|p| (p.line, p.column, p.message))
            .collect();
        assert_eq!(found.len(), 2, "{found:?}");
        assert_eq!((found[0].0, found[0].1), (6, 20));
        assert!(
            found[0]
                .2
                .starts_with("mid-exec / Retry Limit: retry limit \"-1\"")
        );
        assert_eq!(found[1].0, 8);
        assert!(
            found[1]
                .2
                .starts_with("thresholds / post-exec: threshold 2")
        );
        assert_eq!(&text.lines().nth(7).unwrap()[found[1].1 - 1..], "2}");
    }

    #[test]
    fn prose_and_observations_are_not_limits() {
        let text = "## Auto Adaptation\n- Thresholds: lower for bugfix tasks\n- actual retries used: 0\n- threshold delta: -0.05\n- retries: 4\n";
        let section = auto_adaptation(text).unwrap();
        assert!(problems(&section).is_empty(), "{:?}", problems(&section));
        assert_eq!(
            section
                .settings
                .iter()
                .filter(|s| s.kind == Kind::RetryLimit)
                .count(),
            1
        );
    }

    #[test]
    fn no_section_is_none_and_values_parse() {
        assert!(auto_adaptation("# Profile\n## Sources\n").is_none());
        assert!(auto_adaptation("```\n## Auto Adaptation\n```\n").is_none());
        assert_eq!(threshold("82%"), Ok(0.82));
        assert_eq!(threshold("0.75 (was 0.7)"), Ok(0.75));
        assert!(threshold("0,7").is_err());
        assert!(threshold("NaN").is_err());
        assert_eq!(retry_limit("3 replans"), Ok(3));
        assert!(retry_limit("+3").is_err());
    }

    proptest! {
        #[test]
        fn never_panics_and_positions_are_inside_the_text(text in "(## Auto Adaptation\n)?([-*|: #`{}a-z0-9.%\n\t]|threshold|retry limit|é){0,200}") {
            let doc = format!("## Auto Adaptation\n{text}");
            let section = auto_adaptation(&doc).unwrap();
            let lines: Vec<&str> = doc.lines().collect();
            for setting in &section.settings {
                prop_assert!(setting.line >= 2 && setting.line <= lines.len());
                prop_assert!(setting.column >= 1);
                prop_assert!(setting.column <= lines[setting.line - 1].chars().count() + 1);
            }
            let _ = problems(&section);
        }
    }
}
