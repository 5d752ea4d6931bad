use super::*;
use crate::engine::step_request::{ContentPart, ImageUrl, Images, UserContent};
use crate::rpc::INVALID_PARAMS;
use serde_json::{Value, json};

fn b64(bytes: &[u8]) -> String {
    BASE64.encode(bytes)
}

/// As session/prompt reads them off the wire: a block of the wrong shape is refused there.
fn blocks(blocks: &Value) -> Result<Vec<ContentBlock>, RpcError> {
    crate::rpc::params("session/prompt", blocks.clone())
}

fn read_blocks(blocks: &Value) -> Result<Blocks, RpcError> {
    read(self::blocks(blocks)?, &decisions().prompt)
}

/// The built-in numbers, as the programs hand them down.
fn decisions() -> &'static crate::decisions::Decisions {
    crate::decisions::Decisions::built_in()
}

/// What the model is sent of `user`, its images read through `gate` within the block limit.
fn user_content(user: &UserMessage, gate: Option<&crate::tools::read_gate::ReadGate>) -> UserContent {
    let images = gate.map(|gate| Images {
        gate,
        most_bytes: decisions().prompt.max_block_bytes as u64,
    });
    crate::engine::step_request::user_content(user, images.as_ref())
}

fn prompt_of(blocks: Vec<ContentBlock>) -> Result<(String, Vec<Upload>), RpcError> {
    super::prompt_of(blocks, &decisions().prompt)
}

fn user_message(text: &str, attachments: &[Attachment]) -> UserMessage {
    super::user_message(text, attachments, &decisions().tools)
}

fn refused(blocks: Value) -> String {
    let e = read_blocks(&blocks).expect_err("refused");
    assert_eq!(e.code, INVALID_PARAMS, "{blocks:.200}");
    assert!(e.message.ends_with('.'), "a sentence: {}", e.message);
    e.message
}

#[test]
fn blocks_are_taken_out_and_decoded() {
    let blocks = json!([
        { "type": "text", "text": "look" },
        { "type": "image", "data": b64(b"PNG"), "mimeType": "image/png", "uri": "file:///tmp/My%20shot.png" },
        { "type": "resource", "resource": { "uri": "file:///w/notes.md", "text": "a\nb" } },
        { "type": "resource", "resource": { "uri": "zip://x/a.zip", "mimeType": "application/zip", "blob": b64(b"PK\0\0") } },
        { "type": "resource", "resource": { "uri": "x", "mimeType": "image/gif", "blob": b64(b"GIF") } },
        { "type": "resource_link", "uri": "file:///y", "name": "y" },
    ]);
    let read = read_blocks(&blocks).unwrap();
    assert_eq!(
        json!(read.others),
        json!([{ "type": "text", "text": "look" }, { "type": "resource_link", "uri": "file:///y", "name": "y" }])
    );
    let got: Vec<(&str, &str, AttachmentKind, &[u8])> = read
        .uploads
        .iter()
        .map(|u| (u.name.as_str(), u.mime_type.as_str(), u.kind, u.bytes.as_slice()))
        .collect();
    assert_eq!(
        got,
        vec![
            (
                "My shot.png",
                "image/png",
                AttachmentKind::Image,
                b"PNG".as_slice()
            ),
            ("notes.md", "text/plain", AttachmentKind::Text, b"a\nb".as_slice()),
            (
                "a.zip",
                "application/zip",
                AttachmentKind::Binary,
                b"PK\0\0".as_slice()
            ),
            ("x", "image/gif", AttachmentKind::Image, b"GIF".as_slice()),
        ]
    );
}

#[test]
fn a_file_alone_is_a_prompt_and_a_blank_text_beside_it_is_dropped() {
    let blocks = json!([
        { "type": "text", "text": "  " },
        { "type": "image", "data": b64(b"x"), "mimeType": "image/webp" },
    ]);
    let read = read_blocks(&blocks).unwrap();
    assert!(read.others.is_empty());
    assert_eq!(read.uploads[0].name, "image.webp");
}

#[test]
fn a_prompt_is_its_text_and_its_files() {
    let image = json!({ "type": "image", "data": b64(b"x"), "mimeType": "image/png" });
    let (text, files) = prompt_of(blocks(&json!([image])).unwrap()).unwrap();
    assert_eq!((text.as_str(), files.len()), ("", 1));
    let (text, files) =
        prompt_of(blocks(&json!([{ "type": "text", "text": "see" }, image])).unwrap()).unwrap();
    assert_eq!((text.as_str(), files.len()), ("see", 1));
    for empty in [json!([]), json!([{ "type": "text", "text": " " }])] {
        assert_eq!(
            prompt_of(blocks(&empty).unwrap()).unwrap_err().code,
            INVALID_PARAMS
        );
    }
}

