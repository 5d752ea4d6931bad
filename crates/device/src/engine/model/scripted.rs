//! A model that answers from a script in this process, for tests of the engine: each step the
//! engine asks for gets the next scripted answer, written as the instance would stream it and read
//! by the same reader, and every request is kept for the test to read (the tools offered, the
//! messages sent). Only an engine built with `Engine::with_scripted_model` reaches one.

use bytes::Bytes;
use serde::Serialize;
use std::collections::VecDeque;
use std::sync::{Arc, Mutex};

use super::About;
use super::stream::{ModelError, ModelStream, ToolCall};
use crate::engine::step_request::StepRequest;
use crate::poison::Recover;

/// The one model a script serves, and the default it names.
pub const SCRIPTED_MODEL: &str = "scripted";

/// One step's answer: thinking, text and tool calls, streamed in that order, then the finish
/// reason and, when given, the usage.
#[derive(Debug, Clone, PartialEq)]
pub struct ScriptedStep {
    reasoning: String,
    text: String,
    calls: Vec<ToolCall>,
    finish_reason: String,
    usage: Option<Usage>,
}

impl ScriptedStep {
    /// Says `text` and stops.
    pub fn text(text: &str) -> ScriptedStep {
        ScriptedStep {
            reasoning: String::new(),
            text: text.to_string(),
            calls: Vec::new(),
            finish_reason: "stop".to_string(),
            usage: None,
        }
    }

    /// Calls the tool `name` with `arguments` as the model writes them (JSON text, or not).
    pub fn call(id: &str, name: &str, arguments: &str) -> ScriptedStep {
        ScriptedStep {
            finish_reason: "tool_calls".to_string(),
            ..ScriptedStep::text("")
        }
        .and_call(id, name, arguments)
    }

    /// One more tool call in the same step.
    pub fn and_call(mut self, id: &str, name: &str, arguments: &str) -> ScriptedStep {
        self.calls.push(ToolCall {
            id: id.to_string(),
            name: name.to_string(),
            arguments: arguments.to_string(),
        });
        self
    }

    /// Thinks `reasoning` before the rest.
    pub fn thinking(mut self, reasoning: &str) -> ScriptedStep {
        self.reasoning = reasoning.to_string();
        self
    }

    /// Ends with another finish reason (`length`: cut off by the limit).
    pub fn finishing(mut self, reason: &str) -> ScriptedStep {
        self.finish_reason = reason.to_string();
        self
    }

    /// Says how many tokens the prompt and the answer took.
    pub fn with_usage(mut self, prompt_tokens: u64, completion_tokens: u64) -> ScriptedStep {
        self.usage = Some(Usage {
            prompt_tokens,
            completion_tokens,
            total_tokens: prompt_tokens.saturating_add(completion_tokens),
        });
        self
    }

    /// The server-sent events the instance would stream for this step, one event a chunk.
    fn events(&self) -> Result<Vec<Bytes>, serde_json::Error> {
        let mut chunks = Vec::new();
        let delta = Chunk::delta;
        if !self.reasoning.is_empty() {
            chunks.push(delta(Delta {
                reasoning_content: Some(&self.reasoning),
                ..Delta::default()
            }));
        }
        if !self.text.is_empty() {
            chunks.push(delta(Delta {
                content: Some(&self.text),
                ..Delta::default()
            }));
        }
        for (index, call) in self.calls.iter().enumerate() {
            chunks.push(delta(Delta {
                tool_calls: vec![CallDelta {
                    index,
                    id: &call.id,
                    kind: "function",
                    function: FunctionDelta {
                        name: &call.name,
                        arguments: &call.arguments,
                    },
                }],
                ..Delta::default()
            }));
        }
        chunks.push(Chunk {
            choices: vec![Choice {
                index: 0,
                delta: Delta::default(),
                finish_reason: Some(&self.finish_reason),
            }],
            usage: None,
        });
        if let Some(usage) = &self.usage {
            chunks.push(Chunk {
                choices: Vec::new(),
                usage: Some(usage),
            });
        }
        let mut events = chunks
            .iter()
            .map(|chunk| {
                Ok(Bytes::from(format!(
                    "data: {}\n\n",
                    serde_json::to_string(chunk)?
                )))
            })
            .collect::<Result<Vec<_>, serde_json::Error>>()?;
        events.push(Bytes::from_static(b"data: [DONE]\n\n"));
        Ok(events)
    }
}

/// A chunk of a streamed chat completion, as the instance writes it.
#[derive(Serialize)]
struct Chunk<'a> {
    choices: Vec<Choice<'a>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    usage: Option<&'a Usage>,
}

impl<'a> Chunk<'a> {
    fn delta(delta: Delta<'a>) -> Chunk<'a> {
        Chunk {
            choices: vec![Choice {
                index: 0,
                delta,
                finish_reason: None,
            }],
            usage: None,
        }
    }
}

#[derive(Serialize)]
struct Choice<'a> {
    index: u32,
    delta: Delta<'a>,
    finish_reason: Option<&'a str>,
}

