//! Image and resource blocks in a prompt (capability `attachments`): what the model gets for them,
//! the files the device keeps under `attachments/<sessionId>/`, the prompt event and the history
//! listing them, deletes removing them, and bad blocks refused with nothing kept.

use super::*;
use base64::Engine as _;
use base64::engine::general_purpose::STANDARD as BASE64;
use lembas_peer::{ModelReply, VISION_MODEL};

/// Bytes that stand for a PNG (the device does not look inside).
const PNG: &[u8] = b"\x89PNG\r\n\x1a\nnot really an image";

fn image_block(bytes: &[u8], mime: &str, uri: &str) -> Value {
    json!({ "type": "image", "data": BASE64.encode(bytes), "mimeType": mime, "uri": uri })
}

fn text_block(text: &str) -> Value {
    json!({ "type": "text", "text": text })
}

impl Linked {
    /// session/prompt with these blocks, answered.
    async fn prompt_blocks(&mut self, session: &str, blocks: Value, turn_id: &str) -> Value {
        self.link
            .request(
                "session/prompt",
                json!({ "sessionId": session, "prompt": blocks, "_meta": { "lembas": { "turnId": turn_id } } }),
                WAIT,
            )
            .await
            .unwrap()
    }

    async fn history(&mut self, session: &str) -> Value {
        let answer = self
            .link
            .request("_lembas/session/history", json!({ "sessionId": session }), WAIT)
            .await
            .unwrap();
        answer["result"].clone()
    }

    fn attachments_dir(&self, session: &str) -> PathBuf {
        self.home.state().join("attachments").join(session)
    }

    /// The session's attachment files, by name.
    fn attachment_files(&self, session: &str) -> Vec<PathBuf> {
        let mut files = files_under(&self.attachments_dir(session));
        files.sort();
        files
    }
}

/// The last user message of a model request.
fn last_user(request: &Value) -> Value {
    request["messages"]
        .as_array()
        .unwrap()
        .iter()
        .rev()
        .find(|m| m["role"] == "user")
        .cloned()
        .unwrap()
}

/// `<milliseconds>-<random>-<name>`.
fn stored_as(path: &Path, name: &str) -> bool {
    let file = path.file_name().unwrap().to_str().unwrap();
    let mut parts = file.splitn(3, '-');
    let (ms, random, rest) = (parts.next(), parts.next(), parts.next());
    ms.is_some_and(|m| m.len() >= 13 && m.bytes().all(|b| b.is_ascii_digit()))
        && random.is_some_and(|r| r.len() == 8 && r.bytes().all(|b| b.is_ascii_alphanumeric()))
        && rest == Some(name)
}

fn prompt_events(link: &LinkHandle, session: &str) -> Vec<Value> {
    link.received()
        .into_iter()
        .filter(|m| m["method"] == "_lembas/event" && m["params"]["sessionId"] == session)
        .map(|m| m["params"]["event"].clone())
        .filter(|e| e["type"] == "prompt")
        .collect()
}

