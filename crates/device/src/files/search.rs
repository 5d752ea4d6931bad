//! The picker's answer from an index: fuzzy matched as paths (nucleo, smart case), each score
//! nudged up by how recently the session used the file, ties going to the shallower path. An empty
//! query gives the recent files first, then the index's shallowest entries.

use std::collections::HashMap;

use nucleo_matcher::pattern::{CaseMatching, Normalization, Pattern};
use nucleo_matcher::{Config, Matcher};

use super::index::{Entry, Snapshot, order_key};

/// At most `limit` entries of `snapshot` for `query`; `recent` is most recent first, relative to
/// the index's folder. `bonus` is what the most recent file gets added to its score.
pub fn search<'a>(
    snapshot: &'a Snapshot,
    query: &str,
    recent: &[String],
    limit: usize,
    bonus: u32,
) -> Vec<&'a Entry> {
    let query = query.trim();
    if query.is_empty() {
        return empty_query(snapshot, recent, limit);
    }
    // The most recent file gets the whole bonus, the oldest remembered a little; by index position.
    let n = recent.len() as u32;
    let bonuses: HashMap<usize, u32> = recent
        .iter()
        .enumerate()
        .filter_map(|(rank, path)| Some((position(snapshot, path)?, bonus * (n - rank as u32) / n)))
        .collect();
    let pattern = Pattern::parse(query, CaseMatching::Smart, Normalization::Smart);
    let score = |range: std::ops::Range<usize>| {
        let mut matcher = Matcher::new(Config::DEFAULT.match_paths());
        // Only the best are kept as it goes, so a query that matches everything allocates little.
        let mut found: Vec<(u32, usize)> = Vec::with_capacity(limit * 2 + 1);
        for i in range {
            if let Some(score) = pattern.score(snapshot.haystacks[i].slice(..), &mut matcher) {
                found.push((score + bonuses.get(&i).copied().unwrap_or(0), i));
                if found.len() > limit * 2 {
                    best(&mut found, limit);
                }
            }
        }
        best(&mut found, limit);
        found
    };
    // A large index is scored on several threads, each keeping its best; a picker is typed into
    // on a machine with cores to spare.
    let total = snapshot.haystacks.len();
    let threads = std::thread::available_parallelism()
        .map_or(1, |n| n.get())
        .min(MAX_THREADS)
        .min(total.div_ceil(PER_THREAD_AT_LEAST))
        .max(1);
    let mut found: Vec<(u32, usize)> = if threads == 1 {
        score(0..total)
    } else {
        let chunk = total.div_ceil(threads);
        std::thread::scope(|scope| {
            let score = &score;
            let parts: Vec<_> = (0..total)
                .step_by(chunk)
                .map(|start| scope.spawn(move || score(start..(start + chunk).min(total))))
                .collect();
            parts
                .into_iter()
                .flat_map(|part| part.join().unwrap_or_default())
                .collect()
        })
    };
    best(&mut found, limit);
    found.into_iter().map(|(_, i)| &snapshot.entries[i]).collect()
}

/// Scoring threads at most, and entries each has at least (fewer are not worth a thread).
const MAX_THREADS: usize = 8;
const PER_THREAD_AT_LEAST: usize = 16_384;

/// Keeps the `limit` best, best first; among equal scores the index's order (shallow first, then
/// by path).
fn best(found: &mut Vec<(u32, usize)>, limit: usize) {
    let by_rank = |a: &(u32, usize), b: &(u32, usize)| b.0.cmp(&a.0).then(a.1.cmp(&b.1));
    if found.len() > limit {
        found.select_nth_unstable_by(limit, by_rank);
        found.truncate(limit);
    }
    found.sort_unstable_by(by_rank);
}

/// Where `path` is in the index (its entries are in [`order_key`] order).
fn position(snapshot: &Snapshot, path: &str) -> Option<usize> {
    snapshot
        .entries
        .binary_search_by(|e| order_key(&e.path).cmp(&order_key(path)))
        .ok()
}

