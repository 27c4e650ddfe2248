//! A fleet on one shared registry (issue 25, item 3): three "hosts" on this machine — each its
//! own `AUTOCTL_HOST`, tmux server and state dir — share a real PostgreSQL server started by
//! the test (`initdb` into a temp dir as an unprivileged user, `pg_ctl start` on a private
//! port and a socket dir of its own, stopped at the end) with `--registry postgres://…`; the
//! same test runs on one SQLite file the hosts share, so both backends keep one contract.
//! Each host ticks only its own runs (a Claude Code stand-in in a real tmux pane, dispatch
//! mode), one status line paces the whole account, a reset releases at most the burst across
//! hosts, any host stops any run, a silent host is host-lost once. Every clock is
//! `AUTOCTL_NOW`.

use std::fs;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use serde_json::Value;

use crate::dispatch::{prompts, session, session_with};
use crate::run_tick::task;
use crate::tmuxfix::wait_for;
use crate::typed_tick::pane_env;
use crate::util::{NOBODY, Sandbox, as_user, is_root, json_lines, stdout};

/// What the fleet tests need when PostgreSQL is missing.
const INSTALL: &str =
    "the fleet tests need a real PostgreSQL: apt-get install postgresql (initdb and pg_ctl)";

/// A PostgreSQL server of this test's own, stopped (immediately) when dropped.
pub struct Pg {
    dir: tempfile::TempDir,
    bin: PathBuf,
    pub url: String,
}

/// Where `initdb` and `pg_ctl` are: on PATH, else Debian's versioned directory. `None` only
/// where they cannot be had at all (no apt-get either): the caller says so loudly and skips.
/// Where apt-get is, a missing server fails the test (`.ci/run` installs it).
fn pg_bin() -> Option<PathBuf> {
    if let Ok(found) = which_in_path("initdb") {
        return Some(found.parent().unwrap().to_path_buf());
    }
    let mut versions: Vec<PathBuf> = fs::read_dir("/usr/lib/postgresql")
        .map(|d| {
            d.filter_map(|e| e.ok())
                .map(|e| e.path().join("bin"))
                .collect()
        })
        .unwrap_or_default();
    versions.sort();
    let found = versions
        .into_iter()
        .rev()
        .find(|b| b.join("initdb").exists() && b.join("pg_ctl").exists());
    if found.is_none() && which_in_path("apt-get").is_ok() {
        panic!("{INSTALL}");
    }
    found
}

fn which_in_path(name: &str) -> Result<PathBuf, ()> {
    std::env::var_os("PATH")
        .and_then(|path| {
            std::env::split_paths(&path)
                .map(|dir| dir.join(name))
                .find(|p| p.is_file())
        })
        .ok_or(())
}

impl Pg {
    /// A new server, or `None` (said on stderr) where PostgreSQL cannot be installed.
    pub fn start() -> Option<Pg> {
        Pg::start_with(false)
    }

    /// A new server that takes TCP connections over TLS only (`hostssl` in `pg_hba.conf`, a
    /// plain one is rejected), with a certificate for 127.0.0.1 from a CA made for it: the
    /// CA's certificate is `tls/ca.crt` ([`Pg::file`]).
    pub fn start_tls() -> Option<Pg> {
        Pg::start_with(true)
    }

    /// A file of this server's directory.
    pub fn file(&self, name: &str) -> PathBuf {
        self.dir.path().join(name)
    }

    /// This server's URL with its query (`sslmode=disable`) replaced by `query`, its host by
    /// `host`.
    pub fn url_with(&self, host: &str, query: &str) -> String {
        self.url
            .replacen("?sslmode=disable", &format!("?{query}"), 1)
            .replacen("@127.0.0.1:", &format!("@{host}:"), 1)
    }

    #[allow(clippy::print_stderr)] // a skipped test says so
    fn start_with(tls: bool) -> Option<Pg> {
        let Some(bin) = pg_bin() else {
            eprintln!(
                "\n*** SKIPPED: no PostgreSQL here and no apt-get to install it; {INSTALL} ***\n"
            );
            return None;
        };
        let dir = tempfile::Builder::new()
            .prefix("autoctl-pg-")
            .tempdir()
            .unwrap();
        fs::set_permissions(dir.path(), fs::Permissions::from_mode(0o755)).unwrap();
        let data = dir.path().join("data");
        let sockets = dir.path().join("run");
        fs::create_dir(&sockets).unwrap();
        if is_root() {
            // PostgreSQL refuses to run as root: the server is nobody's.
            for path in [dir.path(), sockets.as_path()] {
                std::os::unix::fs::chown(path, Some(65534), Some(65534)).unwrap();
            }
        }
        let out = pg_command(&bin, "initdb")
            .args([
                "--auth=trust",
                "--username=autoctl",
                "--no-sync",
                "-E",
                "UTF8",
                "-D",
            ])
            .arg(&data)
            .output()
            .unwrap_or_else(|err| panic!("initdb: {err}; {INSTALL}"));
        assert!(out.status.success(), "initdb: {out:?}");
        let port = free_port();
        let mut options = format!(
            "-c listen_addresses=127.0.0.1 -p {port} -k {} -c fsync=off -c max_connections=60",
            sockets.display()
        );
        if tls {
            let certs = dir.path().join("tls");
            make_certificates(&certs);
            if is_root() {
                for file in ["server.key", "server.crt"] {
                    std::os::unix::fs::chown(certs.join(file), Some(65534), Some(65534)).unwrap();
                }
            }
            options.push_str(&format!(
                " -c ssl=on -c ssl_cert_file={0}/server.crt -c ssl_key_file={0}/server.key",
                certs.display()
            ));
            fs::write(
                data.join("pg_hba.conf"),
                "local all all trust\nhostssl all all 127.0.0.1/32 trust\nhostnossl all all 127.0.0.1/32 reject\n",
            )
            .unwrap();
        }
        let out = pg_command(&bin, "pg_ctl")
            .args(["-w", "-t", "60", "-D"])
            .arg(&data)
            .args(["-l"])
            .arg(dir.path().join("server.log"))
            .args(["-o", &options, "start"])
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "pg_ctl start: {out:?}\n{}",
            fs::read_to_string(dir.path().join("server.log")).unwrap_or_default()
        );
        let url = format!("postgres://autoctl@127.0.0.1:{port}/postgres?sslmode=disable");
        Some(Pg { dir, bin, url })
    }
}

