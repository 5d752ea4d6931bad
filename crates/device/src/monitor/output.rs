//! What a watch does with its output as it streams: hash every byte, keep the start for the excerpt.

use sha2::{Digest, Sha256};

/// The output of one watch, taken chunk by chunk. Memory stays at most `keep_max` bytes whatever the
/// output's length: the hash needs no copy of what it has seen.
pub(super) struct OutputSink {
    hasher: Sha256,
    kept: Vec<u8>,
    keep_max: usize,
    bytes: u64,
}

impl OutputSink {
    pub(super) fn new(keep_max: usize) -> Self {
        Self {
            hasher: Sha256::new(),
            kept: Vec::new(),
            keep_max,
            bytes: 0,
        }
    }

    pub(super) fn take(&mut self, chunk: &[u8]) {
        self.hasher.update(chunk);
        self.bytes += chunk.len() as u64;
        let keep = chunk.len().min(self.keep_max - self.kept.len());
        if keep == 0 {
            return;
        }
        // Grow as a Vec would, but never past keep_max, so the kept buffer is the bound it claims.
        let needed = self.kept.len() + keep;
        if needed > self.kept.capacity() {
            let target = needed.max(self.kept.capacity() * 2).min(self.keep_max);
            self.kept.reserve_exact(target - self.kept.len());
        }
        self.kept.extend_from_slice(&chunk[..keep]);
    }

    /// Every byte read, whether kept or not.
    pub(super) fn bytes(&self) -> u64 {
        self.bytes
    }

    /// `sha256:` + hex of sha256(output + "\n" + status in decimal) (docs/protocol.md, Monitor hash).
    pub(super) fn hash(&self, status: i32) -> String {
        let mut hasher = self.hasher.clone();
        hasher.update(b"\n");
        hasher.update(status.to_string().as_bytes());
        format!("sha256:{}", hex::encode(hasher.finalize()))
    }

    /// The excerpt and whether the output had more than it shows.
    pub(super) fn excerpt(&self, max_chars: usize) -> (String, bool) {
        decode_excerpt(&self.kept, self.bytes > self.kept.len() as u64, max_chars)
    }
}

/// The start of `kept` decoded as `String::from_utf8_lossy` would (one U+FFFD for each invalid
/// sequence), at most `max_chars` characters, and whether the output goes on past the excerpt.
/// `more_than_kept` says the output went on past `kept`: then bytes at the very end that begin a
/// character are the cut, not bad bytes, and are left out rather than shown as U+FFFD.
pub(super) fn decode_excerpt(kept: &[u8], more_than_kept: bool, max_chars: usize) -> (String, bool) {
    let mut excerpt = String::new();
    let mut chars = 0;
    let mut chunks = kept.utf8_chunks().peekable();
    while let Some(chunk) = chunks.next() {
        for c in chunk.valid().chars() {
            if chars == max_chars {
                return (excerpt, true);
            }
            excerpt.push(c);
            chars += 1;
        }
        let invalid = chunk.invalid();
        if invalid.is_empty() {
            continue;
        }
        if more_than_kept && chunks.peek().is_none() && is_incomplete_character(invalid) {
            return (excerpt, true);
        }
        if chars == max_chars {
            return (excerpt, true);
        }
        excerpt.push(char::REPLACEMENT_CHARACTER);
        chars += 1;
    }
    (excerpt, more_than_kept)
}

/// Whether these bytes are the beginning of a valid character that simply stops early.
fn is_incomplete_character(bytes: &[u8]) -> bool {
    std::str::from_utf8(bytes)
        .err()
        .is_some_and(|e| e.error_len().is_none())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn decode_excerpt_table() {
        // (kept, more_than_kept, max_chars, excerpt, truncated)
        let cases: &[(&[u8], bool, usize, &str, bool)] = &[
            (b"", false, 5, "", false),
            (b"", true, 5, "", true),
            (b"hello", false, 5, "hello", false),
            (b"hello", false, 4, "hell", true),
            (b"hello", true, 5, "hello", true),
            ("h\u{e9}llo".as_bytes(), false, 2, "h\u{e9}", true),
            ("\u{e9}\u{e9}".as_bytes(), false, 2, "\u{e9}\u{e9}", false),
            (b"ok\xff\xfeend", false, 10, "ok\u{fffd}\u{fffd}end", false),
            (b"ok\xff\xfeend", false, 3, "ok\u{fffd}", true),
            (b"ok\xff", false, 2, "ok", true),
            // A character cut where keeping stopped is dropped, and says there is more.
            (b"abc\xc3", true, 10, "abc", true),
            (b"abc\xe2\x82", true, 10, "abc", true),
            // The same bytes at the real end of the output are bad bytes, shown as such.
            (b"abc\xc3", false, 10, "abc\u{fffd}", false),
            // A bad byte (not a cut character) at the end of the kept bytes is still shown.
            (b"abc\xff", true, 10, "abc\u{fffd}", true),
            (b"\xff\x00\n", false, 10, "\u{fffd}\0\n", false),
        ];
        for (kept, more, max, excerpt, truncated) in cases {
            assert_eq!(
                decode_excerpt(kept, *more, *max),
                (excerpt.to_string(), *truncated),
                "{kept:?} {more} {max}"
            );
        }
    }

    #[test]
    fn decode_excerpt_matches_from_utf8_lossy() {
        let samples: &[&[u8]] = &[
            b"plain",
            b"\xc3\xa9\xff\xe2\x82\xac\xf0\x9f",
            b"\xed\xa0\x80x",
            b"\xf4\x90\x80\x80",
            b"a\xc0\xafb",
        ];
        for sample in samples {
            let (excerpt, truncated) = decode_excerpt(sample, false, usize::MAX);
            assert_eq!(excerpt, String::from_utf8_lossy(sample), "{sample:?}");
            assert!(!truncated);
        }
    }

    #[test]
    fn sink_keeps_at_most_keep_max_and_counts_everything() {
        let mut sink = OutputSink::new(5);
        sink.take(b"abc");
        sink.take(b"defgh");
        sink.take(b"ijk");
        assert_eq!(sink.bytes(), 11);
        assert_eq!(sink.kept, b"abcde");
        assert!(sink.kept.capacity() <= 5, "capacity {}", sink.kept.capacity());
        assert_eq!(sink.excerpt(100), ("abcde".to_string(), true));
        let mut whole = OutputSink::new(100);
        whole.take(b"abcdefghijk");
        assert_eq!(sink.hash(0), whole.hash(0));
        assert_ne!(whole.hash(0), whole.hash(1));
    }

    #[test]
    fn hash_of_nothing_and_zero_matches_the_conformance_file() {
        // conformance/monitor.json, "empty output, success".
        assert_eq!(
            OutputSink::new(10).hash(0),
            "sha256:c7757c0896cbfe6182d8ea2bda4a8bf94addc428980eedab8609c57ca7ff1763"
        );
    }
}