#[test]
fn bad_blocks_are_refused_with_a_sentence() {
    let m = refused(json!([{ "type": "image", "data": b64(b"x"), "mimeType": "image/bmp" }]));
    assert!(m.contains("image/bmp") && m.contains("image/png"), "{m}");
    let m = refused(json!([{ "type": "image", "data": "not base64!", "mimeType": "image/png" }]));
    assert!(m.contains("not valid base64"), "{m}");
    let m = refused(json!([{ "type": "resource", "resource": { "uri": "a", "blob": "%%%" } }]));
    assert!(m.contains("not valid base64"), "{m}");
    refused(json!([{ "type": "image", "mimeType": "image/png" }]));
    refused(json!([{ "type": "image", "data": "" }]));
    let m = refused(json!([{ "type": "image", "data": "", "mimeType": "image/png" }]));
    assert!(m.contains("is empty"), "{m}");
    refused(json!([{ "type": "resource", "resource": { "uri": "a" } }]));
    refused(json!([{ "type": "resource" }]));
}

#[test]
fn the_limits_are_a_block_and_a_prompt() {
    let limits = &decisions().prompt;
    let at_limit = vec![b'a'; limits.max_block_bytes];
    let ok = json!([{ "type": "resource", "resource": { "uri": "a", "blob": b64(&at_limit) } }]);
    assert_eq!(
        read_blocks(&ok).unwrap().uploads[0].bytes.len(),
        limits.max_block_bytes
    );
    let over = vec![b'a'; limits.max_block_bytes + 1];
    let m = refused(json!([{ "type": "resource", "resource": { "uri": "big.bin", "blob": b64(&over) } }]));
    assert!(m.contains("big.bin") && m.contains("10 MB"), "{m}");
    let m = refused(
        json!([{ "type": "resource", "resource": { "uri": "t", "text": String::from_utf8(over).unwrap() } }]),
    );
    assert!(m.contains("10 MB"), "{m}");
    // Three blocks under the block limit, over the prompt's; text counts with them.
    let nine = b64(&vec![b'a'; 9 << 20]);
    let block = json!({ "type": "resource", "resource": { "uri": "n", "blob": nine } });
    let m = refused(json!([block, block, block]));
    assert!(m.contains("25 MB"), "{m}");
    let eight = "a".repeat(8 << 20);
    let m = refused(json!([block, block, { "type": "text", "text": eight }]));
    assert!(m.contains("25 MB"), "{m}");
}

#[test]
fn names_are_the_uris_last_part_and_never_a_path() {
    let name = |uri: Value| name_of(uri.as_str(), "dflt");
    assert_eq!(name(json!("file:///home/p/shot.png")), "shot.png");
    assert_eq!(name(json!("file:///a/caf%C3%A9.md?x=1#y")), "café.md");
    assert_eq!(name(json!("../../etc/passwd")), "passwd");
    assert_eq!(name(json!("a%2F..%2F..%2Fb")), "a_.._.._b");
    assert_eq!(name(json!("x\\..\\y")), "x_.._y");
    assert_eq!(name(json!("..")), "dflt");
    assert_eq!(name(json!(".env")), "env");
    assert_eq!(name(json!("file:///dir/")), "dflt");
    assert_eq!(name(json!("nl%0Ahere")), "nl_here");
    assert_eq!(name(json!(7)), "dflt");
    assert_eq!(name(json!("x".repeat(300))).len(), NAME_MAX_CHARS);
    assert_eq!(name_of(None, "dflt"), "dflt");
}

fn upload(name: &str, kind: AttachmentKind, bytes: &[u8]) -> Upload {
    Upload {
        name: name.into(),
        mime_type: if kind == AttachmentKind::Image {
            "image/png"
        } else {
            "text/plain"
        }
        .into(),
        kind,
        bytes: bytes.to_vec(),
    }
}

#[test]
fn uploads_get_names_of_their_own_and_two_of_one_name_stay_two() {
    let dir = tempfile::tempdir().unwrap();
    let folder = dir.path().join("attachments/ses_x");
    let written = write(
        &folder,
        vec![
            upload("a.png", AttachmentKind::Image, b"one"),
            upload("a.png", AttachmentKind::Image, b"two"),
        ],
    )
    .unwrap();
    assert_eq!(written.len(), 2);
    assert_ne!(written[0].path, written[1].path);
    let pattern = regex::Regex::new(r"^\d{13}-[0-9a-z]{8}-a\.png$").unwrap();
    for (a, bytes) in written.iter().zip([b"one", b"two"]) {
        let file_name = a.path.file_name().unwrap().to_str().unwrap();
        assert!(pattern.is_match(file_name), "{file_name}");
        assert_eq!(a.path.parent().unwrap(), folder);
        assert_eq!(std::fs::read(&a.path).unwrap(), bytes);
        assert_eq!((a.name.as_str(), a.size), ("a.png", 3));
    }
    assert!(write(&dir.path().join("none"), vec![]).unwrap().is_empty());
    assert!(!dir.path().join("none").exists());
}

