//! Image and resource blocks of a prompt (capability `attachments`, docs/protocol.md "session/prompt"):
//! read and decoded within the limits (a block, a prompt), written under the session's attachment
//! folder with names of their own, and attached for the model. A text resource is line-numbered
//! like an @file, a binary one is referenced by path, and an image becomes an image part for a
//! model that takes images and a line saying it is there for any other. The session's folder of
//! them counts as an allowed folder for its tools (`Engine::tool_context`): the model may read them
//! by that path, and write there when the person allows it.
//!
//! The user message keeps the person's text in `text`, the attachments in `attachments` and what
//! the model reads in `content`; the image parts are made at each request from the saved files, so
//! the session file never holds base64 and a model changed later gets what it can take.

use base64::Engine as _;
use base64::engine::{DecodePaddingMode, GeneralPurpose, GeneralPurposeConfig};
use std::fmt::Write as _;
use std::io::Write as _;
use std::path::{Path, PathBuf};

use crate::decisions::{PromptLimits, Tools};
use crate::rpc::RpcError;
use crate::store::Store;
use crate::store::message::{AttachmentKind, StoredAttachment, UserMessage};
use lembas_protocol::content::{ContentBlock, EmbeddedResource};
use lembas_protocol::event::AttachmentInfo;

/// The image types docs/protocol.md names for an image block.
pub const IMAGE_TYPES: [&str; 4] = ["image/png", "image/jpeg", "image/webp", "image/gif"];

/// The longest name kept from a block's uri (the rest of the stored name is the time and a random
/// part).
const NAME_MAX_CHARS: usize = 100;

/// Standard base64; padding may be there or not, as clients differ.
const BASE64: GeneralPurpose = GeneralPurpose::new(
    &base64::alphabet::STANDARD,
    GeneralPurposeConfig::new().with_decode_padding_mode(DecodePaddingMode::Indifferent),
);

/// One block read and decoded, not written yet.
#[derive(Debug, Clone, PartialEq)]
pub struct Upload {
    /// The name the block gave (its uri's last part), cleaned; a default when it gave none.
    pub name: String,
    pub mime_type: String,
    pub kind: AttachmentKind,
    pub bytes: Vec<u8>,
}

/// A prompt's blocks: the attachment blocks taken out and decoded, the others left for
/// `prompt::text_of`.
#[derive(Debug)]
pub struct Blocks {
    pub others: Vec<ContentBlock>,
    pub uploads: Vec<Upload>,
}

/// An upload written to the session's folder.
#[derive(Debug, Clone, PartialEq)]
pub struct Attachment {
    pub name: String,
    pub mime_type: String,
    pub kind: AttachmentKind,
    pub size: usize,
    pub path: PathBuf,
    /// A text resource's text as the person sent it: what the model is given, never read back
    /// from the saved file (which the model may have replaced by then).
    pub text: Option<String>,
}

impl Attachment {
    /// As the prompt event and the history list it: `{ name, mimeType, size }`.
    pub fn listed(&self) -> AttachmentInfo {
        AttachmentInfo {
            name: self.name.clone(),
            mime_type: self.mime_type.clone(),
            size: self.size,
        }
    }

    /// As the session file keeps it, with the user message.
    fn stored(&self) -> StoredAttachment {
        StoredAttachment {
            name: self.name.clone(),
            mime_type: self.mime_type.clone(),
            size: self.size,
            kind: self.kind,
            path: self.path.display().to_string(),
        }
    }
}

/// The upload an `@image` mention makes of its image (taken out of the mention), named as the
/// file is.
pub fn mentioned_image(mention: &mut crate::files::mention::Attached) -> Option<Upload> {
    let (mime_type, bytes) = mention.image.take()?;
    let name = mention
        .resolved
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| "image".to_string());
    Some(Upload {
        name,
        mime_type: mime_type.to_string(),
        kind: AttachmentKind::Image,
        bytes,
    })
}

/// Takes the image and resource blocks out of `blocks` and decodes them, within the limits
/// (decisions' `prompt`: a block, and the whole prompt with its text). Anything wrong is -32602
/// with a sentence, before anything is written. Other blocks are left as they are.
pub fn read(blocks: Vec<ContentBlock>, limits: &PromptLimits) -> Result<Blocks, RpcError> {
    let mut others = Vec::new();
    let mut uploads = Vec::new();
    let mut total = 0usize;
    for block in blocks {
        match block {
            ContentBlock::Image { data, mime_type, uri } => uploads.push(sized(
                image(&data, &mime_type, uri.as_deref())?,
                &mut total,
                limits,
            )?),
            ContentBlock::Resource { resource } => {
                uploads.push(sized(self::resource(&resource)?, &mut total, limits)?)
            }
            other => {
                // A text block's own limit is prompt::text_of's; it counts towards the prompt's.
                if let ContentBlock::Text { text } = &other {
                    total += text.len();
                }
                others.push(other);
            }
        }
        // Text alone is prompt::text_of's to judge.
        if !uploads.is_empty() && total > limits.max_prompt_bytes {
            return Err(RpcError::invalid_params(format!(
                "The prompt's attachments and text come to more than {} bytes (25 MB), the most a prompt may carry. Send fewer or smaller files.",
                limits.max_prompt_bytes
            )));
        }
    }
    // A prompt that is only a file may come with a blank text block; the file is the prompt.
    if !uploads.is_empty() {
        others.retain(|b| !matches!(b, ContentBlock::Text { text } if text.trim().is_empty()));
    }
    Ok(Blocks { others, uploads })
}

