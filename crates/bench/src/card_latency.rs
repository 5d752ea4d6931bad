//! How soon an approval card reaches the person: from the device's `session/request_permission`
//! reaching the instance, to the window having the card (the runtime's push, then `window/state`
//! with the card in it, as the window reads it) and to the desktop notification (the tray's notices,
//! on a notification server of the bench's own on its private session bus). The tray's host runs
//! in this process, as the app runs it, in a home of its own, handed its folders.

use std::sync::Arc;
use std::time::{Duration, Instant};

use anyhow::{anyhow, bail};
use lembas_desktop::host::Host;
use lembas_desktop::notices;
use lembas_desktop::notifier::freedesktop::Freedesktop;
use lembas_device::control::client::Client;
use lembas_peer::{ModelReply, Peer, PeerConfig};
use lembas_testkit::notifications::{Seen, notification_server};
use serde_json::json;
use tokio::sync::mpsc;

use crate::agent::REQUEST_WAIT;
use crate::device::LINK_WAIT;
use crate::model_server::TOKEN;
use crate::reference;
use crate::report::{Row, ms};
use crate::stats::percentile;

pub const ROWS: [&str; 2] = ["Card to the window", "Card to the notification"];
const GOAL: Duration = Duration::from_millis(100);

pub async fn run(cards: usize) -> anyhow::Result<Vec<Row>> {
    let kit = lembas_testkit::Home::new();
    let dirs = kit.dirs();
    let (_bus, mut seen) = notification_server().await;
    let peer = Peer::start(PeerConfig::with_token(TOKEN)).await?;
    kit.config_with_work(&peer.url(), "");
    kit.store_token(TOKEN);
    let host = Host::start(kit.setup());
    tokio::spawn(notices::run(
        host.clone(),
        Arc::new(Freedesktop),
        Arc::new(|_: &str| {}),
    ));
    let mut link = lembas_testkit::linked(&peer, LINK_WAIT).await?;

    // The window's way: a subscription, and window/state read on each push.
    let (window_tx, mut window_seen) = mpsc::unbounded_channel::<(String, Instant)>();
    let socket_ready = Instant::now() + LINK_WAIT;
    let (subscription, mut reader) = loop {
        match (Client::connect(&dirs).await, Client::connect(&dirs).await) {
            (Ok(a), Ok(b)) => break (a.subscribe().await?, b),
            _ if Instant::now() < socket_ready => tokio::time::sleep(Duration::from_millis(20)).await,
            (a, _) => return Err(anyhow!("the runtime's control socket: {:?}", a.err())),
        }
    };
    let mut subscription = subscription;
    tokio::spawn(async move {
        let mut known = std::collections::HashSet::new();
        while subscription.next().await.is_some() {
            let Ok(state) = reader.call("window/state", json!({})).await else {
                return;
            };
            let at = Instant::now();
            for card in state["cards"].as_array().into_iter().flatten() {
                if let Some(id) = card["id"].as_str()
                    && known.insert(id.to_string())
                {
                    let _ = window_tx.send((id.to_string(), at));
                }
            }
        }
    });
    // The notification server's: each notice's body names the file its card writes.
    let (notice_tx, mut notices_seen) = mpsc::unbounded_channel::<(String, Instant)>();
    tokio::spawn(async move {
        while let Some(event) = seen.recv().await {
            if let Seen::Shown { body, .. } = event {
                let _ = notice_tx.send((body, Instant::now()));
            }
        }
    });

    let session =
        reference::new_session(&mut link, &kit.work(), Some("manual"), lembas_peer::DEFAULT_MODEL).await?;
    let model = peer.model();
    let (mut to_window, mut to_notice, mut round_trips) = (Vec::new(), Vec::new(), Vec::new());
    let mut probe = Client::connect(&dirs).await?;
    for n in 0..cards {
        let call = format!("call_card_{n}");
        let file = format!("card-{n}.txt");
        model.push(ModelReply::tool_call(
            &call,
            "write",
            json!({ "path": file, "content": "x" }),
        ));
        model.push(ModelReply::text("Done."));
        let prompt = link.send_request(
            "session/prompt",
            json!({ "sessionId": session, "prompt": [{ "type": "text", "text": format!("write {file}") }] }),
        )
        .await?;
        let card = link
            .recv_request("session/request_permission", REQUEST_WAIT)
            .await?;
        let asked = Instant::now();
        let window_at = wait_for(&mut window_seen, |id| id == &call).await?;
        let notice_at = wait_for(&mut notices_seen, |body| body.contains(&file)).await?;
        to_window.push(window_at.saturating_duration_since(asked));
        to_notice.push(notice_at.saturating_duration_since(asked));
        // The baseline: one control call's round trip on the same socket.
        let started = Instant::now();
        probe.call("status", json!({})).await?;
        round_trips.push(started.elapsed());
        link.answer(
            card["id"].clone(),
            json!({ "outcome": { "outcome": "selected", "optionId": "deny" } }),
        )
        .await?;
        let ended = link.recv_answer(prompt, REQUEST_WAIT).await?;
        if ended.get("error").is_some() {
            bail!("the turn failed: {ended}");
        }
    }
    drop(host);
    let baseline = percentile(&round_trips, 50.0);
    let row = |name: &str, took: &[Duration]| {
        let p50 = percentile(took, 50.0);
        let p95 = percentile(took, 95.0);
        Row::new(
            name,
            format!("p50 {}, p95 {}", ms(p50), ms(p95)),
            format!("control round trip {}", ms(baseline)),
        )
        .ratio(p50.as_secs_f64() / baseline.as_secs_f64().max(1e-9))
        .goal("<= 100 ms", p95 <= GOAL)
        .note(format!(
            "{cards} cards, from the device's session/request_permission reaching the instance"
        ))
    };
    Ok(vec![row(ROWS[0], &to_window), row(ROWS[1], &to_notice)])
}

/// The moment the first item `matches` was seen (earlier items are dropped: each card is waited
/// for in turn).
async fn wait_for(
    seen: &mut mpsc::UnboundedReceiver<(String, Instant)>,
    matches: impl Fn(&String) -> bool,
) -> anyhow::Result<Instant> {
    let within = tokio::time::Instant::now() + REQUEST_WAIT;
    loop {
        match tokio::time::timeout_at(within, seen.recv()).await {
            Ok(Some((what, at))) if matches(&what) => return Ok(at),
            Ok(Some(_)) => continue,
            Ok(None) => bail!("the watcher ended"),
            Err(_) => bail!("the card never arrived"),
        }
    }
}
