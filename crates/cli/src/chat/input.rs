//! The input line: the text being written and its cursor. It may hold megabytes (a paste), so
//! nothing done per keystroke walks the whole text: editing is at the cursor, and [`InputLine::view`]
//! looks only at the characters around the cursor that fit the width.

use unicode_width::UnicodeWidthChar;

/// How a line break in the text is drawn on the one line (the text keeps the break).
const BREAK_SHOWN: char = '⏎';

#[derive(Debug, Default, Clone, PartialEq)]
pub struct InputLine {
    text: String,
    /// A byte offset in `text`, always on a character boundary.
    cursor: usize,
}

/// What fits of the line in a width: the characters to draw and the cursor's column among them.
#[derive(Debug, Clone, PartialEq)]
pub struct View {
    pub shown: String,
    pub cursor_column: u16,
}

impl InputLine {
    pub fn text(&self) -> &str {
        &self.text
    }

    pub fn is_empty(&self) -> bool {
        self.text.is_empty()
    }

    #[cfg(test)]
    pub fn cursor(&self) -> usize {
        self.cursor
    }

    /// Takes the text out, leaving the line empty.
    pub fn take(&mut self) -> String {
        self.cursor = 0;
        std::mem::take(&mut self.text)
    }

    /// Replaces the whole text, the cursor at its end.
    #[cfg(test)]
    pub fn set(&mut self, text: &str) {
        self.text = text.to_string();
        self.cursor = self.text.len();
    }

    pub fn insert(&mut self, c: char) {
        self.text.insert(self.cursor, c);
        self.cursor += c.len_utf8();
    }

    /// A paste: inserted whole at the cursor, line breaks kept (`\r\n` and `\r` read as `\n`).
    pub fn paste(&mut self, pasted: &str) {
        let normal = pasted.replace("\r\n", "\n").replace('\r', "\n");
        self.text.insert_str(self.cursor, &normal);
        self.cursor += normal.len();
    }

    pub fn backspace(&mut self) {
        if let Some(c) = self.text[..self.cursor].chars().next_back() {
            self.cursor -= c.len_utf8();
            self.text.remove(self.cursor);
        }
    }

    pub fn delete(&mut self) {
        if self.cursor < self.text.len() {
            self.text.remove(self.cursor);
        }
    }

    pub fn left(&mut self) {
        if let Some(c) = self.text[..self.cursor].chars().next_back() {
            self.cursor -= c.len_utf8();
        }
    }

    pub fn right(&mut self) {
        if let Some(c) = self.text[self.cursor..].chars().next() {
            self.cursor += c.len_utf8();
        }
    }

    pub fn home(&mut self) {
        self.cursor = 0;
    }

    pub fn end(&mut self) {
        self.cursor = self.text.len();
    }

    /// Ctrl-W: the word before the cursor (and the spaces after it) removed.
    pub fn delete_word(&mut self) {
        let before = &self.text[..self.cursor];
        let trimmed = before.trim_end_matches(char::is_whitespace);
        let start = trimmed
            .char_indices()
            .rev()
            .find(|(_, c)| c.is_whitespace())
            .map_or(0, |(i, c)| i + c.len_utf8());
        self.text.replace_range(start..self.cursor, "");
        self.cursor = start;
    }

    /// Ctrl-U: everything before the cursor removed.
    pub fn delete_to_start(&mut self) {
        self.text.replace_range(..self.cursor, "");
        self.cursor = 0;
    }

    /// The word the cursor ends (what a completion replaces): its start and text. Looks back at
    /// most `LOOK_BACK` bytes, so a long word pasted whole costs nothing per keystroke.
    pub fn word_at_cursor(&self) -> (usize, &str) {
        const LOOK_BACK: usize = 512;
        let mut from = self.cursor.saturating_sub(LOOK_BACK);
        while !self.text.is_char_boundary(from) {
            from += 1;
        }
        let before = &self.text[from..self.cursor];
        let start = before
            .char_indices()
            .rev()
            .find(|(_, c)| c.is_whitespace())
            .map_or(from, |(i, c)| from + i + c.len_utf8());
        (start, &self.text[start..self.cursor])
    }

    /// Replaces the word the cursor ends with `with` (a completion taken).
    pub fn replace_word(&mut self, with: &str) {
        let (start, _) = self.word_at_cursor();
        self.text.replace_range(start..self.cursor, with);
        self.cursor = start + with.len();
    }

