//! The engine driven in this process against a scripted model (`lembas_testkit::ScriptedEngine`):
//! a turn's steps, a tool call's judgement, its card answered through the engine's API, what it
//! did on disk and in the sandbox, and what the model read back, with no program and no socket.
//! The model is the only thing played; the home, the judge, the tools and the sandbox are real.

use lembas_device::engine::model::{SCRIPTED_MODEL, ScriptedStep};
use lembas_device::engine::{ApiMessage, StepRequest, UserContent};
use lembas_device::policy::Mode;
use lembas_device::tools::{FileTool, ToolName};
use lembas_protocol::permission::ApprovalOption;
use lembas_protocol::prompt::StopReason;
use lembas_protocol::update::{ToolCallContent, ToolCallStatus};
use lembas_testkit::{Config, Home, ScriptedEngine};
use serde_json::json;
use std::time::Duration;

/// Far more than a card takes to open; the tests wait it only when something is wrong.
const WAIT: Duration = Duration::from_secs(10);

/// An engine in a home outside the temp folders (a command's sandbox may write there), remote work
/// on in its `work` folder.
fn engine() -> ScriptedEngine {
    let home = Home::outside_temp(env!("CARGO_TARGET_TMPDIR"));
    let config = Config::not_logged_in().work_in(&home.work());
    ScriptedEngine::start(home, &config).expect("the engine starts in its home")
}

/// What the model read back for the call `id` in `request`.
fn tool_result<'a>(request: &'a StepRequest, id: &str) -> &'a str {
    request
        .messages
        .iter()
        .find_map(|m| match m {
            ApiMessage::Tool {
                tool_call_id,
                content,
            } if tool_call_id == id => Some(content.as_str()),
            _ => None,
        })
        .unwrap_or_else(|| panic!("no result of {id} in {:#?}", request.messages))
}

