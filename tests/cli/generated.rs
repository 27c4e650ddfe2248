//! Checked-in generated files (completions, man pages, the compiled-in routing tables, the
//! policy rule table of docs/policy.md) match
//! what they are generated from, and the clap tree is sound. `AUTOCTL_UPDATE=1 cargo test` rewrites them.

use std::fs;
use std::path::{Path, PathBuf};

use autoctl::routing::{self, DEFAULT_TABLE, Table};
use clap::CommandFactory;

use crate::util::Sandbox;

fn repo(relative: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join(relative)
}

fn updating() -> bool {
    std::env::var_os("AUTOCTL_UPDATE").is_some_and(|v| v == "1")
}

/// Compare `expected` with the checked-in file; rewrite it when updating.
fn check_file(path: &Path, expected: &[u8], drift: &mut Vec<String>) {
    if updating() {
        fs::create_dir_all(path.parent().unwrap()).unwrap();
        fs::write(path, expected).unwrap();
        return;
    }
    match fs::read(path) {
        Ok(actual) if actual == expected => {}
        Ok(actual) => drift.push(format!(
            "{} differs:\n{}",
            path.display(),
            diff(
                &String::from_utf8_lossy(&actual),
                &String::from_utf8_lossy(expected)
            )
        )),
        Err(_) => drift.push(format!("{} is missing", path.display())),
    }
}

/// The lines that differ between the checked-in text and the generated one (`-` checked in,
/// `+` generated), after the common head and tail, at most 40 of each.
fn diff(old: &str, new: &str) -> String {
    let old: Vec<&str> = old.lines().collect();
    let new: Vec<&str> = new.lines().collect();
    let head = old.iter().zip(&new).take_while(|(a, b)| a == b).count();
    let tail = old[head..]
        .iter()
        .rev()
        .zip(new[head..].iter().rev())
        .take_while(|(a, b)| a == b)
        .count();
    let mut out = format!("@@ line {} @@\n", head + 1);
    for line in old[head..old.len() - tail].iter().take(40) {
        out.push_str(&format!("-{line}\n"));
    }
    for line in new[head..new.len() - tail].iter().take(40) {
        out.push_str(&format!("+{line}\n"));
    }
    out
}

fn fail_on_drift(drift: Vec<String>) {
    assert!(
        drift.is_empty(),
        "generated files drifted:\n{}\nrun `AUTOCTL_UPDATE=1 cargo test --test cli generated` to regenerate them",
        drift.join("\n")
    );
}

#[test]
fn cli_definition_is_sound() {
    autoctl::cli::Cli::command().debug_assert();
}

#[test]
fn completions_are_up_to_date() {
    let mut drift = Vec::new();
    for (shell, file) in autoctl::docs::SHELLS {
        check_file(
            &repo("completions").join(file),
            &autoctl::docs::completion(autoctl::cli::Cli::command(), *shell),
            &mut drift,
        );
    }
    fail_on_drift(drift);
}

#[test]
fn man_pages_are_up_to_date_and_none_is_stale() {
    let mut drift = Vec::new();
    let pages = autoctl::docs::man_pages(autoctl::cli::Cli::command());
    for (name, page) in &pages {
        check_file(&repo("man").join(name), page, &mut drift);
    }
    let names: Vec<&str> = pages.iter().map(|(n, _)| n.as_str()).collect();
    for entry in fs::read_dir(repo("man")).unwrap() {
        let name = entry.unwrap().file_name().to_string_lossy().to_string();
        if !names.contains(&name.as_str()) {
            if updating() {
                fs::remove_file(repo("man").join(&name)).unwrap();
            } else {
                drift.push(format!("man/{name} is no longer generated"));
            }
        }
    }
    fail_on_drift(drift);
}

