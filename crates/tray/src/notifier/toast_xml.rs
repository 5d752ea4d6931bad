//! The toast a card's notice becomes on Windows, as the XML the WinRT toast API takes: the
//! summary and the body as its two lines, **Allow** and **Deny** as its buttons, a click on the
//! toast itself `open`. Pure, so it is tested on every system; `toast.rs` shows it.

use super::{ALLOW, DENY};
use crate::cards::Notice;

/// What a click on the toast's body gives back (its `launch`).
pub const OPEN: &str = "open";

/// The toast for `notice`. A reminder stays on screen until the person acts on it, as the
/// freedesktop notice stays (resident): the card waits, so the toast does too. Windows has no
/// louder kind that every version takes, so an urgent notice is the same toast shown again.
pub fn toast_xml(notice: &Notice) -> String {
    format!(
        "<toast launch=\"{OPEN}\" scenario=\"reminder\">\
         <visual><binding template=\"ToastGeneric\">\
         <text>{summary}</text><text>{body}</text>\
         </binding></visual>\
         <actions>\
         <action content=\"Allow\" arguments=\"{ALLOW}\" activationType=\"foreground\"/>\
         <action content=\"Deny\" arguments=\"{DENY}\" activationType=\"foreground\"/>\
         </actions>\
         </toast>",
        summary = escaped(&notice.summary),
        body = escaped(&notice.body),
    )
}

/// Text as XML reads it: a command's `<`, `&&` or `"` is text, never markup.
fn escaped(text: &str) -> String {
    text.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
        .replace('\'', "&apos;")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_notice_is_a_toast_with_allow_and_deny_and_its_text_is_only_text() {
        let notice = Notice {
            summary: "Run a command in ~/work".into(),
            body: "make test && echo \"<done>\" 2>&1 | tee 'log'".into(),
            urgent: false,
        };
        let xml = toast_xml(&notice);
        assert!(
            xml.starts_with("<toast launch=\"open\" scenario=\"reminder\">"),
            "{xml}"
        );
        assert!(xml.contains("<text>Run a command in ~/work</text>"), "{xml}");
        assert!(
            xml.contains(
                "<text>make test &amp;&amp; echo &quot;&lt;done&gt;&quot; 2&gt;&amp;1 | tee &apos;log&apos;</text>"
            ),
            "{xml}"
        );
        assert!(
            xml.contains("<action content=\"Allow\" arguments=\"allow\"")
                && xml.contains("<action content=\"Deny\" arguments=\"deny\""),
            "{xml}"
        );
        // Two text lines, two buttons, nothing the body could add.
        assert_eq!(xml.matches("<text>").count(), 2);
        assert_eq!(xml.matches("<action ").count(), 2);
    }
}