/// The step that made the call `id` is in the request, followed by its result.
fn assert_called_then_answered(request: &StepRequest, id: &str) {
    let called = request.messages.iter().position(
        |m| matches!(m, ApiMessage::Assistant { tool_calls, .. } if tool_calls.iter().any(|c| c.id == id)),
    );
    let answered = request
        .messages
        .iter()
        .position(|m| matches!(m, ApiMessage::Tool { tool_call_id, .. } if tool_call_id == id));
    assert!(
        matches!((called, answered), (Some(c), Some(a)) if c < a),
        "{:#?}",
        request.messages
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn a_write_in_edit_mode_lands_on_disk_and_the_next_step_reads_its_result() {
    let mut e = engine();
    let session = e.new_session(Mode::Edit).await.expect("a session");
    let arguments = json!({ "path": "notes.txt", "content": "one\ntwo\n" }).to_string();
    e.model.push(ScriptedStep::call("call_w", "write", &arguments));
    e.model.push(ScriptedStep::text("Written."));

    let answer = e.prompt(&session, "write the notes").await.expect("the turn ran");
    assert_eq!(answer.expect("the turn ended").stop_reason, StopReason::EndTurn);

    let written = e.home.work().join("notes.txt");
    assert_eq!(std::fs::read_to_string(&written).expect("the file"), "one\ntwo\n");
    let shown = e.tool_call("call_w");
    use ToolCallStatus::*;
    assert_eq!(shown.statuses, [Pending, InProgress, Completed]);
    let [
        ToolCallContent::Diff {
            path,
            old_text,
            new_text,
        },
    ] = &shown.content[..]
    else {
        panic!("the completed write shows a diff: {:?}", shown.content);
    };
    assert_eq!(
        (path.as_str(), old_text, new_text.as_str()),
        (written.to_str().expect("a UTF-8 path"), &None, "one\ntwo\n")
    );
    let decision = shown.decision.expect("the decision is recorded");
    assert_eq!(
        (decision.decision.as_str(), decision.answered_by),
        ("allow", None)
    );

    let requests = e.model.requests();
    assert_eq!(requests.len(), 2);
    assert_called_then_answered(&requests[1], "call_w");
    assert_eq!(
        tool_result(&requests[1], "call_w"),
        "Created notes.txt (2 lines)."
    );
    assert_eq!(e.model.steps_left(), 0);
}

/// A command that the manual mode asks about: it writes a file, and prints what its own text
/// does not hold, so the output the model reads can only come from the command having run.
const COMMAND: &str = "printf made > made.txt && echo $((6*7))";

/// [`COMMAND`], then a write outside the session's root, which the judge lets through once asked
/// but the sandbox refuses.
const BOXED_COMMAND: &str =
    "printf made > made.txt && echo $((6*7)) && { echo x > ../outside.txt || echo boxed; }";

#[tokio::test(flavor = "multi_thread")]
async fn a_command_allowed_once_runs_in_the_sandbox_and_the_model_reads_its_output() {
    let mut e = engine();
    let session = e.new_session(Mode::Manual).await.expect("a session");
    let arguments = json!({ "command": BOXED_COMMAND }).to_string();
    e.model.push(ScriptedStep::call("call_b", "bash", &arguments));
    e.model.push(ScriptedStep::text("Made."));

    let turn = e.prompt(&session, "make it");
    let card = e.card(WAIT).await.expect("the command is asked about");
    assert_eq!(card.tool_call_id(), "call_b");
    let made = e.home.work().join("made.txt");
    assert!(!made.exists(), "ran before the approval");
    assert_eq!(e.model.requests().len(), 1, "the turn went on before the answer");
    assert!(e.engine.answer_card("call_b", ApprovalOption::Once).await);

    let answer = turn.await.expect("the turn ran").expect("the turn ended");
    assert_eq!(answer.stop_reason, StopReason::EndTurn);
    assert_eq!(
        std::fs::read_to_string(&made).expect("the command's file"),
        "made"
    );
    let requests = e.model.requests();
    assert_called_then_answered(&requests[1], "call_b");
    let output = tool_result(&requests[1], "call_b");
    assert!(output.contains("42") && output.contains("boxed"), "{output}");
    assert!(
        !e.home.path().join("outside.txt").exists(),
        "wrote outside the box"
    );
    let shown = e.tool_call("call_b");
    use ToolCallStatus::*;
    assert_eq!(shown.statuses, [Pending, InProgress, Completed]);
    let decision = shown.decision.expect("the decision is recorded");
    assert_eq!(
        (
            decision.decision.as_str(),
            decision.answered_by.as_deref(),
            decision.answer
        ),
        ("ask", Some("desktop"), Some(ApprovalOption::Once))
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn a_command_denied_does_not_run_and_the_model_reads_the_refusal() {
    let mut e = engine();
    let session = e.new_session(Mode::Manual).await.expect("a session");
    let arguments = json!({ "command": COMMAND }).to_string();
    e.model.push(ScriptedStep::call("call_b", "bash", &arguments));
    e.model.push(ScriptedStep::text("Understood."));

    let turn = e.prompt(&session, "make it");
    let card = e.card(WAIT).await.expect("the command is asked about");
    assert!(
        e.engine
            .answer_card(card.tool_call_id(), ApprovalOption::Deny)
            .await
    );

    let answer = turn.await.expect("the turn ran").expect("the turn ended");
    assert_eq!(answer.stop_reason, StopReason::EndTurn);
    assert!(!e.home.work().join("made.txt").exists(), "a denied command ran");
    let requests = e.model.requests();
    assert_called_then_answered(&requests[1], "call_b");
    assert_eq!(
        tool_result(&requests[1], "call_b"),
        "Not done: The person did not allow this call."
    );
    let shown = e.tool_call("call_b");
    assert_eq!(shown.statuses, [ToolCallStatus::Pending, ToolCallStatus::Failed]);
    let decision = shown.decision.expect("the decision is recorded");
    assert_eq!(
        (decision.outcome.as_str(), decision.answer),
        ("denied", Some(ApprovalOption::Deny))
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn an_unknown_tool_and_bad_arguments_are_sentences_for_the_model() {
    let e = engine();
    let session = e.new_session(Mode::Edit).await.expect("a session");
    let step = ScriptedStep::call("call_u", "frobnicate", "{}")
        .and_call(
            "call_a",
            "write",
            &json!({ "path": 3, "content": "" }).to_string(),
        )
        .and_call("call_j", "write", "{ not json");
    e.model.push(step);
    e.model.push(ScriptedStep::text("Sorry."));

    let answer = e.prompt(&session, "do it").await.expect("the turn ran");
    assert_eq!(answer.expect("the turn ended").stop_reason, StopReason::EndTurn);

    let requests = e.model.requests();
    let unknown = tool_result(&requests[1], "call_u");
    assert!(
        unknown.starts_with("There is no tool named `frobnicate`. The tools are: read, ls,"),
        "{unknown}"
    );
    assert_eq!(
        tool_result(&requests[1], "call_a"),
        "write's `path` must be a string, not a number."
    );
    let unreadable = tool_result(&requests[1], "call_j");
    assert!(
        unreadable.starts_with("The arguments of write are not valid JSON: "),
        "{unreadable}"
    );
    assert!(
        std::fs::read_dir(e.home.work())
            .expect("the work folder")
            .next()
            .is_none()
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn the_first_step_offers_the_toolbox_and_sends_the_system_text_and_the_prompt() {
    let e = engine();
    let session = e.new_session(Mode::Edit).await.expect("a session");
    e.model.push(ScriptedStep::text("Hello."));

    let answer = e.prompt(&session, "hi").await.expect("the turn ran");
    assert_eq!(answer.expect("the turn ended").stop_reason, StopReason::EndTurn);

    let requests = e.model.requests();
    let [first] = &requests[..] else {
        panic!("one step, not {}", requests.len());
    };
    assert_eq!(first.model, SCRIPTED_MODEL);
    // The device's own tools in their order; `show` only where someone looks (no client here),
    // `memory` only when the login's scope has it (a script's has not).
    let offered: Vec<&str> = first.tools().iter().map(|t| t.function.name.as_str()).collect();
    let own: Vec<&str> = ToolName::ALL
        .into_iter()
        .filter(|name| !matches!(name, ToolName::Show | ToolName::Memory))
        .map(ToolName::as_str)
        .collect();
    assert_eq!(offered, own);
    let write = first
        .tools()
        .iter()
        .find(|t| t.function.name == "write")
        .expect("write is offered");
    assert_eq!(
        *write,
        FileTool::Write.definition(&lembas_device::decisions::Decisions::built_in().tools)
    );
    let [
        ApiMessage::System { content: system },
        ApiMessage::User { content },
    ] = &first.messages[..]
    else {
        panic!("the system text and the prompt: {:#?}", first.messages);
    };
    assert!(system.contains(&e.home.work().display().to_string()), "{system}");
    assert_eq!(*content, UserContent::Text("hi".to_string()));
}

#[tokio::test(flavor = "multi_thread")]
async fn a_turn_that_never_stops_calling_tools_ends_at_the_request_limit() {
    let e = engine();
    let session = e.new_session(Mode::Edit).await.expect("a session");
    // ENGINE.md: a turn makes at most 50 model requests. The script would go on past that.
    const LIMIT: usize = 50;
    for n in 0..=LIMIT {
        let arguments = json!({ "path": "." }).to_string();
        e.model
            .push(ScriptedStep::call(&format!("call_{n}"), "ls", &arguments));
    }

    let answer = e
        .prompt(&session, "look around forever")
        .await
        .expect("the turn ran");
    assert_eq!(
        answer.expect("the turn ended").stop_reason,
        StopReason::MaxTurnRequests
    );
    assert_eq!(e.model.requests().len(), LIMIT, "no request past the limit");
    assert_eq!(
        e.model.steps_left(),
        1,
        "the script's last step was never asked for"
    );
    // Every call the model made was answered before the turn stopped.
    let last = e.model.requests().pop().expect("the last request");
    assert_called_then_answered(&last, &format!("call_{}", LIMIT - 2));
}
