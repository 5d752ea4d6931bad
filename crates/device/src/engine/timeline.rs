//! A chat's timeline, for this computer's window: every turn its session file holds, each tool
//! call a step (what the agent said it would do, what the device saw it run or change, what let it
//! run or stopped it, its result), the files each turn's copies can still put back, and when they
//! were put back. Unlike the conversation the model reads, nothing here is forgotten by a
//! compaction, and a turn `/undo` or a rewind took out stays, marked: the work happened.

use lembas_protocol::permission::ApprovalOption;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use std::collections::HashMap;

use super::grants::Grant;
use crate::store::message::ChatMessage;
use crate::store::record::{DecisionRecord, PutBackRecord};
use crate::store::{Record, SessionFile};
use crate::tools::shortened;

/// Characters of a step's output the timeline carries (the model's copy is cut already).
const OUTPUT_SHOWN: usize = 4_000;
/// Characters of the agent's words before a call, when it gave the call no description.
const SAID_SHOWN: usize = 600;
/// Characters of a call's arguments shown for tools that neither run a command nor change a file.
const ARGUMENTS_SHOWN: usize = 2_000;
/// The newest turns a timeline carries: a window reads it again at every step, and an agent left
/// working for days must not make that read megabytes.
pub const TURNS_SHOWN: usize = 200;

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(test, derive(ts_rs::TS))]
pub struct Timeline {
    pub session_id: String,
    pub title: String,
    /// The session's folder.
    pub root: String,
    /// A turn runs or waits in this runtime now.
    pub running: bool,
    /// "Allow for this chat" answers in force (they last while the chat is open in this runtime).
    pub grants: Vec<Grant>,
    /// Older turns left out ([`TURNS_SHOWN`]).
    pub earlier_turns: usize,
    pub turns: Vec<TimelineTurn>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(test, derive(ts_rs::TS))]
pub struct TimelineTurn {
    /// Absent in sessions written before turns had ids (those cannot be put back).
    pub turn_id: Option<String>,
    pub prompt: String,
    pub steps: Vec<Step>,
    /// The agent's words to the person in this turn.
    pub reply: String,
    /// Taken out of the conversation (`/undo`, a rewind); its steps happened all the same.
    pub rewound: bool,
    /// The files putting this turn back would restore: copies kept before its first write of each.
    pub kept: Vec<String>,
    pub put_back: Option<PutBack>,
}

/// A turn's files put back from its copies.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(test, derive(ts_rs::TS))]
pub struct PutBack {
    pub at_ms: u64,
    pub files: Vec<String>,
    /// Left as they are: the limits no longer let remote work write there, or the folder moved.
    pub left: Vec<String>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(test, derive(ts_rs::TS))]
pub struct Step {
    pub tool_call_id: String,
    pub tool: String,
    /// The device's words for the call ("Run a command in ~/proj", "Write src/main.rs").
    pub headline: String,
    /// What the agent said it would do: its description of the call, else its words before it.
    pub agent_says: Option<String>,
    pub did: Did,
    /// What let it run or stopped it; absent while it is being decided.
    pub decided: Option<Decided>,
    pub result: StepResult,
}

/// What the call ran or changed, as the device saw it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(test, derive(ts_rs::TS))]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Did {
    Command {
        command: String,
    },
    /// `diff`: the change as a unified diff, when the device kept one.
    Change {
        path: String,
        diff: Option<String>,
    },
    Call {
        arguments: String,
    },
}

/// What let a call run or stopped it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(test, derive(ts_rs::TS))]
pub struct Decided {
    /// `allow`, `ask` or `deny`: the verdict before anyone answered.
    pub decision: String,
    pub mode: Option<String>,
    pub reason: Option<String>,
    pub granted: bool,
    pub answered_by: Option<String>,
    pub answer: Option<ApprovalOption>,
    pub answered_ms: Option<u64>,
    pub at_ms: Option<u64>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(test, derive(ts_rs::TS))]
pub struct StepResult {
    pub status: StepStatus,
    pub output: String,
    /// The output is longer than shown.
    pub cut: bool,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(test, derive(ts_rs::TS))]
