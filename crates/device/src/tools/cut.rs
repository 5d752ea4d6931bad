//! docs/protocol.md "The prompt the model gets": a tool result longer than `result_max_chars` characters
//! is cut to its first and last `result_keep_chars`, with a line saying how much was left out, so
//! one huge output cannot fill the model's context.

use crate::decisions::Tools;

/// `text` as the model gets it. Counts characters, not bytes, and cuts only between characters.
pub fn cut_result(text: &str, numbers: &Tools) -> String {
    let total = text.chars().count();
    if total <= numbers.result_max_chars {
        return text.to_owned();
    }
    let keep = numbers.result_keep_chars;
    let head_end = byte_index(text, keep);
    let tail_start = byte_index(text, total - keep);
    let left_out = total - 2 * keep;
    format!(
        "{}\n[… {left_out} of {total} characters left out here …]\n{}",
        &text[..head_end],
        &text[tail_start..]
    )
}

/// The first `max` characters of `text`, with an ellipsis when there were more: a line for a
/// person (a notice, a timeline step, a grep match), where the model's [`cut_result`] keeps both
/// ends.
pub fn shortened(text: &str, max: usize) -> String {
    match text.char_indices().nth(max) {
        Some((end, _)) => format!("{}…", &text[..end]),
        None => text.to_string(),
    }
}

/// The byte offset of the `n`th character (the end of the text when there are fewer).
fn byte_index(text: &str, n: usize) -> usize {
    text.char_indices().nth(n).map_or(text.len(), |(i, _)| i)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn numbers() -> &'static Tools {
        &crate::decisions::Decisions::built_in().tools
    }

    fn max() -> usize {
        numbers().result_max_chars
    }

    fn keep() -> usize {
        numbers().result_keep_chars
    }

    fn cut_result(text: &str) -> String {
        super::cut_result(text, numbers())
    }

    #[test]
    fn the_numbers_are_the_engines() {
        assert_eq!((max(), keep()), (30_000, 15_000));
    }

    #[test]
    fn a_result_at_the_limit_is_unchanged() {
        let text = "a".repeat(max());
        assert_eq!(cut_result(&text), text);
        assert_eq!(cut_result(""), "");
    }

    #[test]
    fn one_character_more_is_cut_with_the_counts() {
        let text = format!("{}{}{}", "h".repeat(keep()), "m", "t".repeat(keep()));
        let cut = cut_result(&text);
        let (head, rest) = cut.split_once('\n').expect("a notice line");
        let (notice, tail) = rest.split_once('\n').expect("a line after the notice");
        assert_eq!(head, "h".repeat(keep()));
        assert_eq!(tail, "t".repeat(keep()));
        assert_eq!(notice, "[… 1 of 30001 characters left out here …]");
    }

    #[test]
    fn multi_byte_characters_are_counted_and_never_split() {
        // 2, 3 and 4 bytes each: a byte-based cut would panic or split one.
        let text: String = ["é", "€", "🦀"]
            .iter()
            .cycle()
            .take(max() + 10)
            .copied()
            .collect();
        assert_eq!(text.chars().count(), 30_010);
        let cut = cut_result(&text);
        let parts: Vec<&str> = cut.split('\n').collect();
        assert_eq!(parts.len(), 3);
        assert_eq!(parts[0].chars().count(), keep());
        assert_eq!(parts[2].chars().count(), keep());
        assert!(text.starts_with(parts[0]) && text.ends_with(parts[2]));
        assert_eq!(parts[1], "[… 10 of 30010 characters left out here …]");

        let exact: String = "🦀".repeat(max());
        assert_eq!(cut_result(&exact), exact);
    }
}
