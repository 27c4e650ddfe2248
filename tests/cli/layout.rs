//! The repository's layout: no Rust file that no target compiles (Cargo builds only the
//! module tree of each target, so a test file nobody declares silently never runs; jj's
//! `test_no_forgotten_test_files` guards the same), and no proptest regression file whose
//! test has moved away (its saved cases would silently stop running).

use std::fs;
use std::path::{Path, PathBuf};

fn repo() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// Every `.rs` file under `dir`, skipping `skip` (fixtures hold data, not code).
fn rust_files(dir: &Path, skip: &[&Path], out: &mut Vec<PathBuf>) {
    for entry in fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if skip.iter().any(|s| path.starts_with(s)) {
            continue;
        }
        if path.is_dir() {
            rust_files(&path, skip, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

/// The files of the module tree rooted at `root`: it and, recursively, every file its
/// `mod NAME;` declarations name (`NAME.rs` or `NAME/mod.rs` in the directory a module's
/// children live in). Inline `mod NAME { … }` blocks have no file.
fn module_tree(root: &Path, out: &mut Vec<PathBuf>) {
    out.push(root.to_path_buf());
    let text = fs::read_to_string(root).unwrap();
    assert!(
        !text.lines().any(|l| l.trim_start().starts_with("#[path")),
        "{}: #[path] modules are not followed by this check",
        root.display()
    );
    let stem = root.file_stem().unwrap().to_str().unwrap();
    let children = if matches!(stem, "main" | "lib" | "mod") {
        root.parent().unwrap().to_path_buf()
    } else {
        root.with_extension("")
    };
    for line in text.lines() {
        let line = line.trim_start();
        let line = line.strip_prefix("pub ").unwrap_or(line);
        let line = line.strip_prefix("pub(crate) ").unwrap_or(line).trim_end();
        let Some(name) = line
            .strip_prefix("mod ")
            .and_then(|rest| rest.strip_suffix(';'))
        else {
            continue;
        };
        let file = children.join(format!("{name}.rs"));
        let dir_file = children.join(name).join("mod.rs");
        match (file.exists(), dir_file.exists()) {
            (true, false) => module_tree(&file, out),
            (false, true) => module_tree(&dir_file, out),
            _ => panic!(
                "{}: mod {name}; names neither {} nor {} (or both)",
                root.display(),
                file.display(),
                dir_file.display()
            ),
        }
    }
}

/// The roots Cargo builds: the library, the binary, the build script and every `[[test]]`
/// (autotests are off, so a file under tests/ runs only when a listed target includes it).
fn targets() -> Vec<PathBuf> {
    let manifest = fs::read_to_string(repo().join("Cargo.toml")).unwrap();
    assert!(
        manifest.contains("autotests = false"),
        "the check assumes it"
    );
    let mut roots = vec![
        repo().join("src/lib.rs"),
        repo().join("src/main.rs"),
        repo().join("build.rs"),
    ];
    for line in manifest.lines() {
        if let Some(path) = line
            .trim()
            .strip_prefix("path = \"")
            .and_then(|p| p.strip_suffix('"'))
        {
            roots.push(repo().join(path));
        }
    }
    roots
}

#[test]
fn every_rust_file_belongs_to_a_target() {
    let mut compiled = Vec::new();
    for root in targets() {
        module_tree(&root, &mut compiled);
    }
    let mut files = Vec::new();
    let skip = [
        repo().join("target"),
        repo().join("tests/fixtures"),
        repo().join(".git"),
    ];
    let skip: Vec<&Path> = skip.iter().map(PathBuf::as_path).collect();
    rust_files(&repo(), &skip, &mut files);
    let forgotten: Vec<String> = files
        .iter()
        .filter(|f| !compiled.contains(f))
        .map(|f| f.strip_prefix(repo()).unwrap().display().to_string())
        .collect();
    assert!(
        forgotten.is_empty(),
        "no target compiles these files (declare them with `mod NAME;`, e.g. in tests/cli/main.rs, or remove them): {forgotten:?}"
    );
    assert!(compiled.len() > 150, "{}", compiled.len());
}

/// proptest keeps the failures it found in `proptest-regressions/<path of the test's file
/// under src/>.txt` (for the integration tests, `tests/proptest-regressions/<file>.txt`) and
/// replays them before new cases. A file whose test moved (a module split into a directory)
/// is never read again: each must sit where the file with its `proptest!` now is.
#[test]
fn every_proptest_regression_file_is_read_by_a_test() {
    let mut orphans = Vec::new();
    for (regressions, sources) in [
        (repo().join("proptest-regressions"), repo().join("src")),
        (
            repo().join("tests/proptest-regressions"),
            repo().join("tests/cli"),
        ),
    ] {
        let mut files = Vec::new();
        txt_files(&regressions, &mut files);
        for file in files {
            let relative = file
                .strip_prefix(&regressions)
                .unwrap()
                .with_extension("rs");
            let source = sources.join(&relative);
            let has_proptest = fs::read_to_string(&source).is_ok_and(|t| t.contains("proptest!"));
            if !has_proptest {
                orphans.push(format!(
                    "{} (no proptest! in {})",
                    file.strip_prefix(repo()).unwrap().display(),
                    source.strip_prefix(repo()).unwrap().display()
                ));
            }
        }
    }
    assert!(
        orphans.is_empty(),
        "regression files no test reads (move each beside the proptest it regresses): {orphans:?}"
    );
}

fn txt_files(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = fs::read_dir(dir) else {
        return;
    };
    for entry in entries {
        let path = entry.unwrap().path();
        if path.is_dir() {
            txt_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "txt") {
            out.push(path);
        }
    }
}
