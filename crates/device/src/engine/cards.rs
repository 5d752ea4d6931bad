//! Cards a turn puts to a person (approvals, questions, plans), as the engine shows them: sent to
//! the client (again on the next link), shown on the desktop, waited for until the decided time,
//! and settled by the first answer from any side.

use lembas_protocol::LinkMethod;
use lembas_protocol::card::CardRequest;
use lembas_protocol::notices::{CancelRequest, PermissionSettled};
use lembas_protocol::permission::{ApprovalOption, PermissionRequest};
use serde_json::{Value, json};
use std::collections::HashMap;
use std::sync::MutexGuard;
use std::time::Duration;

use super::Engine;
use super::approvals::{Answer, AnsweredBy, Card, CardFacts};
use super::front_end::ChatNews;
use crate::client::ClientLink;
use crate::events::DeviceEvent;
use crate::poison::Recover;

impl Engine {
    /// Puts a card to the link's client: never one of a chat held here and not shared; patient
    /// when a front end shares its chat (the person may answer there too).
    pub(super) fn send_card(&self, client: &ClientLink, card: CardRequest) {
        if !self.link_sees(card.session_id()) {
            return;
        }
        let patient = self.patient(card.session_id());
        let card = card.patient(patient);
        let client = client.clone();
        let engine = self.clone();
        let id = client.next_id();
        let tool_call_id = card.tool_call_id().to_string();
        // An editor that renders forms is asked a question or a plan as one.
        let form = client
            .elicits_cards()
            .then(|| super::elicitation::form_of(&card))
            .flatten();
        let (method, params) = match &form {
            Some(form) => (LinkMethod::ElicitationCreate, json!(form)),
            None => (card.method(), json!(card)),
        };
        if !client.lembas {
            engine
                .card_requests()
                .insert(tool_call_id.clone(), (client.serial, id.clone()));
        }
        tokio::spawn(async move {
            let answered = client.request_as(id, method, params).await;
            engine.card_requests().remove(&tool_call_id);
            if let Ok(result) = answered {
                let answer = match result {
                    Ok(result) if form.is_some() => {
                        Answer::from_client(super::elicitation::answer_of(&card, result))
                    }
                    Ok(result) => Answer::from_client(card.answer_of(result)),
                    // A client that does not know questions and plans: protocol 1 from now on.
                    Err(e)
                        if method != LinkMethod::RequestPermission
                            && e.code == crate::rpc::METHOD_NOT_FOUND =>
                    {
                        client.refuse_cards();
                        Answer::Unsupported
                    }
                    Err(_) => Answer::Deny { feedback: None },
                };
                engine.settle(&tool_call_id, answer, AnsweredBy::Client).await;
            }
            // The link ended first: the card stays open and the next link shows it again.
        });
    }

    /// Opens an approval card and waits for the first answer, or the timeout (a denial); with it,
    /// who gave it (none when the card was withdrawn).
    pub(crate) async fn ask(
        &self,
        mut facts: CardFacts,
        card: PermissionRequest,
        run: Option<&crate::scheduled::Run>,
    ) -> (Answer, Option<AnsweredBy>) {
        let (session_id, tool_call_id) = (card.session_id.clone(), card.tool_call.tool_call_id.clone());
        // A scheduled run waits the schedule's time, not remote.approval_timeout.
        let (timeout, feedback) = match run {
            Some(run) => (run.wait, run.denied_text()),
            None => {
                let seconds = self.settings().remote.approval_timeout;
                (
                    Duration::from_secs(seconds),
                    format!("Nobody answered within {seconds} seconds."),
                )
            }
        };
        let wait_ms = u64::try_from(timeout.as_millis()).unwrap_or(u64::MAX);
        facts.deadline_ms = Some(crate::status::now_ms().saturating_add(wait_ms));
        let scheduled = run.map(crate::scheduled::Run::desktop_card);
        let asked = DeviceEvent::ApprovalAsked {
            session_id: session_id.clone(),
            tool_call_id: tool_call_id.clone(),
            title: facts.headline.clone(),
            reason: card.meta.lembas.reason.clone(),
            scheduled: scheduled.clone(),
        };
        let card = CardRequest::Permission(card);
        let answer = self.0.approvals.ask(card.clone(), scheduled, facts);
        self.device_event(asked);
        self.tell_front_ends(ChatNews::Card {
            session_id: session_id.to_string(),
            card: Box::new(card.clone()),
        });
        if let Some(client) = self.client() {
            self.send_card(&client, card);
        }
        match tokio::time::timeout(timeout, answer).await {
            Ok(Ok((answer, by))) => (answer, Some(by)),
            Ok(Err(_)) => (Answer::Deny { feedback: None }, None),
            Err(_) => {
                self.0.approvals.withdraw(&tool_call_id);
                self.settled(&session_id, &tool_call_id, "timed out", "timeout")
                    .await;
                let answer = Answer::Deny {
                    feedback: Some(feedback),
                };
                (answer, Some(AnsweredBy::Timeout))
            }
        }
    }