impl Pg {
    /// From now on a TCP connection must give `password` (scram-sha-256) for the role
    /// `autoctl`, as a real server's `pg_hba.conf` asks; the socket dir stays trusted. Returns
    /// once the server refuses a connection without it (a reload is a signal: no sleep).
    pub fn require_password(&self, password: &str) {
        let mut client = postgres::Client::connect(&self.url, postgres::NoTls).unwrap();
        client
            .batch_execute(&format!("ALTER ROLE autoctl PASSWORD '{password}'"))
            .unwrap();
        let data = self.dir.path().join("data");
        fs::write(
            data.join("pg_hba.conf"),
            "local all all trust\nhost all all 127.0.0.1/32 scram-sha-256\n",
        )
        .unwrap();
        let out = pg_command(&self.bin, "pg_ctl")
            .args(["-D"])
            .arg(&data)
            .arg("reload")
            .output()
            .unwrap();
        assert!(out.status.success(), "pg_ctl reload: {out:?}");
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(30);
        while postgres::Client::connect(&self.url, postgres::NoTls).is_ok() {
            assert!(
                std::time::Instant::now() < deadline,
                "the server still lets a connection in without a password"
            );
            std::thread::sleep(std::time::Duration::from_millis(50));
        }
    }

    /// What the server logged so far (its deadlock reports among it).
    pub fn log(&self) -> String {
        fs::read_to_string(self.dir.path().join("server.log")).unwrap_or_default()
    }

    /// This server's URL with `password` in it (for the test's own client).
    pub fn url_with_password(&self, password: &str) -> String {
        self.url.replacen(
            "postgres://autoctl@",
            &format!("postgres://autoctl:{password}@"),
            1,
        )
    }
}

impl Drop for Pg {
    fn drop(&mut self) {
        let _ = pg_command(&self.bin, "pg_ctl")
            .args(["-D"])
            .arg(self.dir.path().join("data"))
            .args(["-m", "immediate", "stop"])
            .output();
    }
}

/// In `dir`: a CA (`ca.crt`, `ca.key`), a server certificate it signed for IP 127.0.0.1 only
/// (`server.crt`, `server.key`, readable by its owner only, as PostgreSQL insists), and a CA
/// that signed nothing here (`other-ca.crt`). Made with the `openssl` command.
fn make_certificates(dir: &Path) {
    fs::create_dir_all(dir).unwrap();
    let openssl = |args: &[&str]| {
        let out = Command::new("openssl")
            .args(args)
            .current_dir(dir)
            .output()
            .unwrap_or_else(|err| {
                panic!("openssl: {err} (the TLS tests need the openssl command)")
            });
        assert!(out.status.success(), "openssl {args:?}: {out:?}");
    };
    let ec = [
        "-newkey",
        "ec",
        "-pkeyopt",
        "ec_paramgen_curve:prime256v1",
        "-nodes",
    ];
    for ca in ["ca", "other-ca"] {
        let (key, crt, subj) = (
            format!("{ca}.key"),
            format!("{ca}.crt"),
            format!("/CN=autoctl test {ca}"),
        );
        let mut args = vec!["req", "-x509", "-days", "3650", "-subj", &subj];
        args.extend(ec);
        args.extend(["-keyout", &key, "-out", &crt]);
        openssl(&args);
    }
    let mut args = vec![
        "req",
        "-subj",
        "/CN=autoctl test server",
        "-keyout",
        "server.key",
        "-out",
        "server.csr",
    ];
    args.extend(ec);
    openssl(&args);
    fs::write(
        dir.join("server.ext"),
        "basicConstraints=CA:FALSE\nkeyUsage=digitalSignature\nextendedKeyUsage=serverAuth\nsubjectAltName=IP:127.0.0.1\n",
    )
    .unwrap();
    openssl(&[
        "x509",
        "-req",
        "-in",
        "server.csr",
        "-CA",
        "ca.crt",
        "-CAkey",
        "ca.key",
        "-CAcreateserial",
        "-days",
        "3650",
        "-extfile",
        "server.ext",
        "-out",
        "server.crt",
    ]);
    fs::set_permissions(dir.join("server.key"), fs::Permissions::from_mode(0o600)).unwrap();
}

/// `initdb` or `pg_ctl`, as nobody when the tests run as root.
fn pg_command(bin: &Path, program: &str) -> Command {
    let path = bin.join(program);
    let mut cmd = if is_root() {
        as_user(NOBODY, path)
    } else {
        Command::new(path)
    };
    // The server is the test's ground, not the code under test: under `.ci/run`'s year-ahead
    // pass libfaketime is preloaded into every child, and a faked server's timers never fire,
    // so its deadlock check never runs and two ticks that wait on each other wait forever.
    cmd.current_dir("/")
        .env("LC_ALL", "C")
        .env_remove("LD_PRELOAD")
        .env_remove("FAKETIME");
    cmd
}

/// A TCP port nothing listens on now.
fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

/// Where the hosts' shared registry is.
enum Shared<'a> {
    /// One PostgreSQL database (`AUTOCTL_REGISTRY`).
    Postgres(&'a Pg),
    /// One SQLite file: the hosts share its state dir.
    File(&'a Path),
}

/// One host of the fleet: its own sandbox (tmux server, state dir unless the registry file
/// is shared), its name, the shared registry.
struct Host<'a> {
    name: &'static str,
    sb: Sandbox,
    shared: &'a Shared<'a>,
}

/// 2026-11-26T08:00:00Z plus seconds.
const T0: i64 = 1_795_680_000;

fn at(secs: i64) -> String {
    chrono::DateTime::from_timestamp(T0 + secs, 0)
        .unwrap()
        .to_rfc3339_opts(chrono::SecondsFormat::Millis, true)
}

/// A recorded Claude Code status line (subscription mode) with its 5-hour window set.
fn statusline(five_hour: f64, reset_in: i64) -> Vec<u8> {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/hook/claude-code/reference/statusline-subscription.json");
    let mut payload: Value = serde_json::from_slice(&fs::read(path).unwrap()).unwrap();
    payload["rate_limits"]["five_hour"]["used_percentage"] = five_hour.into();
    payload["rate_limits"]["five_hour"]["resets_at"] = (T0 + reset_in).into();
    payload["rate_limits"]["seven_day"]["used_percentage"] = 20.into();
    payload["rate_limits"]["seven_day"]["resets_at"] = (T0 + 5 * 86_400).into();
    serde_json::to_vec(&payload).unwrap()
}