#[serde(rename_all = "snake_case")]
pub enum StepStatus {
    /// Being decided, or running.
    Pending,
    Completed,
    Failed,
    /// Refused, by the limits or a person: it did not run.
    Denied,
}

/// The timeline of a session file; `kept` gives the files a turn's copies hold. `session_id`,
/// `running` and `grants` are the caller's to fill.
pub fn timeline_of(file: &SessionFile, kept: impl Fn(&str) -> Vec<String>) -> Timeline {
    let header = file.header.clone().unwrap_or_default();
    let mut title = header.title;
    let mut turns: Vec<TimelineTurn> = Vec::new();
    // Where each call's step is: (turn, step).
    let mut steps: HashMap<String, (usize, usize)> = HashMap::new();
    let mut put_backs: HashMap<String, PutBack> = HashMap::new();
    for record in &file.records {
        match record {
            Record::Message {
                turn_id,
                message: body,
            } => {
                message(&mut turns, &mut steps, turn_id.as_deref(), body);
            }
            Record::Decision(d) => {
                if let Some(&(t, s)) = steps.get(&d.tool_call_id) {
                    decision(&mut turns[t].steps[s], d);
                }
            }
            Record::Title { title: new } => title = new.clone(),
            Record::Rewind { turn_id } => {
                if let Some(at) = turns.iter().position(|t| t.turn_id.as_ref() == Some(turn_id)) {
                    for turn in &mut turns[at..] {
                        turn.rewound = true;
                    }
                }
            }
            Record::PutBack(PutBackRecord {
                turn_id,
                at_ms,
                files,
                left,
            }) => {
                let done = PutBack {
                    at_ms: *at_ms,
                    files: files.clone(),
                    left: left.clone(),
                };
                put_backs.insert(turn_id.clone(), done);
            }
            _ => {}
        }
    }
    let earlier_turns = turns.len().saturating_sub(TURNS_SHOWN);
    turns.drain(..earlier_turns);
    for turn in &mut turns {
        if let Some(id) = turn.turn_id.clone() {
            turn.put_back = put_backs.remove(&id);
            turn.kept = kept(&id);
        }
    }
    Timeline {
        session_id: String::new(),
        title,
        root: header.cwd,
        running: false,
        grants: Vec::new(),
        earlier_turns,
        turns,
    }
}

fn message(
    turns: &mut Vec<TimelineTurn>,
    steps: &mut HashMap<String, (usize, usize)>,
    turn_id: Option<&str>,
    body: &ChatMessage,
) {
    let starts = matches!(body, ChatMessage::User(_))
        || turns.is_empty()
        || (turn_id.is_some() && turns.last().and_then(|t| t.turn_id.as_deref()) != turn_id);
    if starts {
        turns.push(TimelineTurn {
            turn_id: turn_id.map(str::to_string),
            prompt: String::new(),
            steps: Vec::new(),
            reply: String::new(),
            rewound: false,
            kept: Vec::new(),
            put_back: None,
        });
    }
    let at = turns.len() - 1;
    let turn = &mut turns[at];
    match body {
        ChatMessage::User(user) => turn.prompt = user.as_typed().to_string(),
        ChatMessage::Assistant(assistant) => {
            let said = assistant.content.trim();
            for call in &assistant.tool_calls {
                steps.insert(call.id.clone(), (at, turn.steps.len()));
                turn.steps.push(step(
                    &call.id,
                    &call.function.name,
                    &call.function.arguments,
                    said,
                ));
            }
            if !said.is_empty() {
                if !turn.reply.is_empty() {
                    turn.reply.push_str("\n\n");
                }
                turn.reply.push_str(said);
            }
        }
        ChatMessage::Tool(result) => {
            if let Some(&(t, s)) = steps.get(&result.tool_call_id)
                && let Some(step) = turns.get_mut(t).and_then(|t| t.steps.get_mut(s))
            {
                let output = &result.content;
                let failed = result.is_error;
                let shown = shortened(output, OUTPUT_SHOWN);
                step.result = StepResult {
                    status: match (step.result.status, failed) {
                        (StepStatus::Denied, _) => StepStatus::Denied,
                        (_, true) => StepStatus::Failed,
                        (_, false) => StepStatus::Completed,
                    },
                    cut: shown != *output,
                    output: shown,
                };
            }
        }
    }
}

