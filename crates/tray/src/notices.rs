//! Every open approval card as a desktop notification: shown when the card opens, answered from its
//! **Allow** and **Deny** buttons (the first answer wins, as from the window or the client), and
//! taken down when the card is settled anywhere else (the client, a timeout, a withdrawn turn).

use std::collections::HashMap;
use std::sync::Arc;

use lembas_device::control::ApprovalOption;
use tokio::task::JoinHandle;

use crate::cards::ApprovalCard;
use crate::host::Host;
use crate::notifier::{Notifier, Response};

/// Runs for as long as the host does. `open_card` shows the window on a card (its notice was
/// clicked).
pub async fn run(host: Host, notifier: Arc<dyn Notifier>, open_card: Arc<dyn Fn(&str) + Send + Sync>) {
    let mut cards = host.watch_cards();
    // One task per card shown; aborting it drops the notifier's wait, which takes the notice down.
    let mut shown: HashMap<String, JoinHandle<()>> = HashMap::new();
    loop {
        let open: Vec<ApprovalCard> = cards.borrow_and_update().clone();
        tracing::debug!(open = open.len(), shown = shown.len(), "cards changed");
        shown.retain(|id, task| {
            let still_open = open.iter().any(|c| &c.id == id);
            if !still_open {
                task.abort();
            }
            still_open
        });
        for card in open {
            if shown.contains_key(&card.id) {
                continue;
            }
            let task = tokio::spawn(answer_from_notice(
                host.clone(),
                notifier.clone(),
                open_card.clone(),
                card.clone(),
            ));
            shown.insert(card.id, task);
        }
        if cards.changed().await.is_err() {
            break;
        }
    }
    for (_, task) in shown {
        task.abort();
    }
}

async fn answer_from_notice(
    host: Host,
    notifier: Arc<dyn Notifier>,
    open_card: Arc<dyn Fn(&str) + Send + Sync>,
    card: ApprovalCard,
) {
    let id = card.id.clone();
    let mut notice = card.notice();
    let last_minute = card.last_minute_ms();
    let response = loop {
        let open_this: crate::notifier::OnOpen = {
            let (open_card, id) = (open_card.clone(), id.clone());
            Box::new(move || open_card(&id))
        };
        notice.urgent = last_minute.is_some_and(|at| lembas_device::status::now_ms() >= at);
        tracing::debug!(urgent = notice.urgent, "showing a notice for {id}");
        let shown = notifier.show(notice.clone(), open_this);
        // In its last minute the notice is shown again as critical (the first one taken down).
        let shown = match last_minute.filter(|_| !notice.urgent) {
            Some(at) => {
                let wait = at.saturating_sub(lembas_device::status::now_ms());
                tokio::select! {
                    shown = shown => shown,
                    _ = tokio::time::sleep(std::time::Duration::from_millis(wait)) => continue,
                }
            }
            None => shown.await,
        };
        match shown {
            Ok(response) => {
                tracing::debug!("the notice for {id}: {response:?}");
                break response;
            }
            Err(e) => {
                tracing::warn!("no desktop notification for {id} (answer it in the window): {e}");
                return;
            }
        }
    };
    let option = match response {
        Response::Allow => ApprovalOption::Once,
        Response::Deny => ApprovalOption::Deny,
        Response::Open | Response::Dismissed => return,
    };
    if !host.answer_approval(id.clone(), option).await {
        tracing::info!("{id} was answered elsewhere first");
    }
}
