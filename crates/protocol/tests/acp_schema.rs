//! What this crate writes of ACP's own messages is what the official schema describes: each answer
//! and each kind of `session/update`, built as the device builds them, validated against
//! `shared/spec/acp-schema-v1/schema.json`.

use lembas_protocol::composer::{AvailableCommand, CommandInput, CommandKind};
use lembas_protocol::content::ContentBlock;
use lembas_protocol::initialize::{
    AgentAuth, AgentCapabilities, AuthMethod, DeviceSays, Implementation, InitializeAnswer, McpCapabilities,
    PromptCapabilities, SessionCapabilities, TerminalAuth,
};
use lembas_protocol::permission::*;
use lembas_protocol::plan::Plan;
use lembas_protocol::prompt::{PromptAnswer, StopReason};
use lembas_protocol::scheduled::ScheduledCard;
use lembas_protocol::session::*;
use lembas_protocol::update::*;
use lembas_protocol::{Capability, Effort, LembasMeta, Mode};
use serde::Serialize;
use serde_json::{Value, json};

fn schema() -> Value {
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../../shared/spec/acp-schema-v1/schema.json"
    );
    serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

/// Every error of `value` against the schema's `definition`.
fn errors(schema: &Value, definition: &str, value: &impl Serialize) -> Vec<String> {
    let mut schema = schema.clone();
    let whole = schema.as_object_mut().unwrap();
    whole.remove("anyOf");
    whole.insert("$ref".into(), json!(format!("#/$defs/{definition}")));
    let validator = jsonschema::validator_for(&schema).unwrap();
    let value = serde_json::to_value(value).unwrap();
    validator
        .iter_errors(&value)
        .map(|e| format!("{definition}: {e} at {} in {value}", e.instance_path()))
        .collect()
}

fn settings() -> LembasMeta<SessionSettings> {
    LembasMeta {
        lembas: SessionSettings {
            model: "m".into(),
            mode: Mode::Edit,
            effort: Effort::Default,
            instance: true,
            mcp_servers: Some(vec![
                McpReport::Started {
                    name: "files".into(),
                    started: true,
                    tools: 3,
                },
                McpReport::Failed {
                    started: false,
                    reason: "no such program".into(),
                },
            ]),
            notice: None,
        },
    }
}

fn modes() -> Modes {
    Modes {
        current_mode_id: Mode::Edit,
        available_modes: [Mode::Plan, Mode::Manual, Mode::Edit]
            .map(|id| ModeChoice {
                id,
                name: id.to_string(),
            })
            .to_vec(),
    }
}

fn options() -> Vec<ConfigOption> {
    vec![ConfigOption {
        id: "effort".into(),
        name: "Effort".into(),
        category: Some("thought_level".into()),
        kind: "select".into(),
        current_value: "default".into(),
        options: vec![ConfigChoice {
            value: "default".into(),
            name: "default".into(),
        }],
    }]
}