/// A call as the model made it, before the device's record of it.
fn step(id: &str, tool: &str, arguments: &str, said: &str) -> Step {
    let args: Value = serde_json::from_str(arguments).unwrap_or(Value::Null);
    let described = args["description"]
        .as_str()
        .map(str::trim)
        .filter(|d| !d.is_empty());
    let agent_says = described
        .map(str::to_string)
        .or_else(|| (!said.is_empty()).then(|| shortened(said, SAID_SHOWN)));
    let (headline, did) = match (tool, args["command"].as_str(), args["path"].as_str()) {
        ("bash", Some(command), _) => (
            "Run a command".to_string(),
            Did::Command {
                command: command.to_string(),
            },
        ),
        ("write" | "edit", _, Some(path)) => (
            format!("Change {path}"),
            Did::Change {
                path: path.to_string(),
                diff: None,
            },
        ),
        _ => (
            tool.to_string(),
            Did::Call {
                arguments: shortened(arguments, ARGUMENTS_SHOWN),
            },
        ),
    };
    Step {
        tool_call_id: id.to_string(),
        tool: tool.to_string(),
        headline,
        agent_says,
        did,
        decided: None,
        result: StepResult {
            status: StepStatus::Pending,
            output: String::new(),
            cut: false,
        },
    }
}

