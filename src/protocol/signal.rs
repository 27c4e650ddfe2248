//! `.auto-signal`: the progress report a loop writes after each step
//! (`{"step","result","next","checkpoint","iteration","timestamp"}`), its whitelists from seed
//! 000, and the checks that go beyond the schema.

use std::path::{Path, PathBuf};

use anyhow::{Context, Result};
use chrono::{DateTime, SecondsFormat, Utc};
use serde::{Deserialize, Serialize};
use serde_json::Value;

pub mod quick;

use super::document::{self, Problem};
use crate::fsx;

/// The file name inside a task module.
pub const FILE_NAME: &str = ".auto-signal";

/// Steps a signal may report (seed 000 whitelist).
pub const STEPS: &[&str] = &["plan", "check", "exec", "merge", "report"];
/// What `next` may be.
pub const NEXTS: &[&str] = &["plan", "check", "exec", "merge", "report", STOP];
/// Results a signal may report; `(step-N)` stands for any `(step-<integer>)`.
pub const RESULTS: &[&str] = &[
    "PASS",
    "NEEDS_REVISION",
    "ACCEPT",
    "NEEDS_FIX",
    "REPLAN",
    "BLOCKED",
    "CONTINUE",
    "(generated)",
    "(annotations)",
    "(done)",
    "(mid-exec)",
    STEP_N,
    "(blocked)",
    "success",
    "conflict",
];
/// Checkpoints (the empty string means none).
pub const CHECKPOINTS: &[&str] = &["", "post-plan", "mid-exec", "post-exec"];

const WHITELISTS: &[(&str, &[&str])] = &[
    ("/step", STEPS),
    ("/result", RESULTS),
    ("/next", NEXTS),
    ("/checkpoint", CHECKPOINTS),
];

/// The schema's `maximum` for `iteration`: 2^53 - 1, the largest integer every JSON reader
/// keeps exactly.
pub const MAX_ITERATION: u64 = (1 << 53) - 1;

/// The `next` value that ends a loop.
pub const STOP: &str = "(stop)";
/// The family name of the `(step-<N>)` results.
pub const STEP_N: &str = "(step-N)";

/// A valid `.auto-signal` document.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Signal {
    pub step: String,
    pub result: String,
    pub next: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub checkpoint: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub iteration: Option<u64>,
    pub timestamp: String,
}

impl Signal {
    /// The checkpoint, with "absent" read as "none".
    pub fn checkpoint_or_empty(&self) -> &str {
        self.checkpoint.as_deref().unwrap_or("")
    }

    /// The signal's timestamp as a UTC instant (always parseable once validated).
    pub fn time(&self) -> Option<DateTime<Utc>> {
        crate::time::parse_time(&self.timestamp)
    }

    /// Serialize as the file stores it: one JSON object and a newline.
    pub fn to_document(&self) -> Vec<u8> {
        let mut bytes = serde_json::to_vec_pretty(self).expect("a signal always serializes");
        bytes.push(b'\n');
        bytes
    }
}

/// Map a concrete result to the name the whitelists and tables use: `(step-12)` → `(step-N)`.
pub fn result_family(result: &str) -> &str {
    if is_step_n(result) { STEP_N } else { result }
}

fn is_step_n(result: &str) -> bool {
    result
        .strip_prefix("(step-")
        .and_then(|rest| rest.strip_suffix(')'))
        .is_some_and(|digits| {
            !digits.is_empty()
                && digits.len() <= 9
                && digits.bytes().all(|b| b.is_ascii_digit())
                && (digits == "0" || !digits.starts_with('0'))
        })
}

/// Whether `result` is in the whitelist, where `(step-N)` stands for `(step-0)`, `(step-1)`, …
/// and is not itself a result (the schema refuses it).
pub fn is_known_result(result: &str) -> bool {
    is_step_n(result) || (result != STEP_N && RESULTS.contains(&result))
}

/// Validate the bytes of a signal: JSON, schema, then the checks the schema cannot express.
pub fn parse(bytes: &[u8]) -> Result<Signal, Vec<Problem>> {
    if let Some(text) = quick::signal_text(bytes) {
        return Ok(text.to_signal());
    }
    parse_in_full(bytes)
}

