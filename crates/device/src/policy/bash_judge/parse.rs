//! A line parsed into brush-parser's tree, after the checks for shapes the parser cannot take
//! (an oversized file descriptor, unbalanced brackets, here-document delimiters it mishandles):
//! such a line is unreadable, and the judge asks.

use brush_parser::ast;
use brush_parser::{Parser, ParserOptions};

pub fn parse(line: &str) -> Result<ast::Program, String> {
    if oversized_fd_number(line) {
        return Err("a file descriptor number too large".into());
    }
    let brackets = brackets(line);
    if brackets.deepest > MAX_BRACKET_DEPTH {
        return Err("brackets nested too deep".into());
    }
    if brackets.unclosed > MAX_UNCLOSED {
        return Err("too many brackets left open".into());
    }
    if empty_here_delimiter(line) {
        return Err("a here-document with an empty delimiter".into());
    }
    if substituted_here_delimiter(line) {
        return Err("a here-document whose delimiter has a substitution".into());
    }
    let mut parser = Parser::new(std::io::Cursor::new(line.as_bytes()), &ParserOptions::default());
    parser.parse_program().map_err(|e| e.to_string())
}

/// brush-parser 0.4 reads the digits before a redirection (`2>`) as an i32 with `unwrap()`, and
/// panics on a number that does not fit (`ls 99999999999>x`, found by the `bash_judge` fuzz
/// target). Any such run of digits, even one bash would read as part of a word or a quote, makes
/// the line unreadable to the judge: it asks (or denies in plan), never crashes.
fn oversized_fd_number(line: &str) -> bool {
    let bytes = line.as_bytes();
    let mut i = 0;
    while i < bytes.len() {
        let start = i;
        while i < bytes.len() && bytes[i].is_ascii_digit() {
            i += 1;
        }
        if i > start && matches!(bytes.get(i), Some(b'<' | b'>')) && line[start..i].parse::<i32>().is_err() {
            return true;
        }
        i = i.max(start + 1);
    }
    false
}

/// brush-parser 0.4 backtracks exponentially on nested and on unclosed brackets: `(` (a subshell
/// or `((` arithmetic, tried both ways at each one: 20 took 0.8 s, 28 minutes), `$(` and `$((` in a
/// here-document's body (a second at twelve), `${` with `[[` subscripts (more than 20 s at twelve),
/// `${!H[` left open between closed ones (29 s), each found by the `bash_judge` fuzz target as a
/// timeout or a slow input. Deeper or more often unclosed than this, the line is unreadable to the
/// judge, so it asks; real commands nest a few levels and leave one or two open (in a quoted
/// regular expression, say). The device also cuts the judge at a second (`contained`).
const MAX_BRACKET_DEPTH: usize = 6;
const MAX_UNCLOSED: usize = 4;

struct Brackets {
    /// The deepest nesting of `(`, `[` and `{` together, quotes and all.
    deepest: usize,
    /// Openers never closed: left open at the end, or inside a pair that closed around them.
    unclosed: usize,
}

/// Brackets as read from left to right; a closer with no opener of its kind (a `case` pattern's
/// `)`) is passed over.
fn brackets(line: &str) -> Brackets {
    let mut open: Vec<u8> = Vec::new();
    let (mut deepest, mut unclosed) = (0, 0);
    for b in line.bytes() {
        let opener = match b {
            b'(' | b'[' | b'{' => {
                open.push(b);
                deepest = deepest.max(open.len());
                continue;
            }
            b')' => b'(',
            b']' => b'[',
            b'}' => b'{',
            _ => continue,
        };
        if let Some(at) = open.iter().rposition(|&o| o == opener) {
            unclosed += open.len() - at - 1;
            open.truncate(at);
        }
    }
    Brackets {
        deepest,
        unclosed: unclosed + open.len(),
    }
}

/// brush-parser 0.4's tokenizer makes a here-document's tag of its word with ASCII whitespace
/// trimmed off the front (`\r`, `\f`) and quotes taken out, or of nothing when an operator
/// follows or (inside `$(`) when two blanks come first; a tag left empty ends the document at
/// every character: seconds on `a<< '' `, more than 2 GB on `<<\r\t`, on `$(<< >[ ` and on
/// `$(cat <<  EOF ` (each found by the `bash_judge` fuzz target). No person writes these (bash
/// refuses a `<<` with no word after it): such a line is unreadable to the judge.
fn empty_here_delimiter(line: &str) -> bool {
    here_delimiters(line).any(|(blanks, word)| {
        let tag = word.trim_start_matches(|c: char| c.is_ascii_whitespace());
        let tag = tag.split(['(', ')']).next().unwrap_or("");
        let tag = tag.strip_prefix('$').unwrap_or(tag);
        blanks > 1 || tag.chars().all(|c| c == '\'' || c == '"')
    })
}

/// The word after each `<<` or `<<-` (not a here-string's `<<<`), with how many blanks come
/// before it.
fn here_delimiters(line: &str) -> impl Iterator<Item = (usize, &str)> {
    line.match_indices("<<").filter_map(|(at, _)| {
        let rest = &line[at + 2..];
        if rest.starts_with('<') || line[..at].ends_with('<') {
            return None; // a here-string, `<<<`
        }
        let rest = rest.strip_prefix('-').unwrap_or(rest);
        let word = rest.trim_start_matches([' ', '\t']);
        let blanks = rest.len() - word.len();
        let word = word.split([' ', '\t', '\n', ';', '&', '|', '<', '>']).next()?;
        Some((blanks, word))
    })
}

/// brush-parser 0.4 grew past 2 GB on `<<-h$(("" [$(d$(` (unclosed substitutions in a
/// here-document's delimiter; found by the `bash_judge` fuzz target). Bash never expands a
/// delimiter, so no real command writes one with `$(` or a backquote: such a line is unreadable.
fn substituted_here_delimiter(line: &str) -> bool {
    here_delimiters(line).any(|(_, word)| word.contains("$(") || word.contains('`'))
}