impl Host<'_> {
    fn cmd(&self, secs: i64) -> Command {
        let mut cmd = self.sb.std_cmd();
        match self.shared {
            Shared::Postgres(pg) => cmd.env("AUTOCTL_REGISTRY", &pg.url),
            Shared::File(dir) => cmd.env("AUTOCTL_STATE_DIR", dir),
        };
        cmd.env("AUTOCTL_HOST", self.name)
            .env("AUTOCTL_NOW", at(secs));
        cmd
    }

    fn run(&self, secs: i64, args: &[&str]) -> Output {
        self.cmd(secs).args(args).output().unwrap()
    }

    /// A dispatch run of account `team` in this host's own tmux server, its stand-in agent
    /// idle at its prompt: the pane and the log of the prompts typed into it.
    fn start(&self, session_name: &str) -> (String, PathBuf, PathBuf) {
        self.start_with(session_name, &[])
    }

    /// [`Host::start`] with more `NAME=value` words in the agent's environment.
    fn start_with(&self, session_name: &str, extra: &[&str]) -> (String, PathBuf, PathBuf) {
        let dir = task(&self.sb, session_name);
        let (pane, log) = session_with(&self.sb, session_name, extra);
        let out = self
            .cmd(0)
            .args([
                "run",
                "start",
                "--session",
                session_name,
                "--mode",
                "dispatch",
            ])
            .args(["--account", "team", "--launch", "--timeout", "1d", "--task"])
            .arg(&dir)
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(0), "{out:?}");
        wait_for(&self.sb, &pane, "the agent's input box", |screen, _| {
            screen.contains("? for shortcuts")
        });
        (pane, log, dir)
    }

    /// `autoctl statusline` run from the agent's pane, as Claude Code runs it.
    fn statusline(&self, pane: &str, secs: i64, payload: &[u8]) {
        use std::io::Write;
        let (tmux_var, pane_id) = pane_env(&self.sb, pane);
        let mut child = self
            .cmd(secs)
            .env("TMUX", tmux_var)
            .env("TMUX_PANE", pane_id)
            .arg("statusline")
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        child.stdin.take().unwrap().write_all(payload).unwrap();
        let out = child.wait_with_output().unwrap();
        assert!(out.status.success(), "{out:?}");
    }

    fn tick(&self, secs: i64) -> Vec<Value> {
        let out = self.run(secs, &["run", "tick", "--all", "--host-lease", "2m"]);
        assert_eq!(out.status.code(), Some(0), "{}: {out:?}", self.name);
        let events = json_lines(&out);
        for event in &events {
            let violations = autoctl::schema::violations("tick-event", event);
            assert!(violations.is_empty(), "{event}: {violations:?}");
            // Another host's run shows up only as the announcement of its host's loss: a
            // skip that did nothing.
            let session_name = event["session"].as_str().unwrap();
            let own = session_name.starts_with(self.name);
            let announced = event["decision"] == "skip"
                && event["did"].as_array().is_some_and(Vec::is_empty)
                && !host_lost(std::slice::from_ref(event)).is_empty();
            assert!(
                own || announced,
                "host {} ticked {session_name}: {event}",
                self.name
            );
        }
        events
    }

    fn status(&self, secs: i64) -> Vec<Value> {
        let out = self.run(secs, &["run", "status", "--format", "json"]);
        assert_eq!(out.status.code(), Some(0), "{out:?}");
        let reports = json_lines(&out);
        for report in &reports {
            let violations = autoctl::schema::violations("run-status", report);
            assert!(violations.is_empty(), "{report}: {violations:?}");
        }
        reports
    }
}

/// Every host ticks at once; the events of all of them.
fn tick_together(hosts: &[Host], secs: i64) -> Vec<Value> {
    std::thread::scope(|scope| {
        let handles: Vec<_> = hosts
            .iter()
            .map(|h| scope.spawn(move || h.tick(secs)))
            .collect();
        handles
            .into_iter()
            .flat_map(|h| h.join().unwrap())
            .collect()
    })
}

fn dispatched(events: &[Value]) -> Vec<String> {
    let mut names: Vec<String> = events
        .iter()
        .filter(|e| e["decision"] == "dispatch")
        .map(|e| e["session"].as_str().unwrap().to_string())
        .collect();
    names.sort();
    names
}

fn host_lost(events: &[Value]) -> Vec<&Value> {
    events
        .iter()
        .filter(|e| {
            e["notify"]
                .as_array()
                .is_some_and(|n| n.iter().any(|n| n["event"] == "host-lost"))
        })
        .collect()
}

