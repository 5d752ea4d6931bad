//! The picker's answer from an index: fuzzy matched as paths (nucleo, smart case), each score
//! nudged up by how recently the session used the file, ties going to the shallower path. An empty
//! query gives the recent files first, then the index's shallowest entries.

use std::collections::HashMap;

use nucleo_matcher::pattern::{CaseMatching, Normalization, Pattern};
use nucleo_matcher::{Config, Matcher};

use super::index::{Entry, Snapshot};

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
    let rank: HashMap<&str, usize> = recent
        .iter()
        .enumerate()
        .map(|(i, path)| (path.as_str(), i))
        .collect();
    if query.is_empty() {
        return empty_query(snapshot, recent, limit);
    }
    let pattern = Pattern::parse(query, CaseMatching::Smart, Normalization::Smart);
    let mut matcher = Matcher::new(Config::DEFAULT.match_paths());
    let nudge = |path: &str| {
        rank.get(path).map_or(0, |&i| {
            // The most recent gets the whole bonus, the oldest remembered a little.
            let n = recent.len() as u32;
            bonus * (n - i as u32) / n
        })
    };
    let mut found: Vec<(u32, usize)> = snapshot
        .haystacks
        .iter()
        .enumerate()
        .filter_map(|(i, haystack)| {
            let score = pattern.score(haystack.slice(..), &mut matcher)?;
            Some((score + nudge(&snapshot.entries[i].path), i))
        })
        .collect();
    // Best score first; among equals the index's order (shallow first, then by path).
    let by_rank = |a: &(u32, usize), b: &(u32, usize)| b.0.cmp(&a.0).then(a.1.cmp(&b.1));
    if found.len() > limit {
        found.select_nth_unstable_by(limit, by_rank);
        found.truncate(limit);
    }
    found.sort_unstable_by(by_rank);
    found.into_iter().map(|(_, i)| &snapshot.entries[i]).collect()
}

fn empty_query<'a>(snapshot: &'a Snapshot, recent: &[String], limit: usize) -> Vec<&'a Entry> {
    // A recent file no longer in the index (deleted, now ignored) is not offered. The entries are
    // in the index's order, so each is found by a binary search, not a map of the whole index.
    let mut out: Vec<&Entry> = recent
        .iter()
        .filter_map(|path| {
            let at = snapshot
                .entries
                .binary_search_by(|e| order_key(&e.path).cmp(&order_key(path)))
                .ok()?;
            Some(&snapshot.entries[at])
        })
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

/// The index's order: shallow first, then by path.
pub fn order_key(path: &str) -> (usize, &str) {
    (path.bytes().filter(|b| *b == b'/').count(), path)
}

#[cfg(test)]
mod tests {
    use super::super::index::Kind;
    use super::*;
    use nucleo_matcher::Utf32String;
    use std::time::{Duration, Instant};

    fn snapshot(paths: &[&str]) -> Snapshot {
        let entries: Vec<Entry> = paths
            .iter()
            .map(|p| Entry {
                path: p.trim_end_matches('/').to_string(),
                kind: if p.ends_with('/') { Kind::Dir } else { Kind::File },
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