#[derive(Default, Serialize)]
struct Delta<'a> {
    #[serde(skip_serializing_if = "Option::is_none")]
    reasoning_content: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    content: Option<&'a str>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    tool_calls: Vec<CallDelta<'a>>,
}

#[derive(Serialize)]
struct CallDelta<'a> {
    index: usize,
    id: &'a str,
    #[serde(rename = "type")]
    kind: &'static str,
    function: FunctionDelta<'a>,
}

#[derive(Serialize)]
struct FunctionDelta<'a> {
    name: &'a str,
    arguments: &'a str,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
struct Usage {
    prompt_tokens: u64,
    completion_tokens: u64,
    total_tokens: u64,
}

/// The script: its answers in order, one a step, and the requests it got. Every clone is the same
/// script.
#[derive(Clone, Default)]
pub struct ScriptedModel(Arc<Script>);

#[derive(Default)]
struct Script {
    steps: Mutex<VecDeque<ScriptedStep>>,
    requests: Mutex<Vec<StepRequest>>,
}

impl ScriptedModel {
    pub fn new() -> ScriptedModel {
        ScriptedModel::default()
    }

    /// Queues the answer to a later step; steps are answered in order.
    pub fn push(&self, step: ScriptedStep) {
        self.0.steps.lock().recover().push_back(step);
    }

    /// Every request the engine sent, in order.
    pub fn requests(&self) -> Vec<StepRequest> {
        self.0.requests.lock().recover().clone()
    }

    /// How many queued answers no step has taken yet.
    pub fn steps_left(&self) -> usize {
        self.0.steps.lock().recover().len()
    }

    /// What the instance says of itself: no name, no memory in the token's scope, this model as
    /// the default.
    pub(super) fn about(&self) -> About {
        About {
            name: None,
            scope: String::new(),
            default_model: Some(SCRIPTED_MODEL.to_string()),
        }
    }

    /// Keeps the request and answers it with the next step; with none left the model cannot be
    /// reached, which fails the turn as an unreachable instance would.
    pub(super) fn open(&self, body: &StepRequest) -> Result<ModelStream, ModelError> {
        self.0.requests.lock().recover().push(body.clone());
        let model = body.model.clone();
        let Some(step) = self.0.steps.lock().recover().pop_front() else {
            return Err(ModelError::Unreachable {
                model,
                why: "the script has no answer left".to_string(),
            });
        };
        let events = step.events().map_err(|e| ModelError::Broken {
            model: model.clone(),
            why: format!("the scripted answer could not be written ({e})"),
        })?;
        Ok(ModelStream::from_chunks(model, events))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::model::{StepOutput, Streamed};

    async fn answer(step: ScriptedStep) -> (Vec<Streamed>, StepOutput) {
        let model = ScriptedModel::new();
        model.push(step);
        let body = StepRequest::new(
            SCRIPTED_MODEL,
            Vec::new(),
            Vec::new(),
            lembas_protocol::Effort::Default,
        );
        let mut stream = model.open(&body).expect("a step is queued");
        let mut deltas = Vec::new();
        loop {
            match stream.next().await.expect("the stream reads") {
                Streamed::Done(output) => return (deltas, output),
                delta => deltas.push(delta),
            }
        }
    }

    #[tokio::test]
    async fn a_step_reads_back_as_it_was_scripted() {
        let step = ScriptedStep::call("c1", "write", r#"{"path":"a"}"#)
            .and_call("c2", "bash", "not json")
            .thinking("hm")
            .with_usage(12, 3);
        let (deltas, output) = answer(step).await;
        assert_eq!(deltas, [Streamed::Reasoning("hm".into())]);
        assert_eq!(output.reasoning, "hm");
        assert_eq!(output.finish_reason.as_deref(), Some("tool_calls"));
        let calls: Vec<_> = output
            .tool_calls
            .iter()
            .map(|c| (c.id.as_str(), c.name.as_str(), c.arguments.as_str()))
            .collect();
        assert_eq!(
            calls,
            [("c1", "write", r#"{"path":"a"}"#), ("c2", "bash", "not json")]
        );
        let usage = output.usage.expect("the usage was sent");
        assert_eq!(usage["prompt_tokens"], 12);
        assert_eq!(usage["total_tokens"], 15);

        let (deltas, output) = answer(ScriptedStep::text("Done.").finishing("length")).await;
        assert_eq!(deltas, [Streamed::Text("Done.".into())]);
        assert_eq!(output.finish_reason.as_deref(), Some("length"));
        assert!(output.tool_calls.is_empty() && output.usage.is_none());
    }

    #[test]
    fn every_request_is_kept_and_one_past_the_script_is_unreachable() {
        let model = ScriptedModel::new();
        model.push(ScriptedStep::text("one"));
        let body = StepRequest::new(
            SCRIPTED_MODEL,
            Vec::new(),
            Vec::new(),
            lembas_protocol::Effort::Default,
        );
        assert!(model.open(&body).is_ok());
        assert_eq!(model.steps_left(), 0);
        let Err(ModelError::Unreachable { why, .. }) = model.open(&body) else {
            panic!("a step past the script must fail");
        };
        assert!(why.contains("no answer left"), "{why}");
        assert_eq!(model.requests(), [body.clone(), body]);
    }
}