/// The fleet contract, on either backend.
fn three_hosts_share_one_registry(shared: &Shared) {
    let hosts: Vec<Host> = ["h1", "h2", "h3"]
        .into_iter()
        .map(|name| Host {
            name,
            sb: Sandbox::new(),
            shared,
        })
        .collect();
    let runs: Vec<(String, PathBuf, PathBuf)> = hosts
        .iter()
        .map(|h| h.start(&format!("{}-1", h.name)))
        .collect();
    // One view: every host lists all three runs, each with its host.
    for host in &hosts {
        let listed: Vec<(String, String)> = host
            .status(1)
            .iter()
            .map(|r| {
                (
                    r["session"].as_str().unwrap().into(),
                    r["host"].as_str().unwrap().into(),
                )
            })
            .collect();
        assert_eq!(
            listed,
            [("h1-1", "h1"), ("h2-1", "h2"), ("h3-1", "h3")]
                .map(|(s, h)| (s.to_string(), h.to_string())),
        );
    }

    // h1's session reports the account's 5-hour window 96% used, reset at 600 s; h1's tick
    // reads it into the shared registry, and the whole account is paced on every host.
    hosts[0].statusline(&runs[0].0, 1, &statusline(96.0, 600));
    let events = hosts[0].tick(2);
    assert!(dispatched(&events).is_empty(), "{events:#?}");
    let mut all = Vec::new();
    for round in 0..3 {
        let events = tick_together(&hosts, 10 + round * 30);
        assert!(dispatched(&events).is_empty(), "{events:#?}");
        all.extend(events);
    }
    for report in hosts[1].status(100) {
        assert_eq!(report["status"], "running", "{report}");
        assert_eq!(report["wait"]["kind"], "quota-paced", "{report}");
        assert_eq!(report["host_lost"], false, "{report}");
    }

    // At the reset, the hosts ticking at once release at most --resume-burst (2) runs of
    // the account in its first minute, the third a minute later: the burst is the account's,
    // not each host's. (A released run's later steps are its own; only first steps count.)
    let mut released: Vec<String> = Vec::new();
    let mut release = |events: &[Value]| -> Vec<String> {
        let new: Vec<String> = dispatched(events)
            .into_iter()
            .filter(|s| !released.contains(s))
            .collect();
        released.extend(new.clone());
        new
    };
    let events = tick_together(&hosts, 601);
    assert_eq!(release(&events).len(), 2, "{events:#?}");
    all.extend(events);
    let events = tick_together(&hosts, 630);
    assert!(release(&events).is_empty(), "{events:#?}");
    all.extend(events);
    let events = tick_together(&hosts, 662);
    assert_eq!(release(&events).len(), 1, "{events:#?}");
    all.extend(events);
    // 0 double dispatch: nothing typed that no decision of its own host asked for, and no
    // step typed twice (a later step may still be on its way to the pane).
    for (host, (pane, log, dir)) in hosts.iter().zip(&runs) {
        let session_name = format!("{}-1", host.name);
        let decided = dispatched(&all)
            .iter()
            .filter(|s| **s == session_name)
            .count();
        wait_for(&host.sb, pane, "its first step", |_, _| {
            !prompts(log, dir).is_empty()
        });
        let typed = prompts(log, dir);
        assert!(typed.len() <= decided, "{session_name}: {typed:?}");
        assert_eq!(typed[0], "/ai-cli-task plan TASK --generate", "{typed:?}");
        let mut distinct = typed.clone();
        distinct.dedup();
        assert_eq!(distinct, typed, "{session_name}: a step typed twice");
    }

    // Any host stops any run; its own host ticks it no more.
    let out = hosts[0].run(670, &["run", "stop", "--session", "h2-1"]);
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    let events = hosts[1].tick(680);
    assert!(
        !events.iter().any(|e| e["session"] == "h2-1"),
        "{events:#?}"
    );
    for host in &hosts {
        let reports = host.status(680);
        let h2 = reports.iter().find(|r| r["session"] == "h2-1").unwrap();
        assert_eq!(h2["status"], "stopped", "{h2}");
    }

    // h3's ticks stop (its last at 662 s). Past its lease (2 minutes, to 782 s), the next
    // tick of another host announces it, once; its run is still running and never typed
    // into from elsewhere.
    assert!(host_lost(&hosts[0].tick(780)).is_empty());
    let events = hosts[0].tick(783);
    let lost = host_lost(&events);
    assert_eq!(lost.len(), 1, "{events:#?}");
    let again = hosts[1].tick(790);
    assert!(host_lost(&again).is_empty(), "announced once: {again:#?}");
    let reports = hosts[1].status(790);
    let h3 = reports.iter().find(|r| r["host"] == "h3").unwrap();
    assert_eq!(h3["host_lost"], true, "{h3}");
    assert_eq!(h3["status"], "running", "{h3}");
    let text = stdout(&hosts[1].run(790, &["run", "status"]));
    assert!(text.contains("h3-1\trunning:host-lost"), "{text}");
    let h3_typed = prompts(&runs[2].1, &runs[2].2).len();
    assert!(h3_typed <= dispatched(&all).iter().filter(|s| *s == "h3-1").count());

    // h3 comes back: its lease is renewed and its run is its own again.
    hosts[2].tick(800);
    for report in hosts[0].status(801).iter().filter(|r| r["host"] == "h3") {
        assert_eq!(report["host_lost"], false, "{report}");
    }
}

#[test]
fn three_hosts_share_one_postgres_registry() {
    let Some(pg) = Pg::start() else { return };
    three_hosts_share_one_registry(&Shared::Postgres(&pg));

    // A registry a newer autoctl migrated is refused in one line, exit 2, by readers and
    // writers alike; nothing is changed.
    let mut client = postgres::Client::connect(&pg.url, postgres::NoTls).unwrap();
    client
        .execute("UPDATE autoctl_schema SET version = 99", &[])
        .unwrap();
    let sb = Sandbox::new();
    for args in [&["run", "status"][..], &["run", "tick", "--all"]] {
        let out = sb
            .cmd()
            .env("AUTOCTL_REGISTRY", &pg.url)
            .args(args)
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(2), "{args:?}: {out:?}");
        let line = crate::util::one_stderr_line(&out);
        assert!(
            line.contains("schema version 99 is newer than this autoctl understands"),
            "{line}"
        );
    }
    let version: i32 = client
        .query_one("SELECT version FROM autoctl_schema", &[])
        .unwrap()
        .get(0);
    assert_eq!(version, 99);
}

/// The test's own connection to the server, and its backend's pid.
fn gate_client(pg: &Pg) -> (postgres::Client, i32) {
    let mut client = postgres::Client::connect(&pg.url, postgres::NoTls).unwrap();
    let pid = client
        .query_one("SELECT pg_backend_pid()", &[])
        .unwrap()
        .get(0);
    (client, pid)
}

/// Waits until some backend other than the test's own waits for a lock `blocker` holds: a
/// tick has reached that row (a lock wait is a state the server reports, not a time). A
/// `tick` that ended first is the failure, with what it printed.
fn wait_blocked_by(pg: &Pg, blocker: i32, tick: &mut std::process::Child) {
    if let Lock::Ended(status) = blocked_or_ended(pg, blocker, tick) {
        use std::io::Read;
        let mut printed = String::new();
        if let Some(mut out) = tick.stdout.take() {
            let _ = out.read_to_string(&mut printed);
        }
        if let Some(mut err) = tick.stderr.take() {
            let _ = err.read_to_string(&mut printed);
        }
        panic!(
            "the tick ended ({status}) before it waited for backend {blocker}'s lock:\n{printed}\n{}",
            pg.log()
        );
    }
}

/// Where a tick stands against one of the test's transactions.
enum Lock {
    /// The tick waits for a lock the transaction holds.
    Blocked,
    /// The tick ended (its pipes are left unread).
    Ended(std::process::ExitStatus),
}