#[test]
fn the_answers_the_device_writes_are_acps() {
    let schema = schema();
    let mut wrong = Vec::new();
    for editor in [false, true] {
        let initialize = InitializeAnswer {
            protocol_version: 1,
            agent_capabilities: AgentCapabilities {
                load_session: editor,
                prompt_capabilities: PromptCapabilities {
                    image: true,
                    audio: false,
                    embedded_context: true,
                },
                mcp_capabilities: McpCapabilities {
                    http: editor,
                    sse: false,
                },
                session_capabilities: editor.then_some(SessionCapabilities {
                    list: Empty {},
                    resume: Empty {},
                    close: Empty {},
                    delete: Empty {},
                    additional_directories: Empty {},
                }),
                auth: editor.then_some(AgentAuth { logout: Empty {} }),
            },
            auth_methods: if editor {
                vec![
                    AuthMethod::Agent {
                        id: "lembas-login".into(),
                        name: "LLeMbas login on this computer".into(),
                        description: "Uses the login lembas login made.".into(),
                    },
                    AuthMethod::Terminal {
                        kind: TerminalAuth::Terminal,
                        id: "lembas-login-terminal".into(),
                        name: "Log in to LLeMbas in a terminal".into(),
                        description: "Asks for the instance and the token.".into(),
                        args: vec!["--login".into()],
                    },
                ]
            } else {
                Vec::new()
            },
            agent_info: Implementation {
                name: "LLeMbas CLI".into(),
                version: "2.0.0".into(),
            },
            meta: LembasMeta {
                lembas: DeviceSays {
                    protocol: 3,
                    harness_spec: "3.2.0".into(),
                    limits: None,
                    connection: None,
                    capabilities: vec![Capability::Sessions],
                    sandbox: "namespaces, landlock ABI 7 (scopes), seccomp".into(),
                },
            },
        };
        wrong.extend(errors(&schema, "InitializeResponse", &initialize));
    }
    let new = NewSessionAnswer {
        session_id: "ses_1".into(),
        modes: modes(),
        config_options: Some(options()),
        meta: settings(),
    };
    wrong.extend(errors(&schema, "NewSessionResponse", &new));
    let opened = OpenedSession {
        modes: modes(),
        config_options: options(),
        meta: settings(),
    };
    wrong.extend(errors(&schema, "LoadSessionResponse", &opened));
    wrong.extend(errors(&schema, "ResumeSessionResponse", &opened));
    let list = SessionList {
        sessions: vec![SessionInfo {
            session_id: "ses_1".into(),
            cwd: "/w".into(),
            title: None,
            updated_at: "2026-12-05T00:00:00Z".into(),
        }],
        next_cursor: Some("after-50".into()),
    };
    wrong.extend(errors(&schema, "ListSessionsResponse", &list));
    wrong.extend(errors(
        &schema,
        "SetSessionConfigOptionResponse",
        &ConfigOptions {
            config_options: options(),
        },
    ));
    wrong.extend(errors(&schema, "SetSessionModeResponse", &Empty {}));
    let mut ended = PromptAnswer::ended(StopReason::Cancelled, "t1");
    ended.end().unsent = vec!["and the tests".into()];
    let mut undone = PromptAnswer::ended(StopReason::EndTurn, "t2");
    undone.end().command = Some("undo".into());
    undone.end().undone = Some(None);
    for answer in [ended, undone] {
        wrong.extend(errors(&schema, "PromptResponse", &answer));
    }
    wrong.extend(errors(&schema, "CloseSessionResponse", &Empty {}));
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}