#[tokio::test(flavor = "multi_thread")]
async fn images_go_as_image_parts_to_a_vision_model_and_as_a_line_to_any_other() {
    let mut l = linked("").await;
    let work = l.work.clone();
    let seeing = l
        .new_session_at(&work, json!({ "mode": "edit", "lembas_model": VISION_MODEL }))
        .await["result"]["sessionId"]
        .as_str()
        .unwrap()
        .to_string();
    let plain = l.new_session("edit").await;
    let blocks = json!([
        text_block("What is in it?"),
        image_block(PNG, "image/png", "file:///home/p/Pictures/cat.png"),
    ]);

    l.model().push(reply_text("A cat."));
    let answer = l.prompt_blocks(&seeing, blocks.clone(), "t-see").await;
    assert_eq!(answer["result"]["stopReason"], "end_turn", "{answer}");
    let files = l.attachment_files(&seeing);
    assert_eq!(files.len(), 1, "{files:?}");
    assert!(stored_as(&files[0], "cat.png"), "{files:?}");
    assert_eq!(std::fs::read(&files[0]).unwrap(), PNG);
    let user = last_user(&l.model().requests()[0]);
    let parts = user["content"].as_array().expect("parts for a vision model");
    assert_eq!(parts.len(), 2, "{user}");
    let text = parts[0]["text"].as_str().unwrap();
    assert!(text.starts_with("What is in it?"), "{text}");
    assert!(text.contains(&files[0].display().to_string()), "{text}");
    assert_eq!(
        parts[1],
        json!({ "type": "image_url", "image_url": { "url": format!("data:image/png;base64,{}", BASE64.encode(PNG)) } })
    );
    // The session file keeps the path, not the bytes.
    let stored = std::fs::read_to_string(l.home.state().join(format!("sessions/{seeing}.jsonl"))).unwrap();
    assert!(stored.contains(&files[0].display().to_string()));
    assert!(!stored.contains(&BASE64.encode(PNG)));
    let listed = json!([{ "name": "cat.png", "mimeType": "image/png", "size": PNG.len() }]);
    let events = prompt_events(&l.link, &seeing);
    assert_eq!(events[0]["text"], "What is in it?");
    assert_eq!(events[0]["attachments"], listed);

    // The image stays in the conversation: the next turn sends it again.
    l.model().push(reply_text("Still a cat."));
    l.prompt_blocks(&seeing, json!([text_block("And now?")]), "t-see-2")
        .await;
    let second = &l.model().requests()[1];
    let first_user = second["messages"]
        .as_array()
        .unwrap()
        .iter()
        .find(|m| m["role"] == "user")
        .unwrap()
        .clone();
    assert_eq!(first_user["content"][1]["type"], "image_url", "{first_user}");
    assert_eq!(last_user(second)["content"], "And now?");

    // A model that does not take images gets a line saying the image is there (the peer refuses
    // image parts for it, as a text model's server does).
    l.model().push(reply_text("I cannot see it."));
    let answer = l.prompt_blocks(&plain, blocks, "t-plain").await;
    assert_eq!(answer["result"]["stopReason"], "end_turn", "{answer}");
    let files = l.attachment_files(&plain);
    assert_eq!(files.len(), 1);
    assert!(stored_as(&files[0], "cat.png"));
    let request = &l.model().requests()[2];
    assert_eq!(request["model"], MODEL);
    assert!(!request.to_string().contains("image_url"));
    let content = last_user(request)["content"].as_str().unwrap().to_string();
    assert!(content.starts_with("What is in it?\n\n"), "{content}");
    assert!(
        content.contains(&format!(
            "the image cat.png (image/png, {} bytes), saved at {}.",
            PNG.len(),
            files[0].display()
        )),
        "{content}"
    );
    assert_eq!(prompt_events(&l.link, &plain)[0]["attachments"], listed);
}