/// Waits until the tick waits for a lock `blocker` holds, or has ended; 120 s at most.
fn blocked_or_ended(pg: &Pg, blocker: i32, tick: &mut std::process::Child) -> Lock {
    let mut probe = postgres::Client::connect(&pg.url, postgres::NoTls).unwrap();
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(120);
    loop {
        if let Some(status) = tick.try_wait().unwrap() {
            return Lock::Ended(status);
        }
        let stuck = activity(&mut probe);
        let row = probe
            .query_one(
                "SELECT count(*) FROM pg_stat_activity WHERE $1 = ANY(pg_blocking_pids(pid))",
                &[&blocker],
            )
            .unwrap();
        if row.get::<_, i64>(0) > 0 {
            return Lock::Blocked;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "no tick waited for backend {blocker}'s lock:\n{stuck}\n{}",
            pg.log()
        );
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
}

/// What every backend is doing, for a failure's message.
fn activity(probe: &mut postgres::Client) -> String {
    probe
        .query(
            "SELECT pid, state, wait_event_type, pg_blocking_pids(pid)::text, left(query, 120) \
             FROM pg_stat_activity WHERE backend_type = 'client backend'",
            &[],
        )
        .unwrap()
        .iter()
        .map(|r| {
            format!(
                "{:?} {:?} {:?} {:?} {:?}\n",
                r.get::<_, i32>(0),
                r.get::<_, Option<String>>(1),
                r.get::<_, Option<String>>(2),
                r.get::<_, Option<String>>(3),
                r.get::<_, Option<String>>(4)
            )
        })
        .collect()
}

/// Lock one run's row in the gate's transaction.
fn lock_row(tx: &mut postgres::Transaction<'_>, session_name: &str) {
    tx.query(
        "SELECT 1 FROM task_auto WHERE session_name = $1 FOR UPDATE",
        &[&session_name],
    )
    .unwrap();
}

/// A tick's permit and another tick's claim, lined up so that before issue 25's fix they
/// wait on each other: the test holds run h1-1's row (as a slow transaction would); tick B
/// (`--all`) starts its claim and waits for h1-1; tick A (`--session h1-3`) claims h1-3 and
/// asks for the step's permit. The permit's transaction used to lock the account row, its own
/// run h1-3, then the account's other runs from h1-1 on; released, B took h1-1 and h1-2 and
/// waited for h1-3: a deadlock, one tick aborted after PostgreSQL's deadlock_timeout (forever
/// under a faked server clock). Now a permit locks the account row and then its own run only,
/// so both ticks finish: exit 0, no error, no deadlock in the server's log, each run
/// dispatched once.
#[test]
fn a_permit_and_a_claim_never_wait_on_each_other() {
    let Some(pg) = Pg::start() else { return };
    let shared = Shared::Postgres(&pg);
    let host = Host {
        name: "h1",
        sb: Sandbox::new(),
        shared: &shared,
    };
    // Each step runs past the test: B reaches h1-3 after A dispatched it, and a step that had
    // already signalled (0.1 s, the default here) would rightly be routed on and dispatched
    // again (seen once under load).
    let runs: Vec<_> = (1..=3)
        .map(|i| host.start_with(&format!("h1-{i}"), &["STAND_IN_DELAY=600"]))
        .collect();
    let (mut gate, gate_pid) = gate_client(&pg);
    let mut tx = gate.transaction().unwrap();
    lock_row(&mut tx, "h1-1");
    let spawn = |args: &[&str]| {
        host.cmd(10)
            .args(args)
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .unwrap()
    };
    let mut b = spawn(&["run", "tick", "--all", "--host-lease", "2m"]);
    wait_blocked_by(&pg, gate_pid, &mut b);
    let mut a = spawn(&["run", "tick", "--session", "h1-3", "--host-lease", "2m"]);
    // A's permit waits too, or (fixed) never needs h1-1: wait for either.
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(120);
    let mut probe = postgres::Client::connect(&pg.url, postgres::NoTls).unwrap();
    loop {
        // (A queued behind B for h1-1 is blocked by B, which holds the row's tuple lock.)
        let waiting: i64 = probe
            .query_one(
                "SELECT count(*) FROM pg_stat_activity WHERE wait_event_type = 'Lock'",
                &[],
            )
            .unwrap()
            .get(0);
        if waiting >= 2 || a.try_wait().unwrap().is_some() {
            break;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "tick A never ran: {}",
            activity(&mut probe)
        );
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    tx.rollback().unwrap();
    let mut events = Vec::new();
    for (name, child) in [("A", a), ("B", b)] {
        let out = child.wait_with_output().unwrap();
        assert_eq!(out.status.code(), Some(0), "tick {name}: {out:?}");
        for event in json_lines(&out) {
            assert_ne!(event["decision"], "error", "tick {name}: {event}");
            events.push(event);
        }
    }
    let log = pg.log();
    assert!(!log.contains("deadlock detected"), "{log}");
    assert_eq!(dispatched(&events), ["h1-1", "h1-2", "h1-3"], "{events:#?}");
    for (pane, log, dir) in &runs {
        wait_for(&host.sb, pane, "its first step", |_, _| {
            !prompts(log, dir).is_empty()
        });
        assert_eq!(prompts(log, dir).len(), 1);
    }
}

/// What a tick does when PostgreSQL aborts its transaction as a deadlock's victim (a
/// deadlock needs another party; here two transactions of the test's own lock rows out of the
/// claims' order, and set a long deadlock_timeout so the tick's backend is the one to detect
/// it): the claim is retried once in a new transaction; aborted again it is one line, exit 2,
/// and nothing is held or lost: no claim left in the registry, and the next tick dispatches
/// every run.
#[test]
fn a_tick_aborted_as_a_deadlock_victim_retries_once_then_exits_2() {
    let Some(pg) = Pg::start() else { return };
    let shared = Shared::Postgres(&pg);
    let host = Host {
        name: "h1",
        sb: Sandbox::new(),
        shared: &shared,
    };
    let runs: Vec<_> = (1..=3).map(|i| host.start(&format!("h1-{i}"))).collect();
    // PostgreSQL looks for a deadlock once per wait, deadlock_timeout after it began: the
    // tick's look must come after the test's transaction closes the cycle, however loaded the
    // machine (at 1 s, the default, a full suite at load 15 once had the tick look first, find
    // no cycle, and never look again). The test's own transactions never look.
    let (mut first, first_pid) = gate_client(&pg);
    first
        .batch_execute("ALTER ROLE autoctl SET deadlock_timeout = '5s'")
        .unwrap();
    let (mut second, second_pid) = gate_client(&pg);
    let mut t1 = first.transaction().unwrap();
    let mut t2 = second.transaction().unwrap();
    for tx in [&mut t1, &mut t2] {
        tx.batch_execute("SET LOCAL deadlock_timeout = '10min'")
            .unwrap();
    }
    lock_row(&mut t1, "h1-2");
    lock_row(&mut t2, "h1-3");
    let mut tick = host
        .cmd(10)
        .args(["run", "tick", "--all", "--host-lease", "2m"])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    // The claim holds h1-1 and waits for h1-2: t1 asks for h1-1, the tick's backend finds
    // the cycle and aborts its own transaction; t1 goes on.
    wait_blocked_by(&pg, first_pid, &mut tick);
    lock_row(&mut t1, "h1-1");
    // Two orders follow, and the retry is the second victim in both. Mostly t1 takes h1-1 as
    // the aborted transaction lets it go, the retry waits for it; t1 ends, the retry takes
    // h1-1 and h1-2 and waits for h1-3, and t2 asking for h1-1 closes the cycle. On a loaded
    // machine the retry may lock h1-1 before t1's backend wakes (3 of 30 runs at load 13): it
    // waits for h1-2, t1 waits for it, and the retry is aborted there (t1's `lock_row` above
    // returns only then).
    if let Lock::Blocked = blocked_or_ended(&pg, first_pid, &mut tick) {
        t1.commit().unwrap();
        wait_blocked_by(&pg, second_pid, &mut tick);
        lock_row(&mut t2, "h1-1");
    } else {
        t1.commit().unwrap();
    }
    let out = tick.wait_with_output().unwrap();
    t2.commit().unwrap();
    assert_eq!(out.status.code(), Some(2), "{out:?}");
    let line = crate::util::one_stderr_line(&out);
    assert!(line.contains("deadlock detected (40P01)"), "{line}");
    assert_eq!(pg.log().matches("deadlock detected").count(), 2);
    // Nothing held: no claim in the registry, and the next tick dispatches every run.
    let mut client = postgres::Client::connect(&pg.url, postgres::NoTls).unwrap();
    let claimed: i64 = client
        .query_one(
            "SELECT count(*) FROM task_auto WHERE claimed_by IS NOT NULL",
            &[],
        )
        .unwrap()
        .get(0);
    assert_eq!(claimed, 0);
    let events = host.tick(20);
    assert_eq!(dispatched(&events), ["h1-1", "h1-2", "h1-3"], "{events:#?}");
    for (pane, log, dir) in &runs {
        wait_for(&host.sb, pane, "its first step", |_, _| {
            !prompts(log, dir).is_empty()
        });
        assert_eq!(prompts(log, dir).len(), 1);
    }
}

#[test]
fn three_hosts_share_one_registry_file() {
    let dir = tempfile::tempdir().unwrap();
    three_hosts_share_one_registry(&Shared::File(dir.path()));
}

#[test]
fn a_bad_registry_url_or_an_unreachable_server_is_one_line_and_exit_2() {
    let sb = Sandbox::new();
    for (url, says) in [
        ("mysql://x", "not a postgres:// URL"),
        (
            "postgres://autoctl@127.0.0.1:1/none?sslmode=disable",
            "registry postgres://autoctl@127.0.0.1:1/none",
        ),
    ] {
        let out = sb
            .cmd()
            .env("AUTOCTL_REGISTRY", url)
            .args(["run", "status"])
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(2), "{url}: {out:?}");
        let line = crate::util::one_stderr_line(&out);
        assert!(line.contains(says), "{url}: {line}");
    }
    // A password is never printed.
    let out = sb
        .cmd()
        .args(["run", "status", "--registry"])
        .arg("postgres://me:s3cret@127.0.0.1:1/db?sslmode=disable")
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2), "{out:?}");
    let line = crate::util::one_stderr_line(&out);
    assert!(
        !line.contains("s3cret") && line.contains("me:***@"),
        "{line}"
    );
}