#[test]
fn the_binary_prints_the_same_files() {
    let sb = Sandbox::new();
    let bash = sb.cmd().args(["completions", "bash"]).output().unwrap();
    assert_eq!(
        bash.stdout,
        autoctl::docs::completion(autoctl::cli::Cli::command(), clap_complete::Shell::Bash)
    );
    let top = sb.cmd().arg("man").output().unwrap();
    assert_eq!(
        top.stdout,
        autoctl::docs::man_pages(autoctl::cli::Cli::command())[0].1
    );
    let text = String::from_utf8(top.stdout).unwrap();
    assert!(text.contains(".SH \"EXIT STATUS\""));
    let wrote = sb
        .cmd()
        .args(["man", "--out"])
        .arg(sb.path("man"))
        .output()
        .unwrap();
    assert_eq!(wrote.status.code(), Some(0));
    assert!(wrote.stdout.is_empty());
    let said = String::from_utf8(wrote.stderr).unwrap();
    assert_eq!(said.lines().count(), 1, "{said}");
    assert!(
        said.starts_with(&format!(
            "autoctl: wrote {} man pages to ",
            autoctl::docs::man_pages(autoctl::cli::Cli::command()).len()
        )),
        "{said}"
    );
    assert!(sb.path("man/autoctl-signal-validate.1").exists());
    sb.cmd().args(["completions", "tcsh"]).assert().code(2);
}

#[test]
fn help_shows_the_exit_code_table() {
    let sb = Sandbox::new();
    let help = sb.cmd().arg("--help").output().unwrap();
    assert_eq!(help.status.code(), Some(0));
    let text = String::from_utf8(help.stdout).unwrap();
    assert!(text.contains(autoctl::error::EXIT_CODE_TABLE), "{text}");
}

/// Help a person can read: bare `autoctl` is the short grouped usage on stderr (exit 2), the
/// same on stdout when asked (`-h`, `help`); `help COMMAND...` is that command's `--help`; a
/// group without its subcommand shows the group's help, with its line breaks, on stderr.
#[test]
fn help_is_grouped_and_keeps_its_line_breaks() {
    let sb = Sandbox::new();
    let bare = sb.cmd().output().unwrap();
    assert_eq!(bare.status.code(), Some(2));
    assert!(bare.stdout.is_empty());
    let usage = String::from_utf8(bare.stderr).unwrap();
    assert!(usage.lines().count() > 30, "{usage}");
    assert!(
        usage.contains("\nSupervise (a loop running in a tmux pane):\n  run "),
        "{usage}"
    );
    for asked in [&["-h"][..], &["help"][..]] {
        let out = sb.cmd().args(asked).output().unwrap();
        assert_eq!(out.status.code(), Some(0), "{asked:?}");
        assert_eq!(String::from_utf8(out.stdout).unwrap(), usage, "{asked:?}");
        assert!(out.stderr.is_empty());
    }
    let asked = sb.cmd().args(["help", "run", "start"]).output().unwrap();
    let flag = sb.cmd().args(["run", "start", "--help"]).output().unwrap();
    assert_eq!(asked.status.code(), Some(0));
    assert_eq!(asked.stdout, flag.stdout);
    let unknown = sb.cmd().args(["help", "run", "bogus"]).output().unwrap();
    assert_eq!(unknown.status.code(), Some(2));
    assert_eq!(
        String::from_utf8(unknown.stderr).unwrap().lines().count(),
        1,
        "one line naming the command"
    );
    let group = sb.cmd().arg("run").output().unwrap();
    assert_eq!(group.status.code(), Some(2));
    let group = String::from_utf8(group.stderr).unwrap();
    assert!(group.contains("\nCommands:\n  start "), "{group}");
}

#[test]
fn schemas_are_listed_and_shown_verbatim() {
    let sb = Sandbox::new();
    for schema in autoctl::schema::SCHEMAS {
        let shown = sb
            .cmd()
            .args(["schema", "show", schema.name])
            .output()
            .unwrap();
        assert_eq!(
            shown.stdout,
            fs::read(repo("schemas").join(schema.file)).unwrap()
        );
    }
    let listed = sb.cmd().args(["schema", "list"]).output().unwrap();
    assert_eq!(
        String::from_utf8(listed.stdout).unwrap().lines().count(),
        autoctl::schema::SCHEMAS.len()
    );
    sb.cmd().args(["schema", "show", "nope"]).assert().code(2);
}