/// [`parse`] when only the verdict is wanted: a valid signal is read without a single
/// allocation.
pub fn check(bytes: &[u8]) -> Result<(), Vec<Problem>> {
    if quick::signal_text(bytes).is_some() {
        return Ok(());
    }
    parse_in_full(bytes).map(drop)
}

/// [`parse`] without the quick path: what decides, and words the problems of, every document
/// the quick path leaves.
pub(crate) fn parse_in_full(bytes: &[u8]) -> Result<Signal, Vec<Problem>> {
    let value = document::parse_with_quick_schema(bytes, "auto-signal", quick::proves_valid)
        .map_err(|problems| {
            let doc = document::parse_json(bytes).unwrap_or(Value::Null);
            document::explain_whitelists(problems, &doc, WHITELISTS)
        })?;
    let problems = semantic_problems(&value);
    if !problems.is_empty() {
        return Err(problems);
    }
    // From the value: parse_json already refused duplicated keys, so one parse of the text is
    // enough.
    document::typed_from_value(&value)
}

fn semantic_problems(value: &Value) -> Vec<Problem> {
    let mut problems = Vec::new();
    if let Some(timestamp) = value.get("timestamp").and_then(Value::as_str)
        && let Err(err) = DateTime::parse_from_rfc3339(timestamp)
    {
        problems.push(Problem::at(
            "/timestamp",
            format!("{timestamp:?} is not an RFC 3339 timestamp: {err}"),
        ));
    }
    if let Some(iteration) = value.get("iteration")
        && iteration.as_u64().is_none()
    {
        problems.push(Problem::at(
            "/iteration",
            format!("{iteration} must be written as a whole number (no fraction or exponent)"),
        ));
    }
    problems
}

/// The path of the signal file of a task module.
pub fn path_in(dir: &Path) -> PathBuf {
    dir.join(FILE_NAME)
}

/// What reading a module's signal found.
#[derive(Debug)]
pub enum Read {
    Missing,
    Invalid(Vec<Problem>),
    Valid(Signal),
}

/// Read and validate `DIR/.auto-signal`. I/O failures other than "not found" are errors.
pub fn read(dir: &Path) -> Result<Read> {
    let path = path_in(dir);
    let bounded = match fsx::read_bounded(&path, fsx::DOCUMENT_LIMIT) {
        Ok(bounded) => bounded,
        Err(err) if err.kind() == std::io::ErrorKind::NotFound => return Ok(Read::Missing),
        Err(err) => return Err(err).with_context(|| format!("cannot read {}", path.display())),
    };
    let bytes = match document::bounded_bytes(bounded) {
        Ok(bytes) => bytes,
        Err(problem) => return Ok(Read::Invalid(vec![problem])),
    };
    Ok(match parse(&bytes) {
        Ok(signal) => Read::Valid(signal),
        Err(problems) => Read::Invalid(problems),
    })
}

/// Write a signal into `dir` atomically.
pub fn write(dir: &Path, signal: &Signal) -> Result<()> {
    fsx::require_dir(dir)?;
    fsx::atomic_write(&path_in(dir), &signal.to_document())
}

/// A fingerprint of one signal file: `{xxh3 of the content}-{mtime}.{nanoseconds}@{device}:{inode}`.
///
/// The part before `@` says which signal it is (a rewrite with equal content is still a new
/// signal: its time stamp moved); the part after says which file holds it, so the tick
/// removes exactly the file it read and never a newer one written over it. Rows stored
/// before the file identity was recorded hold only the first part ([`same_signal`]).
pub fn fingerprint(bytes: &[u8], meta: &std::fs::Metadata) -> String {
    use std::os::unix::fs::MetadataExt;
    format!(
        "{:016x}-{}.{:09}@{:x}:{:x}",
        xxhash_rust::xxh3::xxh3_64(bytes),
        meta.mtime(),
        meta.mtime_nsec(),
        meta.dev(),
        meta.ino()
    )
}