#[test]
fn every_kind_of_session_update_is_acps() {
    let schema = schema();
    let call = ToolCall {
        tool_call_id: "c1".into(),
        title: "Read a.rs".into(),
        kind: ToolKind::Read,
        status: ToolCallStatus::Pending,
        raw_input: json!({ "path": "a.rs" }),
        content: vec![ToolCallContent::text("fn a() {}")],
        locations: vec![lembas_protocol::update::ToolCallLocation {
            path: "/w/a.rs".into(),
            line: Some(12),
        }],
    };
    let plan: Plan = serde_json::from_value(json!({
        "title": "Fix it", "version": 1, "summary": "", "objectives": [], "findings": [],
        "phases": [{ "id": "p1", "title": "Look", "tasks": [
            { "id": "t1", "content": "read", "status": "pending", "steps": [{ "text": "a.rs", "done": false }] }
        ] }]
    }))
    .unwrap();
    let updates = [
        SessionUpdate::user(ContentBlock::text("fix it")),
        SessionUpdate::agent(ContentBlock::text("Fixed.")),
        SessionUpdate::thought(ContentBlock::text("look first")),
        SessionUpdate::ToolCall(call),
        SessionUpdate::ToolCallUpdate(ToolCallUpdate {
            tool_call_id: "c1".into(),
            status: ToolCallStatus::InProgress,
            content: None,
            meta: None,
        }),
        SessionUpdate::ToolCallUpdate(ToolCallUpdate {
            tool_call_id: "c3".into(),
            status: ToolCallStatus::InProgress,
            content: Some(vec![ToolCallContent::Terminal {
                terminal_id: "c3".into(),
            }]),
            meta: Some(lembas_protocol::update::TerminalMeta {
                terminal_info: Some(lembas_protocol::update::TerminalInfo {
                    terminal_id: "c3".into(),
                    cwd: "/w".into(),
                }),
                terminal_output: Some(lembas_protocol::update::TerminalOutput {
                    terminal_id: "c3".into(),
                    data: "ok\n".into(),
                }),
                terminal_exit: Some(lembas_protocol::update::TerminalExit {
                    terminal_id: "c3".into(),
                    exit_code: Some(0),
                    signal: None,
                }),
            }),
        }),
        SessionUpdate::ToolCallUpdate(ToolCallUpdate {
            tool_call_id: "c2".into(),
            status: ToolCallStatus::Completed,
            content: Some(vec![ToolCallContent::Diff {
                path: "/w/a.rs".into(),
                old_text: None,
                new_text: "fn a() {}".into(),
            }]),
            meta: None,
        }),
        SessionUpdate::Plan {
            entries: vec![PlanEntry {
                content: "read".into(),
                priority: "medium".into(),
                status: "pending".into(),
            }],
            meta: LembasMeta {
                lembas: PlanMeta { plan: Some(plan) },
            },
        },
        SessionUpdate::Plan {
            entries: Vec::new(),
            meta: LembasMeta {
                lembas: PlanMeta { plan: None },
            },
        },
        SessionUpdate::AvailableCommandsUpdate {
            available_commands: vec![AvailableCommand {
                name: "undo".into(),
                description: "Put back the files the last turn changed".into(),
                input: Some(CommandInput {
                    hint: "head | <branch>".into(),
                }),
                meta: LembasMeta {
                    lembas: CommandKind {
                        kind: "builtin".into(),
                    },
                },
            }],
        },
        SessionUpdate::CurrentModeUpdate {
            current_mode_id: Mode::Plan,
        },
        SessionUpdate::ConfigOptionUpdate {
            config_options: vec![lembas_protocol::session::ConfigOption {
                id: "model".into(),
                name: "Model".into(),
                category: Some("model".into()),
                kind: "select".into(),
                current_value: "example/chat-fast".into(),
                options: vec![lembas_protocol::session::ConfigChoice {
                    value: "example/chat-fast".into(),
                    name: "example/chat-fast".into(),
                }],
            }],
        },
        SessionUpdate::SessionInfoUpdate {
            title: "Fix it".into(),
        },
        SessionUpdate::UsageUpdate { used: 5, size: 10 },
    ];
    // The check has teeth: a kind ACP does not have is refused.
    let unknown_kind = json!({ "sessionId": "ses_1", "update": {
        "sessionUpdate": "tool_call", "toolCallId": "c1", "title": "t", "kind": "reading"
    } });
    assert!(!errors(&schema, "SessionNotification", &unknown_kind).is_empty());
    let wrong: Vec<String> = updates
        .iter()
        .flat_map(|update| {
            let notification = SessionNotification {
                session_id: "ses_1".into(),
                update: update.clone(),
            };
            errors(&schema, "SessionNotification", &notification)
        })
        .collect();
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}

