//! `.target.md`: does it say what to build, or is it still the template?
//!
//! Seed 000 refuses to plan a draft whose target has "just template placeholders". What counts
//! as a placeholder is a judgement; this is the rule, documented in `autoctl next --help`:
//! front matter, HTML comments, headings, horizontal rules, table separators, empty list items,
//! and lines that are only a placeholder (`{...}`, `<...>`, `[...]`, `TODO`, `TBD`, `N/A`,
//! `...`) are not content. What remains must hold at least three words.

/// The file name inside a task module.
pub const FILE_NAME: &str = ".target.md";

/// The least number of words that makes a target substantive.
pub const MIN_WORDS: usize = 3;

/// Whether a `.target.md` text has substantive content.
pub fn has_substantive_content(text: &str) -> bool {
    substantive_words(text) >= MIN_WORDS
}

/// Count the words of real content in a target text.
pub fn substantive_words(text: &str) -> usize {
    let body = match super::index::split_front_matter(text) {
        Some(parts) => parts.body,
        None => text,
    };
    let without_comments = strip_html_comments(body);
    without_comments
        .lines()
        .map(str::trim)
        .filter(|line| !is_boilerplate(line))
        .map(|line| {
            line.split_whitespace()
                .filter(|word| word.chars().any(char::is_alphanumeric))
                .filter(|word| !is_placeholder(word))
                .count()
        })
        .sum()
}

fn strip_html_comments(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(start) = rest.find("<!--") {
        out.push_str(&rest[..start]);
        match rest[start..].find("-->") {
            Some(end) => rest = &rest[start + end + 3..],
            None => return out,
        }
    }
    out.push_str(rest);
    out
}

fn is_boilerplate(line: &str) -> bool {
    if line.is_empty() || line.starts_with('#') {
        return true;
    }
    if line
        .chars()
        .all(|c| matches!(c, '-' | '*' | '_' | '=' | '|' | ':' | ' '))
    {
        return true;
    }
    let item = line
        .trim_start_matches(['-', '*', '+', '>'])
        .trim_start_matches(|c: char| c.is_ascii_digit())
        .trim_start_matches(['.', ')'])
        .trim_start_matches("[ ]")
        .trim_start_matches("[x]")
        .trim();
    item.is_empty() || is_placeholder(item)
}

fn is_placeholder(text: &str) -> bool {
    let text = text.trim_matches(|c: char| c == '*' || c == '_' || c == '`' || c.is_whitespace());
    let bracketed = |open: char, close: char| text.starts_with(open) && text.ends_with(close);
    bracketed('{', '}')
        || bracketed('<', '>')
        || bracketed('[', ']')
        || text.chars().all(|c| c == '.' || c == '…')
        || ["TODO", "TBD", "N/A", "FIXME", "XXX"].iter().any(|word| {
            text.eq_ignore_ascii_case(word) || text.eq_ignore_ascii_case(&format!("{word}:"))
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn template_is_not_substantive() {
        let template = "# Target\n\n<!-- Describe the goal -->\n\n## Requirements\n\n- \n- [ ] {requirement}\n\nTODO\n";
        assert!(!has_substantive_content(template));
        assert!(!has_substantive_content(""));
    }

    #[test]
    fn a_real_goal_is_substantive() {
        assert!(has_substantive_content(
            "# Target\n\nAdd OAuth login to the admin panel.\n"
        ));
        assert!(has_substantive_content("- support refresh tokens\n"));
    }
}