/// The part of a fingerprint that names the signal (content and time stamp).
pub fn signal_part(fingerprint: &str) -> &str {
    fingerprint
        .split_once('@')
        .map_or(fingerprint, |(signal, _)| signal)
}

/// Do two fingerprints name the same signal (content and time stamp; the file identity is
/// not part of it, so a row written before it was recorded still knows its signal)?
pub fn same_signal(a: &str, b: &str) -> bool {
    signal_part(a) == signal_part(b)
}

/// Is the file with fingerprint `current` the one `seen` names: the same signal and, when
/// both record it, the same file?
fn same_file(seen: &str, current: &str) -> bool {
    match (seen.split_once('@'), current.split_once('@')) {
        (Some(_), Some(_)) => seen == current,
        _ => same_signal(seen, current),
    }
}

/// A signal file read whole (up to [`fsx::DOCUMENT_LIMIT`]) with the fingerprint of the
/// very file the bytes came from. `Ok(None)` when there is no file.
pub fn read_file(path: &Path) -> std::io::Result<Option<(fsx::Bounded, String)>> {
    let file = match fsx::open_regular(path) {
        Ok(file) => file,
        Err(err) if err.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(err) => return Err(err),
    };
    let meta = file.metadata()?;
    let bounded = fsx::read_bounded_sized(file, fsx::DOCUMENT_LIMIT, meta.len())?;
    let bytes: &[u8] = match &bounded {
        fsx::Bounded::Complete(bytes) => bytes,
        fsx::Bounded::TooLarge { .. } => &[],
    };
    let fingerprint = fingerprint(bytes, &meta);
    Ok(Some((bounded, fingerprint)))
}

/// What [`consume`] did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Consumed {
    /// The signal the fingerprint names was removed.
    Removed,
    /// No signal file was there.
    Missing,
    /// Another signal is there (written after the one decided on): it was left in place.
    Newer,
}

/// Remove the signal file `seen` names from `dir`, and nothing else: the one signal a tick
/// decided on, never a newer one a step wrote meanwhile.
///
/// There is no "unlink this file only if it is still the one at this name" in POSIX, and a
/// check followed by `unlink(2)` removes whatever a concurrent writer renamed into place in
/// between (a step that signals fast, a delayed unlink). So the file is renamed aside first —
/// one atomic step that takes exactly one file off the name — and the file taken is checked:
/// when it is the one decided on it is removed; when it is not (a newer signal arrived in the
/// instant between the check and the rename) it is linked back under its name, unless an even
/// newer signal is already there, which replaced it as any rename-based write would have.
///
/// The aside name is a temporary-file name of [`fsx::atomic_write`] (`..auto-signal.XXXXXX.tmp`),
/// so a consumer killed in between leaves a file the next write into the directory sweeps
/// (and `lint` reports). The one loss left needs two misfortunes in the same microseconds: a
/// newer signal renamed into place between the check and the rename, and the consumer killed
/// before it linked that signal back.
pub fn consume(dir: &Path, seen: &str) -> Result<Consumed> {
    consume_with(dir, seen, || {})
}

/// [`consume`], calling `between` after the check and before the rename (tests put a
/// concurrent writer there).
fn consume_with(dir: &Path, seen: &str, between: impl FnOnce()) -> Result<Consumed> {
    let path = path_in(dir);
    let what = || format!("cannot remove {}", path.display());
    let Some((_, current)) = read_file(&path).with_context(what)? else {
        return Ok(Consumed::Missing);
    };
    if !same_file(seen, &current) {
        return Ok(Consumed::Newer);
    }
    between();
    let aside = dir.join(aside_name());
    match std::fs::rename(&path, &aside) {
        Ok(()) => {}
        Err(err) if err.kind() == std::io::ErrorKind::NotFound => return Ok(Consumed::Missing),
        Err(err) => return Err(err).with_context(what),
    }
    crate::failpoint::hit("signal-consume-aside");
    let taken = read_file(&aside).with_context(what)?;
    let ours = taken.as_ref().is_some_and(|(_, taken)| *taken == current);
    if !ours && taken.is_some() {
        // Not the file decided on: give it back its name, unless a newer one has it now.
        match std::fs::hard_link(&aside, &path) {
            Ok(()) => {}
            Err(err) if err.kind() == std::io::ErrorKind::AlreadyExists => {}
            Err(err) => {
                return Err(err).with_context(|| {
                    format!(
                        "cannot put a newer signal back at {} (it is at {})",
                        path.display(),
                        aside.display()
                    )
                });
            }
        }
    }
    fsx::remove_if_exists(&aside)?;
    Ok(match (ours, taken.is_some()) {
        (true, _) => Consumed::Removed,
        (false, true) => Consumed::Newer,
        // Gone before it could be checked: the next write's sweep took it as a leftover,
        // which only a file with a time stamp over a minute old is (the one read, not a new one).
        (false, false) => Consumed::Missing,
    })
}