#[tokio::test(flavor = "multi_thread")]
async fn a_text_resource_is_line_numbered_a_blob_is_referenced_and_two_of_one_name_stay_two() {
    let mut l = linked("").await;
    let session = l.new_session("edit").await;
    let blob = [0u8, 1, 2, 3, 255];
    let blocks = json!([
        text_block("Compare them"),
        { "type": "resource", "resource": { "uri": "file:///w/notes.md", "mimeType": "text/markdown", "text": "first line\n\tsecond line\n" } },
        { "type": "resource", "resource": { "uri": "file:///elsewhere/notes.md", "text": "other" } },
        { "type": "resource", "resource": { "uri": "file:///w/data.bin", "mimeType": "application/octet-stream", "blob": BASE64.encode(blob) } },
    ]);
    l.model().push(reply_text("Compared."));
    let answer = l.prompt_blocks(&session, blocks, "t-res").await;
    assert_eq!(answer["result"]["stopReason"], "end_turn", "{answer}");

    let files = l.attachment_files(&session);
    assert_eq!(files.len(), 3, "{files:?}");
    let notes: Vec<&PathBuf> = files.iter().filter(|f| stored_as(f, "notes.md")).collect();
    assert_eq!(notes.len(), 2, "two of one name stay two: {files:?}");
    let mut contents: Vec<String> = notes
        .iter()
        .map(|f| std::fs::read_to_string(f).unwrap())
        .collect();
    contents.sort();
    assert_eq!(contents, ["first line\n\tsecond line\n", "other"]);
    let data = files.iter().find(|f| stored_as(f, "data.bin")).unwrap();
    assert_eq!(std::fs::read(data).unwrap(), blob);

    let content = last_user(&l.model().requests()[0])["content"]
        .as_str()
        .unwrap()
        .to_string();
    assert!(content.starts_with("Compare them\n\n"), "{content}");
    assert!(
        content.contains(":\n     1\tfirst line\n     2\t\tsecond line"),
        "{content}"
    );
    assert!(content.contains(":\n     1\tother"), "{content}");
    assert!(
        content.contains(&format!(
            "the file data.bin, saved at {}: (binary file, 5 bytes)",
            data.display()
        )),
        "{content}"
    );

    let history = l.history(&session).await;
    assert_eq!(
        history["turns"][0],
        json!({ "role": "user", "text": "Compare them", "turnId": "t-res", "attachments": [
            { "name": "notes.md", "mimeType": "text/markdown", "size": 24 },
            { "name": "notes.md", "mimeType": "text/plain", "size": 5 },
            { "name": "data.bin", "mimeType": "application/octet-stream", "size": 5 },
        ] })
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn history_lists_attachments_after_a_restart_and_deletes_remove_them() {
    let mut l = linked("").await;
    let session = l.new_session("edit").await;
    // A prompt of an image alone: the chat is named after it.
    l.model().push(reply_text("Seen."));
    let answer = l
        .prompt_blocks(
            &session,
            json!([image_block(
                PNG,
                "image/jpeg",
                "https://x.example/a/b/photo.jpg?size=2"
            )]),
            "t-1",
        )
        .await;
    assert_eq!(answer["result"]["stopReason"], "end_turn", "{answer}");
    assert_eq!(l.attachment_files(&session).len(), 1);

    l.service.signal(15);
    l.service.wait_exit(WAIT);
    let service = l.home.service();
    let _old = std::mem::replace(&mut l.service, service);
    l.link = relink(&l.peer).await;
    let history = l.history(&session).await;
    assert_eq!(history["title"], "photo.jpg");
    assert_eq!(
        history["turns"][0],
        json!({ "role": "user", "text": "", "turnId": "t-1", "attachments": [
            { "name": "photo.jpg", "mimeType": "image/jpeg", "size": PNG.len() },
        ] })
    );
    assert_eq!(history["turns"][1]["text"], "Seen.");

    let deleted = l
        .link
        .request("_lembas/session/delete", json!({ "sessionId": session }), WAIT)
        .await
        .unwrap();
    assert_eq!(deleted["result"], json!({ "deleted": true }));
    assert!(!l.attachments_dir(&session).exists());

    // Deleted from a shell: the folder goes too.
    let other = l.new_session("edit").await;
    l.model().push(reply_text("Ok."));
    l.prompt_blocks(
        &other,
        json!([text_block("keep"), image_block(PNG, "image/gif", "a.gif")]),
        "t-2",
    )
    .await;
    assert_eq!(l.attachment_files(&other).len(), 1);
    let out = l.home.run(&["sessions", "delete", &other]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    assert!(!l.attachments_dir(&other).exists());
}

#[tokio::test(flavor = "multi_thread")]
async fn bad_attachments_are_refused_with_a_sentence_and_nothing_is_kept() {
    let mut l = linked("").await;
    let session = l.new_session("edit").await;
    let nine_mb = BASE64.encode(vec![7u8; 9 << 20]);
    let blob =
        |data: &str| json!({ "type": "resource", "resource": { "uri": "file:///w/part.bin", "blob": data } });
    let cases = [
        (
            "a block over 10 MB",
            json!([
                text_block("big"),
                image_block(&vec![1u8; (10 << 20) + 1], "image/png", "big.png")
            ]),
            "10 MB",
        ),
        (
            "a prompt over 25 MB",
            json!([
                text_block("three"),
                blob(&nine_mb),
                blob(&nine_mb),
                blob(&nine_mb)
            ]),
            "25 MB",
        ),
        (
            "an image that is not base64",
            json!([text_block("x"), { "type": "image", "data": "@@ not base64 @@", "mimeType": "image/png" }]),
            "base64",
        ),
        (
            "a blob that is not base64",
            json!([text_block("x"), blob("%%%%")]),
            "base64",
        ),
        (
            "an image type the spec does not name",
            json!([text_block("x"), image_block(PNG, "image/bmp", "a.bmp")]),
            "image/bmp",
        ),
    ];
    for (i, (what, blocks, phrase)) in cases.into_iter().enumerate() {
        // A good file before the bad one: it must not be kept either.
        let mut blocks = blocks;
        blocks
            .as_array_mut()
            .unwrap()
            .insert(1, image_block(PNG, "image/png", "good.png"));
        let answer = l.prompt_blocks(&session, blocks, &format!("t-bad-{i}")).await;
        let (code, message) = error_of(&answer);
        assert_eq!(code, -32602, "{what}: {answer:.300}");
        assert!(message.contains(phrase), "{what}: {message}");
        assert!(message.ends_with('.'), "{what}: a sentence: {message}");
    }
    assert!(!l.attachments_dir(&session).exists());
    assert!(l.model().requests().is_empty());
    assert!(prompt_events(&l.link, &session).is_empty());
    let history = l.history(&session).await;
    assert_eq!(history["turns"], json!([]));
    let status = session_status(&mut l, &session).await;
    assert_eq!(status["busy"], false);
    assert!(status.get("lastTurnId").is_none(), "{status}");

    // The session takes a good prompt after them, and keeps just its file.
    l.model().push(reply_text("Fine."));
    let answer = l
        .prompt_blocks(
            &session,
            json!([text_block("this one"), image_block(PNG, "image/png", "good.png")]),
            "t-good",
        )
        .await;
    assert_eq!(answer["result"]["stopReason"], "end_turn", "{answer}");
    let files = l.attachment_files(&session);
    assert_eq!(files.len(), 1);
    assert!(stored_as(&files[0], "good.png"));
}

#[tokio::test(flavor = "multi_thread")]
async fn the_model_may_read_its_sessions_attachments_and_edit_one_when_asked() {
    let mut l = linked("").await;
    let session = l.new_session("edit").await;
    let other = l.new_session("edit").await;
    let resource = |text: &str| json!([text_block("here"), { "type": "resource", "resource": { "uri": "file:///w/list.txt", "text": text } }]);
    l.model().push(reply_text("Got it."));
    l.prompt_blocks(&session, resource("first line\nsecond line\n"), "t-1")
        .await;
    l.model().push(reply_text("Got that too."));
    l.prompt_blocks(&other, resource("not yours\n"), "t-other").await;
    let mine = l.attachment_files(&session)[0].display().to_string();
    let theirs = l.attachment_files(&other)[0].display().to_string();

    // Read again (as the prompt named it by path), the other session's refused, an edit asked.
    for (id, name, args) in [
        ("call_r", "read", json!({ "path": mine, "offset": 2 })),
        ("call_o", "read", json!({ "path": theirs })),
        (
            "call_e",
            "edit",
            json!({ "path": mine, "old_string": "second", "new_string": "2nd" }),
        ),
    ] {
        l.model().push(ModelReply::tool_call(id, name, args));
    }
    l.model().push(reply_text("Fixed."));
    let id = l.send_prompt(&session, "fix the list", "t-2").await;
    let card = l
        .link
        .recv_request("session/request_permission", WAIT)
        .await
        .unwrap();
    assert_eq!(card["params"]["toolCall"]["toolCallId"], "call_e");
    let reason = card["params"]["_meta"]["lembas"]["reason"].as_str().unwrap();
    assert!(reason.contains("outside the session's project"), "{reason}");
    l.choose(&card, "once").await;
    let answer = l.link.recv_answer(id, WAIT).await.unwrap();
    assert_eq!(answer["result"]["stopReason"], "end_turn", "{answer}");

    let last = l.model().requests().last().unwrap().clone();
    let result_of = |call: &str| {
        last["messages"]
            .as_array()
            .unwrap()
            .iter()
            .find(|m| m["role"] == "tool" && m["tool_call_id"] == call)
            .map(|m| m["content"].as_str().unwrap_or_default().to_string())
            .unwrap()
    };
    assert_eq!(result_of("call_r"), "     2\tsecond line");
    assert!(
        // Another session's attachments are the device's state: a protected path.
        result_of("call_o").contains("protected path"),
        "{}",
        result_of("call_o")
    );
    assert_eq!(std::fs::read_to_string(&mine).unwrap(), "first line\n2nd line\n");
    assert_eq!(std::fs::read_to_string(&theirs).unwrap(), "not yours\n");
}

#[tokio::test(flavor = "multi_thread")]
async fn an_image_mentioned_with_at_reaches_a_vision_model_as_an_image() {
    let mut l = linked("").await;
    let work = l.work.clone();
    std::fs::write(work.join("picture.png"), PNG).unwrap();
    let seeing = l
        .new_session_at(&work, json!({ "mode": "edit", "lembas_model": VISION_MODEL }))
        .await["result"]["sessionId"]
        .as_str()
        .unwrap()
        .to_string();
    let plain = l.new_session("edit").await;
    let blocks = json!([text_block("What is in @picture.png?")]);

    l.model().push(reply_text("A picture."));
    let answer = l.prompt_blocks(&seeing, blocks.clone(), "t-see").await;
    assert_eq!(answer["result"]["stopReason"], "end_turn", "{answer}");
    let user = last_user(&l.model().requests()[0]);
    let parts = user["content"].as_array().expect("parts for a vision model");
    assert_eq!(
        parts.last().unwrap(),
        &json!({ "type": "image_url", "image_url": { "url": format!("data:image/png;base64,{}", BASE64.encode(PNG)) } }),
        "{user}"
    );
    assert!(
        parts[0]["text"]
            .as_str()
            .unwrap()
            .contains("attached to this prompt"),
        "{user}"
    );
    let listed = json!([{ "name": "picture.png", "mimeType": "image/png", "size": PNG.len() }]);
    assert_eq!(prompt_events(&l.link, &seeing)[0]["attachments"], listed);

    // Any other model gets the line an attached image gets.
    l.model().push(reply_text("I cannot see it."));
    l.prompt_blocks(&plain, blocks, "t-plain").await;
    let request = &l.model().requests()[1];
    assert!(!request.to_string().contains("image_url"), "{request}");
    let content = last_user(request)["content"].as_str().unwrap().to_string();
    assert!(content.contains("the image picture.png (image/png"), "{content}");
}
