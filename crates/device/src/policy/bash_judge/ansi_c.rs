//! `$'…'` quoting: bash decodes its escapes (`\x73`, `\163`, `\u0073`, `\cA`…) before the word is
//! used, so `$'\x73udo'` runs `sudo`. brush-parser hands the text over undecoded; the judge decodes
//! it as bash does before it matches a command's name or a path.

/// `text` (what stood between `$'` and `'`) as bash passes it on.
pub fn decode(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        if c != '\\' {
            out.push(c);
            continue;
        }
        let Some(e) = chars.next() else {
            out.push('\\');
            break;
        };
        match e {
            'a' => out.push('\u{7}'),
            'b' => out.push('\u{8}'),
            'e' | 'E' => out.push('\u{1b}'),
            'f' => out.push('\u{c}'),
            'n' => out.push('\n'),
            'r' => out.push('\r'),
            't' => out.push('\t'),
            'v' => out.push('\u{b}'),
            '\\' | '\'' | '"' | '?' => out.push(e),
            '0'..='7' => {
                let mut value = e.to_digit(8).unwrap_or(0);
                for _ in 0..2 {
                    match chars.peek().and_then(|d| d.to_digit(8)) {
                        Some(d) => {
                            value = value * 8 + d;
                            chars.next();
                        }
                        None => break,
                    }
                }
                push_code(&mut out, value & 0xff);
            }
            'x' | 'u' | 'U' => {
                let most = match e {
                    'x' => 2,
                    'u' => 4,
                    _ => 8,
                };
                let mut value = 0u32;
                let mut digits = 0;
                while digits < most {
                    match chars.peek().and_then(|d| d.to_digit(16)) {
                        Some(d) => {
                            value = value.saturating_mul(16).saturating_add(d);
                            chars.next();
                            digits += 1;
                        }
                        None => break,
                    }
                }
                if digits == 0 {
                    out.push('\\');
                    out.push(e);
                } else {
                    push_code(&mut out, value);
                }
            }
            // `\cX`: a control character.
            'c' => match chars.next() {
                Some(x) => push_code(&mut out, (x as u32) & 0x1f),
                None => out.push_str("\\c"),
            },
            other => {
                out.push('\\');
                out.push(other);
            }
        }
    }
    out
}

/// A byte or code point as a character; one that is none (a lone surrogate, a byte past ASCII
/// that bash would pass raw) stands for something the judge cannot match, so it matches nothing.
fn push_code(out: &mut String, value: u32) {
    match char::from_u32(value) {
        Some(c) if !(0x80..=0xff).contains(&value) => out.push(c),
        _ => out.push(super::vars::UNKNOWN),
    }
}

#[cfg(test)]
mod tests {
    use super::decode;

    #[test]
    fn escapes_decode_as_bash_does() {
        for (text, want) in [
            ("\\x73udo", "sudo"),
            ("\\163udo", "sudo"),
            ("\\u0073udo", "sudo"),
            ("\\U00000073udo", "sudo"),
            ("a\\tb", "a\tb"),
            ("\\'", "'"),
            ("\\q", "\\q"),
            ("\\x", "\\x"),
            ("end\\", "end\\"),
            ("\\cA", "\u{1}"),
        ] {
            assert_eq!(decode(text), want, "{text}");
        }
    }
}