/// `man autoctl` works after the README's Install steps, in any locale: every page renders
/// with preconv and groff (what `man` runs; groff-base) without a warning, which rules out
/// characters the ASCII device cannot draw (a `…` in a doc comment made `man` complain under
/// LANG=C).
#[test]
fn man_pages_render_without_warnings() {
    let mut pages: Vec<PathBuf> = fs::read_dir(repo("man"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    pages.sort();
    assert!(pages.len() > 50, "{pages:?}");
    for page in pages {
        // What man does under LANG=C: preconv turns UTF-8 into groff escapes, groff draws
        // them for an ASCII terminal.
        let out = std::process::Command::new("bash")
            .args(["-c", "preconv -e UTF-8 \"$0\" | groff -man -Tascii -ww -z"])
            .arg(&page)
            .env_clear()
            .env("PATH", "/usr/bin:/bin")
            .output()
            .expect("bash runs");
        assert!(out.status.success(), "{}: {out:?}", page.display());
        assert_eq!(
            String::from_utf8_lossy(&out.stderr),
            "",
            "{} does not render cleanly",
            page.display()
        );
    }
}

/// The built-in routing tables are compiled in: `src/routing/builtin.rs` is generated from
/// the data files under `tables/` (the default table first, then by name), each of which
/// must be valid by the routing-table schema and named after its file.
#[test]
fn builtin_routing_tables_are_the_data_files() {
    let mut files: Vec<PathBuf> = fs::read_dir(repo("tables"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "json"))
        .collect();
    files.sort_by_key(|p| (p.file_stem().unwrap() != DEFAULT_TABLE, p.clone()));
    let tables: Vec<Table> = files
        .iter()
        .map(|path| {
            let table = routing::parse_table(&fs::read(path).unwrap())
                .unwrap_or_else(|problems| panic!("{}: {problems:?}", path.display()));
            assert_eq!(
                table.name.as_ref(),
                path.file_stem().unwrap().to_str().unwrap(),
                "{} must be named after its file",
                path.display()
            );
            table
        })
        .collect();
    assert_eq!(tables[0].name, DEFAULT_TABLE);
    let mut drift = Vec::new();
    check_file(
        &repo("src/routing/builtin.rs"),
        compiled_tables(&tables).as_bytes(),
        &mut drift,
    );
    fail_on_drift(drift);
    if !updating() {
        assert_eq!(routing::BUILTINS, &tables[..]);
    }
}

/// The Rust source of `src/routing/builtin.rs`: the tables as one static, built from
/// borrowed text, so looking up a built-in table parses nothing.
fn compiled_tables(tables: &[Table]) -> String {
    fn text(s: &str) -> String {
        format!("B({s:?})")
    }
    fn maybe(s: &Option<routing::Text>) -> String {
        s.as_deref()
            .map_or("None".into(), |s| format!("Some({})", text(s)))
    }
    fn texts(list: &[routing::Text]) -> String {
        let items: Vec<String> = list.iter().map(|s| text(s)).collect();
        format!("B(&[{}])", items.join(", "))
    }
    fn rows(out: &mut String, field: &str, rows: Vec<String>) {
        out.push_str(&format!("        {field}: B(&[\n"));
        for row in rows {
            out.push_str(&format!("            {row},\n"));
        }
        out.push_str("        ]),\n");
    }
    let mut out = String::from(
        "//! The built-in routing tables, compiled in. Generated from `tables/*.json` (each valid by\n\
         //! `schemas/routing-table.schema.json`) by `AUTOCTL_UPDATE=1 cargo test --test cli generated`;\n\
         //! a test fails when this file and the data files differ. Do not edit it by hand.\n\
         \n\
         use std::borrow::Cow::Borrowed as B;\n\
         \n\
         use super::{Allowed, Route, StatusEntry, Table};\n\
         \n",
    );
    out.push_str(&format!(
        "#[rustfmt::skip]\npub static TABLES: [Table; {}] = [\n",
        tables.len()
    ));
    for t in tables {
        out.push_str("    Table {\n");
        out.push_str(&format!("        schema: {},\n", maybe(&t.schema)));
        for (field, value) in [
            ("name", &t.name),
            ("description", &t.description),
            ("source", &t.source),
        ] {
            out.push_str(&format!("        {field}: {},\n", text(value)));
        }
        for (field, value) in [
            ("steps", &t.steps),
            ("results", &t.results),
            ("checkpoints", &t.checkpoints),
        ] {
            out.push_str(&format!("        {field}: {},\n", texts(value)));
        }
        rows(
            &mut out,
            "statuses",
            t.statuses
                .iter()
                .map(|e| {
                    format!(
                        "StatusEntry {{ status: {}, phase: {}, next: {}, checkpoint: {}, requires_target: {}, derived_phase: {}, rationale: {} }}",
                        text(&e.status),
                        maybe(&e.phase),
                        text(&e.next),
                        text(&e.checkpoint),
                        e.requires_target,
                        maybe(&e.derived_phase),
                        text(&e.rationale)
                    )
                })
                .collect(),
        );
        out.push_str(&format!(
            "        terminal_statuses: {},\n",
            texts(&t.terminal_statuses)
        ));
        rows(
            &mut out,
            "whitelist",
            t.whitelist
                .iter()
                .map(|a| {
                    format!(
                        "Allowed {{ step: {}, checkpoint: {}, results: {} }}",
                        text(&a.step),
                        text(&a.checkpoint),
                        texts(&a.results)
                    )
                })
                .collect(),
        );
        rows(
            &mut out,
            "routes",
            t.routes
                .iter()
                .map(|r| {
                    format!(
                        "Route {{ step: {}, result: {}, checkpoint: {}, next: {}, next_checkpoint: {}, reject: {}, retry: {:?}, rationale: {} }}",
                        text(&r.step),
                        text(&r.result),
                        maybe(&r.checkpoint),
                        maybe(&r.next),
                        maybe(&r.next_checkpoint),
                        maybe(&r.reject),
                        r.retry,
                        text(&r.rationale)
                    )
                })
                .collect(),
        );
        out.push_str("    },\n");
    }
    out.push_str("];\n");
    out
}

/// Help speaks for itself: no page sends the reader to a seed document (`seed 002`) that
/// ships with no install; the seeds are named in module docs and the docs/ pages instead.
#[test]
fn no_help_page_names_a_seed() {
    let mut found = Vec::new();
    for (name, page) in autoctl::docs::man_pages(autoctl::cli::Cli::command()) {
        let text = String::from_utf8_lossy(&page).to_lowercase();
        for (at, _) in text.match_indices("seed") {
            let after = text[at + 4..].trim_start_matches([' ', '\\', '-']);
            if after.starts_with(|c: char| c.is_ascii_digit()) {
                let line = text[..at].matches('\n').count() + 1;
                found.push(format!("{name}:{line}"));
            }
        }
    }
    assert!(found.is_empty(), "help names a seed: {found:?}");
}

/// Each command says what it does itself: no two pages share a one-line description (a
/// flattened argument struct's doc comment once replaced four hook commands' own).
#[test]
fn every_command_has_its_own_description() {
    let mut seen = std::collections::BTreeMap::<String, Vec<String>>::new();
    for (name, page) in autoctl::docs::man_pages(autoctl::cli::Cli::command()) {
        let text = String::from_utf8_lossy(&page).into_owned();
        let description = text
            .split(".SH NAME\n")
            .nth(1)
            .and_then(|rest| rest.lines().next())
            .and_then(|line| line.split_once(" \\- "))
            .map(|(_, about)| about.to_string())
            .unwrap_or_else(|| panic!("{name}: no NAME section"));
        seen.entry(description).or_default().push(name);
    }
    let shared: Vec<_> = seen.iter().filter(|(_, pages)| pages.len() > 1).collect();
    assert!(shared.is_empty(), "pages sharing a description: {shared:?}");
}

/// `examples/gemini/autoctl.toml` is what `autoctl policy export --gemini` writes for the
/// built-in rules: a change of the destructive set or of the export shows here as drift.
#[test]
fn gemini_policy_export_is_up_to_date() {
    let mut drift = Vec::new();
    let text = autoctl::policy::gemini::export(
        &autoctl::policy::Policy::builtin(),
        "autoctl's built-in rules",
    );
    check_file(
        &repo("examples/gemini/autoctl.toml"),
        text.as_bytes(),
        &mut drift,
    );
    fail_on_drift(drift);
}

/// docs/policy.md's table of built-in rules is `rules/policy.json`'s `rules`, word for word.
#[test]
fn the_policy_rule_table_is_generated_from_rules() {
    let path = repo("docs/policy.md");
    let page = fs::read_to_string(&path).unwrap();
    let generated = autoctl::policy::data::rule_table_in(&page)
        .expect("docs/policy.md has a `| rule | approves |` table ending at the `user:ID` row");
    let mut drift = Vec::new();
    check_file(&path, generated.as_bytes(), &mut drift);
    fail_on_drift(drift);
}
