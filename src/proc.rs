//! What the processes under a pane do, from `/proc` (Linux): the CPU time an agent's
//! children have used, so a long-running tool (a build, a test suite) is told apart from a
//! wedged stream; and which process is the agent, with its environment, working directory
//! and start (`doctor` judges the hooks in the agent's own environment). Elsewhere, or when
//! `/proc` cannot be read, nothing is known (`None`) and only the hooks and the screen say
//! whether a tool runs.

use std::collections::HashMap;
use std::fs;

/// One process, as `/proc/PID/stat` describes it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Stat {
    pub pid: u32,
    pub comm: String,
    pub ppid: u32,
    /// utime + stime, in clock ticks.
    pub cpu: u64,
    /// When it started, in clock ticks after boot.
    pub start: u64,
}

/// Parse one `/proc/PID/stat` line. `comm` may hold spaces and parentheses: it runs to the
/// last `)`.
pub fn parse_stat(line: &str) -> Option<Stat> {
    let open = line.find('(')?;
    let close = line.rfind(')')?;
    let pid = line[..open].trim().parse().ok()?;
    let comm = line.get(open + 1..close)?.to_string();
    let rest: Vec<&str> = line.get(close + 1..)?.split_whitespace().collect();
    // rest[0] is the state (field 3); ppid is field 4, utime 14, stime 15, starttime 22.
    let ppid = rest.get(1)?.parse().ok()?;
    let utime: u64 = rest.get(11)?.parse().ok()?;
    let stime: u64 = rest.get(12)?.parse().ok()?;
    let start = rest.get(19).and_then(|s| s.parse().ok()).unwrap_or(0);
    Some(Stat {
        pid,
        comm,
        ppid,
        cpu: utime.saturating_add(stime),
        start,
    })
}

/// Shells that run an agent typed at their prompt.
const SHELLS: &[&str] = &["bash", "sh", "zsh", "fish", "dash", "ksh", "tcsh", "csh"];

/// The CPU time used by the agent's child processes: every process below the agent, where
/// the agent is the pane's first process, or — when that is a shell — each of its children.
/// The agent's own CPU (its spinner redraws) is left out.
pub fn tool_cpu(stats: &[Stat], pane_pid: u32) -> Option<u64> {
    let mut children: HashMap<u32, Vec<&Stat>> = HashMap::new();
    for stat in stats {
        children.entry(stat.ppid).or_default().push(stat);
    }
    let root = stats.iter().find(|s| s.pid == pane_pid)?;
    let agents: Vec<u32> = if SHELLS.contains(&root.comm.as_str()) {
        children
            .get(&root.pid)
            .map(|c| c.iter().map(|s| s.pid).collect())
            .unwrap_or_default()
    } else {
        vec![root.pid]
    };
    let mut total = 0u64;
    let mut stack: Vec<u32> = agents;
    let mut seen = 0usize;
    while let Some(pid) = stack.pop() {
        seen += 1;
        if seen > stats.len() {
            break; // a cycle in a racy snapshot
        }
        for child in children.get(&pid).into_iter().flatten() {
            total = total.saturating_add(child.cpu);
            stack.push(child.pid);
        }
    }
    Some(total)
}

/// [`tool_cpu`] for a live pane: `None` when `/proc` cannot be read or the pane's process is
/// gone.
pub fn child_cpu(pane_pid: u32) -> Option<u64> {
    if pane_pid == 0 {
        return None;
    }
    tool_cpu(&all_stats()?, pane_pid)
}

fn all_stats() -> Option<Vec<Stat>> {
    let mut stats = Vec::new();
    for entry in fs::read_dir("/proc").ok()?.flatten() {
        let name = entry.file_name();
        let Some(name) = name.to_str() else { continue };
        if !name.bytes().all(|b| b.is_ascii_digit()) {
            continue;
        }
        if let Ok(line) = fs::read_to_string(entry.path().join("stat"))
            && let Some(stat) = parse_stat(&line)
        {
            stats.push(stat);
        }
    }
    Some(stats)
}

