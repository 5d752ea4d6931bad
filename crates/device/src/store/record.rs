//! What a session file says, line by line: its header (`"type":"session"`, written by
//! [`super::Store::create`]) and then [`Record`]s, each a JSON object tagged by `type`. Old files
//! still open: fields added later are optional, and a line of a type this version does not know (a
//! newer version's) or cannot read is [`Record::Unknown`] and passed over, never an error.

use lembas_protocol::Effort;
use lembas_protocol::jobs::JobInfo;
use lembas_protocol::permission::ApprovalOption;
use lembas_protocol::plan::Plan;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::message::ChatMessage;
use crate::policy::Mode;

/// One line of a session file after its header.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum Record {
    /// A message of the conversation.
    Message {
        #[serde(rename = "turnId", default)]
        turn_id: Option<String>,
        message: ChatMessage,
    },
    Title {
        title: String,
    },
    Mode {
        mode: Mode,
    },
    Model {
        model: String,
        #[serde(default, deserialize_with = "Effort::read_asked")]
        effort: Option<Effort>,
    },
    /// Made for (or opened by) the link's client: it may delete the session wherever its folder is.
    #[serde(rename = "given")]
    ForLinkClient,
    /// The turn and every later one left the conversation.
    Rewind {
        #[serde(rename = "turnId")]
        turn_id: String,
    },
    /// The conversation replaced by a summary (and the message kept after it).
    Compact(Compact),
    /// A tool call's decision, written as the call ends.
    Decision(DecisionRecord),
    /// A turn's files put back from its copies.
    PutBack(PutBackRecord),
    /// The structured plan as the last plan tool left it.
    Plan {
        #[serde(default)]
        plan: Option<Plan>,
    },
    /// A background job's state, each time it changes.
    Job {
        job: JobInfo,
    },
    /// A newer version's record, or one this version cannot read.
    #[serde(other)]
    Unknown,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Compact {
    pub summary: String,
    #[serde(default)]
    pub plan: Option<Plan>,
    /// The message kept after the summary (the one being answered when it compacted mid-turn).
    #[serde(default)]
    pub kept: Option<KeptMessage>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct KeptMessage {
    #[serde(rename = "turnId", default)]
    pub turn_id: Option<String>,
    pub message: ChatMessage,
}

/// A call's decision. The fields after `outcome` are newer: older files lack them.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct DecisionRecord {
    pub tool_call_id: String,
    /// The mode's or a rule's verdict: `allow`, `ask` or `deny`.
    pub decision: String,
    /// Who answered when it asked: `client` (in LLeMbas), `desktop` (this computer), `timeout`.
    #[serde(default)]
    pub answered_by: Option<String>,
    /// The option the person picked when it asked. Written as its id (`once`, `session`, `deny`);
    /// older files say it in words ([`answer_of_any_age`]).
    #[serde(default, deserialize_with = "answer_of_any_age")]
    pub answer: Option<ApprovalOption>,
    /// `completed`, `failed` or `denied`.
    pub outcome: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub at_ms: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub answered_ms: Option<u64>,
    /// The mode the call was judged in.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mode: Option<String>,
    /// The judge's sentence.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    /// Allowed by an earlier "Allow for this chat".
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub granted: bool,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub headline: Option<String>,
    /// A write's or edit's change as a unified diff, when the call changed a file.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub diff: Option<String>,
}

/// A decision's answer as any version wrote it: an option's id, or the words files written before
/// it was typed hold (`allowed once`, `allowed in this session`; `denied`, and `unsupported` or
/// `answered` where nobody could be asked, were all denials).
fn answer_of_any_age<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Option<ApprovalOption>, D::Error> {
    let Some(said) = Option::<String>::deserialize(d)? else {
        return Ok(None);
    };
    Ok(Some(match said.as_str() {
        "allowed once" => ApprovalOption::Once,
        "allowed in this session" => ApprovalOption::Session,
        id => ApprovalOption::of_id(id).unwrap_or(ApprovalOption::Deny),
    }))
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct PutBackRecord {
    pub turn_id: String,
    pub at_ms: u64,
    pub files: Vec<String>,
    /// Left as they were: the limits no longer let remote work write there, or the folder moved.
    #[serde(default)]
    pub left: Vec<String>,
}

impl Record {
    /// A line read back. Messages, most of a long session, are taken apart by hand: their text
    /// moves as it is instead of going through serde's buffer of a tagged enum twice (the line's
    /// `type`, the message's `role`), which made reopening a long session slower.
    pub fn read(mut line: Value) -> Record {
        if line["type"] == "message" {
            let Some(message) = ChatMessage::read(line["message"].take()) else {
                return Record::Unknown;
            };
            return Record::Message {
                turn_id: line["turnId"].as_str().map(str::to_string),
                message,
            };
        }
        serde_json::from_value(line).unwrap_or(Record::Unknown)
    }
}

/// A session file's first line (`"type":"session"`), as session/new writes it. A field an older
/// file lacks reads as empty.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(default)]
pub struct SessionHeader {
    /// Filled in by [`super::Store::create`] when empty.
    pub id: String,
    pub cwd: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub created_ms: Option<u64>,
    pub model: String,
    /// As written: a mode this version cannot read is the default mode where it is used.
    pub mode: String,
    /// A level this version does not know reads as the default.
    #[serde(
        skip_serializing_if = "Option::is_none",
        deserialize_with = "Effort::read_asked"
    )]
    pub effort: Option<Effort>,
    pub title: String,
    /// Made for the link's client (docs/protocol.md, `_lembas/session/delete`).
    pub given: bool,
}

#[cfg(test)]
impl SessionHeader {
    /// A header that says only the session's folder.
    pub fn in_folder(cwd: &str) -> SessionHeader {
        SessionHeader {
            cwd: cwd.to_string(),
            ..SessionHeader::default()
        }
    }
}

