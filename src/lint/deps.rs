//! The `depends_on` graph of a task root and its cycles: one cycle reported per strongly
//! connected group of modules (Tarjan's algorithm, iterative so a 10,000-module chain cannot
//! overflow the stack), shown as the shortest cycle through the group's first module.

use std::collections::{BTreeMap, HashMap, VecDeque};

/// One cycle per strongly connected group of two or more modules, each starting at the
/// group's smallest name (the cycle closes back to it), sorted by that name. Edges to modules
/// that are not keys of `graph` are ignored; self-edges are not cycles here (`depends-self`
/// reports them).
pub fn cycles(graph: &BTreeMap<String, Vec<String>>) -> Vec<Vec<String>> {
    let names: Vec<&str> = graph.keys().map(String::as_str).collect();
    let id: HashMap<&str, usize> = names.iter().enumerate().map(|(i, n)| (*n, i)).collect();
    let adjacency: Vec<Vec<usize>> = graph
        .values()
        .map(|deps| {
            let mut targets: Vec<usize> = deps
                .iter()
                .filter_map(|d| id.get(d.as_str()).copied())
                .collect();
            targets.sort_unstable();
            targets.dedup();
            targets
        })
        .collect();
    let components = strongly_connected(&adjacency);
    let mut cycles: Vec<Vec<String>> = components
        .into_iter()
        .filter(|component| component.len() > 1)
        .map(|component| {
            let start = *component.iter().min().expect("components are not empty");
            shortest_cycle(&adjacency, &component, start)
                .into_iter()
                .map(|node| names[node].to_string())
                .collect()
        })
        .collect();
    cycles.sort();
    cycles
}

/// "a -> b -> c -> a".
pub fn render(cycle: &[String]) -> String {
    let mut text = cycle.join(" -> ");
    if let Some(first) = cycle.first() {
        text.push_str(" -> ");
        text.push_str(first);
    }
    text
}

fn strongly_connected(adjacency: &[Vec<usize>]) -> Vec<Vec<usize>> {
    let n = adjacency.len();
    let mut index: Vec<Option<usize>> = vec![None; n];
    let mut low = vec![0; n];
    let mut on_stack = vec![false; n];
    let mut stack = Vec::new();
    let mut counter = 0;
    let mut components = Vec::new();
    for root in 0..n {
        if index[root].is_some() {
            continue;
        }
        let mut calls: Vec<(usize, usize)> = vec![(root, 0)];
        index[root] = Some(counter);
        low[root] = counter;
        counter += 1;
        stack.push(root);
        on_stack[root] = true;
        while let Some(&mut (node, ref mut next_edge)) = calls.last_mut() {
            if let Some(&target) = adjacency[node].get(*next_edge) {
                *next_edge += 1;
                match index[target] {
                    None => {
                        index[target] = Some(counter);
                        low[target] = counter;
                        counter += 1;
                        stack.push(target);
                        on_stack[target] = true;
                        calls.push((target, 0));
                    }
                    Some(target_index) if on_stack[target] => {
                        low[node] = low[node].min(target_index);
                    }
                    Some(_) => {}
                }
                continue;
            }
            calls.pop();
            if let Some(&(parent, _)) = calls.last() {
                low[parent] = low[parent].min(low[node]);
            }
            if Some(low[node]) == index[node] {
                let mut component = Vec::new();
                while let Some(member) = stack.pop() {
                    on_stack[member] = false;
                    component.push(member);
                    if member == node {
                        break;
                    }
                }
                components.push(component);
            }
        }
    }
    components
}

