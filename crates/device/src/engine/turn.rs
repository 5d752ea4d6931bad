//! One turn: the person's message, then model steps (at most the backstop's number), each streamed to
//! the client as it comes, and the tool calls each step asks for, until the model stops calling
//! tools, runs out of tokens, or the turn is cancelled.

use serde_json::json;
use std::sync::Arc;

use super::Engine;
use super::attachments::{self, Attachment};
use super::compaction;
use super::model::{self, StepOutput, Streamed, ToolCall};
use super::prompt;
use super::session::Session;
use super::step_request::{ApiMessage, StepRequest};
use super::tool::{self, Toolbox};
use crate::rpc::{self, RpcError};
use crate::store::Record;
use crate::store::message::{AssistantMessage, CalledTool, ChatMessage, UserMessage};
use lembas_protocol::Reason;
use lembas_protocol::content::ContentBlock;
use lembas_protocol::event::{Event, TaskState};
use lembas_protocol::prompt::{PromptAnswer, StopReason};
use lembas_protocol::update::SessionUpdate;

/// What came with a prompt besides its text: the files sent with it, and what the `@path`
/// mentions in the person's text attached.
#[derive(Default)]
pub struct Enclosed {
    pub files: Vec<Attachment>,
    pub mentioned: String,
    /// The device started the turn, not a person: the text is the notes of jobs that ended.
    pub machine: bool,
}

/// Runs one turn to its end and answers what session/prompt answers. `shown` is what the person
/// typed when the model gets something else (a command's expanded text): the transcript shows it.
pub async fn run(
    engine: &Engine,
    session: &Arc<Session>,
    turn_id: &str,
    text: String,
    shown: Option<&str>,
    enclosed: Enclosed,
) -> Result<PromptAnswer, RpcError> {
    let Enclosed {
        files: attached,
        mentioned,
        machine,
    } = enclosed;
    let mut cancel = session.cancel.subscribe();
    cancel.mark_unchanged();
    let sid = session.id.clone();
    let prompt_event = Event::Prompt {
        text: shown.unwrap_or(&text).to_string(),
        turn_id: turn_id.into(),
        attachments: attached.iter().map(Attachment::listed).collect(),
        machine,
    };
    engine.event(&sid, prompt_event).await;
    engine
        .event(
            &sid,
            Event::Task {
                state: TaskState::Start,
                turn_id: turn_id.into(),
            },
        )
        .await;
    engine.device_event(crate::events::DeviceEvent::Turn {
        session_id: sid.clone(),
        turn_id: turn_id.into(),
        state: TaskState::Start,
        stop_reason: None,
        cwd: session.cwd.display().to_string(),
    });
    let decisions = engine.setup().decisions;
    if session.is_new() {
        // A prompt of files alone is named after its first file.
        let title = match attached.first() {
            Some(file) if text.trim().is_empty() => {
                prompt::title_of(&file.name, decisions.engine.title_chars)
            }
            _ => prompt::title_of(shown.unwrap_or(&text), decisions.engine.title_chars),
        };
        session.set_title(title.clone());
        session.record(Record::Title { title: title.clone() });
        super::session_access::tell_title(engine, &sid, &title).await;
    }
    let mut message = attachments::user_message(&text, &attached, &decisions.tools);
    if !mentioned.is_empty() {
        // What `@path` mentions attached follows the text; the history shows the text as typed.
        message.content = format!("{}\n\n{mentioned}", message.content);
        message.text = Some(text);
    }
    message.shown = shown.map(str::to_string);
    message.machine = machine;
    engine.show_prompt(session, &message);
    session.push_message(Some(turn_id), ChatMessage::User(message));
    session.flush_unsynced();

    let outcome = steps(engine, session, turn_id, &mut cancel).await;
    session.flush();
    // Steers the turn ended before taking in go back, for the client to send next.
    let unsent: Vec<String> = session.take_steers().into_iter().map(|(_, text)| text).collect();
    let (result, stop) = match outcome {
        Ok(stop) => {
            let mut answer = PromptAnswer::ended(stop, turn_id);
            answer.end().unsent = unsent;
            (Ok(answer), Some(stop))
        }
        Err(e) => {
            engine
                .event(
                    &sid,
                    Event::Error {
                        message: e.to_string(),
                        turn_id: turn_id.into(),
                    },
                )
                .await;
            let mut error = RpcError::with_reason(rpc::INTERNAL_ERROR, Reason::Model, e.to_string());
            // A failed turn gives back the steers it did not take in too.
            if let Some(data) = error.data.as_mut().filter(|_| !unsent.is_empty()) {
                data["unsent"] = json!(unsent);
            }
            (Err(error), None)
        }
    };
    engine
        .event(
            &sid,
            Event::Task {
                state: TaskState::End,
                turn_id: turn_id.into(),
            },
        )
        .await;
    engine
        .event(
            &sid,
            Event::Done {
                turn_id: turn_id.into(),
                stop_reason: stop,
            },
        )
        .await;
    engine.device_event(crate::events::DeviceEvent::Turn {
        session_id: sid,
        turn_id: turn_id.into(),
        state: TaskState::End,
        stop_reason: stop,
        cwd: session.cwd.display().to_string(),
    });
    result
}