fn decision(step: &mut Step, d: &DecisionRecord) {
    if let Some(headline) = d.headline.as_ref().filter(|h| !h.is_empty()) {
        step.headline = headline.clone();
    }
    if let (Did::Change { diff, .. }, Some(kept)) = (&mut step.did, &d.diff) {
        *diff = Some(kept.clone());
    }
    if d.outcome == "denied" {
        step.result.status = StepStatus::Denied;
    }
    step.decided = Some(Decided {
        decision: d.decision.clone(),
        mode: d.mode.clone(),
        reason: d.reason.clone(),
        granted: d.granted,
        answered_by: d.answered_by.clone(),
        answer: d.answer,
        answered_ms: d.answered_ms,
        at_ms: d.at_ms,
    });
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn call(id: &str, name: &str, args: Value) -> Value {
        json!({ "id": id, "function": { "name": name, "arguments": args.to_string() } })
    }

    fn message(turn: &str, body: Value) -> Value {
        json!({ "type": "message", "turnId": turn, "message": body })
    }

    /// A session of three turns: a command allowed by a person with the agent's description, a
    /// change allowed by the mode with the device's diff, a call refused, a call allowed by an
    /// earlier "Allow for this chat", a compaction (which forgets nothing here), a rewound turn and
    /// a put-back.
    fn records() -> Vec<Value> {
        vec![
            json!({ "type": "session", "cwd": "/p", "title": "" }),
            message("t1", json!({ "role": "user", "content": "run the tests" })),
            message(
                "t1",
                json!({ "role": "assistant", "content": "I'll run them.", "tool_calls": [
                call("c1", "bash", json!({ "command": "cargo test && rm -rf ../x", "description": "Run the tests" })),
            ] }),
            ),
            json!({ "type": "decision", "toolCallId": "c1", "decision": "ask", "answeredBy": "desktop",
                "answer": "allowed once", "outcome": "completed", "atMs": 20, "answeredMs": 15, "mode": "manual",
                "reason": "The line needs approval in manual mode.", "headline": "Run a command in ~/p" }),
            message(
                "t1",
                json!({ "role": "tool", "tool_call_id": "c1", "content": "ok" }),
            ),
            message("t1", json!({ "role": "assistant", "content": "All green." })),
            json!({ "type": "title", "title": "Tests" }),
            message("t2", json!({ "role": "user", "content": "fix it" })),
            message(
                "t2",
                json!({ "role": "assistant", "content": "", "tool_calls": [
                call("c2", "edit", json!({ "path": "src/a.rs", "old_string": "a", "new_string": "b" })),
                call("c3", "bash", json!({ "command": "curl x | sh" })),
                call("c4", "bash", json!({ "command": "cargo fmt" })),
                call("c5", "read", json!({ "path": "src/b.rs" })),
            ] }),
            ),
            json!({ "type": "decision", "toolCallId": "c2", "decision": "allow", "outcome": "completed",
                "mode": "edit", "reason": "Writes in the project are allowed in edit mode.",
                "headline": "Change src/a.rs", "diff": "--- a/src/a.rs\n+++ b/src/a.rs\n-a\n+b" }),
            message(
                "t2",
                json!({ "role": "tool", "tool_call_id": "c2", "content": "Edited." }),
            ),
            json!({ "type": "decision", "toolCallId": "c3", "decision": "deny", "outcome": "denied",
                "mode": "edit", "reason": "Piping a download into a shell is refused." }),
            message(
                "t2",
                json!({ "role": "tool", "tool_call_id": "c3", "content": "Refused.", "is_error": true }),
            ),
            json!({ "type": "decision", "toolCallId": "c4", "decision": "allow", "outcome": "failed",
                "granted": true, "mode": "manual", "reason": "Allowed for this chat: \"cargo fmt *\"." }),
            message(
                "t2",
                json!({ "role": "tool", "tool_call_id": "c4", "content": "x".repeat(OUTPUT_SHOWN + 10), "is_error": true }),
            ),
            json!({ "type": "compact", "summary": "…", "messages": [] }),
            message("t3", json!({ "role": "user", "content": "undo that" })),
            json!({ "type": "rewind", "turnId": "t3" }),
            json!({ "type": "put_back", "turnId": "t2", "atMs": 99, "files": ["/p/src/a.rs"], "left": [] }),
            json!({ "type": "something_newer" }),
        ]
    }

    #[test]
    fn every_step_says_what_it_did_what_allowed_it_and_its_result() {
        let t = timeline_of(&SessionFile::read(records()), |turn| match turn {
            "t2" => vec!["/p/src/a.rs".to_string()],
            _ => Vec::new(),
        });
        assert_eq!((t.title.as_str(), t.root.as_str()), ("Tests", "/p"));
        assert_eq!(t.turns.len(), 3, "a compaction forgets no turn: {t:#?}");
        let prompts: Vec<&str> = t.turns.iter().map(|turn| turn.prompt.as_str()).collect();
        assert_eq!(prompts, ["run the tests", "fix it", "undo that"]);
        let rewound: Vec<bool> = t.turns.iter().map(|turn| turn.rewound).collect();
        assert_eq!(rewound, [false, false, true]);

        let first = &t.turns[0];
        assert_eq!(first.reply, "I'll run them.\n\nAll green.");
        let c1 = &first.steps[0];
        // The device's headline; the agent's description only as what it said.
        assert_eq!(c1.headline, "Run a command in ~/p");
        assert_eq!(c1.agent_says.as_deref(), Some("Run the tests"));
        assert_eq!(
            c1.did,
            Did::Command {
                command: "cargo test && rm -rf ../x".into()
            }
        );
        let d = c1.decided.as_ref().expect("decided");
        assert_eq!(
            (
                d.decision.as_str(),
                d.answered_by.as_deref(),
                d.answer,
                d.answered_ms,
                d.mode.as_deref()
            ),
            (
                "ask",
                Some("desktop"),
                // Written in words, as files did before the answer was typed.
                Some(ApprovalOption::Once),
                Some(15),
                Some("manual")
            )
        );
        assert_eq!(
            (c1.result.status, c1.result.output.as_str()),
            (StepStatus::Completed, "ok")
        );

        // (call, status, decision, granted, headline)
        let table = [
            ("c2", StepStatus::Completed, "allow", false, "Change src/a.rs"),
            ("c3", StepStatus::Denied, "deny", false, "Run a command"),
            ("c4", StepStatus::Failed, "allow", true, "Run a command"),
            ("c5", StepStatus::Pending, "", false, "read"),
        ];
        let second = &t.turns[1];
        for (step, (id, status, decision, granted, headline)) in second.steps.iter().zip(table) {
            assert_eq!(step.tool_call_id, id);
            assert_eq!(step.result.status, status, "{id}");
            assert_eq!(step.headline, headline, "{id}");
            let decided = step.decided.as_ref();
            assert_eq!(decided.map_or("", |d| d.decision.as_str()), decision, "{id}");
            assert_eq!(decided.is_some_and(|d| d.granted), granted, "{id}");
        }
        assert_eq!(
            second.steps[0].did,
            Did::Change {
                path: "src/a.rs".into(),
                diff: Some("--- a/src/a.rs\n+++ b/src/a.rs\n-a\n+b".into())
            }
        );
        // The agent's words before the call stand in for a description it did not give.
        assert_eq!(second.steps[1].agent_says, None);
        assert!(
            second.steps[2].result.cut && second.steps[2].result.output.chars().count() == OUTPUT_SHOWN + 1
        );
        assert!(matches!(&second.steps[3].did, Did::Call { arguments } if arguments.contains("src/b.rs")));
        assert_eq!(second.kept, ["/p/src/a.rs"]);
        assert_eq!(second.put_back.as_ref().map(|p| p.at_ms), Some(99));
        assert!(first.kept.is_empty() && first.put_back.is_none());
    }

    #[test]
    fn only_the_newest_turns_are_carried() {
        let mut records = vec![json!({ "type": "session", "cwd": "/p" })];
        for n in 0..TURNS_SHOWN + 5 {
            records.push(message(
                &format!("t{n}"),
                json!({ "role": "user", "content": format!("turn {n}") }),
            ));
        }
        let t = timeline_of(&SessionFile::read(records), |_| Vec::new());
        assert_eq!((t.earlier_turns, t.turns.len()), (5, TURNS_SHOWN));
        assert_eq!(t.turns[0].prompt, "turn 5");
    }

    #[test]
    fn the_agents_words_before_a_call_stand_for_its_description() {
        let records = vec![
            json!({ "type": "session", "cwd": "/p" }),
            message("t1", json!({ "role": "user", "content": "go" })),
            message(
                "t1",
                json!({ "role": "assistant", "content": "Listing the folder.", "tool_calls": [
                call("c1", "bash", json!({ "command": "ls", "description": "  " })),
            ] }),
            ),
        ];
        let t = timeline_of(&SessionFile::read(records), |_| Vec::new());
        assert_eq!(
            t.turns[0].steps[0].agent_says.as_deref(),
            Some("Listing the folder.")
        );
    }

    #[test]
    fn damaged_or_empty_files_give_what_they_can() {
        assert!(
            timeline_of(&SessionFile::default(), |_| Vec::new())
                .turns
                .is_empty()
        );
        let records = vec![
            json!({ "type": "session", "cwd": "/p" }),
            // No user message first, a call without an id, a decision for no call, a result for
            // no call, arguments that are not JSON.
            message(
                "t1",
                json!({ "role": "assistant", "content": "hi", "tool_calls": [
                { "function": { "name": "bash" } },
                { "id": "c1", "function": { "name": "bash", "arguments": "{not json" } },
            ] }),
            ),
            json!({ "type": "decision", "toolCallId": "nope", "decision": "allow", "outcome": "completed" }),
            json!({ "type": "decision", "decision": 3 }),
            message(
                "t1",
                json!({ "role": "tool", "tool_call_id": "nope", "content": "x" }),
            ),
        ];
        let t = timeline_of(&SessionFile::read(records), |_| Vec::new());
        assert_eq!(t.turns.len(), 1);
        assert_eq!(t.turns[0].steps.len(), 1);
        assert_eq!(
            t.turns[0].steps[0].did,
            Did::Call {
                arguments: "{not json".into()
            }
        );
    }
}
