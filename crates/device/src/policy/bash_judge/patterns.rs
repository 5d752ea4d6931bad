//! Permission rules (`permissions: { bash: { allow, ask, deny } }`): a pattern is words; `*` in a
//! word matches any characters within that word, and a last word ending in `*` also lets any further
//! words follow (`cargo *` matches `cargo` and `cargo build --release`). Without a trailing `*` the
//! words must match exactly and completely: `git status` does not match `git status --short`.

use super::walk::Arg;

pub fn matches(pattern: &str, words: &[Arg]) -> bool {
    let tokens: Vec<&str> = pattern.split_whitespace().collect();
    let Some((last, leading)) = tokens.split_last() else {
        return false;
    };
    let open_ended = last.ends_with('*');
    for (i, token) in leading.iter().enumerate() {
        match words.get(i) {
            Some(word) if glob(token, &word.text) => {}
            _ => return false,
        }
    }
    let rest = &words[leading.len().min(words.len())..];
    match rest.split_first() {
        None => *last == "*",
        Some((word, after)) => glob(last, &word.text) && (open_ended || after.is_empty()),
    }
}

/// `*` matches any run of characters; everything else matches itself.
fn glob(pattern: &str, text: &str) -> bool {
    let (p, t): (Vec<char>, Vec<char>) = (pattern.chars().collect(), text.chars().collect());
    let (mut pi, mut ti) = (0, 0);
    let mut star: Option<(usize, usize)> = None;
    while ti < t.len() {
        if pi < p.len() && p[pi] == '*' {
            star = Some((pi, ti));
            pi += 1;
        } else if pi < p.len() && p[pi] == t[ti] {
            pi += 1;
            ti += 1;
        } else if let Some((sp, st)) = star {
            pi = sp + 1;
            ti = st + 1;
            star = Some((sp, st + 1));
        } else {
            return false;
        }
    }
    p[pi..].iter().all(|&c| c == '*')
}

#[cfg(test)]
mod tests {
    use super::*;

    fn words(line: &str) -> Vec<Arg> {
        line.split_whitespace().map(Arg::literal).collect()
    }

    #[test]
    fn patterns() {
        let cases = [
            ("git status", "git status", true),
            ("git status", "git status --short", false),
            ("git status", "git", false),
            ("cargo *", "cargo", true),
            ("cargo *", "cargo build --release", true),
            ("cargo *", "cargoo build", false),
            ("npm run test*", "npm run test", true),
            ("npm run test*", "npm run test:unit --watch", true),
            ("npm run test*", "npm run build", false),
            ("make t*s", "make tests", true),
            ("make t*s", "make test", false),
            ("*", "anything at all", true),
            ("", "ls", false),
        ];
        for (pattern, line, want) in cases {
            assert_eq!(matches(pattern, &words(line)), want, "{pattern:?} vs {line:?}");
        }
    }
}
