//! The XL route's sub-issue dependency graph (seed 003, Step 4 XL): execution levels by
//! Kahn's algorithm, dependents of failed issues skipped transitively, each level split into
//! batches of at most the concurrency cap (`AUTO_MAX_CONCURRENT`, default 5); and the parent
//! phase aggregated from the children's phases.
//!
//! Linear in nodes + edges: one pass to index ids, one to count in-degrees, one Kahn pass
//! that also assigns levels and propagates skips (a node's blockers are all settled before
//! it leaves the queue). A cycle is reported with the nodes that form it.

use std::collections::{HashMap, HashSet, VecDeque};
use std::fmt;

use serde::{Deserialize, Serialize};

/// The seed's default concurrency cap.
pub const DEFAULT_MAX_CONCURRENT: usize = 5;

/// One sub-issue as the graph file lists it (other fields, such as `title`, are ignored).
#[derive(Debug, Clone, Deserialize)]
pub struct Node {
    #[serde(alias = "id")]
    pub number: u64,
    #[serde(default)]
    pub blocked_by: Vec<u64>,
}

/// The graph file: `{"nodes": [...]}` (other top-level fields ignored) or a bare array.
#[derive(Debug, Deserialize)]
struct GraphObject {
    nodes: Vec<Node>,
}

/// Why a graph cannot be levelled.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum GraphError {
    Duplicate {
        number: u64,
        first: usize,
        second: usize,
    },
    SelfEdge {
        number: u64,
        index: usize,
    },
    Unknown {
        number: u64,
        blocker: u64,
        index: usize,
    },
    UnknownFailed {
        number: u64,
    },
    /// Each node is blocked by the next; the last by the first.
    Cycle(Vec<u64>),
}

impl fmt::Display for GraphError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            GraphError::Duplicate {
                number,
                first,
                second,
            } => write!(
                f,
                "node {number} is listed twice (nodes[{first}] and nodes[{second}])"
            ),
            GraphError::SelfEdge { number, index } => {
                write!(f, "node {number} (nodes[{index}]) is blocked by itself")
            }
            GraphError::Unknown {
                number,
                blocker,
                index,
            } => write!(
                f,
                "node {number} (nodes[{index}]) is blocked by {blocker}, which is not a node of the graph"
            ),
            GraphError::UnknownFailed { number } => {
                write!(f, "--failed {number}: not a node of the graph")
            }
            GraphError::Cycle(cycle) => {
                let mut path: Vec<String> = cycle.iter().map(u64::to_string).collect();
                path.push(cycle[0].to_string());
                write!(
                    f,
                    "dependency cycle: {} (each is blocked by the next)",
                    path.join(" → ")
                )
            }
        }
    }
}

impl std::error::Error for GraphError {}

/// Parse a graph file's bytes. Errors carry the JSON position.
pub fn parse(bytes: &[u8]) -> Result<Vec<Node>, serde_json::Error> {
    let first = bytes.iter().find(|b| !b.is_ascii_whitespace());
    if first == Some(&b'[') {
        serde_json::from_slice(bytes)
    } else {
        serde_json::from_slice::<GraphObject>(bytes).map(|g| g.nodes)
    }
}

/// The nodes of a graph document already parsed (by the strict reader) into a value.
pub fn from_value(value: &serde_json::Value) -> Result<Vec<Node>, serde_json::Error> {
    if value.is_array() {
        Vec::<Node>::deserialize(value)
    } else {
        GraphObject::deserialize(value).map(|g| g.nodes)
    }
}