#[cfg(unix)]
#[test]
fn a_prompt_that_cannot_be_written_whole_leaves_nothing() {
    let dir = tempfile::tempdir().unwrap();
    // A name the file system refuses (too long) after one that it takes.
    let long = "n".repeat(300);
    let got = write(
        dir.path(),
        vec![
            upload("ok.txt", AttachmentKind::Text, b"1"),
            upload(&long, AttachmentKind::Text, b"2"),
        ],
    );
    assert!(got.is_err());
    assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 0);
}

#[test]
fn the_model_reads_text_numbered_binaries_by_path_and_images_by_vision() {
    let dir = tempfile::tempdir().unwrap();
    let written = write(
        dir.path(),
        vec![
            upload("notes.md", AttachmentKind::Text, b"alpha\n\tbeta\n"),
            Upload {
                mime_type: "application/zip".into(),
                ..upload("a.zip", AttachmentKind::Binary, b"PK\0\0z")
            },
            upload("shot.png", AttachmentKind::Image, b"\x89PNG"),
        ],
    )
    .unwrap();
    let body = user_message("look at these", &written);
    let content = body.content.as_str();
    assert!(content.starts_with("look at these\n\n"), "{content}");
    assert!(
        content.contains(&format!(
            "The person attached the file notes.md, saved at {}:\n     1\talpha\n     2\t\tbeta",
            written[0].path.display()
        )),
        "{content}"
    );
    assert!(content.contains("(binary file, 5 bytes)"), "{content}");
    assert!(
        content.contains(&format!(
            "the image shot.png (image/png, 4 bytes), saved at {}.",
            written[2].path.display()
        )),
        "{content}"
    );
    assert_eq!(body.text.as_deref(), Some("look at these"));
    assert_eq!(
        json!(super::super::session::listed_attachments(&body)[2]),
        json!({ "name": "shot.png", "mimeType": "image/png", "size": 4 })
    );

    let within = [std::fs::canonicalize(dir.path()).unwrap()];
    let protected = crate::policy::protected::Protected::under_home(Path::new("/nonexistent-home"));
    let images = crate::tools::read_gate::ReadGate::new(&within, &protected);
    let plain = user_content(&body, None);
    assert_eq!(plain, UserContent::Text(content.to_string()));
    assert_eq!(
        user_content(&body, Some(&images)),
        UserContent::RuntimeHandles(vec![
            ContentPart::Text {
                text: content.to_string()
            },
            ContentPart::ImageUrl {
                image_url: ImageUrl {
                    url: "data:image/png;base64,iVBORw==".into()
                }
            },
        ])
    );
    assert_eq!(
        json!(user_content(&body, Some(&images)))[1],
        json!({ "type": "image_url", "image_url": { "url": "data:image/png;base64,iVBORw==" } })
    );

    // A file gone from the folder: the line is all the model gets.
    std::fs::remove_file(&written[2].path).unwrap();
    assert_eq!(user_content(&body, Some(&images)), plain);
    // Messages without attachments are the text.
    assert_eq!(user_message("hi", &[]), UserMessage::says("hi"));
    assert_eq!(
        user_content(&UserMessage::says("hi"), Some(&images)),
        UserContent::Text("hi".into())
    );
}

/// Attack (issue 33): the model swaps a saved image for a symlink to, or a hard link of, a key;
/// the next step must not send the key as an image.
#[cfg(unix)]
#[test]
fn a_saved_image_swapped_for_a_link_to_a_key_is_not_sent() {
    let dir = tempfile::tempdir().unwrap();
    let base = std::fs::canonicalize(dir.path()).unwrap();
    let home = base.join("home");
    std::fs::create_dir_all(home.join(".ssh")).unwrap();
    std::fs::write(home.join(".ssh/id_ed25519"), "PRIVATE KEY").unwrap();
    let saved = base.join("state/attachments/ses_a");
    let written = write(
        &saved,
        vec![upload("shot.png", AttachmentKind::Image, b"\x89PNG")],
    )
    .unwrap();
    let body = user_message("look", &written);
    let within = [saved.clone()];
    let protected = crate::policy::protected::Protected::under_home(&home);
    let images = crate::tools::read_gate::ReadGate::new(&within, &protected);
    let key_as_image = BASE64.encode("PRIVATE KEY");
    for link in ["symlink", "hard link"] {
        std::fs::remove_file(&written[0].path).unwrap();
        if link == "symlink" {
            std::os::unix::fs::symlink(home.join(".ssh/id_ed25519"), &written[0].path).unwrap();
        } else {
            std::fs::hard_link(home.join(".ssh/id_ed25519"), &written[0].path).unwrap();
        }
        let sent = json!(user_content(&body, Some(&images))).to_string();
        assert!(
            !sent.contains(&key_as_image),
            "a {link} to the key was sent: {sent}"
        );
    }
}