async fn steps(
    engine: &Engine,
    session: &Arc<Session>,
    turn_id: &str,
    cancel: &mut tokio::sync::watch::Receiver<u64>,
) -> Result<StopReason, model::ModelError> {
    let max_requests = engine.setup().decisions.engine.max_turn_requests;
    let instance = match engine.instance().await {
        Ok(i) => i,
        Err(why) => {
            let model = session.settings().model;
            return Err(model::ModelError::Unreachable { model, why });
        }
    };
    // Images go to the model as images only when it takes them (read once a turn, and only when
    // the conversation has one).
    let vision = if session.has_images() {
        let model = session.settings().model;
        instance.takes_images(&model).await
    } else {
        false
    };
    let instance_name = engine.instance_name(&instance).await;
    // Read once a turn: the project's AGENTS.md files, in a trusted project.
    let trusted = engine.settings().folder_rules().trusted;
    let protected = engine.setup().dirs.protected_places();
    let project_instructions = super::instructions::section(
        &session.cwd,
        &trusted,
        &protected,
        engine.setup().decisions.engine.project_instructions_max_bytes,
    );
    // The saved images are read again at every step, through the tools' gate: only files inside
    // the session's own attachments folder, as the tools would read them.
    let image_context = engine.tool_context(session);
    let saved_images: Vec<std::path::PathBuf> = engine
        .store()
        .attachments_dir(&session.id)
        .and_then(crate::canonical::canonicalize)
        .into_iter()
        .collect();
    let gate = crate::tools::read_gate::ReadGate::new(&saved_images, &image_context.protected);
    let images = super::step_request::Images {
        gate: &gate,
        most_bytes: engine.setup().decisions.prompt.max_block_bytes as u64,
    };
    let window = compaction::window(session, &instance, &engine.setup().decisions.engine).await;
    // A session opened from the store reads the instance's memory at its first turn.
    if session.memory_unread() {
        let memory = engine.read_memory(engine.memory_scope(&session.id)).await;
        session.set_memory(memory);
    }
    // What the system text says after our own: the instance's memory, the editor's servers that
    // did not start, the project's instructions.
    let mut sections = session.prompt_sections();
    sections.extend(project_instructions);
    for _ in 0..max_requests {
        take_steers(engine, session, turn_id).await;
        take_job_notes(engine, session, turn_id).await;
        // The last step's prompt filled the window: this one is sent compacted.
        if session.compact_first() {
            tokio::select! {
                _ = cancel.changed() => return Ok(StopReason::Cancelled),
                compacted = compaction::compact(engine, session, compaction::Moment::BeforeStep) => { compacted?; }
            }
        }
        // The calls of this step reach the tools it was told of.
        let toolbox = Toolbox::of(engine, session);
        let tools = toolbox.definitions();
        let body = {
            let view = session.model_view(vision.then_some(&images));
            let mut messages = vec![ApiMessage::System {
                content: prompt::system(
                    &instance_name,
                    &session.cwd,
                    view.settings.mode,
                    &view.context,
                    &sections,
                ),
            }];
            messages.extend(view.messages);
            StepRequest::new(&view.settings.model, messages, tools, view.settings.effort)
        };
        let step = tokio::select! {
            _ = cancel.changed() => return Ok(StopReason::Cancelled),
            step = stream_step(engine, &session.id, &instance, &body) => step,
        };
        let step = match step {
            Ok(step) => step,
            Err(e) => {
                if matches!(e, model::ModelError::Status { status: 401, .. }) {
                    // A new login may have replaced the token: read it again next time.
                    engine.forget_token().await;
                }
                return Err(e);
            }
        };
        let assistant = AssistantMessage {
            content: step.text.clone(),
            reasoning_content: step.reasoning.clone(),
            tool_calls: step
                .tool_calls
                .iter()
                .map(|c| CalledTool::new(&c.id, &c.name, &c.arguments))
                .collect(),
        };
        session.push_message(Some(turn_id), ChatMessage::Assistant(assistant));
        if let Some(usage) = &step.usage {
            // How full the window is: the prompt's tokens of it.
            let used = usage["prompt_tokens"].as_u64().unwrap_or(0);
            session.set_compact_first(compaction::full(
                used,
                window,
                engine.setup().decisions.engine.compact_at_percent,
            ));
            engine
                .event(
                    &session.id,
                    Event::Usage {
                        usage: usage.clone(),
                        used,
                        size: window,
                        turn_id: turn_id.into(),
                    },
                )
                .await;
            engine
                .update(&session.id, SessionUpdate::UsageUpdate { used, size: window })
                .await;
        }
        if step.finish_reason.as_deref() == Some("length") {
            // Calls cut off by the limit cannot be trusted to be whole: none of them runs.
            answer_unrun(
                session,
                turn_id,
                &step.tool_calls,
                "The answer was cut off by the length limit; this call was not run.",
            );
            return Ok(StopReason::MaxTokens);
        }
        if step.tool_calls.is_empty() {
            return Ok(StopReason::EndTurn);
        }
        for (i, call) in step.tool_calls.iter().enumerate() {
            let result = tokio::select! {
                _ = cancel.changed() => None,
                result = tool::run(engine, session, turn_id, &toolbox, call) => Some(result),
            };
            let Some(result) = result else {
                answer_unrun(
                    session,
                    turn_id,
                    &step.tool_calls[i..],
                    "The person stopped the turn; this call did not finish.",
                );
                engine.withdraw_cards_of(&session.id).await;
                return Ok(StopReason::Cancelled);
            };
            session.push_message(
                Some(turn_id),
                ChatMessage::tool(&call.id, result.text, result.is_error),
            );
        }
        session.flush();
    }
    Ok(StopReason::MaxTurnRequests)
}