/// A node that will not run because something it depends on failed.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Skipped {
    pub number: u64,
    /// The failed issue at the root of the chain ("SKIPPED (blocked by #X)").
    pub blocked_by: u64,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Level {
    pub level: usize,
    /// Runnable nodes, ascending, in batches of at most the cap.
    pub batches: Vec<Vec<u64>>,
    pub failed: Vec<u64>,
    pub skipped: Vec<Skipped>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Levels {
    pub max_concurrent: usize,
    pub nodes: usize,
    pub runnable: usize,
    pub failed: usize,
    pub skipped: usize,
    pub levels: Vec<Level>,
    /// Every node by level, like `get-sub-issue-graph.sh`'s `execution_order`.
    pub execution_order: Vec<Vec<u64>>,
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum State {
    Run,
    Failed,
    /// Skipped because of this failed node.
    Skipped(u64),
}

/// Compute the levels. `max_concurrent` ≥ 1 (the command checks it).
pub fn levels(nodes: &[Node], failed: &[u64], max_concurrent: usize) -> Result<Levels, GraphError> {
    let index = index_of(nodes)?;
    let blockers = blocker_lists(nodes, &index)?;
    let dependents = Dependents::of(&blockers);
    let failed = failed_indices(failed, &index)?;
    let settled = settle(nodes, &blockers, &dependents, &failed);
    if settled.order.len() < nodes.len() {
        return Err(GraphError::Cycle(find_cycle(
            nodes,
            &blockers,
            &settled.remaining,
        )));
    }
    Ok(group_by_level(nodes, &settled, max_concurrent))
}

/// Each node's position by its number; a number listed twice is an error.
fn index_of(nodes: &[Node]) -> Result<HashMap<u64, usize>, GraphError> {
    let mut index: HashMap<u64, usize> = HashMap::with_capacity(nodes.len());
    for (i, node) in nodes.iter().enumerate() {
        if let Some(first) = index.insert(node.number, i) {
            return Err(GraphError::Duplicate {
                number: node.number,
                first,
                second: i,
            });
        }
    }
    Ok(index)
}

/// Each node's blockers as indices (duplicates in one list count once); a node blocked by
/// itself or by a number not in the graph is an error.
fn blocker_lists(
    nodes: &[Node],
    index: &HashMap<u64, usize>,
) -> Result<Vec<Vec<usize>>, GraphError> {
    let mut blockers: Vec<Vec<usize>> = Vec::with_capacity(nodes.len());
    for (i, node) in nodes.iter().enumerate() {
        let mut list = Vec::with_capacity(node.blocked_by.len());
        for &b in &node.blocked_by {
            if b == node.number {
                return Err(GraphError::SelfEdge {
                    number: b,
                    index: i,
                });
            }
            let Some(&j) = index.get(&b) else {
                return Err(GraphError::Unknown {
                    number: node.number,
                    blocker: b,
                    index: i,
                });
            };
            list.push(j);
        }
        list.sort_unstable();
        list.dedup();
        blockers.push(list);
    }
    Ok(blockers)
}

/// Every node's dependents in one flat array (CSR): those of `j` are
/// `list[offsets[j]..offsets[j + 1]]`.
struct Dependents {
    offsets: Vec<usize>,
    list: Vec<usize>,
}

impl Dependents {
    fn of(blockers: &[Vec<usize>]) -> Dependents {
        let mut counts = vec![0usize; blockers.len()];
        for &j in blockers.iter().flatten() {
            counts[j] += 1;
        }
        let mut offsets = Vec::with_capacity(blockers.len() + 1);
        offsets.push(0);
        for count in &counts {
            offsets.push(offsets.last().unwrap() + count);
        }
        let mut fill = offsets.clone();
        let mut list = vec![0usize; *offsets.last().unwrap()];
        for (i, blockers_of_i) in blockers.iter().enumerate() {
            for &j in blockers_of_i {
                list[fill[j]] = i;
                fill[j] += 1;
            }
        }
        Dependents { offsets, list }
    }

    fn of_node(&self, j: usize) -> &[usize] {
        &self.list[self.offsets[j]..self.offsets[j + 1]]
    }
}

/// The failed numbers as indices; a number not in the graph is an error.
fn failed_indices(
    failed: &[u64],
    index: &HashMap<u64, usize>,
) -> Result<HashSet<usize>, GraphError> {
    let mut failed_set = HashSet::with_capacity(failed.len());
    for &f in failed {
        let Some(&i) = index.get(&f) else {
            return Err(GraphError::UnknownFailed { number: f });
        };
        failed_set.insert(i);
    }
    Ok(failed_set)
}

/// What Kahn's pass settled: the nodes released in order, each one's level and state, and
/// the blockers still unreleased (all zero unless there is a cycle).
struct Settled {
    order: Vec<usize>,
    level: Vec<usize>,
    state: Vec<State>,
    remaining: Vec<usize>,
}

/// Kahn's algorithm: a node leaves the queue once every blocker is settled, then takes its
/// state from them (failed, skipped because of a failed one, or runnable) and its level one
/// past its deepest blocker.
fn settle(
    nodes: &[Node],
    blockers: &[Vec<usize>],
    dependents: &Dependents,
    failed: &HashSet<usize>,
) -> Settled {
    let n = nodes.len();
    let mut remaining: Vec<usize> = blockers.iter().map(Vec::len).collect();
    let mut level = vec![0usize; n];
    let mut state = vec![State::Run; n];
    let mut queue: VecDeque<usize> = (0..n).filter(|&i| remaining[i] == 0).collect();
    let mut order = Vec::with_capacity(n);
    while let Some(i) = queue.pop_front() {
        // Every blocker of i is settled: decide i's own state.
        state[i] = if failed.contains(&i) {
            State::Failed
        } else {
            blockers[i]
                .iter()
                .find_map(|&b| match state[b] {
                    State::Failed => Some(State::Skipped(nodes[b].number)),
                    State::Skipped(root) => Some(State::Skipped(root)),
                    State::Run => None,
                })
                .unwrap_or(State::Run)
        };
        order.push(i);
        for &d in dependents.of_node(i) {
            level[d] = level[d].max(level[i] + 1);
            remaining[d] -= 1;
            if remaining[d] == 0 {
                queue.push_back(d);
            }
        }
    }
    Settled {
        order,
        level,
        state,
        remaining,
    }
}

/// The settled nodes by level, each level's members by number: its runnable ones in batches
/// of at most `max_concurrent`, its failed and skipped ones, and the counts.
fn group_by_level(nodes: &[Node], settled: &Settled, max_concurrent: usize) -> Levels {
    let Settled {
        order,
        level,
        state,
        ..
    } = settled;
    let depth = order.iter().map(|&i| level[i] + 1).max().unwrap_or(0);
    let mut by_level: Vec<Vec<usize>> = vec![Vec::new(); depth];
    for &i in order {
        by_level[level[i]].push(i);
    }
    let mut result = Levels {
        max_concurrent,
        nodes: nodes.len(),
        runnable: 0,
        failed: 0,
        skipped: 0,
        levels: Vec::with_capacity(depth),
        execution_order: Vec::with_capacity(depth),
    };
    for (l, members) in by_level.iter_mut().enumerate() {
        members.sort_unstable_by_key(|&i| nodes[i].number);
        let mut runnable = Vec::new();
        let mut failed = Vec::new();
        let mut skipped = Vec::new();
        for &i in members.iter() {
            match state[i] {
                State::Run => runnable.push(nodes[i].number),
                State::Failed => failed.push(nodes[i].number),
                State::Skipped(root) => skipped.push(Skipped {
                    number: nodes[i].number,
                    blocked_by: root,
                }),
            }
        }
        result.runnable += runnable.len();
        result.failed += failed.len();
        result.skipped += skipped.len();
        result
            .execution_order
            .push(members.iter().map(|&i| nodes[i].number).collect());
        result.levels.push(Level {
            level: l,
            batches: runnable
                .chunks(max_concurrent)
                .map(<[u64]>::to_vec)
                .collect(),
            failed,
            skipped,
        });
    }
    result
}

/// A cycle among the nodes Kahn's algorithm could not release: each such node still has an
/// unreleased blocker, so following those blockers must revisit a node.
fn find_cycle(nodes: &[Node], blockers: &[Vec<usize>], remaining: &[usize]) -> Vec<u64> {
    let start = remaining
        .iter()
        .position(|&r| r > 0)
        .expect("a node is left when there is a cycle");
    let mut seen_at: HashMap<usize, usize> = HashMap::new();
    let mut path = Vec::new();
    let mut current = start;
    loop {
        if let Some(&at) = seen_at.get(&current) {
            return path[at..]
                .iter()
                .map(|&i: &usize| nodes[i].number)
                .collect();
        }
        seen_at.insert(current, path.len());
        path.push(current);
        current = *blockers[current]
            .iter()
            .find(|&&b| remaining[b] > 0)
            .expect("an unreleased node has an unreleased blocker");
    }
}

/// A wholework phase label, in the order an issue moves through them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Phase {
    /// No `phase/*` label.
    None,
    Issue,
    Spec,
    Ready,
    Code,
    Review,
    Verify,
    Done,
}

impl Phase {
    pub const NAMES: [&'static str; 8] = [
        "none", "issue", "spec", "ready", "code", "review", "verify", "done",
    ];

    /// `code`, `phase/code` or `none`.
    pub fn parse(text: &str) -> Option<Phase> {
        let name = text.trim();
        let name = name.strip_prefix("phase/").unwrap_or(name);
        Some(match name {
            "none" | "" => Phase::None,
            "issue" => Phase::Issue,
            "spec" => Phase::Spec,
            "ready" => Phase::Ready,
            "code" => Phase::Code,
            "review" => Phase::Review,
            "verify" => Phase::Verify,
            "done" => Phase::Done,
            _ => return None,
        })
    }

    pub fn name(self) -> &'static str {
        Phase::NAMES[self as usize]
    }
}

