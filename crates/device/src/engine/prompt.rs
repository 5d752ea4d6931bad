//! What the model is told (docs/protocol.md "The prompt the model gets"): a short system text of our own,
//! then the instance's instructions and the person's personalization when the client sent them;
//! and what the person's prompt blocks become.

use std::path::Path;

use super::session::Context;
use crate::decisions::PromptLimits;
use crate::policy::Mode;
use crate::rpc::RpcError;
use lembas_protocol::content::ContentBlock;

fn mode_text(mode: Mode) -> &'static str {
    match mode {
        Mode::Plan => {
            "plan: you may read and search, but not change files or run commands that change anything"
        }
        Mode::Manual => {
            "manual: you may read and search; every file change and every command that is not read-only needs the person's approval"
        }
        Mode::Edit => {
            "edit: you may read, search and change files inside the project; commands that are not read-only need the person's approval"
        }
        Mode::Auto => {
            "auto: you may read, change files inside the project and run commands; changes elsewhere still need approval"
        }
    }
}

/// The system message for one step; `instance` is how the instance is named.
pub fn system(instance: &str, folder: &Path, mode: Mode, context: &Context, sections: &[String]) -> String {
    let date = crate::utc::today();
    let mut text = format!(
        "You are LLeMbas, an agent working on the person's own computer through LLeMbas CLI, linked to {instance}.\n\
         The session's folder is {folder}; paths are relative to it. The mode is {mode}.\n\
         Use the tools to look before you change anything, keep changes small, and say briefly what you did.\n\
         Today is {date}.",
        folder = folder.display(),
        mode = mode_text(mode),
    );
    if !context.system_prompt.trim().is_empty() {
        text.push_str(&format!(
            "\n\n## Instructions from {instance}\n\n{}",
            context.system_prompt.trim()
        ));
    }
    if let Some(p) = &context.personalization {
        let mut lines = Vec::new();
        if let Some(personality) = said(&p.personality).filter(|s| *s != "none") {
            lines.push(format!("Personality: {personality}."));
        }
        if let Some(custom) = said(&p.personality_custom) {
            lines.push(custom.to_string());
        }
        if let Some(instructions) = said(&p.instructions) {
            lines.push(instructions.to_string());
        }
        if !lines.is_empty() {
            text.push_str("\n\n## The person's preferences\n\n");
            text.push_str(&lines.join("\n"));
        }
    }
    for section in sections {
        text.push_str("\n\n");
        text.push_str(section);
    }
    text
}

/// A personalization field with something in it.
fn said(field: &Option<String>) -> Option<&str> {
    field.as_deref().map(str::trim).filter(|s| !s.is_empty())
}

/// What the model is asked for when a session is compacted.
pub const COMPACT_REQUEST: &str = "Summarize our conversation so far for yourself, to go on from it later: what was asked, what was done (files changed, commands run, their results), what was decided, and what is still open. Be complete but brief; write only the summary.";

/// docs/protocol.md: the title is the first line of the first prompt, at most 80 characters.
pub fn title_of(text: &str, max_chars: usize) -> String {
    let line = text
        .lines()
        .map(str::trim)
        .find(|l| !l.is_empty())
        .unwrap_or_default();
    line.chars().take(max_chars).collect()
}

