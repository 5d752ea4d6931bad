//! Brace expansion, bash's first: `{sudo,x} ls` runs `sudo ls x ls`, `cat {.env,x}` reads `.env`,
//! `cat .en{a..z}` reads `.env`. It works on the word as written (a quoted brace is text), before
//! quotes are removed; each word it makes is then read as a word of its own.

/// More words than this from one word: the judge does not list them.
const MAX_WORDS: usize = 256;

/// The words `raw` expands to: itself when it has no brace expansion, `None` when too many.
pub fn expand(raw: &str) -> Option<Vec<String>> {
    let mut out = Vec::new();
    expand_into(raw, &mut out, 0)?;
    Some(out)
}

fn expand_into(raw: &str, out: &mut Vec<String>, depth: usize) -> Option<()> {
    if depth > 8 {
        return None;
    }
    let Some((open, close, items)) = first_brace(raw) else {
        out.push(raw.to_string());
        return Some(());
    };
    let (before, after) = (&raw[..open], &raw[close + 1..]);
    for item in items {
        expand_into(&format!("{before}{item}{after}"), out, depth + 1)?;
        if out.len() > MAX_WORDS {
            return None;
        }
    }
    Some(())
}

/// The first unquoted `{…}` that expands: its bounds and what it expands to.
fn first_brace(raw: &str) -> Option<(usize, usize, Vec<String>)> {
    let bytes = raw.as_bytes();
    let mut i = 0;
    let mut quote: Option<u8> = None;
    while i < bytes.len() {
        let b = bytes[i];
        match (quote, b) {
            (_, b'\\') if quote != Some(b'\'') => i += 1,
            (None, b'\'' | b'"') => quote = Some(b),
            (Some(q), _) if q == b => quote = None,
            // `${…}` is a parameter, not a brace expansion.
            (None, b'{') if i == 0 || bytes[i - 1] != b'$' => {
                if let Some(found) = brace_at(raw, i) {
                    return Some(found);
                }
            }
            _ => {}
        }
        i += 1;
    }
    None
}

/// The brace expression opening at `open`: split at its top-level commas, or a `{a..b}` range.
fn brace_at(raw: &str, open: usize) -> Option<(usize, usize, Vec<String>)> {
    let bytes = raw.as_bytes();
    let (mut depth, mut quote) = (0usize, None::<u8>);
    let mut commas = Vec::new();
    let mut i = open;
    while i < bytes.len() {
        let b = bytes[i];
        match (quote, b) {
            (_, b'\\') if quote != Some(b'\'') => i += 1,
            (None, b'\'' | b'"') => quote = Some(b),
            (Some(q), _) if q == b => quote = None,
            (None, b'{') => depth += 1,
            (None, b',') if depth == 1 => commas.push(i),
            (None, b'}') => {
                depth -= 1;
                if depth == 0 {
                    let inner = &raw[open + 1..i];
                    if !commas.is_empty() {
                        let mut items = Vec::new();
                        let mut start = open + 1;
                        for c in commas.iter().chain(std::iter::once(&i)) {
                            items.push(raw[start..*c].to_string());
                            start = c + 1;
                        }
                        return Some((open, i, items));
                    }
                    return range(inner).map(|items| (open, i, items));
                }
            }
            _ => {}
        }
        i += 1;
    }
    None
}

/// `{1..5}`, `{a..z}`, `{5..1..2}`: numbers or single characters.
fn range(inner: &str) -> Option<Vec<String>> {
    let parts: Vec<&str> = inner.split("..").collect();
    let (from, to, step) = match parts.as_slice() {
        [a, b] => (*a, *b, 1i64),
        [a, b, s] => (*a, *b, s.parse::<i64>().ok()?.checked_abs()?.max(1)),
        _ => return None,
    };
    if let (Ok(a), Ok(b)) = (from.parse::<i64>(), to.parse::<i64>()) {
        let count = a.abs_diff(b) / step.unsigned_abs() + 1;
        if count > MAX_WORDS as u64 {
            // Too many: as many empty words as it takes for `expand` to refuse.
            return Some(vec![String::new(); MAX_WORDS + 1]);
        }
        let dir = if a <= b { step } else { -step };
        return Some((0..count as i64).map(|k| (a + k * dir).to_string()).collect());
    }
    let (mut a, mut b) = (from.chars(), to.chars());
    let (Some(a), None, Some(b), None) = (a.next(), a.next(), b.next(), b.next()) else {
        return None;
    };
    let (lo, hi) = (a.min(b) as u32, a.max(b) as u32);
    Some(
        (lo..=hi)
            .step_by(step as usize)
            .filter_map(char::from_u32)
            .map(String::from)
            .collect(),
    )
}

#[cfg(test)]
mod tests {
    use super::expand;

    #[test]
    fn braces_expand_as_bash_does() {
        let words = |raw: &str| expand(raw).unwrap_or_default();
        assert_eq!(words("{sudo,x}"), ["sudo", "x"]);
        assert_eq!(words("a{b,c{d,e}}f"), ["abf", "acdf", "acef"]);
        assert_eq!(words("'{a,b}'"), ["'{a,b}'"]);
        assert_eq!(words("${x}"), ["${x}"]);
        assert_eq!(words("x{1..3}"), ["x1", "x2", "x3"]);
        assert!(words(".en{a..z}").contains(&".env".to_string()));
        assert_eq!(words("{a}"), ["{a}"]);
        assert!(expand("{1..100000}").is_none());
    }
}
