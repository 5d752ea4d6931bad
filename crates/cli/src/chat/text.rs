//! Text laid out in columns: cut to a width, or wrapped at spaces, counting a wide character as
//! the two columns a terminal gives it.

use unicode_width::UnicodeWidthChar;

/// `text` cut to `width` columns, `…` where it was cut.
pub fn cut(text: &str, width: usize) -> String {
    let mut out = String::new();
    let mut used = 0;
    for c in text.chars() {
        let c = if c.is_control() { ' ' } else { c };
        let w = c.width().unwrap_or(0);
        if used + w > width {
            if width > 0 {
                while used + 1 > width {
                    match out.pop() {
                        Some(last) => used -= last.width().unwrap_or(0),
                        None => break,
                    }
                }
                out.push('…');
            }
            return out;
        }
        used += w;
        out.push(c);
    }
    out
}

/// `text` in rows of at most `width` columns, broken at spaces where a row allows it.
pub fn wrap(text: &str, width: usize) -> Vec<String> {
    let width = width.max(1);
    let mut rows = Vec::new();
    for line in text.split('\n') {
        let mut row = String::new();
        let mut used = 0;
        // The row's last space: where to break when a word does not fit.
        let mut space: Option<(usize, usize)> = None;
        for c in line.chars() {
            let c = if c == '\t' || c.is_control() { ' ' } else { c };
            let w = c.width().unwrap_or(0);
            if used + w > width {
                match space {
                    Some((at, used_before)) if at > 0 => {
                        let rest = row.split_off(at + 1);
                        row.pop();
                        rows.push(std::mem::take(&mut row));
                        row = rest;
                        used -= used_before + 1;
                    }
                    _ => {
                        rows.push(std::mem::take(&mut row));
                        used = 0;
                    }
                }
                space = None;
            }
            if c == ' ' {
                space = Some((row.len(), used));
            }
            row.push(c);
            used += w;
        }
        rows.push(row);
    }
    rows
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn wrapping_breaks_at_spaces_and_cuts_long_words() {
        assert_eq!(wrap("the quick brown fox", 10), ["the quick", "brown fox"]);
        assert_eq!(wrap("abcdefghijkl", 5), ["abcde", "fghij", "kl"]);
        assert_eq!(wrap("a\n\nb", 5), ["a", "", "b"]);
        assert_eq!(cut("hello world", 6), "hello…");
        assert_eq!(cut("日本語", 5), "日本…");
    }
}