/// The shortest path from `start` back to itself inside `component` (breadth first).
fn shortest_cycle(adjacency: &[Vec<usize>], component: &[usize], start: usize) -> Vec<usize> {
    let inside = |node: usize| component.contains(&node);
    let mut parent: HashMap<usize, usize> = HashMap::new();
    let mut queue = VecDeque::from([start]);
    while let Some(node) = queue.pop_front() {
        for &next in &adjacency[node] {
            if !inside(next) {
                continue;
            }
            if next == start {
                let mut path = vec![node];
                let mut at = node;
                while at != start {
                    at = parent[&at];
                    path.push(at);
                }
                path.reverse();
                return path;
            }
            if next != start && !parent.contains_key(&next) {
                parent.insert(next, node);
                queue.push_back(next);
            }
        }
    }
    unreachable!(
        "a strongly connected component of two or more nodes has a cycle through each node"
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn graph(edges: &[(&str, &str)], nodes: &[&str]) -> BTreeMap<String, Vec<String>> {
        let mut graph: BTreeMap<String, Vec<String>> =
            nodes.iter().map(|n| (n.to_string(), Vec::new())).collect();
        for (from, to) in edges {
            graph
                .entry(from.to_string())
                .or_default()
                .push(to.to_string());
        }
        graph
    }

    #[test]
    fn finds_one_cycle_per_group_starting_at_the_smallest_name() {
        let g = graph(
            &[
                ("c", "a"),
                ("a", "b"),
                ("b", "c"),
                ("b", "a"),
                ("d", "e"),
                ("e", "d"),
                ("f", "a"),
            ],
            &["a", "b", "c", "d", "e", "f"],
        );
        let found = cycles(&g);
        assert_eq!(found, vec![vec!["a", "b"], vec!["d", "e"]]);
        assert_eq!(render(&found[0]), "a -> b -> a");
        assert!(
            cycles(&graph(
                &[("a", "b"), ("b", "c"), ("a", "ghost")],
                &["a", "b", "c"]
            ))
            .is_empty()
        );
    }

    #[test]
    fn a_long_chain_does_not_overflow() {
        let names: Vec<String> = (0..20_000).map(|i| format!("m{i:05}")).collect();
        let mut g: BTreeMap<String, Vec<String>> = BTreeMap::new();
        for pair in names.windows(2) {
            g.insert(pair[0].clone(), vec![pair[1].clone()]);
        }
        g.insert(names[names.len() - 1].clone(), vec![names[0].clone()]);
        let found = cycles(&g);
        assert_eq!(found.len(), 1);
        assert_eq!(found[0].len(), 20_000);
    }

    fn acyclic(adjacency: &BTreeMap<String, Vec<String>>) -> bool {
        // Kahn: repeatedly remove nodes without incoming edges.
        let mut incoming: BTreeMap<&str, usize> =
            adjacency.keys().map(|k| (k.as_str(), 0)).collect();
        for deps in adjacency.values() {
            for dep in deps {
                if let Some(count) = incoming.get_mut(dep.as_str()) {
                    *count += 1;
                }
            }
        }
        let mut ready: Vec<&str> = incoming
            .iter()
            .filter(|(_, c)| **c == 0)
            .map(|(k, _)| *k)
            .collect();
        let mut removed = 0;
        while let Some(node) = ready.pop() {
            removed += 1;
            for dep in &adjacency[node] {
                if let Some(count) = incoming.get_mut(dep.as_str()) {
                    *count -= 1;
                    if *count == 0 {
                        ready.push(dep.as_str());
                    }
                }
            }
        }
        removed == adjacency.len()
    }

    proptest! {
        #[test]
        fn reported_cycles_are_real_disjoint_and_complete(
            edges in proptest::collection::vec((0u8..8, 0u8..8), 0..20)
        ) {
            let mut g: BTreeMap<String, Vec<String>> = (0..8).map(|i| (format!("n{i}"), Vec::new())).collect();
            for (from, to) in edges {
                if from != to {
                    g.get_mut(&format!("n{from}")).unwrap().push(format!("n{to}"));
                }
            }
            let found = cycles(&g);
            let mut seen = std::collections::HashSet::new();
            for cycle in &found {
                prop_assert!(cycle.len() >= 2);
                for (i, node) in cycle.iter().enumerate() {
                    prop_assert!(seen.insert(node.clone()), "cycles share {}", node);
                    let next = &cycle[(i + 1) % cycle.len()];
                    prop_assert!(g[node].contains(next), "{} -> {} is not an edge", node, next);
                }
                prop_assert_eq!(&cycle[0], cycle.iter().min().unwrap());
            }
            prop_assert_eq!(found.is_empty(), acyclic(&g));
        }
    }
}
