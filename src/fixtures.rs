//! Test-only: the checked-in fixtures read line by line, for the tests that hold a reader to
//! every captured line (a rule moved from Rust into `rules/` must read each line of every
//! real screen, stream and payload as the Rust it replaced did).

use std::collections::BTreeSet;
use std::path::Path;

/// The distinct lines of every text file under `tests/fixtures/<under>` (`""`: every
/// fixture), sorted: the readers held to them are functions of one line, and the captures
/// repeat most of theirs (36,564 lines under `panes/`, 9,202 distinct). A file that is not
/// UTF-8 (a registry database) is passed over; a walk that cannot read the tree, or finds no
/// line, fails the test.
pub(crate) fn fixture_lines(under: &str) -> Vec<String> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures")
        .join(under);
    let mut lines = BTreeSet::new();
    for entry in walkdir::WalkDir::new(&root).sort_by_file_name() {
        let entry = entry.unwrap_or_else(|err| panic!("cannot walk {}: {err}", root.display()));
        if !entry.file_type().is_file() {
            continue;
        }
        let bytes = std::fs::read(entry.path())
            .unwrap_or_else(|err| panic!("cannot read {}: {err}", entry.path().display()));
        if let Ok(text) = String::from_utf8(bytes) {
            lines.extend(text.lines().map(str::to_string));
        }
    }
    assert!(
        !lines.is_empty(),
        "no fixture lines under {}",
        root.display()
    );
    lines.into_iter().collect()
}
