//! Text bash evaluates a second time. An array subscript is expanded when bash evaluates it: in
//! `test -v 'a[$(id)]'`, `[[ 'a[$(id)]' -eq 0 ]]`, `read`, `printf -v`, `unset`, `declare`, `let`,
//! `(( x ))` where `x` holds such text, and `${a[…]}`. Quotes that kept `$(id)` from running when the
//! line was read do not keep it from running then. So a word whose text, once its quotes are
//! removed, holds a substitution after a `[` is judged as running that substitution; so is a
//! substitution inside `${…}` (a default value, a subscript), which brush-parser keeps as text.

use brush_parser::ParserOptions;
use brush_parser::word::{self, WordPiece};

/// Substitutions nested deeper than this are not looked into: the text is unreadable.
const MAX_DEPTH: usize = 8;

/// What running `text` through bash's evaluation would run.
#[derive(Debug, Default, PartialEq)]
pub struct Hidden {
    /// Scripts of the command substitutions found, each judged like a line of its own.
    pub scripts: Vec<String>,
    /// The text has a substitution the judge could not take out: it asks.
    pub unreadable: bool,
}

/// Whether bash may evaluate `text` as a subscript that runs something: a `[` with a `$(` or a
/// backquote after it.
pub fn evaluated(text: &str) -> bool {
    text.find('[').is_some_and(|at| runs_something(&text[at..]))
}

/// A command substitution's opening somewhere in `text`.
pub fn runs_something(text: &str) -> bool {
    text.contains("$(") || text.contains('`')
}

/// The substitutions in `text` read as an unquoted word. Quoted text is looked into as well: where
/// bash evaluates the text again, its quotes may no longer quote.
pub fn hidden(text: &str) -> Hidden {
    let mut hidden = Hidden::default();
    collect(text, 0, &mut hidden);
    if hidden.scripts.is_empty() && runs_something(text) {
        hidden.unreadable = true;
    }
    hidden
}

fn collect(text: &str, depth: usize, hidden: &mut Hidden) {
    if depth > MAX_DEPTH {
        hidden.unreadable = true;
        return;
    }
    let pieces = match word::parse(text, &ParserOptions::default()) {
        Ok(pieces) => pieces,
        Err(_) => {
            hidden.unreadable |= runs_something(text);
            return;
        }
    };
    for piece in &pieces {
        match &piece.piece {
            WordPiece::CommandSubstitution(script) | WordPiece::BackquotedCommandSubstitution(script) => {
                hidden.scripts.push(script.clone())
            }
            WordPiece::SingleQuotedText(s) | WordPiece::AnsiCQuotedText(s) if runs_something(s) => {
                collect(s, depth + 1, hidden)
            }
            WordPiece::DoubleQuotedSequence(_) | WordPiece::GettextDoubleQuotedSequence(_) => {
                let inner = source(text, piece.start_index, piece.end_index);
                let inner = inner
                    .strip_prefix('$')
                    .unwrap_or(inner)
                    .trim_start_matches('"')
                    .trim_end_matches('"');
                if runs_something(inner) {
                    collect(inner, depth + 1, hidden);
                }
            }
            WordPiece::ParameterExpansion(_) => {
                let inner = inside_braces(source(text, piece.start_index, piece.end_index));
                if runs_something(inner) {
                    collect(inner, depth + 1, hidden);
                }
            }
            WordPiece::ArithmeticExpression(expr) if runs_something(&expr.value) => {
                collect(&expr.value, depth + 1, hidden)
            }
            WordPiece::EscapeSequence(_)
            | WordPiece::Text(_)
            | WordPiece::SingleQuotedText(_)
            | WordPiece::AnsiCQuotedText(_)
            | WordPiece::ArithmeticExpression(_)
            | WordPiece::TildeExpansion(_) => {}
        }
    }
}

/// The piece's text in `text`, or all of `text` when brush-parser's indices do not fit it (then the
/// whole is looked into again, which finds at least as much).
fn source(text: &str, start: usize, end: usize) -> &str {
    text.get(start..end).unwrap_or(text)
}

/// `${x:-$(…)}` without its `${` and `}`.
pub fn inside_braces(text: &str) -> &str {
    text.strip_prefix("${")
        .and_then(|t| t.strip_suffix('}'))
        .unwrap_or(text)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn substitutions_are_found_inside_evaluated_text() {
        assert!(evaluated("a[$(id)]"));
        assert!(evaluated("a[`id`]"));
        assert!(!evaluated("$(id)"));
        assert!(!evaluated("a[1]"));
        assert_eq!(hidden("a[$(id)]").scripts, vec!["id".to_string()]);
        assert_eq!(hidden("x:-$(touch y)").scripts, vec!["touch y".to_string()]);
        assert_eq!(hidden("a['$(id)']").scripts, vec!["id".to_string()]);
        assert!(hidden("a[$(]").unreadable);
    }
}