/// The agent of a pane: the pane's own process when it is not a shell, else the newest child
/// of the shell (the program typed at its prompt). `None`: a shell with nothing running.
pub fn agent_of(stats: &[Stat], pane_pid: u32) -> Option<&Stat> {
    let root = stats.iter().find(|s| s.pid == pane_pid)?;
    if !SHELLS.contains(&root.comm.as_str()) {
        return Some(root);
    }
    stats
        .iter()
        .filter(|s| s.ppid == root.pid)
        .max_by_key(|s| (s.start, s.pid))
}

/// A variable of the agent's environment in a pane: the pane's process when it is not a
/// shell, else the newest child of the shell (read from `/proc/PID/task/PID/children`, so no
/// scan of every process). `None`: not set, or not readable.
pub fn agent_var(pane_pid: u32, name: &str) -> Option<String> {
    let pid = agent_pid(pane_pid)?;
    let env = environ(&fs::read(format!("/proc/{pid}/environ")).ok()?);
    env.get(name).cloned()
}

/// The agent's process id in a pane, found as [`agent_var`] finds it.
fn agent_pid(pane_pid: u32) -> Option<u32> {
    if pane_pid == 0 {
        return None;
    }
    let comm = fs::read_to_string(format!("/proc/{pane_pid}/comm")).ok()?;
    if SHELLS.contains(&comm.trim()) {
        let children =
            fs::read_to_string(format!("/proc/{pane_pid}/task/{pane_pid}/children")).ok()?;
        children
            .split_whitespace()
            .filter_map(|c| c.parse::<u32>().ok())
            .max()
    } else {
        Some(pane_pid)
    }
}

/// The agent's working directory and environment in a pane (found as [`agent_var`] finds
/// it): where it reads its project settings from, and its `HOME`. `None`: no agent, or not
/// readable.
pub fn agent_place(pane_pid: u32) -> Option<(std::path::PathBuf, HashMap<String, String>)> {
    let pid = agent_pid(pane_pid)?;
    let cwd = fs::read_link(format!("/proc/{pid}/cwd")).ok()?;
    let env = environ(&fs::read(format!("/proc/{pid}/environ")).ok()?);
    Some((cwd, env))
}

/// One process as `doctor` sees it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Process {
    pub pid: u32,
    pub comm: String,
    /// When it started (from its start in ticks after boot and the boot time).
    pub started: Option<std::time::SystemTime>,
    /// Its environment (`None`: not readable, e.g. another user's process).
    pub env: Option<HashMap<String, String>>,
    /// Its working directory.
    pub cwd: Option<std::path::PathBuf>,
}

/// The agent in a pane and the pane's own process (its shell), read from `/proc`: `None` when
/// `/proc` cannot be read or the pane's process is gone.
pub fn pane_processes(pane_pid: u32) -> Option<(Process, Option<Process>)> {
    if pane_pid == 0 {
        return None;
    }
    let stats = all_stats()?;
    let root = stats.iter().find(|s| s.pid == pane_pid)?;
    let agent = agent_of(&stats, pane_pid)
        .filter(|a| a.pid != pane_pid || !SHELLS.contains(&a.comm.as_str()));
    Some((process(root), agent.map(process)))
}

fn process(stat: &Stat) -> Process {
    let dir = std::path::PathBuf::from(format!("/proc/{}", stat.pid));
    Process {
        pid: stat.pid,
        comm: stat.comm.clone(),
        started: started(stat.start),
        env: fs::read(dir.join("environ"))
            .ok()
            .map(|bytes| environ(&bytes)),
        cwd: fs::read_link(dir.join("cwd")).ok(),
    }
}