/// An upload within a block's limit, counted towards the prompt's.
fn sized(upload: Upload, total: &mut usize, limits: &PromptLimits) -> Result<Upload, RpcError> {
    let size = upload.bytes.len();
    if size > limits.max_block_bytes {
        return Err(RpcError::invalid_params(format!(
            "The attachment {} is {size} bytes; a block may be at most {} bytes (10 MB). Send a smaller file.",
            upload.name, limits.max_block_bytes
        )));
    }
    *total += size;
    Ok(upload)
}

/// A prompt's text (`prompt::text_of` of the blocks that are not files) and its files, checked and
/// decoded. A prompt may be files alone, with no text.
pub fn prompt_of(
    blocks: Vec<ContentBlock>,
    limits: &PromptLimits,
) -> Result<(String, Vec<Upload>), RpcError> {
    let Blocks { others, uploads } = read(blocks, limits)?;
    let only_files = !uploads.is_empty() && others.is_empty();
    let text = if only_files {
        String::new()
    } else {
        super::prompt::text_of(&others, limits)?
    };
    Ok((text, uploads))
}

/// Writes the uploads to the session's attachment folder (blocking I/O, off the runtime).
pub async fn save(store: &Store, id: &str, uploads: Vec<Upload>) -> Result<Vec<Attachment>, RpcError> {
    if uploads.is_empty() {
        return Ok(Vec::new());
    }
    let dir = store
        .attachments_dir(id)
        .map_err(|e| RpcError::invalid_params(e.to_string()))?;
    let saved = tokio::task::spawn_blocking(move || write(&dir, uploads))
        .await
        .map_err(|e| RpcError::internal(e.to_string()))?;
    saved.map_err(|e| {
        RpcError::internal(format!(
            "The prompt's files could not be saved on this computer: {e}."
        ))
    })
}

/// `{ type: "image", data, mimeType, uri? }`.
fn image(data: &str, mime_type: &str, uri: Option<&str>) -> Result<Upload, RpcError> {
    if !IMAGE_TYPES.contains(&mime_type) {
        return Err(RpcError::invalid_params(format!(
            "{mime_type:?} is not an image type this device takes: send image/png, image/jpeg, image/webp or image/gif."
        )));
    }
    let name = name_of(uri, &format!("image.{}", extension(mime_type)));
    let bytes = decode(data, &name)?;
    if bytes.is_empty() {
        return Err(RpcError::invalid_params(format!(
            "The image block {name} is empty: send the image's bytes base64-encoded in `data`."
        )));
    }
    Ok(Upload {
        bytes,
        name,
        mime_type: mime_type.to_string(),
        kind: AttachmentKind::Image,
    })
}

/// `{ type: "resource", resource: { uri, mimeType?, text } }` or `{ …, blob }`.
fn resource(resource: &EmbeddedResource) -> Result<Upload, RpcError> {
    let mime_type = resource.mime_type.as_deref();
    let uri = resource.uri.as_deref();
    if let Some(text) = &resource.text {
        return Ok(Upload {
            name: name_of(uri, "resource.txt"),
            mime_type: mime_type.unwrap_or("text/plain").to_string(),
            kind: AttachmentKind::Text,
            bytes: text.as_bytes().to_vec(),
        });
    }
    let Some(blob) = &resource.blob else {
        return Err(RpcError::invalid_params(
            "A resource block needs `text` (a string) or `blob` (base64) in its resource.",
        ));
    };
    let name = name_of(uri, "resource.bin");
    let is_image = mime_type.is_some_and(|m| IMAGE_TYPES.contains(&m));
    Ok(Upload {
        bytes: decode(blob, &name)?,
        name,
        mime_type: mime_type.unwrap_or("application/octet-stream").to_string(),
        kind: if is_image {
            AttachmentKind::Image
        } else {
            AttachmentKind::Binary
        },
    })
}

fn decode(data: &str, name: &str) -> Result<Vec<u8>, RpcError> {
    BASE64.decode(data.trim()).map_err(|e| {
        RpcError::invalid_params(format!(
            "The attachment {name} is not valid base64 ({e}): send the file's bytes base64-encoded."
        ))
    })
}

fn extension(mime_type: &str) -> &str {
    match mime_type {
        "image/jpeg" => "jpg",
        other => other.strip_prefix("image/").unwrap_or("bin"),
    }
}