/// A fresh temporary-file name for a signal taken aside (see [`fsx::is_temp_name`]).
fn aside_name() -> String {
    use std::sync::atomic::{AtomicU64, Ordering};
    static COUNTER: AtomicU64 = AtomicU64::new(0);
    const ALPHABET: &[u8] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap_or_default()
        .as_nanos();
    let seed = format!(
        "{}:{nanos}:{}",
        std::process::id(),
        COUNTER.fetch_add(1, Ordering::Relaxed)
    );
    let mut hash = xxhash_rust::xxh3::xxh3_64(seed.as_bytes());
    let mut random = String::with_capacity(6);
    for _ in 0..6 {
        random.push(ALPHABET[(hash % 62) as usize] as char);
        hash /= 62;
    }
    format!(".{FILE_NAME}.{random}.tmp")
}

/// The timestamp format every document autoctl writes uses: RFC 3339, UTC, whole seconds.
pub fn now_timestamp(now: DateTime<Utc>) -> String {
    now.to_rfc3339_opts(SecondsFormat::Secs, true)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn doc(json: &str) -> Result<Signal, Vec<Problem>> {
        parse(json.as_bytes())
    }

    #[test]
    fn whitelists_agree_with_the_schema() {
        let schema: Value =
            serde_json::from_str(crate::schema::find("auto-signal").unwrap().text).unwrap();
        let enum_of = |pointer: &str| -> Vec<String> {
            schema
                .pointer(pointer)
                .unwrap()
                .as_array()
                .unwrap()
                .iter()
                .map(|v| v.as_str().unwrap().to_string())
                .collect()
        };
        assert_eq!(enum_of("/properties/step/enum"), STEPS);
        assert_eq!(enum_of("/properties/next/enum"), NEXTS);
        assert_eq!(enum_of("/properties/checkpoint/enum"), CHECKPOINTS);
        let mut results = enum_of("/properties/result/anyOf/0/enum");
        results.push(STEP_N.to_string());
        let mut expected: Vec<String> = RESULTS.iter().map(|r| r.to_string()).collect();
        results.sort();
        expected.sort();
        assert_eq!(results, expected);
    }

    #[test]
    fn step_n_family() {
        assert_eq!(result_family("(step-3)"), STEP_N);
        assert_eq!(result_family("(step-0)"), STEP_N);
        assert_eq!(result_family("(step-03)"), "(step-03)");
        assert_eq!(result_family("(step-)"), "(step-)");
        assert_eq!(result_family("PASS"), "PASS");
    }

    #[test]
    fn v1_and_v2_signals_are_valid() {
        doc(r#"{"step":"check","result":"PASS","next":"exec","timestamp":"2024-01-01T00:00:00Z"}"#)
            .unwrap();
        let v2 = doc(r#"{"step":"exec","result":"(step-4)","next":"exec","checkpoint":"","iteration":3,"timestamp":"2024-01-01T00:00:00+02:00"}"#).unwrap();
        assert_eq!(v2.iteration, Some(3));
    }

    #[test]
    fn fractional_iteration_is_explained() {
        let problems = doc(r#"{"step":"plan","result":"(generated)","next":"check","iteration":3.0,"timestamp":"2024-01-01T00:00:00Z"}"#).unwrap_err();
        assert_eq!(problems.len(), 1);
        assert!(problems[0].message.contains("whole number"), "{problems:?}");
    }

    /// Write a signal document the way a step does (rename over the name); its fingerprint.
    fn step_writes(dir: &Path, iteration: u64) -> String {
        let doc = format!(
            r#"{{"step":"check","result":"PASS","next":"exec","iteration":{iteration},"timestamp":"2024-01-01T00:00:00Z"}}"#
        );
        fsx::atomic_write_volatile(&path_in(dir), doc.as_bytes()).unwrap();
        read_file(&path_in(dir)).unwrap().unwrap().1
    }

    fn on_disk(dir: &Path) -> Option<String> {
        read_file(&path_in(dir)).unwrap().map(|(_, fp)| fp)
    }

    fn leftovers(dir: &Path) -> Vec<String> {
        std::fs::read_dir(dir)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .filter(|name| name != FILE_NAME)
            .collect()
    }

    #[test]
    fn consume_removes_the_signal_read_and_only_it() {
        let dir = tempfile::tempdir().unwrap();
        assert_eq!(consume(dir.path(), "x").unwrap(), Consumed::Missing);
        let first = step_writes(dir.path(), 1);
        assert_eq!(consume(dir.path(), &first).unwrap(), Consumed::Removed);
        assert_eq!(on_disk(dir.path()), None);
        // A newer signal (other content, or the same content written again) stays.
        let old = step_writes(dir.path(), 1);
        let newer = step_writes(dir.path(), 2);
        assert_eq!(consume(dir.path(), &old).unwrap(), Consumed::Newer);
        assert_eq!(on_disk(dir.path()), Some(newer.clone()));
        std::thread::sleep(std::time::Duration::from_millis(5));
        let same_content = step_writes(dir.path(), 2);
        assert_ne!(same_content, newer, "a rewrite is a new signal");
        assert_eq!(consume(dir.path(), &newer).unwrap(), Consumed::Newer);
        // A row stored before fingerprints named the file: content and time stamp decide.
        let legacy = signal_part(&same_content).to_string();
        assert!(same_signal(&legacy, &same_content));
        assert_eq!(consume(dir.path(), &legacy).unwrap(), Consumed::Removed);
        assert_eq!(leftovers(dir.path()), Vec::<String>::new());
    }

    #[test]
    fn an_equal_copy_in_another_file_is_not_the_signal_read() {
        let dir = tempfile::tempdir().unwrap();
        let seen = step_writes(dir.path(), 1);
        // `cp -p`: the same bytes and time stamp in a new file (a new inode).
        let path = path_in(dir.path());
        let bytes = std::fs::read(&path).unwrap();
        let modified = std::fs::metadata(&path).unwrap().modified().unwrap();
        let copy = dir.path().join("copy");
        std::fs::write(&copy, &bytes).unwrap();
        std::fs::File::options()
            .write(true)
            .open(&copy)
            .unwrap()
            .set_modified(modified)
            .unwrap();
        std::fs::rename(&copy, &path).unwrap();
        let now = on_disk(dir.path()).unwrap();
        assert!(same_signal(&seen, &now) && seen != now, "{seen} {now}");
        assert_eq!(consume(dir.path(), &seen).unwrap(), Consumed::Newer);
        assert_eq!(on_disk(dir.path()), Some(now));
    }

    /// The delay-injection run of `bench/faults.sh` (issue 23 item 2: "0 lost signals in
    /// 10,000 delayed unlinks"), small here and sized by `AUTOCTL_BENCH_UNLINKS` there. Each
    /// consume is delayed in-process between its check and its rename — the window a delayed
    /// `unlink(2)` opened in the old check-then-unlink — by `AUTOCTL_BENCH_DELAY_US`, while a
    /// step writes the next signal at a pseudo-random moment in twice that window (before the
    /// check, inside the window, or after the rename). The next signal must be on disk every
    /// time. The same schedule is run through the old check-then-unlink as a control, to show
    /// the run can see a loss.
    #[test]
    #[allow(clippy::print_stdout)] // the benchmark's report
    fn delayed_consumes_lose_no_signal() {
        let env = |name: &str, default: u64| {
            std::env::var(name)
                .ok()
                .and_then(|v| v.parse().ok())
                .unwrap_or(default)
        };
        let rounds = env("AUTOCTL_BENCH_UNLINKS", 100);
        let delay = std::time::Duration::from_micros(env("AUTOCTL_BENCH_DELAY_US", 300));
        let iteration_on_disk = |dir: &Path| -> Option<u64> {
            let bytes = std::fs::read(path_in(dir)).ok()?;
            let value: Value = serde_json::from_slice(&bytes).ok()?;
            value["iteration"].as_u64()
        };
        let run = |naive: bool| -> u64 {
            let dir = tempfile::tempdir().unwrap();
            let mut seen = step_writes(dir.path(), 0);
            let mut lost = 0;
            for i in 0..rounds {
                let offset = xxhash_rust::xxh3::xxh3_64(&i.to_le_bytes())
                    % (2 * delay.as_micros() as u64 + 1);
                let step = {
                    let dir = dir.path().to_path_buf();
                    std::thread::spawn(move || {
                        std::thread::sleep(std::time::Duration::from_micros(offset));
                        // Written as a step writes it; not read back (a consume may have
                        // taken it aside this instant).
                        let doc = format!(
                            r#"{{"step":"check","result":"PASS","next":"exec","iteration":{},"timestamp":"2024-01-01T00:00:00Z"}}"#,
                            i + 1
                        );
                        fsx::atomic_write_volatile(&path_in(&dir), doc.as_bytes()).unwrap();
                    })
                };
                if naive {
                    // The old way: check, then unlink whatever is at the name.
                    if on_disk(dir.path()).is_some_and(|now| same_file(&seen, &now)) {
                        std::thread::sleep(delay);
                        let _ = std::fs::remove_file(path_in(dir.path()));
                    }
                } else {
                    consume_with(dir.path(), &seen, || std::thread::sleep(delay)).unwrap();
                }
                step.join().unwrap();
                if iteration_on_disk(dir.path()) != Some(i + 1) {
                    lost += 1;
                    step_writes(dir.path(), i + 1);
                }
                seen = on_disk(dir.path()).unwrap();
            }
            lost
        };
        let lost = run(false);
        let control = run(true);
        if std::env::var_os("AUTOCTL_BENCH_UNLINKS").is_some() {
            println!(
                "delay-injection: {rounds} consumes delayed {} us between check and rename, the step's signal at a random moment: lost {lost}; the old check-then-unlink on the same schedule: lost {control}",
                delay.as_micros()
            );
        }
        assert_eq!(lost, 0, "signals lost in {rounds} delayed consumes");
    }

    proptest::proptest! {
        /// Whatever a concurrent step writes, and whenever (before the check, in the instant
        /// between the check and the rename, or not at all), the signal consumed is exactly
        /// the one decided on: a newer signal is never lost, and nothing is left behind.
        #[test]
        fn consume_never_removes_a_newer_signal(
            before in proptest::bool::ANY,
            between in 0usize..3,
        ) {
            let dir = tempfile::tempdir().unwrap();
            let seen = step_writes(dir.path(), 1);
            let mut newest = seen.clone();
            if before {
                newest = step_writes(dir.path(), 2);
            }
            let mut written = Vec::new();
            let consumed = consume_with(dir.path(), &seen, || {
                for i in 0..between {
                    written.push(step_writes(dir.path(), 10 + i as u64));
                }
            })
            .unwrap();
            if let Some(last) = written.last() {
                newest = last.clone();
            }
            if newest == seen {
                proptest::prop_assert_eq!(consumed, Consumed::Removed);
                proptest::prop_assert_eq!(on_disk(dir.path()), None);
            } else {
                proptest::prop_assert_eq!(consumed, Consumed::Newer);
                proptest::prop_assert_eq!(on_disk(dir.path()), Some(newest));
            }
            proptest::prop_assert_eq!(leftovers(dir.path()), Vec::<String>::new());
        }
    }
}