/// TLS to the registry, against a real PostgreSQL that takes TLS connections only, with a
/// certificate from a CA made by the test: `sslmode=require` and the default (`prefer`)
/// connect without checking the certificate, as libpq does (before, rustls checked every
/// certificate against the system's roots, so neither could reach such a server);
/// `verify-ca` and `verify-full` with `sslrootcert` check it, `verify-full` its name too; a
/// wrong CA, a wrong name, no root certificate, a plain connection the server rejects, and a
/// server without TLS under `require` are each one line, exit 2.
#[test]
fn tls_sslmode_require_and_verify_full_against_a_real_server() {
    let Some(pg) = Pg::start_tls() else { return };
    let ca = pg.file("tls/ca.crt");
    let other = pg.file("tls/other-ca.crt");
    let sb = Sandbox::new();
    let run = |url: &str| {
        sb.cmd()
            .env("AUTOCTL_REGISTRY", url)
            .args(["run", "tick", "--all"])
            .output()
            .unwrap()
    };
    let root = |path: &Path| format!("sslrootcert={}", path.display());
    for (host, query) in [
        ("127.0.0.1", "sslmode=require".to_string()),
        ("127.0.0.1", "connect_timeout=10".to_string()),
        ("127.0.0.1", format!("sslmode=verify-ca&{}", root(&ca))),
        ("127.0.0.1", format!("sslmode=verify-full&{}", root(&ca))),
        ("127.0.0.1", format!("sslmode=require&{}", root(&ca))),
        // The certificate is for 127.0.0.1, not localhost: verify-ca does not look.
        ("localhost", format!("sslmode=verify-ca&{}", root(&ca))),
    ] {
        let out = run(&pg.url_with(host, &query));
        assert_eq!(out.status.code(), Some(0), "{host} {query}: {out:?}");
    }
    for (host, query, says) in [
        ("127.0.0.1", "sslmode=disable".to_string(), "no encryption"),
        (
            "127.0.0.1",
            format!("sslmode=verify-full&{}", root(&other)),
            "invalid peer certificate",
        ),
        (
            "127.0.0.1",
            format!("sslmode=require&{}", root(&other)),
            "invalid peer certificate",
        ),
        (
            "localhost",
            format!("sslmode=verify-full&{}", root(&ca)),
            "invalid peer certificate",
        ),
        (
            "127.0.0.1",
            "sslmode=verify-full".to_string(),
            "no certificate to check the server's against",
        ),
    ] {
        let out = run(&pg.url_with(host, &query));
        assert_eq!(out.status.code(), Some(2), "{host} {query}: {out:?}");
        let line = crate::util::one_stderr_line(&out);
        assert!(line.contains(says), "{host} {query}: {line}");
    }
    // examples/fleet/fleet.env's URL, its CA file this server's: verify-full as pasted.
    let example = env_file(&Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/fleet/fleet.env"))
        .into_iter()
        .find(|(key, _)| key == "AUTOCTL_REGISTRY")
        .unwrap()
        .1;
    let (_, query) = example.split_once('?').unwrap();
    assert!(query.contains("sslmode=verify-full"), "{example}");
    let query = query.replace("/etc/autoctl/db-ca.crt", ca.to_str().unwrap());
    let out = run(&pg.url_with("127.0.0.1", &query));
    assert_eq!(out.status.code(), Some(0), "{query}: {out:?}");

    // A server without TLS: require is one line, exit 2.
    let Some(plain) = Pg::start() else { return };
    let out = run(&plain.url_with("127.0.0.1", "sslmode=require"));
    assert_eq!(out.status.code(), Some(2), "{out:?}");
    let line = crate::util::one_stderr_line(&out);
    assert!(line.contains("server does not support TLS"), "{line}");
}

/// `KEY=VALUE` lines of an environment file, as systemd's `EnvironmentFile=` reads them (a
/// value in double quotes loses them). The same file sourced by `sh` gives the same values
/// (checked: a shell would take an unquoted `&` for its own).
fn env_file(path: &Path) -> Vec<(String, String)> {
    let pairs: Vec<(String, String)> = fs::read_to_string(path)
        .unwrap()
        .lines()
        .filter(|l| !l.trim_start().starts_with('#') && l.contains('='))
        .map(|l| {
            let (key, value) = l.split_once('=').unwrap();
            let value = value
                .strip_prefix('"')
                .and_then(|v| v.strip_suffix('"'))
                .unwrap_or(value);
            (key.to_string(), value.to_string())
        })
        .collect();
    let mut script = format!("set -a; . '{}'; set +a", path.display());
    for (key, _) in &pairs {
        script.push_str(&format!("; printf '%s\\n' \"${key}\""));
    }
    let out = Command::new("/bin/sh")
        .args(["-c", &script])
        .env_clear()
        .output()
        .unwrap();
    assert!(out.status.success(), "{script}: {out:?}");
    let sourced: Vec<String> = String::from_utf8(out.stdout)
        .unwrap()
        .lines()
        .map(String::from)
        .collect();
    let values: Vec<String> = pairs.iter().map(|(_, v)| v.clone()).collect();
    assert_eq!(
        sourced,
        values,
        "{} read by sh and by systemd",
        path.display()
    );
    pairs
}

/// The value of a unit file's `KEY=` line.
fn unit_line(unit: &str, key: &str) -> String {
    unit.lines()
        .find_map(|l| l.strip_prefix(&format!("{key}=")))
        .unwrap_or_else(|| panic!("no {key}= in:\n{unit}"))
        .to_string()
}

/// The cron line of examples/fleet/README.md (the one line that starts `* * * * *`), without
/// its schedule.
fn cron_command(readme: &str) -> String {
    readme
        .lines()
        .find_map(|l| l.strip_prefix("* * * * * "))
        .unwrap_or_else(|| panic!("no cron line in examples/fleet/README.md"))
        .to_string()
}

/// examples/fleet run as pasted (issue 25, item 4), against a real PostgreSQL that asks for a
/// password (`fleet.env`'s `PGPASSWORD`; its URL has none): the watcher unit's command with
/// `fleet.env`'s environment renews its host's lease in the shared registry and stops cleanly
/// on SIGTERM; the README's cron line, sourcing `fleet.env`, renews another host's; after a
/// status line's reading of the account's windows, the metrics unit's command writes the
/// textfile, and every series the alert rules name is in it.
#[test]
fn the_fleet_examples_run_as_pasted() {
    let Some(pg) = Pg::start() else { return };
    let fleet = Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/fleet");
    let sb = Sandbox::new();
    let env: Vec<(String, String)> = env_file(&fleet.join("fleet.env"))
        .into_iter()
        .map(|(key, value)| match key.as_str() {
            "AUTOCTL_REGISTRY" => {
                assert!(value.starts_with("postgres://autoctl@"), "{value}");
                (key, pg.url.clone())
            }
            _ => (key, value),
        })
        .collect();
    let keys: Vec<&str> = env.iter().map(|(k, _)| k.as_str()).collect();
    assert_eq!(keys, ["AUTOCTL_REGISTRY", "PGPASSWORD", "AUTOCTL_ACCOUNT"]);
    pg.require_password(&env[1].1);
    let bin = crate::util::bin();
    let as_installed = |line: &str| {
        line.replace("/usr/local/bin/autoctl", bin)
            .replace("'autoctl ", &format!("'{bin} "))
    };
    let with_env = |mut cmd: Command| {
        cmd.envs(env.iter().map(|(k, v)| (k, v)))
            .env("AUTOCTL_HOST", "fleet-1");
        cmd
    };

    // A run of this host, started the README's way, so the metrics have a run's series.
    let dir = task(&sb, "api");
    let (pane, _) = session(&sb, "api");
    let out = with_env(sb.std_cmd())
        .args(["run", "start", "--session", "api", "--task"])
        .arg(&dir)
        .args(["--mode", "dispatch", "--launch", "--priority", "5"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{out:?}");

    // autoctl-fleet-watch.service: its ExecStart, until its host's lease is in the registry.
    let unit = fs::read_to_string(fleet.join("autoctl-fleet-watch.service")).unwrap();
    let exec = as_installed(&unit_line(&unit, "ExecStart"));
    let words: Vec<&str> = exec.split_whitespace().collect();
    let mut cmd = with_env(sb.std_cmd());
    cmd.args(&words[1..])
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped());
    assert_eq!(words[0], bin);
    let mut watcher = cmd.spawn().unwrap();
    let mut client =
        postgres::Client::connect(&pg.url_with_password(&env[1].1), postgres::NoTls).unwrap();
    let mut hosts_in_registry = |want: &[&str], running: &mut dyn FnMut() -> bool| {
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
        loop {
            let hosts: Vec<String> = client
                .query("SELECT name FROM hosts ORDER BY name", &[])
                .map(|rows| rows.iter().map(|r| r.get(0)).collect())
                .unwrap_or_default();
            if hosts == want {
                break;
            }
            assert!(
                std::time::Instant::now() < deadline && running(),
                "no lease renewed: {hosts:?}, want {want:?}"
            );
            std::thread::sleep(std::time::Duration::from_millis(100));
        }
    };
    hosts_in_registry(&["fleet-1"], &mut || watcher.try_wait().unwrap().is_none());
    // systemd stops it with SIGTERM (KillMode=mixed): a clean exit.
    let killed = Command::new("kill")
        .args(["-TERM", &watcher.id().to_string()])
        .status()
        .unwrap();
    assert!(killed.success());
    let out = watcher.wait_with_output().unwrap();
    assert_eq!(out.status.code(), Some(0), "{out:?}");

    // The README's cron line, as cron runs it (sh -c, HOME set), on a second host: fleet.env
    // installed where the line reads it, with this server's URL.
    let etc = sb.path("etc-autoctl");
    fs::create_dir(&etc).unwrap();
    let installed_env = fs::read_to_string(fleet.join("fleet.env"))
        .unwrap()
        .lines()
        .map(|l| match l.strip_prefix("AUTOCTL_REGISTRY=") {
            Some(_) => format!("AUTOCTL_REGISTRY={}", pg.url),
            None => l.to_string(),
        })
        .collect::<Vec<_>>()
        .join("\n");
    fs::write(etc.join("fleet.env"), installed_env + "\n").unwrap();
    let readme = fs::read_to_string(fleet.join("README.md")).unwrap();
    let line = cron_command(&readme)
        .replace("/etc/autoctl", etc.to_str().unwrap())
        .replace("; autoctl ", &format!("; {bin} "));
    let out = sb
        .program("/bin/sh")
        .args(["-c", &line])
        .env("AUTOCTL_HOST", "fleet-2")
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{line}: {out:?}");
    let log = fs::read_to_string(sb.path("home/autoctl-tick.log")).unwrap_or_default();
    assert_eq!(log, "", "the cron line's errors");
    hosts_in_registry(&["fleet-1", "fleet-2"], &mut || true);

    // The run's session reports the account's windows (Claude Code runs `autoctl statusline`
    // from its pane): the account series exist only after a reading.
    let now = chrono::Utc::now().timestamp();
    let clock = |secs: i64| {
        chrono::DateTime::from_timestamp(now + secs, 0)
            .unwrap()
            .to_rfc3339_opts(chrono::SecondsFormat::Millis, true)
    };
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/hook/claude-code/reference/statusline-subscription.json");
    let mut payload: Value = serde_json::from_slice(&fs::read(path).unwrap()).unwrap();
    payload["rate_limits"]["five_hour"]["used_percentage"] = 40.into();
    payload["rate_limits"]["five_hour"]["resets_at"] = (now + 3_600).into();
    payload["rate_limits"]["seven_day"]["used_percentage"] = 20.into();
    payload["rate_limits"]["seven_day"]["resets_at"] = (now + 5 * 86_400).into();
    let (tmux_var, pane_id) = pane_env(&sb, &pane);
    let mut child = with_env(sb.std_cmd())
        .env("AUTOCTL_NOW", clock(0))
        .env("TMUX", tmux_var)
        .env("TMUX_PANE", pane_id)
        .arg("statusline")
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::null())
        .spawn()
        .unwrap();
    {
        use std::io::Write;
        let mut stdin = child.stdin.take().unwrap();
        stdin
            .write_all(&serde_json::to_vec(&payload).unwrap())
            .unwrap();
    }
    assert!(child.wait().unwrap().success());
    // A tick of its host reads it into the account (the watcher would have, a minute later).
    let out = with_env(sb.std_cmd())
        .env("AUTOCTL_NOW", clock(1))
        .args(["run", "tick", "--all", "--host-lease", "2m"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{out:?}");

    // autoctl-fleet-metrics.service: its ExecStart writes the textfile node_exporter reads.
    let unit = fs::read_to_string(fleet.join("autoctl-fleet-metrics.service")).unwrap();
    let textfile = sb.path("textfile");
    fs::create_dir(&textfile).unwrap();
    let exec = as_installed(&unit_line(&unit, "ExecStart")).replace(
        "/var/lib/node_exporter/textfile",
        textfile.to_str().unwrap(),
    );
    let script = exec
        .strip_prefix("/bin/sh -c '")
        .and_then(|s| s.strip_suffix('\''))
        .unwrap_or_else(|| panic!("{exec}"));
    let out = with_env(sb.program("/bin/sh"))
        .env("AUTOCTL_NOW", clock(2))
        .args(["-c", script])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    let metrics = fs::read_to_string(textfile.join("autoctl.prom")).unwrap();
    assert!(metrics.contains("session=\"api\""), "{metrics}");
    assert!(
        metrics.lines().any(|l| l.starts_with(
            "autoctl_account_window_used_ratio{account=\"team\",window=\"five_hour\"} 0.4"
        )),
        "{metrics}"
    );
    let rules = fs::read_to_string(fleet.join("autoctl-alerts.yml")).unwrap();
    let mut named: Vec<&str> = rules
        .split(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
        .filter(|w| w.starts_with("autoctl_"))
        .collect();
    named.sort();
    named.dedup();
    assert!(named.len() >= 5, "{named:?}");
    for series in named {
        assert!(
            metrics
                .lines()
                .any(|l| l.starts_with(series) && !l.starts_with('#')),
            "the alert rules name {series}, which the metrics do not have:\n{metrics}"
        );
    }
}

/// A URL without a password takes it as libpq does (issue 25, item 3): from `PGPASSWORD`,
/// else from `~/.pgpass` (mode 600; a file others can read is ignored); without either, a
/// server that asks for one is a one-line exit-2 error that never prints a password.
#[test]
fn a_url_without_a_password_takes_pgpassword_or_pgpass() {
    let Some(pg) = Pg::start() else { return };
    pg.require_password("s3cret:pw");
    let sb = Sandbox::new();
    let status = |password: Option<&str>| {
        let mut cmd = sb.std_cmd();
        cmd.env("AUTOCTL_REGISTRY", &pg.url)
            .args(["run", "status", "--format", "json"]);
        if let Some(password) = password {
            cmd.env("PGPASSWORD", password);
        }
        cmd.output().unwrap()
    };
    let refused = |out: &Output| {
        assert_eq!(out.status.code(), Some(2), "{out:?}");
        let err = String::from_utf8_lossy(&out.stderr).to_string();
        assert_eq!(err.trim_end().lines().count(), 1, "{err}");
        assert!(err.contains("password"), "{err}");
        assert!(!err.contains("s3cret") && !err.contains("wrong"), "{err}");
    };
    refused(&status(None));
    refused(&status(Some("wrong")));
    assert_eq!(status(Some("s3cret:pw")).status.code(), Some(0));

    let port = pg.url.split([':', '/']).nth(4).unwrap().to_string();
    let pgpass = sb.path("home/.pgpass");
    fs::create_dir_all(sb.path("home")).unwrap();
    fs::write(
        &pgpass,
        format!("# the fleet\nother:5432:*:*:no\n127.0.0.1:{port}:postgres:autoctl:s3cret\\:pw\n"),
    )
    .unwrap();
    fs::set_permissions(&pgpass, fs::Permissions::from_mode(0o600)).unwrap();
    let out = status(None);
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    // libpq ignores a password file the group or others can read.
    fs::set_permissions(&pgpass, fs::Permissions::from_mode(0o644)).unwrap();
    refused(&status(None));
}