/// The name a block gives: the last part of its uri, percent-decoded, with nothing that could
/// make it a path or hide in a listing (separators, control characters, a leading dot).
pub fn name_of(uri: Option<&str>, default: &str) -> String {
    let uri = uri.unwrap_or_default();
    let path = uri.split(['?', '#']).next().unwrap_or_default();
    let last = path.rsplit('/').next().unwrap_or_default();
    let cleaned: String = percent_decoded(last)
        .chars()
        .map(|c| {
            if c.is_control() || matches!(c, '/' | '\\' | ':') {
                '_'
            } else {
                c
            }
        })
        .collect::<String>()
        .trim()
        .trim_start_matches('.')
        .chars()
        .take(NAME_MAX_CHARS)
        .collect();
    if cleaned.is_empty() {
        default.to_string()
    } else {
        cleaned
    }
}

fn percent_decoded(text: &str) -> String {
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        let hex = bytes
            .get(i + 1..i + 3)
            .and_then(|h| std::str::from_utf8(h).ok())
            .and_then(|h| u8::from_str_radix(h, 16).ok());
        match (bytes[i], hex) {
            (b'%', Some(b)) => {
                out.push(b);
                i += 3;
            }
            (b, _) => {
                out.push(b);
                i += 1;
            }
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// Writes the uploads into `dir` (made when missing), each under a name of its own:
/// `<milliseconds>-<random>-<name>`, never over an existing file. When one cannot be written, the
/// ones written before are removed again: a prompt is kept whole or not at all.
pub fn write(dir: &Path, uploads: Vec<Upload>) -> std::io::Result<Vec<Attachment>> {
    if uploads.is_empty() {
        return Ok(Vec::new());
    }
    std::fs::create_dir_all(dir)?;
    let mut written: Vec<Attachment> = Vec::new();
    for upload in uploads {
        match write_one(dir, &upload) {
            Ok(path) => written.push(Attachment {
                size: upload.bytes.len(),
                text: (upload.kind == AttachmentKind::Text)
                    .then(|| String::from_utf8_lossy(&upload.bytes).into_owned()),
                name: upload.name,
                mime_type: upload.mime_type,
                kind: upload.kind,
                path,
            }),
            Err(e) => {
                for attachment in &written {
                    let _ = std::fs::remove_file(&attachment.path);
                }
                return Err(e);
            }
        }
    }
    Ok(written)
}

fn write_one(dir: &Path, upload: &Upload) -> std::io::Result<PathBuf> {
    let ms = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_millis())
        .unwrap_or_default();
    loop {
        let random: String = (0..8)
            .map(|_| char::from(b"0123456789abcdefghjkmnpqrstvwxyz"[fastrand::usize(..32)]))
            .collect();
        let path = dir.join(format!("{ms}-{random}-{}", upload.name));
        let mut file = match std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .open(&path)
        {
            Ok(file) => file,
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => continue,
            Err(e) => return Err(e),
        };
        let done = file.write_all(&upload.bytes).and_then(|()| file.sync_all());
        if let Err(e) = done {
            let _ = std::fs::remove_file(&path);
            return Err(e);
        }
        return Ok(path);
    }
}

/// The user message of a turn: the person's text, and what the model reads of the attachments
/// after it (a text resource line-numbered and cut like a read result, a line for the others).
pub fn user_message(text: &str, attachments: &[Attachment], numbers: &Tools) -> UserMessage {
    if attachments.is_empty() {
        return UserMessage::says(text);
    }
    let mut content = text.to_string();
    for attachment in attachments {
        if !content.is_empty() {
            content.push_str("\n\n");
        }
        content.push_str(&rendered(attachment, numbers));
    }
    UserMessage {
        text: Some(text.to_string()),
        attachments: attachments.iter().map(Attachment::stored).collect(),
        ..UserMessage::says(content)
    }
}

fn rendered(a: &Attachment, numbers: &Tools) -> String {
    let path = a.path.display();
    match a.kind {
        AttachmentKind::Image => format!(
            "The person attached the image {} ({}, {} bytes), saved at {path}.",
            a.name, a.mime_type, a.size
        ),
        AttachmentKind::Binary => format!(
            "The person attached the file {}, saved at {path}: (binary file, {} bytes)",
            a.name, a.size
        ),
        AttachmentKind::Text => {
            let text = a.text.as_deref().unwrap_or_default();
            let mut numbered = String::new();
            for (i, line) in text.lines().enumerate() {
                if i > 0 {
                    numbered.push('\n');
                }
                let _ = write!(numbered, "{:>6}\t{line}", i + 1);
            }
            if numbered.is_empty() {
                numbered.push_str("(empty file)");
            }
            format!(
                "The person attached the file {}, saved at {path}:\n{}",
                a.name,
                crate::tools::cut_result(&numbered, numbers)
            )
        }
    }
}

#[cfg(test)]
mod tests;