/// The prompt's blocks as the text the model reads: text blocks joined by a blank line, a
/// resource_link as `(see <uri>)`. Image and resource blocks are taken out before (attachments.rs).
pub fn text_of(blocks: &[ContentBlock], limits: &PromptLimits) -> Result<String, RpcError> {
    let mut parts = Vec::new();
    for block in blocks {
        match block {
            ContentBlock::Text { text } => {
                if text.len() > limits.max_block_bytes {
                    return Err(RpcError::invalid_params(format!(
                        "A text block is {} bytes; a block may be at most {} bytes. Send less, or split it.",
                        text.len(),
                        limits.max_block_bytes
                    )));
                }
                parts.push(text.clone());
            }
            ContentBlock::ResourceLink { uri, .. } => parts.push(format!("(see {uri})")),
            ContentBlock::Image { .. } => return Err(not_taken("image")),
            ContentBlock::Resource { .. } => return Err(not_taken("resource")),
            ContentBlock::Audio { .. } => return Err(not_taken("audio")),
        }
    }
    let text = parts.join("\n\n");
    let max = limits.max_prompt_bytes;
    if text.len() > max {
        return Err(RpcError::invalid_params(format!(
            "The prompt is {} bytes; a prompt may be at most {max} bytes. Send less, or split it.",
            text.len()
        )));
    }
    if text.trim().is_empty() {
        return Err(RpcError::invalid_params("The prompt is empty: send some text."));
    }
    Ok(text)
}

fn not_taken(kind: &str) -> RpcError {
    RpcError::invalid_params(format!(
        "This device does not take {kind} blocks yet: send the prompt as text."
    ))
}

/// The texts the person typed: the prompt's text blocks, where `@path` mentions are read
/// (never a resource link's uri).
pub fn typed_texts(blocks: &[ContentBlock]) -> Vec<String> {
    blocks
        .iter()
        .filter_map(|b| match b {
            ContentBlock::Text { text } => Some(text.clone()),
            _ => None,
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn title_of(text: &str) -> String {
        super::title_of(text, crate::decisions::Decisions::built_in().engine.title_chars)
    }

    fn text_of(blocks: &[ContentBlock]) -> Result<String, RpcError> {
        super::text_of(blocks, &crate::decisions::Decisions::built_in().prompt)
    }

    /// As session/prompt reads them off the wire.
    fn blocks(blocks: serde_json::Value) -> Result<Vec<ContentBlock>, RpcError> {
        crate::rpc::params("session/prompt", blocks)
    }

    #[test]
    fn blocks_become_text() {
        let ok = text_of(
            &blocks(
                json!([{"type":"text","text":"a"},{"type":"resource_link","uri":"file:///x","name":"x"}]),
            )
            .unwrap(),
        );
        assert_eq!(ok.unwrap(), "a\n\n(see file:///x)");
        for bad in [
            json!("x"),
            json!([{"type":"image","data":""}]),
            json!([{"type":"text"}]),
            json!([{}]),
            json!([]),
        ] {
            let e = blocks(bad.clone()).and_then(|b| text_of(&b)).unwrap_err();
            assert_eq!(e.code, crate::rpc::INVALID_PARAMS, "{bad}");
        }
    }

    #[test]
    fn mentions_are_read_from_text_blocks_only() {
        let blocks = json!([
            {"type":"text","text":"see @a.md"},
            {"type":"resource_link","uri":"file:///w/@b.md","name":"b"},
            {"type":"text","text":"and @c.md"}
        ]);
        assert_eq!(
            typed_texts(&self::blocks(blocks).unwrap()),
            ["see @a.md", "and @c.md"]
        );
    }

    #[test]
    fn title_is_the_first_line_cut() {
        assert_eq!(title_of("\n  Fix the build  \nmore"), "Fix the build");
        assert_eq!(title_of(&"é".repeat(100)).chars().count(), 80);
    }

    #[test]
    fn system_text_carries_instructions_and_preferences() {
        let context = Context {
            system_prompt: "Be terse.".into(),
            personalization: Some(lembas_protocol::context::Personalization {
                personality: Some("friendly".into()),
                instructions: Some("Call me Sam.".into()),
                ..Default::default()
            }),
        };
        let text = system("the instance", Path::new("/w/p"), Mode::Edit, &context, &[]);
        assert!(
            text.contains("## Instructions from the instance\n\nBe terse."),
            "{text}"
        );
        assert!(text.contains("Call me Sam."));
        assert!(text.contains("/w/p"));
        assert!(text.contains(&crate::utc::today()));
    }
}