    /// Opens a question or plan card and waits for the first answer; `None` when no client here
    /// takes such cards. After `remote.approval_timeout` it is dismissed and settled; withdrawn
    /// (the turn was cancelled), it reads as dismissed too.
    pub(crate) async fn ask_card(&self, card: CardRequest) -> Option<Answer> {
        let (session_id, tool_call_id) = (card.session_id().to_string(), card.tool_call_id().to_string());
        let client = self.client();
        // A client that takes no such cards (an editor, an older LLeMbas) has nobody to ask, unless
        // a front end here holds the chat. With no link at this instant the card waits for the
        // next one, as an approval card does.
        let front_end = self.holding(&session_id).is_some();
        if !front_end && client.as_ref().is_some_and(|c| !c.takes_cards()) {
            return None;
        }
        let answer = self.0.approvals.ask(card.clone(), None, CardFacts::default());
        self.tell_front_ends(ChatNews::Card {
            session_id: session_id.clone(),
            card: Box::new(card.clone()),
        });
        if let CardRequest::Plan(plan) = &card {
            // The desktop shows plans too (questions are answered in LLeMbas only).
            self.device_event(DeviceEvent::ApprovalAsked {
                session_id: session_id.as_str().into(),
                tool_call_id: tool_call_id.clone(),
                title: "Approve the plan".to_string(),
                reason: match plan.path.as_str() {
                    "" => String::new(),
                    path => format!("The plan is in {path}"),
                },
                scheduled: None,
            });
        }
        if let Some(client) = client.as_ref().filter(|c| c.takes_cards()) {
            self.send_card(client, card);
        }
        let seconds = self.settings().remote.approval_timeout;
        match tokio::time::timeout(Duration::from_secs(seconds), answer).await {
            Ok(Ok((Answer::Unsupported, _))) => None,
            Ok(Ok((answer, _))) => Some(answer),
            Ok(Err(_)) => Some(Answer::Deny { feedback: None }),
            Err(_) => {
                self.0.approvals.withdraw(&tool_call_id);
                self.settled(&session_id, &tool_call_id, "timed out", "timeout")
                    .await;
                Some(Answer::Deny { feedback: None })
            }
        }
    }

    /// Takes the cards of a session down (its turn was cancelled or it was deleted).
    pub(crate) async fn withdraw_cards_of(&self, session_id: &str) {
        for card in self.0.approvals.cards() {
            if card.session_id() == session_id && self.0.approvals.withdraw(card.tool_call_id()) {
                self.settled(session_id, card.tool_call_id(), "withdrawn", "withdrawn")
                    .await;
            }
        }
    }

