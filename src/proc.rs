//! What the processes under a pane do, from `/proc` (Linux): the CPU time an agent's
//! children have used, so a long-running tool (a build, a test suite) is told apart from a
//! wedged stream. Elsewhere, or when `/proc` cannot be read, nothing is known (`None`) and
//! only the hooks and the screen say whether a tool runs.

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
}

/// Parse one `/proc/PID/stat` line. `comm` may hold spaces and parentheses: it runs to the
/// last `)`.
pub fn parse_stat(line: &str) -> Option<Stat> {
    let open = line.find('(')?;
    let close = line.rfind(')')?;
    let pid = line[..open].trim().parse().ok()?;
    let comm = line.get(open + 1..close)?.to_string();
    let rest: Vec<&str> = line.get(close + 1..)?.split_whitespace().collect();
    // rest[0] is the state (field 3); ppid is field 4, utime 14, stime 15.
    let ppid = rest.get(1)?.parse().ok()?;
    let utime: u64 = rest.get(11)?.parse().ok()?;
    let stime: u64 = rest.get(12)?.parse().ok()?;
    Some(Stat {
        pid,
        comm,
        ppid,
        cpu: utime.saturating_add(stime),
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
    tool_cpu(&stats, pane_pid)
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
        }
    }

    #[test]
    fn parses_stat_lines_with_odd_names() {
        let line =
            "4242 (my (odd) prog) S 1 4242 4242 0 -1 4194560 100 0 0 0 7 3 0 0 20 0 1 0 100 0 0";
        assert_eq!(parse_stat(line), Some(stat(4242, "my (odd) prog", 1, 10)));
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
        }
    }
}