/// What the parent's phase becomes after a level completes.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Aggregate {
    /// The phase to set on the parent, when it changes.
    pub update: Option<Phase>,
    /// `update`, `close-flow` (all children done: Step 4c decides) or `none`.
    pub action: &'static str,
    pub reason: String,
    pub children: usize,
}

/// The seed's aggregation rules:
/// - all children at `done` → the close flow decides (no aggregate update here);
/// - all children at `verify` or later → parent `verify`;
/// - one or more children at `code` or later → parent `code`;
/// - otherwise the parent is left as it is.
pub fn aggregate(children: &[Phase]) -> Aggregate {
    let n = children.len();
    let at_least = |p: Phase| children.iter().filter(|&&c| c >= p).count();
    let (update, action, reason) = if n > 0 && at_least(Phase::Done) == n {
        (
            None,
            "close-flow",
            format!("all {n} children are done: the close flow decides (no aggregate update)"),
        )
    } else if n > 0 && at_least(Phase::Verify) == n {
        (
            Some(Phase::Verify),
            "update",
            format!("all {n} children are at verify or later"),
        )
    } else if at_least(Phase::Code) > 0 {
        (
            Some(Phase::Code),
            "update",
            format!(
                "{} of {n} children are at code or later",
                at_least(Phase::Code)
            ),
        )
    } else {
        (
            None,
            "none",
            format!("none of the {n} children has reached code"),
        )
    };
    Aggregate {
        update,
        action,
        reason,
        children: n,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn node(number: u64, blocked_by: &[u64]) -> Node {
        Node {
            number,
            blocked_by: blocked_by.to_vec(),
        }
    }

    #[test]
    fn levels_batches_and_skips() {
        // 1,2,3,4,5,6 independent; 7 blocked by 1; 8 by 7; 9 by 2 and 8.
        let nodes: Vec<Node> = vec![
            node(9, &[2, 8]),
            node(1, &[]),
            node(2, &[]),
            node(3, &[]),
            node(4, &[]),
            node(5, &[]),
            node(6, &[]),
            node(7, &[1]),
            node(8, &[7, 7]),
        ];
        let l = levels(&nodes, &[], 5).unwrap();
        assert_eq!(l.levels[0].batches, vec![vec![1, 2, 3, 4, 5], vec![6]]);
        assert_eq!(
            l.execution_order,
            vec![vec![1, 2, 3, 4, 5, 6], vec![7], vec![8], vec![9]]
        );
        let l = levels(&nodes, &[1], 5).unwrap();
        assert_eq!(l.levels[0].failed, vec![1]);
        assert_eq!(
            l.levels[0].batches,
            vec![vec![2, 3, 4, 5, 6]],
            "the failed node frees a slot"
        );
        assert_eq!(
            l.levels[1].skipped,
            vec![Skipped {
                number: 7,
                blocked_by: 1
            }]
        );
        assert_eq!(
            l.levels[3].skipped,
            vec![Skipped {
                number: 9,
                blocked_by: 1
            }],
            "transitively"
        );
        assert_eq!((l.runnable, l.failed, l.skipped), (5, 1, 3));
    }

    #[test]
    fn bad_graphs_are_named() {
        assert_eq!(
            levels(&[node(1, &[]), node(1, &[])], &[], 5)
                .unwrap_err()
                .to_string(),
            "node 1 is listed twice (nodes[0] and nodes[1])"
        );
        assert_eq!(
            levels(&[node(4, &[4])], &[], 5).unwrap_err().to_string(),
            "node 4 (nodes[0]) is blocked by itself"
        );
        assert_eq!(
            levels(&[node(4, &[99])], &[], 5).unwrap_err().to_string(),
            "node 4 (nodes[0]) is blocked by 99, which is not a node of the graph"
        );
        assert!(
            levels(&[node(4, &[])], &[5], 5)
                .unwrap_err()
                .to_string()
                .contains("--failed 5")
        );
        let cycle = levels(
            &[
                node(1, &[]),
                node(2, &[1, 4]),
                node(3, &[2]),
                node(4, &[3]),
                node(5, &[4]),
            ],
            &[],
            5,
        )
        .unwrap_err();
        let GraphError::Cycle(members) = &cycle else {
            panic!("{cycle}")
        };
        let mut sorted = members.clone();
        sorted.sort();
        assert_eq!(sorted, vec![2, 3, 4], "{cycle}");
        assert!(
            cycle.to_string().starts_with("dependency cycle: "),
            "{cycle}"
        );
    }

    #[test]
    fn parses_both_shapes_and_ignores_extra_fields() {
        let object = br#"{"parent": 10, "nodes": [{"number": 1, "title": "x", "blocked_by": []}, {"id": 2, "blocked_by": [1]}]}"#;
        assert_eq!(parse(object).unwrap().len(), 2);
        assert_eq!(
            parse(b" [{\"number\": 3}]").unwrap()[0].blocked_by,
            Vec::<u64>::new()
        );
        assert!(parse(b"{\"nodes\": [{\"number\": -1}]}").is_err());
        assert!(parse(b"{\"nodes\": [").is_err());
    }

    /// The aggregation rules, row by row.
    #[test]
    fn the_aggregation_rules() {
        use Phase::*;
        let rows: [(&[Phase], Option<Phase>, &str); 9] = [
            (&[Ready, Code], Some(Code), "update"),
            (&[Issue, Review], Some(Code), "update"),
            (&[None, Done], Some(Code), "update"),
            (&[Verify, Done], Some(Verify), "update"),
            (&[Verify, Verify], Some(Verify), "update"),
            (&[Verify, Review], Some(Code), "update"),
            (&[Done, Done], Option::None, "close-flow"),
            (&[Ready, Issue, Spec, None], Option::None, "none"),
            (&[], Option::None, "none"),
        ];
        for (children, update, action) in rows {
            let a = aggregate(children);
            assert_eq!((a.update, a.action), (update, action), "{children:?}");
        }
        assert_eq!(Phase::parse("phase/verify"), Some(Verify));
        assert_eq!(Phase::parse("deploy"), Option::None);
        for name in Phase::NAMES {
            assert_eq!(Phase::parse(name).unwrap().name(), name);
        }
    }

    /// Random DAGs: node i may only be blocked by nodes listed before it.
    /// A random DAG in random order: node `i` of a topological order is blocked only by
    /// nodes before it (that is what keeps it acyclic), but the file lists the nodes shuffled
    /// and their numbers are a random permutation, so neither the input order nor the numbers
    /// hint at the levels.
    fn dag() -> impl Strategy<Value = (Vec<Node>, Vec<u64>, usize)> {
        (1usize..40)
            .prop_flat_map(|n| {
                let edges = proptest::collection::vec(
                    proptest::collection::vec(any::<proptest::sample::Index>(), 0..4),
                    n,
                );
                let failed = proptest::collection::vec(any::<proptest::sample::Index>(), 0..4);
                let permutation = || Just((0..n).collect::<Vec<usize>>()).prop_shuffle();
                (edges, failed, 1usize..7, permutation(), permutation())
            })
            .prop_map(|(edges, failed, cap, ids, order)| {
                let number = |i: usize| 1000 + 7 * ids[i] as u64;
                let nodes = order
                    .iter()
                    .map(|&i| Node {
                        number: number(i),
                        blocked_by: if i == 0 {
                            vec![]
                        } else {
                            edges[i].iter().map(|x| number(x.index(i))).collect()
                        },
                    })
                    .collect();
                let failed = failed
                    .iter()
                    .map(|x| number(x.index(edges.len())))
                    .collect();
                (nodes, failed, cap)
            })
    }

    proptest! {
        #[test]
        fn levels_respect_every_edge_and_skips_spread((nodes, failed, cap) in dag()) {
            let l = levels(&nodes, &failed, cap).unwrap();
            let mut level_of = HashMap::new();
            let mut skipped = HashSet::new();
            let mut failed_seen = HashSet::new();
            for lv in &l.levels {
                for batch in &lv.batches {
                    prop_assert!(!batch.is_empty() && batch.len() <= cap);
                    for &n in batch { level_of.insert(n, lv.level); }
                }
                for &n in &lv.failed { level_of.insert(n, lv.level); failed_seen.insert(n); }
                for s in &lv.skipped { level_of.insert(s.number, lv.level); skipped.insert(s.number); }
            }
            prop_assert_eq!(level_of.len(), nodes.len(), "every node appears once");
            for node in &nodes {
                for b in &node.blocked_by {
                    prop_assert!(level_of[b] < level_of[&node.number], "{} blocked by {}", node.number, b);
                    // A dependent of a failed or skipped node is skipped (unless it failed itself).
                    if (skipped.contains(b) || failed_seen.contains(b)) && !failed_seen.contains(&node.number) {
                        prop_assert!(skipped.contains(&node.number), "{} depends on {}", node.number, b);
                    }
                }
                // Levels are as early as possible.
                let expected = node.blocked_by.iter().map(|b| level_of[b] + 1).max().unwrap_or(0);
                prop_assert_eq!(level_of[&node.number], expected);
                // Skipped only with a reason.
                if skipped.contains(&node.number) {
                    prop_assert!(node.blocked_by.iter().any(|b| skipped.contains(b) || failed_seen.contains(b)));
                }
            }
        }
    }
}