/// Every block ACP lets a client put in a prompt, with the fields a client may add (annotations,
/// `_meta`, a link's title and size), is read; what the device does not take is refused later, in
/// a sentence.
#[test]
fn every_prompt_block_acp_allows_is_read() {
    let schema = schema();
    let blocks = [
        json!({ "type": "text", "text": "look", "annotations": { "priority": 1 }, "_meta": { "x": 1 } }),
        json!({ "type": "image", "data": "UE5H", "mimeType": "image/png", "uri": "file:///a.png" }),
        json!({ "type": "audio", "data": "UklG", "mimeType": "audio/wav" }),
        json!({ "type": "resource_link", "uri": "file:///w/a.rs", "name": "a.rs", "title": "A", "size": 3 }),
        json!({ "type": "resource", "resource": { "uri": "file:///w/n.md", "text": "a", "mimeType": "text/markdown" } }),
        json!({ "type": "resource", "resource": { "uri": "zip://a", "blob": "UEs=" } }),
    ];
    for block in blocks {
        assert_eq!(errors(&schema, "ContentBlock", &block), Vec::<String>::new());
        let read: Result<ContentBlock, _> = serde_json::from_value(block.clone());
        assert!(read.is_ok(), "{block}: {read:?}");
    }
}

/// `/undo` with nothing to undo says `undone: null`, and reads back as it was written.
#[test]
fn an_answer_reads_back_as_it_was_written() {
    let mut answer = PromptAnswer::ended(StopReason::EndTurn, "t1");
    answer.end().undone = Some(None);
    let written = serde_json::to_value(&answer).unwrap();
    assert_eq!(
        written["_meta"]["lembas"],
        json!({ "turnId": "t1", "undone": null })
    );
    assert_eq!(serde_json::from_value::<PromptAnswer>(written).unwrap(), answer);
    let plain = PromptAnswer::ended(StopReason::EndTurn, "t2");
    let written = serde_json::to_value(&plain).unwrap();
    assert_eq!(
        written,
        json!({ "stopReason": "end_turn", "_meta": { "lembas": { "turnId": "t2" } } })
    );
    assert_eq!(serde_json::from_value::<PromptAnswer>(written).unwrap(), plain);
}

/// An approval card is ACP's request, and every answer ACP allows is read.
#[test]
fn a_card_and_its_answers_are_acps() {
    let schema = schema();
    let card = PermissionRequest {
        session_id: "ses_1".into(),
        tool_call: AskedCall {
            tool_call_id: "c1".into(),
            title: "Run a command in ~/work".into(),
            kind: ToolKind::Execute,
            status: ToolCallStatus::Pending,
            raw_input: json!({ "command": "cargo test" }),
            content: Vec::new(),
        },
        options: PermissionOption::offered(),
        meta: LembasMeta {
            lembas: CardSays {
                reason: "Commands ask in edit mode.".into(),
                purpose: Some("Run the tests".into()),
                always: "cargo test *".into(),
                scheduled: Some(ScheduledCard {
                    schedule_id: "sch_1".into(),
                    run_id: "run_1".into(),
                    wait_s: 600,
                }),
                patient: false,
            },
        },
    };
    assert_eq!(
        errors(&schema, "RequestPermissionRequest", &card),
        Vec::<String>::new()
    );
    // A change's card carries it as ACP's diff, a new file with no old text.
    let change = PermissionRequest {
        tool_call: AskedCall {
            title: "Write notes.txt".into(),
            kind: ToolKind::Edit,
            raw_input: json!({ "path": "notes.txt", "content": "one\n" }),
            content: vec![ToolCallContent::Diff {
                path: "/work/notes.txt".into(),
                old_text: None,
                new_text: "one\n".into(),
            }],
            ..card.tool_call.clone()
        },
        ..card.clone()
    };
    assert_eq!(
        errors(&schema, "RequestPermissionRequest", &change),
        Vec::<String>::new()
    );
    let answers = [
        json!({ "outcome": { "outcome": "selected", "optionId": "once" } }),
        json!({ "outcome": { "outcome": "selected", "optionId": "deny" }, "_meta": { "lembas": { "feedback": "no" } } }),
        json!({ "outcome": { "outcome": "cancelled" } }),
    ];
    for answer in answers {
        assert_eq!(
            errors(&schema, "RequestPermissionResponse", &answer),
            Vec::<String>::new()
        );
        let read: Result<PermissionAnswer, _> = serde_json::from_value(answer.clone());
        assert!(read.is_ok(), "{answer}: {read:?}");
    }
}