    /// An answer from `by`; the client is told to take its card down unless it gave the answer.
    pub(super) async fn settle(&self, tool_call_id: &str, answer: Answer, by: AnsweredBy) -> bool {
        let label = answer.label();
        let Some(session_id) = self.0.approvals.answer(tool_call_id, answer, by) else {
            return false;
        };
        if by == AnsweredBy::Client {
            self.taken_down_here(&session_id, tool_call_id, label, by.as_str());
        } else {
            self.settled(&session_id, tool_call_id, label, by.as_str()).await;
        }
        true
    }

    /// A card taken down (`outcome` as the activity log says it, `by` who or what decided it):
    /// the desktop, the front ends and the link's client are told.
    pub(super) async fn settled(&self, session_id: &str, tool_call_id: &str, outcome: &str, by: &str) {
        self.taken_down_here(session_id, tool_call_id, outcome, by);
        let Some(client) = self.client().filter(|_| self.link_sees(session_id)) else {
            return;
        };
        if client.lembas {
            let _ = client
                .notify(
                    LinkMethod::PermissionSettled,
                    json!(PermissionSettled {
                        session_id: session_id.into(),
                        tool_call_id: tool_call_id.to_string(),
                    }),
                )
                .await;
            return;
        }
        // A plain ACP client (an editor) hears it as the card's request being cancelled.
        let request = self.card_requests().remove(tool_call_id);
        if let Some((serial, id)) = request
            && serial == client.serial
        {
            let _ = client
                .notify(LinkMethod::CancelRequest, json!(CancelRequest { request_id: id }))
                .await;
        }
    }

    /// The desktop and the front ends told a card was taken down.
    fn taken_down_here(&self, session_id: &str, tool_call_id: &str, outcome: &str, by: &str) {
        self.device_event(DeviceEvent::ApprovalSettled {
            session_id: session_id.into(),
            tool_call_id: tool_call_id.to_string(),
            outcome: outcome.to_string(),
        });
        self.tell_front_ends(ChatNews::Settled {
            session_id: session_id.to_string(),
            tool_call_id: tool_call_id.to_string(),
            by: by.to_string(),
        });
    }

    pub(super) fn card_requests(&self) -> MutexGuard<'_, HashMap<String, (u64, Value)>> {
        self.0.card_requests.lock().recover()
    }

    /// The approval and plan cards open now, for the desktop. Questions are answered in LLeMbas
    /// only: their answers are choices among the model's options, not Allow or Deny.
    pub fn cards(&self) -> Vec<Card> {
        let mut cards = self.0.approvals.cards();
        cards.retain(|card| !matches!(card.request, CardRequest::Question(_)));
        cards
    }

    /// The desktop's answer to a card (for a plan see [`Answer::from_desktop`]): the first answer
    /// wins, and the client is told to take its card down. `false` when the card was no longer
    /// open, or is a question.
    pub async fn answer_card(&self, tool_call_id: &str, option: ApprovalOption) -> bool {
        let Some(method) = self.0.approvals.method_of(tool_call_id) else {
            return false;
        };
        if method != LinkMethod::RequestPermission && method != LinkMethod::Plan {
            return false;
        }
        self.settle(
            tool_call_id,
            Answer::from_desktop(method, option),
            AnsweredBy::Desktop,
        )
        .await
    }

    /// A front end's answer to a card of the chat it holds (approval, question or plan, in the
    /// link's shapes): the first answer wins, and the link's client is told to take its card
    /// down. `false` when the card is no longer open.
    pub async fn answer_from_front_end(
        &self,
        session_id: &str,
        tool_call_id: &str,
        answer: lembas_protocol::card::CardAnswer,
    ) -> bool {
        let card = self
            .0
            .approvals
            .cards()
            .into_iter()
            .find(|c| c.tool_call_id() == tool_call_id && c.session_id() == session_id);
        let Some(card) = card else { return false };
        // Read again as the answer of this card's kind (`{ outcome: "dismissed" }` reads as a
        // question's untagged).
        let answer = serde_json::to_value(answer)
            .ok()
            .and_then(|value| card.request.answer_of(value));
        self.settle(tool_call_id, Answer::from_client(answer), AnsweredBy::Terminal)
            .await
    }
}