/// A session file read back: its header, and the records after it.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct SessionFile {
    /// `None` when the file has no header (its first line is not `"type":"session"`, or does not
    /// read as one).
    pub header: Option<SessionHeader>,
    pub records: Vec<Record>,
}

impl SessionFile {
    /// The store's lines (header first) as a session file.
    pub fn read(lines: Vec<Value>) -> SessionFile {
        let mut lines = lines.into_iter();
        let Some(first) = lines.next() else {
            return SessionFile::default();
        };
        if first["type"] != "session" {
            return SessionFile {
                header: None,
                records: std::iter::once(first).chain(lines).map(Record::read).collect(),
            };
        }
        SessionFile {
            header: serde_json::from_value(first).ok(),
            records: lines.map(Record::read).collect(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    /// Every record as the lines earlier versions wrote, read and written back the same.
    #[test]
    fn lines_of_every_kind_read_back_and_are_written_as_before() {
        let lines = [
            json!({ "type": "message", "turnId": "t1", "message": { "role": "user", "content": "hi" } }),
            json!({ "type": "title", "title": "Fix it" }),
            json!({ "type": "mode", "mode": "edit" }),
            json!({ "type": "model", "model": "m", "effort": "high" }),
            json!({ "type": "given" }),
            json!({ "type": "rewind", "turnId": "t1" }),
            json!({ "type": "compact", "summary": "s", "plan": null, "kept": { "turnId": "t2", "message": { "role": "user", "content": "go on" } } }),
            json!({ "type": "decision", "toolCallId": "c1", "decision": "ask", "answeredBy": "desktop",
                "answer": "once", "outcome": "completed" }),
            json!({ "type": "put_back", "turnId": "t1", "atMs": 5, "files": ["/p/a"], "left": [] }),
            json!({ "type": "plan", "plan": null }),
        ];
        for line in lines {
            let record = Record::read(line.clone());
            assert_ne!(record, Record::Unknown, "{line}");
            assert_eq!(serde_json::to_value(&record).unwrap(), line, "{record:?}");
        }
    }

    #[test]
    fn what_cannot_be_read_is_passed_over_and_old_lines_still_read() {
        // A newer version's type, a known type with a field of the wrong shape, not an object.
        for line in [
            json!({ "type": "something_newer", "x": 1 }),
            json!({ "type": "mode", "mode": "turbo" }),
            json!({ "type": "rewind" }),
            json!({ "type": "decision", "decision": 3 }),
            json!("text"),
        ] {
            assert_eq!(Record::read(line.clone()), Record::Unknown, "{line}");
        }
        // A message written with a null turn id; one that is no message; a model record from
        // before efforts.
        assert_eq!(
            Record::read(
                json!({ "type": "message", "turnId": null, "message": { "role": "user", "content": "hi" } })
            ),
            Record::Message {
                turn_id: None,
                message: ChatMessage::user("hi")
            }
        );
        assert_eq!(
            Record::read(json!({ "type": "message", "message": {} })),
            Record::Unknown
        );
        assert_eq!(
            Record::read(json!({ "type": "model", "model": "m" })),
            Record::Model {
                model: "m".into(),
                effort: None
            }
        );
        // A level this version does not know is the default, as a client's would be; the model
        // record still reads.
        assert_eq!(
            Record::read(json!({ "type": "model", "model": "m", "effort": "turbo" })),
            Record::Model {
                model: "m".into(),
                effort: Some(Effort::Default)
            }
        );
        let header =
            SessionFile::read(vec![json!({ "type": "session", "cwd": "/p", "effort": "turbo" })]).header;
        assert_eq!(header.and_then(|h| h.effort), Some(Effort::Default));
    }

    /// Files written before the answer was typed say it in words: they read as the same options,
    /// and are written back as ids.
    #[test]
    fn an_older_files_answers_in_words_read_as_options() {
        let decided = |answer: Value| {
            let line = json!({ "type": "decision", "toolCallId": "c1", "decision": "ask", "answeredBy": "desktop",
                "answer": answer, "outcome": "completed", "atMs": 20, "answeredMs": 15, "mode": "manual" });
            match Record::read(line.clone()) {
                Record::Decision(d) => d.answer,
                other => panic!("{line} read as {other:?}"),
            }
        };
        for (said, option) in [
            (json!("allowed once"), Some(ApprovalOption::Once)),
            (json!("allowed in this session"), Some(ApprovalOption::Session)),
            (json!("denied"), Some(ApprovalOption::Deny)),
            (json!("unsupported"), Some(ApprovalOption::Deny)),
            (json!("answered"), Some(ApprovalOption::Deny)),
            (json!("session"), Some(ApprovalOption::Session)),
            (json!(null), None),
        ] {
            assert_eq!(decided(said.clone()), option, "{said}");
        }
        let old = Record::read(json!({ "type": "decision", "toolCallId": "c1", "decision": "ask",
            "answer": "allowed in this session", "outcome": "completed" }));
        assert_eq!(serde_json::to_value(&old).unwrap()["answer"], "session");
    }

    #[test]
    fn a_file_is_its_header_then_its_records() {
        let file = SessionFile::read(vec![
            json!({ "type": "session", "cwd": "/p" }),
            json!({ "type": "title", "title": "T" }),
        ]);
        assert_eq!(file.header.map(|h| h.cwd).as_deref(), Some("/p"));
        assert_eq!(file.records, [Record::Title { title: "T".into() }]);
        let headless = SessionFile::read(vec![json!({ "type": "title", "title": "T" })]);
        assert_eq!((headless.header, headless.records.len()), (None, 1));
        assert_eq!(SessionFile::read(Vec::new()), SessionFile::default());
    }
}