    /// What fits in `width` columns: the cursor kept in sight, at most `width` columns of the
    /// characters on each side of it looked at.
    pub fn view(&self, width: u16) -> View {
        let width = usize::from(width.max(2));
        // Columns left of the cursor: up to all but one (the cursor's own cell).
        let mut before: Vec<char> = Vec::new();
        let mut used = 0;
        for c in self.text[..self.cursor].chars().rev() {
            let w = shown_width(c);
            if used + w > width - 1 {
                break;
            }
            used += w;
            before.push(shown(c));
        }
        before.reverse();
        let cursor_column = used;
        let mut shown_text: String = before.into_iter().collect();
        for c in self.text[self.cursor..].chars() {
            let w = shown_width(c);
            if used + w > width {
                break;
            }
            used += w;
            shown_text.push(shown(c));
        }
        View {
            shown: shown_text,
            cursor_column: u16::try_from(cursor_column).unwrap_or(u16::MAX),
        }
    }
}

fn shown(c: char) -> char {
    match c {
        '\n' => BREAK_SHOWN,
        '\t' => ' ',
        c if c.is_control() => '�',
        c => c,
    }
}

fn shown_width(c: char) -> usize {
    shown(c).width().unwrap_or(1).max(1)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn typed(text: &str) -> InputLine {
        let mut line = InputLine::default();
        for c in text.chars() {
            line.insert(c);
        }
        line
    }

    #[test]
    fn typing_and_editing_at_the_cursor() {
        let mut line = typed("helo");
        line.left();
        line.insert('l');
        assert_eq!(line.text(), "hello");
        line.end();
        line.backspace();
        assert_eq!(line.text(), "hell");
        line.home();
        line.delete();
        assert_eq!(line.text(), "ell");
        let mut words = typed("run the  tests");
        words.delete_word();
        assert_eq!(words.text(), "run the  ");
        words.delete_word();
        assert_eq!(words.text(), "run ");
        assert_eq!(words.take(), "run ");
        assert!(words.is_empty() && words.cursor() == 0);
    }

    #[test]
    fn characters_of_several_bytes_are_edited_whole() {
        let mut line = typed("añ🙂");
        line.backspace();
        assert_eq!(line.text(), "añ");
        line.left();
        line.delete();
        assert_eq!(line.text(), "a");
    }

    #[test]
    fn a_paste_keeps_its_line_breaks_and_shows_them_on_one_line() {
        let mut line = typed("x");
        line.paste("a\r\nb\rc");
        assert_eq!(line.text(), "xa\nb\nc");
        assert_eq!(line.view(20).shown, "xa⏎b⏎c");
    }

    #[test]
    fn the_view_keeps_the_cursor_in_sight() {
        let line = typed("abcdefghij");
        let view = line.view(5);
        assert_eq!(view.shown, "ghij");
        assert_eq!(view.cursor_column, 4);
        let mut at_start = line.clone();
        at_start.home();
        let view = at_start.view(5);
        assert_eq!((view.shown.as_str(), view.cursor_column), ("abcde", 0));
    }

    #[test]
    fn wide_characters_count_two_columns() {
        let line = typed("日本語");
        let view = line.view(5);
        assert_eq!(view.shown, "本語");
        assert_eq!(view.cursor_column, 4);
    }

    #[test]
    fn ten_megabytes_pasted_stay_quick_to_edit_and_draw() {
        let mut line = typed("say: ");
        let big = "word ".repeat(2 * 1024 * 1024);
        line.paste(&big);
        let started = std::time::Instant::now();
        for _ in 0..1000 {
            line.insert('x');
            let _ = line.view(120);
            let _ = line.word_at_cursor();
        }
        // Inserting at the end never moves the text; each view looks at 120 columns.
        assert!(
            started.elapsed() < std::time::Duration::from_secs(1),
            "1000 keystrokes took {:?}",
            started.elapsed()
        );
        assert_eq!(line.text().len(), 5 + big.len() + 1000);
        assert_eq!(line.view(10).shown.chars().count(), 9);
    }

    #[test]
    fn the_word_at_the_cursor_is_what_a_completion_replaces() {
        let mut line = typed("look at @src/ma");
        assert_eq!(line.word_at_cursor(), (8, "@src/ma"));
        line.replace_word("@src/main.rs ");
        assert_eq!(line.text(), "look at @src/main.rs ");
        assert_eq!(line.word_at_cursor().1, "");
    }
}
