//! The root `.index.md` of a task root: the module listing `task new` (ai-cli-task's init)
//! writes, one
//! `- [<module>](./<module>/.index.md) — <title>` line per module. A module counts as listed
//! when any link in the file points at `<module>/.index.md` or `<module>/` (relative,
//! percent-encoded or not), so hand-edited listings keep working.
//!
//! The listing grows with the root (a line per module), so it is read line by line rather than
//! whole: memory stays one line and one flag per module, and a root of 50,000 modules is not
//! refused for a listing over the 1 MiB document bound. Lines are bounded at 1 MiB and the
//! file at 64 MiB.

use std::io::{self, BufRead, Read};
use std::path::Path;

use super::rules;
use super::{Finding, ModuleNames};
use crate::fsx;

/// The longest line read.
pub const LINE_LIMIT: u64 = fsx::DOCUMENT_LIMIT;
/// The most of a listing read.
pub const FILE_LIMIT: u64 = 64 * 1024 * 1024;

/// A module named by the listing.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Listed {
    pub name: String,
    /// 1-based line and column of the link target.
    pub line: usize,
    pub column: usize,
}

/// The modules one line of a listing links to.
pub fn links(line: &str, number: usize) -> Vec<Listed> {
    let mut found = Vec::new();
    let mut rest = line;
    while let Some(open) = rest.find("](") {
        let target_start = line.len() - rest.len() + open + 2;
        let after = &line[target_start..];
        let Some(close) = after.find(')') else { break };
        if let Some(name) = module_of(&after[..close]) {
            found.push(Listed {
                name,
                line: number,
                column: line[..target_start].chars().count() + 1,
            });
        }
        rest = &after[close..];
    }
    found
}

fn module_of(target: &str) -> Option<String> {
    let target = target.trim().trim_start_matches('<');
    // A link title ("...") follows the destination after a space.
    let target = target.split_whitespace().next()?.trim_end_matches('>');
    if target.contains("://") || target.starts_with('#') || target.starts_with('/') {
        return None;
    }
    let decoded = percent_encoding::percent_decode_str(target).decode_utf8_lossy();
    let path = decoded.strip_prefix("./").unwrap_or(&decoded);
    let module = path
        .strip_suffix("/.index.md")
        .or_else(|| path.strip_suffix('/'))?;
    (!module.is_empty() && !module.contains('/') && module != "." && module != "..")
        .then(|| module.to_string())
}

/// How the listing could be opened.
pub enum Source<R> {
    Missing,
    Failed(String),
    Open(R),
}

/// Open a root's listing for [`check`].
pub fn open(root: &Path) -> Source<io::BufReader<std::fs::File>> {
    match crate::fsx::open_regular(&root.join(".index.md")) {
        Ok(file) => Source::Open(io::BufReader::new(file)),
        Err(err) if err.kind() == io::ErrorKind::NotFound => Source::Missing,
        Err(err) => Source::Failed(err.to_string()),
    }
}

/// Check a root listing against the module directories of the root.
pub fn check<R: BufRead>(
    root: &Path,
    source: Source<R>,
    modules: &ModuleNames,
    out: &mut Vec<Finding>,
) {
    let path = root.join(".index.md");
    let Some(reader) = open_listing(root, &path, source, modules, out) else {
        return;
    };
    let Some(seen) = read_listing(reader, &path, modules, out) else {
        return;
    };
    for (module, listed) in modules.iter().zip(seen) {
        if !listed {
            out.push(Finding::new(
                &rules::ROOT_INDEX_UNLISTED,
                &path,
                format!("module {module:?} is not listed (add '- [{module}](./{module}/.index.md) — <title>')"),
            ));
        }
    }
}

/// The listing to read, or `None` with its finding: a root with modules and no listing, or
/// one that cannot be read.
fn open_listing<R: BufRead>(
    root: &Path,
    path: &Path,
    source: Source<R>,
    modules: &ModuleNames,
    out: &mut Vec<Finding>,
) -> Option<R> {
    match source {
        Source::Missing => {
            if !modules.is_empty() {
                out.push(Finding::new(
                    &rules::ROOT_INDEX_MISSING,
                    root,
                    format!(
                        "the task root has no .index.md listing its {} module{}",
                        modules.len(),
                        if modules.len() == 1 { "" } else { "s" }
                    ),
                ));
            }
            None
        }
        Source::Failed(why) => {
            out.push(Finding::new(
                &rules::UNREADABLE,
                path,
                format!("cannot read: {why}"),
            ));
            None
        }
        Source::Open(reader) => Some(reader),
    }
}