/// Gives the model the steer messages that came since the last step, as the person's words.
async fn take_steers(engine: &Engine, session: &Session, turn_id: &str) {
    let steers = session.take_steers();
    if steers.is_empty() {
        return;
    }
    let (ids, texts): (Vec<Option<String>>, Vec<String>) = steers.into_iter().unzip();
    for text in &texts {
        session.push_message(Some(turn_id), ChatMessage::user(text.clone()));
    }
    let ids: Vec<String> = ids.into_iter().flatten().collect();
    engine
        .event(
            &session.id,
            Event::Steered {
                texts,
                ids,
                turn_id: turn_id.into(),
            },
        )
        .await;
}

/// Gives the model the notes of jobs that ended since the last step (capability `jobs`).
async fn take_job_notes(engine: &Engine, session: &Session, turn_id: &str) {
    let notes = session.take_job_notes();
    for (job_id, text) in notes {
        let note = UserMessage {
            machine: true,
            ..UserMessage::says(text.clone())
        };
        session.push_message(Some(turn_id), ChatMessage::User(note));
        engine
            .event(
                &session.id,
                Event::JobNote {
                    job_id,
                    text,
                    turn_id: Some(turn_id.into()),
                },
            )
            .await;
    }
}

/// Every call the model made gets an answer in the conversation, so the next request is valid.
fn answer_unrun(session: &Session, turn_id: &str, calls: &[ToolCall], why: &str) {
    for call in calls {
        session.push_message(Some(turn_id), ChatMessage::tool(&call.id, why, true));
    }
}

/// One model request, its text and thinking relayed to the client as they arrive.
async fn stream_step(
    engine: &Engine,
    session_id: &str,
    instance: &model::Instance,
    body: &StepRequest,
) -> Result<StepOutput, model::ModelError> {
    let mut stream = instance.open(body).await?;
    loop {
        match stream.next().await? {
            Streamed::Text(text) => {
                engine
                    .update(session_id, SessionUpdate::agent(ContentBlock::text(&text)))
                    .await;
                engine.event(session_id, Event::Text { text }).await;
            }
            Streamed::Reasoning(text) => {
                engine
                    .update(session_id, SessionUpdate::thought(ContentBlock::text(&text)))
                    .await;
                engine.event(session_id, Event::Reasoning { text }).await;
            }
            Streamed::Done(output) => return Ok(output),
        }
    }
}
