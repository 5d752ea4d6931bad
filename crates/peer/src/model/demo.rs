//! What the model answers with an empty queue: a deterministic stand-in for a real model, enough
//! for the demo and benchmarks to run whole agent turns (a command, a read, a write, a summary).

use serde_json::{Value, json};

use super::{ModelReply, Part};

/// The most characters of a tool result the demo repeats after `Done: `.
const DONE_LINE_MAX_CHARS: usize = 200;

/// The demo's answer to `request`, naming tool calls with `next_call_id`.
pub(super) fn reply(request: &Value, next_call_id: impl FnOnce() -> String) -> ModelReply {
    let messages = request
        .get("messages")
        .and_then(Value::as_array)
        .map(Vec::as_slice)
        .unwrap_or_default();
    if let Some(last) = messages.last()
        && last.get("role").and_then(Value::as_str) == Some("tool")
    {
        let result = message_text(last);
        let first_line: String = result
            .lines()
            .next()
            .unwrap_or_default()
            .chars()
            .take(DONE_LINE_MAX_CHARS)
            .collect();
        return ModelReply::text(&format!("Done: {first_line}"));
    }
    let said = messages
        .iter()
        .rev()
        .find(|message| message.get("role").and_then(Value::as_str) == Some("user"))
        .map(message_text)
        .unwrap_or_default();
    let said = said.trim();
    let call = |name: &str, arguments: Value| ModelReply::tool_call(&next_call_id(), name, arguments);
    if let Some(command) = nonempty_after(said, "run ") {
        return call(
            "bash",
            json!({ "command": command, "description": "Run what you asked" }),
        );
    }
    if let Some(path) = nonempty_after(said, "read ") {
        return call("read", json!({ "path": path }));
    }
    if let Some(path) = nonempty_after(said, "show ") {
        return call("show", json!({ "path": path }));
    }
    if let Some(rest) = nonempty_after(said, "write ") {
        // The path is the first word; the content is everything after the space that ends it.
        let (path, content) = rest.split_once(' ').unwrap_or((rest, ""));
        return call("write", json!({ "path": path, "content": content }));
    }
    ModelReply::Stream {
        parts: vec![Part::Text(format!("You said: {said}"))],
        finish_reason: "stop".to_string(),
    }
}

/// What follows `prefix` in `text`, when there is something.
fn nonempty_after<'a>(text: &'a str, prefix: &str) -> Option<&'a str> {
    text.strip_prefix(prefix)
        .map(str::trim_start)
        .filter(|rest| !rest.is_empty())
}

/// A message's text: `content` as a string, or its `{type: "text", text}` parts joined by
/// newlines.
fn message_text(message: &Value) -> String {
    match message.get("content") {
        Some(Value::String(text)) => text.clone(),
        Some(Value::Array(parts)) => parts
            .iter()
            .filter(|part| part.get("type").and_then(Value::as_str) == Some("text"))
            .filter_map(|part| part.get("text").and_then(Value::as_str))
            .collect::<Vec<_>>()
            .join("\n"),
        _ => String::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn demo(messages: Value) -> ModelReply {
        reply(&json!({ "messages": messages }), || "call_7".to_string())
    }

    fn user(text: &str) -> Value {
        json!([{ "role": "system", "content": "be brief" }, { "role": "user", "content": text }])
    }

    #[test]
    fn run_read_and_write_become_tool_calls() {
        assert_eq!(
            demo(user("run ls -la /tmp")),
            ModelReply::tool_call(
                "call_7",
                "bash",
                json!({ "command": "ls -la /tmp", "description": "Run what you asked" })
            )
        );
        assert_eq!(
            demo(user("read notes/a b.txt")),
            ModelReply::tool_call("call_7", "read", json!({ "path": "notes/a b.txt" }))
        );
        assert_eq!(
            demo(user("write out.txt hello  there\nsecond line")),
            ModelReply::tool_call(
                "call_7",
                "write",
                json!({ "path": "out.txt", "content": "hello  there\nsecond line" })
            )
        );
        assert_eq!(
            demo(user("write empty.txt")),
            ModelReply::tool_call("call_7", "write", json!({ "path": "empty.txt", "content": "" }))
        );
    }

    #[test]
    fn anything_else_is_echoed_and_a_bare_verb_is_not_a_call() {
        assert_eq!(
            demo(user("hello there")),
            ModelReply::text("You said: hello there")
        );
        assert_eq!(demo(user("run ")), ModelReply::text("You said: run"));
        assert_eq!(
            demo(user("running late")),
            ModelReply::text("You said: running late")
        );
        assert_eq!(demo(json!([])), ModelReply::text("You said: "));
    }

    #[test]
    fn text_parts_are_read_and_the_last_user_message_counts() {
        let messages = json!([
            { "role": "user", "content": "run rm -rf /" },
            { "role": "assistant", "content": "no" },
            { "role": "user", "content": [
                { "type": "text", "text": "read" },
                { "type": "image_url", "image_url": { "url": "data:," } },
                { "type": "text", "text": "x" },
            ] },
        ]);
        assert_eq!(demo(messages), ModelReply::text("You said: read\nx"));
        let messages = json!([{ "role": "user", "content": [{ "type": "text", "text": "read a.md" }] }]);
        assert_eq!(
            demo(messages),
            ModelReply::tool_call("call_7", "read", json!({ "path": "a.md" }))
        );
    }

    #[test]
    fn after_a_tool_result_it_says_done_with_its_first_line() {
        let messages = json!([
            { "role": "user", "content": "run ls" },
            { "role": "assistant", "tool_calls": [{ "id": "call_1", "type": "function",
                "function": { "name": "bash", "arguments": "{}" } }] },
            { "role": "tool", "tool_call_id": "call_1", "content": "a.txt\nb.txt\n" },
        ]);
        assert_eq!(demo(messages), ModelReply::text("Done: a.txt"));
        let long = "é".repeat(300);
        let messages = json!([{ "role": "tool", "tool_call_id": "call_1", "content": long }]);
        assert_eq!(
            demo(messages),
            ModelReply::text(&format!("Done: {}", "é".repeat(200)))
        );
        let messages = json!([{ "role": "tool", "tool_call_id": "call_1", "content": "" }]);
        assert_eq!(demo(messages), ModelReply::text("Done: "));
    }
}