/// Read the listing line by line (bounded per line and in all), each link checked against
/// the modules: which modules it lists, or `None` when reading failed midway.
fn read_listing<R: BufRead>(
    reader: R,
    path: &Path,
    modules: &ModuleNames,
    out: &mut Vec<Finding>,
) -> Option<Vec<bool>> {
    let mut reader = reader.take(FILE_LIMIT);
    let mut seen = vec![false; modules.len()];
    let mut buffer = Vec::new();
    let mut number = 0;
    loop {
        buffer.clear();
        number += 1;
        let read = (&mut reader)
            .take(LINE_LIMIT + 1)
            .read_until(b'\n', &mut buffer);
        let problem = match read {
            Ok(0) => break,
            Ok(_) if buffer.len() as u64 > LINE_LIMIT => Some(format!(
                "line {number} is longer than {}; the rest is not read",
                fsx::human_size(LINE_LIMIT)
            )),
            Ok(_) => None,
            Err(err) => {
                out.push(Finding::new(
                    &rules::UNREADABLE,
                    path,
                    format!("cannot read: {err}"),
                ));
                return None;
            }
        };
        if let Some(problem) = problem {
            out.push(Finding::new(&rules::INDEX_NOT_TEXT, path, problem).at(number, None));
            break;
        }
        let Ok(line) = std::str::from_utf8(&buffer) else {
            out.push(
                Finding::new(&rules::INDEX_NOT_TEXT, path, "not valid UTF-8 text").at(number, None),
            );
            break;
        };
        mark_links(line, number, path, modules, &mut seen, out);
    }
    if reader.limit() == 0 {
        out.push(Finding::new(
            &rules::INDEX_NOT_TEXT,
            path,
            format!(
                "larger than the {} read limit; the rest is not read",
                fsx::human_size(FILE_LIMIT)
            ),
        ));
    }
    Some(seen)
}

/// The links of one line: a module's is marked listed, any other is stale.
fn mark_links(
    line: &str,
    number: usize,
    path: &Path,
    modules: &ModuleNames,
    seen: &mut [bool],
    out: &mut Vec<Finding>,
) {
    for entry in links(line.trim_end_matches(['\n', '\r']), number) {
        match modules.position(&entry.name) {
            Some(index) => seen[index] = true,
            None => out.push(
                Finding::new(
                    &rules::ROOT_INDEX_STALE,
                    path,
                    format!(
                        "lists {:?}, which is not a module directory of the task root",
                        entry.name
                    ),
                )
                .at(entry.line, Some(entry.column)),
            ),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn listed(text: &str) -> Vec<(String, usize, usize)> {
        text.lines()
            .enumerate()
            .flat_map(|(i, line)| links(line, i + 1))
            .map(|l| (l.name, l.line, l.column))
            .collect()
    }

    #[test]
    fn reads_init_listings_and_hand_edits() {
        let text = "# TASK\n\n- [auth-refactor](./auth-refactor/.index.md) — User auth\n- [用户认证重构](./%E7%94%A8%E6%88%B7%E8%AE%A4%E8%AF%81%E9%87%8D%E6%9E%84/.index.md) — 重构\n- see [db](db/) and [docs](https://example.com/x/) and [notes](notes.md)\n";
        assert_eq!(
            listed(text),
            vec![
                ("auth-refactor".to_string(), 3, 19),
                ("用户认证重构".to_string(), 4, 12),
                ("db".to_string(), 5, 12),
            ]
        );
    }

    fn run(text: &[u8], modules: &ModuleNames) -> Vec<Finding> {
        let mut out = Vec::new();
        check(Path::new("TASK"), Source::Open(text), modules, &mut out);
        out
    }

    #[test]
    fn stale_and_unlisted() {
        let modules = ModuleNames::new(vec!["b".to_string(), "a".to_string()]);
        let out = run(
            b"- [a](./a/.index.md)\r\n- [gone](./gone/.index.md)\n",
            &modules,
        );
        let got: Vec<(&str, Option<usize>)> = out.iter().map(|f| (f.rule.id, f.line)).collect();
        assert_eq!(
            got,
            vec![("root-index-stale", Some(2)), ("root-index-unlisted", None)]
        );
        assert!(out[1].message.contains("\"b\""));

        let mut out = Vec::new();
        check::<&[u8]>(Path::new("TASK"), Source::Missing, &modules, &mut out);
        assert_eq!(out[0].rule.id, "root-index-missing");
        let mut out = Vec::new();
        check::<&[u8]>(
            Path::new("TASK"),
            Source::Missing,
            &ModuleNames::default(),
            &mut out,
        );
        assert!(out.is_empty());
    }

    #[test]
    fn binary_and_endless_lines_stop_the_read() {
        let modules = ModuleNames::new(vec!["a".to_string()]);
        let out = run(b"- [a](./a/.index.md)\n\xff\xfe\n", &modules);
        assert_eq!(out[0].rule.id, "index-not-text");
        assert_eq!(out[0].line, Some(2));
        let long = vec![b'x'; LINE_LIMIT as usize + 10];
        let out = run(&long, &modules);
        assert_eq!(out[0].rule.id, "index-not-text");
        assert!(
            out[0].message.contains("longer than 1 MiB"),
            "{}",
            out[0].message
        );
        // The module after the cut is unlisted: nothing past the bound was read.
        assert_eq!(out[1].rule.id, "root-index-unlisted");
    }
}