fn empty_query<'a>(snapshot: &'a Snapshot, recent: &[String], limit: usize) -> Vec<&'a Entry> {
    // A recent file no longer in the index (deleted, now ignored) is not offered. The entries are
    // in the index's order, so each is found by a binary search, not a map of the whole index.
    let mut out: Vec<&Entry> = recent
        .iter()
        .filter_map(|path| Some(&snapshot.entries[position(snapshot, path)?]))
        .take(limit)
        .collect();
    for entry in &snapshot.entries {
        if out.len() >= limit {
            break;
        }
        if !recent.contains(&entry.path) {
            out.push(entry);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::super::index::PathKind;
    use super::*;
    use nucleo_matcher::Utf32String;
    use std::time::{Duration, Instant};

    fn snapshot(paths: &[&str]) -> Snapshot {
        let entries: Vec<Entry> = paths
            .iter()
            .map(|p| Entry {
                path: p.trim_end_matches('/').to_string(),
                kind: if p.ends_with('/') {
                    PathKind::Dir
                } else {
                    PathKind::File
                },
            })
            .collect();
        let haystacks = entries
            .iter()
            .map(|e| Utf32String::from(e.path.as_str()))
            .collect();
        Snapshot {
            entries,
            haystacks,
            built: Instant::now(),
            took: Duration::ZERO,
            truncated: false,
        }
    }

    fn paths(found: &[&Entry]) -> Vec<String> {
        found.iter().map(|e| e.path.clone()).collect()
    }

    #[test]
    fn fuzzy_matches_in_score_order() {
        let s = snapshot(&[
            "README.md",
            "src/",
            "src/main.rs",
            "src/engine/mod.rs",
            "docs/maintenance.md",
        ]);
        let found = paths(&search(&s, "main", &[], 10, 64));
        assert_eq!(
            found.first().map(String::as_str),
            Some("src/main.rs"),
            "{found:?}"
        );
        assert!(found.contains(&"docs/maintenance.md".to_string()));
        assert!(!found.contains(&"README.md".to_string()));
        // Smart case: an upper-case letter asks for that case.
        assert_eq!(paths(&search(&s, "READ", &[], 10, 64)), ["README.md"]);
        assert!(search(&s, "zzz", &[], 10, 64).is_empty());
        assert_eq!(search(&s, "m", &[], 2, 64).len(), 2);
    }

    #[test]
    fn a_large_index_scored_on_threads_gives_the_same_answer() {
        let names: Vec<String> = (0..PER_THREAD_AT_LEAST * 3)
            .map(|n| format!("d{}/f{n:06}.rs", n % 7))
            .collect();
        let mut s = snapshot(&names.iter().map(String::as_str).collect::<Vec<_>>());
        s.entries
            .sort_by(|a, b| order_key(&a.path).cmp(&order_key(&b.path)));
        s.haystacks = s
            .entries
            .iter()
            .map(|e| Utf32String::from(e.path.as_str()))
            .collect();
        let found = paths(&search(&s, "f0420", &[], 5, 64));
        assert_eq!(found.len(), 5, "{found:?}");
        assert!(found.iter().all(|p| p.contains("f0420")), "{found:?}");
        // Recent use still counts, wherever the file is in the index.
        let recent = vec!["d3/f042017.rs".to_string()];
        assert_eq!(paths(&search(&s, "f0420", &recent, 5, 64))[0], "d3/f042017.rs");
    }

    #[test]
    fn recent_use_nudges_the_order() {
        let s = snapshot(&["a/config.rs", "b/config.rs"]);
        assert_eq!(paths(&search(&s, "config", &[], 10, 64))[0], "a/config.rs");
        let recent = vec!["b/config.rs".to_string()];
        assert_eq!(paths(&search(&s, "config", &recent, 10, 64))[0], "b/config.rs");
    }

    #[test]
    fn an_empty_query_gives_the_recent_ones_first() {
        let s = snapshot(&["a.txt", "b.txt", "src/", "src/c.rs"]);
        let recent = vec![
            "src/c.rs".to_string(),
            "gone.txt".to_string(),
            "b.txt".to_string(),
        ];
        assert_eq!(
            paths(&search(&s, "  ", &recent, 10, 64)),
            ["src/c.rs", "b.txt", "a.txt", "src"]
        );
        assert_eq!(paths(&search(&s, "", &recent, 1, 64)), ["src/c.rs"]);
        assert_eq!(paths(&search(&s, "", &[], 2, 64)), ["a.txt", "b.txt"]);
    }
}
