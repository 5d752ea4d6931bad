//! The second wall under the log: whatever a line says, the credential after `Bearer ` or
//! `Basic ` (an `Authorization` header as a library might print it) is written as `[redacted]`.
//! A line is formatted whole and written in one call, so a credential is never split between two.

use std::borrow::Cow;
use std::io::{self, Write};

use tracing_subscriber::fmt::MakeWriter;

/// The schemes whose credential follows them, lower case (matched in any case).
const SCHEMES: [&[u8]; 2] = [b"bearer ", b"basic "];
/// What a credential is written as.
const REDACTED: &[u8] = b"[redacted]";
/// Shorter runs after a scheme's name are words ("a Bearer header"), not credentials.
const LEAST_CREDENTIAL: usize = 8;

/// Makes writers that redact credentials from what they write.
pub struct Redacting<M>(pub M);

impl<'a, M: MakeWriter<'a>> MakeWriter<'a> for Redacting<M> {
    type Writer = RedactingWriter<M::Writer>;

    fn make_writer(&'a self) -> Self::Writer {
        RedactingWriter(self.0.make_writer())
    }

    fn make_writer_for(&'a self, meta: &tracing::Metadata<'_>) -> Self::Writer {
        RedactingWriter(self.0.make_writer_for(meta))
    }
}

pub struct RedactingWriter<W>(W);

impl<W: Write> Write for RedactingWriter<W> {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.0.write_all(&redacted(buf))?;
        Ok(buf.len())
    }

    fn flush(&mut self) -> io::Result<()> {
        self.0.flush()
    }
}

/// The bytes of a token, a base64 credential or a JWT: what runs on after the scheme's name.
fn is_credential_byte(b: u8) -> bool {
    b.is_ascii_alphanumeric() || matches!(b, b'-' | b'.' | b'_' | b'~' | b'+' | b'/' | b'=')
}

/// `text` with every credential after a scheme's name redacted (borrowed when there is none).
fn redacted(text: &[u8]) -> Cow<'_, [u8]> {
    let mut out: Option<Vec<u8>> = None;
    let mut copied = 0;
    let mut at = 0;
    while let Some(rest) = text.get(at..).filter(|rest| !rest.is_empty()) {
        let scheme = SCHEMES.iter().find(|scheme| {
            rest.get(..scheme.len())
                .is_some_and(|head| head.eq_ignore_ascii_case(scheme))
        });
        let Some(scheme) = scheme else {
            at += 1;
            continue;
        };
        let start = at + scheme.len();
        let run = text
            .get(start..)
            .unwrap_or_default()
            .iter()
            .take_while(|b| is_credential_byte(**b))
            .count();
        if run >= LEAST_CREDENTIAL {
            let out = out.get_or_insert_with(|| Vec::with_capacity(text.len()));
            out.extend_from_slice(text.get(copied..start).unwrap_or_default());
            out.extend_from_slice(REDACTED);
            copied = start + run;
        }
        at = start + run;
    }
    match out {
        Some(mut out) => {
            out.extend_from_slice(text.get(copied..).unwrap_or_default());
            Cow::Owned(out)
        }
        None => Cow::Borrowed(text),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn said(text: &str) -> String {
        String::from_utf8_lossy(&redacted(text.as_bytes())).into_owned()
    }

    #[test]
    fn a_credential_after_its_scheme_is_redacted_wherever_it_is() {
        // tungstenite's request line, as its `trace` gives it.
        let line = r#"TRACE tungstenite::handshake::client: Request: "GET /api/devices/link HTTP/1.1\r\nAuthorization: Bearer hyg-0123456789abcdef-tok\r\n\r\n""#;
        assert_eq!(
            said(line),
            r#"TRACE tungstenite::handshake::client: Request: "GET /api/devices/link HTTP/1.1\r\nAuthorization: Bearer [redacted]\r\n\r\n""#
        );
        assert_eq!(
            said("authorization: bearer a.b.c-d_e~f+g/h= and Proxy-Authorization: BASIC dXNlcjpwYXNz"),
            "authorization: bearer [redacted] and Proxy-Authorization: BASIC [redacted]"
        );
        assert_eq!(
            said("Bearer 12345678 then bearer 87654321"),
            "Bearer [redacted] then bearer [redacted]"
        );
    }

    #[test]
    fn words_after_a_scheme_name_and_other_lines_pass_as_they_are() {
        for line in [
            "the token goes as a Bearer header",
            "no credential here",
            "Bearer",
            "basic ",
            "",
        ] {
            assert!(matches!(redacted(line.as_bytes()), Cow::Borrowed(_)), "{line}");
        }
    }
}