/// `/proc/PID/environ`: NUL-separated `NAME=value` entries.
pub fn environ(bytes: &[u8]) -> HashMap<String, String> {
    bytes
        .split(|b| *b == 0)
        .filter_map(|entry| {
            let entry = String::from_utf8_lossy(entry);
            let (name, value) = entry.split_once('=')?;
            Some((name.to_string(), value.to_string()))
        })
        .collect()
}

/// The unit of `/proc`'s tick counts: the kernel's `USER_HZ`, 100 on every architecture
/// Linux reports to user space in (`sysconf(_SC_CLK_TCK)` would need `unsafe`).
const USER_HZ: u64 = 100;

/// A start in clock ticks after boot, as wall-clock time (`btime` of `/proc/stat`).
fn started(ticks: u64) -> Option<std::time::SystemTime> {
    let stat = fs::read_to_string("/proc/stat").ok()?;
    let boot: u64 = stat
        .lines()
        .find_map(|line| line.strip_prefix("btime "))?
        .trim()
        .parse()
        .ok()?;
    let millis = boot
        .checked_mul(1000)?
        .checked_add(ticks.checked_mul(1000)? / USER_HZ)?;
    std::time::UNIX_EPOCH.checked_add(std::time::Duration::from_millis(millis))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn stat(pid: u32, comm: &str, ppid: u32, cpu: u64) -> Stat {
        Stat {
            pid,
            comm: comm.into(),
            ppid,
            cpu,
            start: u64::from(pid),
        }
    }

    #[test]
    fn parses_stat_lines_with_odd_names() {
        let line =
            "4242 (my (odd) prog) S 1 4242 4242 0 -1 4194560 100 0 0 0 7 3 0 0 20 0 1 0 100 0 0";
        assert_eq!(
            parse_stat(line),
            Some(Stat {
                start: 100,
                ..stat(4242, "my (odd) prog", 1, 10)
            })
        );
        assert_eq!(parse_stat("garbage"), None);
    }

    #[test]
    fn only_the_agents_children_count() {
        let stats = [
            stat(10, "bash", 1, 5),
            stat(11, "claude", 10, 900),
            stat(12, "cargo", 11, 40),
            stat(13, "rustc", 12, 300),
            stat(20, "other", 1, 77),
        ];
        assert_eq!(tool_cpu(&stats, 10), Some(340));
        // The agent as the pane's own process.
        assert_eq!(tool_cpu(&stats, 11), Some(340));
        assert_eq!(tool_cpu(&stats, 99), None);
    }

    #[test]
    fn this_process_is_readable() {
        if std::path::Path::new("/proc/self/stat").exists() {
            assert!(child_cpu(std::process::id()).is_some());
            let (me, _) = pane_processes(std::process::id()).unwrap();
            assert_eq!(
                agent_var(std::process::id(), "PATH"),
                std::env::var("PATH").ok()
            );
            assert_eq!(me.pid, std::process::id());
            let env = me.env.unwrap();
            assert_eq!(env.get("PATH"), std::env::var("PATH").ok().as_ref());
            assert!(me.cwd.is_some() && me.started.is_some());
        }
    }

    #[test]
    fn the_agent_is_the_shells_newest_child_or_the_pane_itself() {
        let stats = [
            stat(10, "bash", 1, 0),
            stat(11, "sleep", 10, 0),
            stat(12, "claude", 10, 0),
            stat(13, "node", 12, 0),
        ];
        assert_eq!(agent_of(&stats, 10).map(|s| s.pid), Some(12));
        assert_eq!(agent_of(&stats, 12).map(|s| s.pid), Some(12));
        assert_eq!(agent_of(&stats[..1], 10), None, "a shell alone");
        assert_eq!(agent_of(&stats, 99), None);
        assert_eq!(
            environ(b"PATH=/usr/bin:/bin\0HOME=/home/dev\0junk\0X=a=b\0"),
            HashMap::from([
                ("PATH".to_string(), "/usr/bin:/bin".to_string()),
                ("HOME".to_string(), "/home/dev".to_string()),
                ("X".to_string(), "a=b".to_string()),
            ])
        );
    }
}
