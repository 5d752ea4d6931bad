//! The soak's run: the peer behind the proxy, the device linked to the proxy, and one fault per
//! link until the drops asked for are done; then a quiet link to let everything finish, the close
//! 4400 at the end, and what the checks need.

use lembas_protocol::LinkMethod;
use std::collections::HashSet;
use std::net::SocketAddr;
use std::path::Path;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use anyhow::Context;
use lembas_peer::{LinkHandle, Peer, PeerConfig, ScriptedModel};
use tokio::time::Instant;

use crate::client::{Client, Ledger, PromptKind, REQUEST_WAIT, answer_to};
use crate::device::{self, Device, Process, Sample, Timings};
use crate::proxy::{Direction, LinkSpan, Proxy};
use lembas_device::poison::Recover;

/// The faults a link can end with.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Fault {
    /// Cut inside a frame, either way, while a prompt goes out.
    MidFrame,
    /// Cut while a turn streams its answer.
    MidStream,
    /// Cut while an approval card waits for its answer.
    MidApproval,
    /// Cut while an approved command runs.
    MidCommand,
    /// Cut right after a delete was sent.
    MidDelete,
    /// Cut while a terminal floods the link.
    TerminalFlood,
    /// The peer stopped and started again on the same port (a session deleted from a shell
    /// meanwhile, half the time).
    PeerRestart,
    /// Both ways stalled for a while, as a sleeping laptop; then cut if the link lived through it.
    WakeGap,
}

pub const FAULTS: [Fault; 8] = [
    Fault::MidFrame,
    Fault::MidStream,
    Fault::MidApproval,
    Fault::MidCommand,
    Fault::MidDelete,
    Fault::TerminalFlood,
    Fault::PeerRestart,
    Fault::WakeGap,
];

pub struct Options {
    pub drops: usize,
    /// Only these faults (all when empty).
    pub only: Vec<Fault>,
    /// Keep the device's home (its config, store and service.log) after the run.
    pub keep_home: bool,
    pub timings: Timings,
    pub lembas: std::path::PathBuf,
    pub seed: u64,
}

/// What the run saw, for the checks.
pub struct Outcome {
    pub ledger: Ledger,
    pub spans: Vec<LinkSpan>,
    pub samples: Vec<Sample>,
    pub seen_processes: Vec<Process>,
    pub left_behind: Vec<Process>,
    /// The device ended before the close 4400: when, and how.
    pub early_exit: Option<String>,
    /// How the device ended after the 4400 (None: it went on running).
    pub exit_after_4400: Option<std::process::ExitStatus>,
    /// Link connections opened after the 4400.
    pub links_after_4400: usize,
    pub log: String,
    pub faults: Vec<Fault>,
    pub drops: usize,
    pub wall: Duration,
    /// Why the run stopped early, if it did.
    pub aborted: Option<String>,
}

/// How long to wait for the device to link again after a fault: the longest backoff with its
/// jitter, a peer restart and a dial.
fn relink_wait(timings: Timings) -> Duration {
    match timings {
        Timings::Decided => Duration::from_secs(60),
        Timings::Short => Duration::from_secs(20),
    }
}

struct Sampler {
    samples: Arc<Mutex<Vec<Sample>>>,
    seen: Arc<Mutex<HashSet<Process>>>,
    task: tokio::task::JoinHandle<()>,
}

fn start_sampler(pid: i32) -> Sampler {
    let samples = Arc::new(Mutex::new(Vec::new()));
    let seen = Arc::new(Mutex::new(HashSet::new()));
    let (s, p) = (samples.clone(), seen.clone());
    let task = tokio::spawn(async move {
        let mut tick = tokio::time::interval(Duration::from_millis(500));
        loop {
            tick.tick().await;
            let (sample, children) =
                tokio::task::spawn_blocking(move || (device::sample(pid), device::descendants(pid)))
                    .await
                    .unwrap_or((None, Vec::new()));
            if let Some(sample) = sample {
                s.lock().recover().push(sample);
            }
            p.lock().recover().extend(children);
        }
    });
    Sampler { samples, seen, task }
}

pub async fn run(options: Options) -> anyhow::Result<Outcome> {
    fastrand::seed(options.seed);
    let started = Instant::now();
    let mut peer = Some(Peer::start(PeerConfig::with_token(device::TOKEN)).await?);
    let peer_addr: SocketAddr = peer.as_ref().map(Peer::address).context("peer")?;
    let proxy = Proxy::start(peer_addr).await?;
    let mut device = Device::start(&options.lembas, &proxy.url(), options.timings)?;
    let sampler = start_sampler(device.pid());
    let mut client = Client::new(device.work());
    // Every peer's model, read at the end: a connection the old peer still served after its stop
    // may have reached its model late.
    let mut models: Vec<ScriptedModel> = Vec::new();
    let mut faults = Vec::new();
    let mut early_exit = None;
    let mut aborted = None;
    let wait = relink_wait(options.timings);

    let ended = |proxy: &Proxy| proxy.spans().iter().filter(|s| s.ended.is_some()).count();
    while ended(&proxy) < options.drops {
        if let Some(status) = device.exited() {
            early_exit = Some(format!("the device exited during the soak ({status})"));
            break;
        }
        let Some(current) = peer.as_ref() else { break };
        let mut link = match current.next_link(wait).await {
            Ok(link) => link,
            Err(e) => {
                aborted = Some(format!("after {} drops: {e}", ended(&proxy)));
                break;
            }
        };
        // The proxy carried the link before the peer took it: it is the latest span.
        let current_span = proxy.spans().len().saturating_sub(1);
        client.begin_link();
        let choice: &[Fault] = if options.only.is_empty() {
            &FAULTS
        } else {
            &options.only
        };
        let fault = choice[fastrand::usize(..choice.len())];
        faults.push(fault);
        let result = one_round(
            &mut client,
            &mut link,
            &proxy,
            &mut peer,
            peer_addr,
            &device,
            fault,
            options.timings,
            &mut models,
        )
        .await;
        if let Err(e) = &result {
            // Expected most of the time: the fault ended the link under a request.
            eprintln!("round {} ({fault:?}): {e:#}", faults.len());
        }
        // The fault ends this link: an armed mid-frame cut gets two seconds to fire on the next
        // chunk; a link still up then (quiet, or it lived through a stall) is cut.
        let this_link = |proxy: &Proxy| proxy.spans().get(current_span).is_some_and(|s| s.ended.is_none());
        let deadline = Instant::now() + Duration::from_secs(2);
        while this_link(&proxy) && Instant::now() < deadline {
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        if this_link(&proxy) {
            // Only this link is carried now: the device dials no second one while linked.
            proxy.cut();
        }
        let deadline = Instant::now() + Duration::from_secs(5);
        while this_link(&proxy) && Instant::now() < deadline {
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        client.settle(&link);
        drop(link);
        if faults.len() % 100 == 0 {
            eprintln!(
                "{} drops after {:.0?}, {} turns prompted",
                ended(&proxy),
                started.elapsed(),
                client.ledger.turns.len()
            );
        }
    }

    // Quiet: one link with no fault, until every turn and delete is settled.
    if early_exit.is_none() && aborted.is_none() {
        match settle_all(&mut client, peer.as_ref(), wait).await {
            Ok(link) => {
                // The close 4400: the server no longer speaks protocol 3.
                if let Some(p) = peer.as_ref() {
                    p.set_config(|c| c.link_protocols = vec![1, 2]);
                }
                drop(link);
                proxy.cut();
            }
            Err(e) => aborted = Some(format!("the quiet link at the end: {e:#}")),
        }
    }
    let spans_before = proxy.spans().len();
    let mut exit_after_4400 = None;
    if early_exit.is_none() && aborted.is_none() {
        let deadline = Instant::now() + wait + Duration::from_secs(10);
        while Instant::now() < deadline {
            if let Some(status) = device.exited() {
                exit_after_4400 = Some(status);
                break;
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        // A device that stopped must not dial again: watch for a while.
        tokio::time::sleep(Duration::from_secs(2)).await;
    }
    // Skip the refused link itself (the one the 4400 closed).
    let links_after_4400 = proxy.spans().len().saturating_sub(spans_before + 1);
    if let Some(p) = peer.take() {
        models.push(p.model());
        p.stop().await;
    }
    for model in &models {
        client.ledger.model_requests.extend(model.requests());
    }
    if options.keep_home {
        device.home.disable_cleanup(true);
        println!(
            "the device's home (service.log in it): {}",
            device.root().display()
        );
    }
    sampler.task.abort();
    if device.exited().is_none() {
        // Ended by us (a run that stopped early): terminals and commands must still go with it.
        unsafe { libc::kill(device.pid(), libc::SIGTERM) };
        let deadline = Instant::now() + Duration::from_secs(10);
        while device.exited().is_none() && Instant::now() < deadline {
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    }
    let seen: Vec<Process> = sampler.seen.lock().recover().iter().cloned().collect();
    // The device's children get a moment to go (a hung-up shell exits on its own).
    let root = device.root();
    let leftovers = || {
        let mut left = device::still_alive(&seen);
        for p in device::working_under(&root) {
            if !left.contains(&p) {
                left.push(p);
            }
        }
        left
    };
    let mut left_behind = leftovers();
    let deadline = Instant::now() + Duration::from_secs(5);
    while !left_behind.is_empty() && Instant::now() < deadline {
        tokio::time::sleep(Duration::from_millis(100)).await;
        left_behind = leftovers();
    }
    for p in &left_behind {
        // Not the soak's to leave running either.
        unsafe { libc::kill(p.pid, libc::SIGKILL) };
    }
    let samples = sampler.samples.lock().recover().clone();
    let drops = proxy
        .spans()
        .iter()
        .take(spans_before.saturating_sub(1))
        .filter(|s| s.ended.is_some())
        .count();
    Ok(Outcome {
        ledger: client.ledger,
        spans: proxy.spans(),
        samples,
        seen_processes: seen,
        left_behind,
        early_exit,
        exit_after_4400,
        links_after_4400,
        log: device.log_text(),
        faults,
        drops,
        wall: started.elapsed(),
        aborted,
    })
}

/// One link's life: hello and initialize, what the client owes (deletes again, reattaching),
/// a little ordinary work, then `fault`.
#[allow(clippy::too_many_arguments)]
async fn one_round(
    client: &mut Client,
    link: &mut LinkHandle,
    proxy: &Proxy,
    peer: &mut Option<Peer>,
    peer_addr: SocketAddr,
    device: &Device,
    fault: Fault,
    timings: Timings,
    models: &mut Vec<ScriptedModel>,
) -> anyhow::Result<()> {
    link.hello(REQUEST_WAIT).await?;
    link.initialize(REQUEST_WAIT).await?;
    client.resend_deletes(link).await?;
    client.reattach(link).await?;
    client.ensure_sessions(link, 3).await?;
    if fastrand::bool() {
        let kind = if fastrand::bool() {
            PromptKind::Say
        } else {
            PromptKind::Approval
        };
        client.prompt_to_end(link, kind, Duration::from_secs(10)).await?;
    }
    // Turns in flight when the fault comes, some queued behind others on the same session.
    for _ in 0..fastrand::usize(0..3) {
        client.prompt(link, PromptKind::Say).await?;
    }
    match fault {
        Fault::MidFrame => {
            let direction = if fastrand::bool() {
                Direction::DeviceToPeer
            } else {
                Direction::PeerToDevice
            };
            proxy.cut_mid_frame(direction);
            client.prompt(link, PromptKind::Say).await?;
        }
        Fault::MidStream => {
            let id = client.prompt(link, PromptKind::Say).await?;
            client
                .drive(link, Duration::from_secs(5), true, |m| {
                    m["method"] == LinkMethod::SessionUpdate.name()
                        && m["params"]["update"]["sessionUpdate"] == "agent_message_chunk"
                        || answer_to(m, id)
                })
                .await?;
            cut_randomly(proxy);
        }
        Fault::MidApproval => {
            client.prompt(link, PromptKind::Approval).await?;
            client
                .drive(link, Duration::from_secs(5), false, |m| {
                    m["method"] == LinkMethod::RequestPermission.name()
                })
                .await?;
            cut_randomly(proxy);
        }
        Fault::MidCommand => {
            client.prompt(link, PromptKind::Slow).await?;
            client
                .drive(link, Duration::from_secs(5), true, |m| {
                    m["method"] == LinkMethod::SessionUpdate.name()
                        && m["params"]["update"]["sessionUpdate"] == "tool_call_update"
                        && m["params"]["update"]["status"] == "in_progress"
                })
                .await?;
            tokio::time::sleep(Duration::from_millis(fastrand::u64(0..800))).await;
            cut_randomly(proxy);
        }
        Fault::MidDelete => {
            client.delete_on_link(link).await?;
            tokio::time::sleep(Duration::from_micros(fastrand::u64(0..3000))).await;
            cut_randomly(proxy);
        }
        Fault::TerminalFlood => {
            client.terminal_flood(link).await?;
            tokio::time::sleep(Duration::from_millis(fastrand::u64(0..300))).await;
            if fastrand::bool() {
                proxy.cut_mid_frame(Direction::DeviceToPeer);
            } else {
                proxy.cut();
            }
        }
        Fault::PeerRestart => {
            if fastrand::bool() {
                client.prompt(link, PromptKind::Say).await?;
                tokio::time::sleep(Duration::from_millis(fastrand::u64(0..50))).await;
            }
            let Some(old) = peer.take() else { return Ok(()) };
            models.push(old.model());
            let config = old.config();
            old.stop().await;
            if fastrand::bool() {
                client.delete_offline(device);
            }
            tokio::time::sleep(Duration::from_millis(fastrand::u64(100..1000))).await;
            *peer = Some(start_again(config, peer_addr).await?);
        }
        Fault::WakeGap => {
            let id = client.prompt(link, PromptKind::Say).await?;
            // Under the ping timeout mostly, over it sometimes (the device then calls it dead).
            let pause = match timings {
                Timings::Decided => Duration::from_millis(fastrand::u64(1000..10_000)),
                Timings::Short => Duration::from_millis(fastrand::u64(500..3500)),
            };
            proxy.stall(pause);
            client
                .drive(link, pause + Duration::from_secs(3), true, |m| answer_to(m, id))
                .await?;
            proxy.cut();
        }
    }
    Ok(())
}

fn cut_randomly(proxy: &Proxy) {
    if fastrand::bool() {
        proxy.cut();
    } else {
        proxy.cut_mid_frame(if fastrand::bool() {
            Direction::DeviceToPeer
        } else {
            Direction::PeerToDevice
        });
        // Armed: the next chunk either way ends it; a quiet link is cut by the round's end.
    }
}

/// The peer again on its port (the old socket may take a moment to let go).
async fn start_again(config: PeerConfig, address: SocketAddr) -> anyhow::Result<Peer> {
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        match Peer::start_at(config.clone(), address).await {
            Err(_) if Instant::now() < deadline => tokio::time::sleep(Duration::from_millis(100)).await,
            started => return started,
        }
    }
}

/// The quiet end: links until every turn prompted has ended and every delete is confirmed.
async fn settle_all(client: &mut Client, peer: Option<&Peer>, wait: Duration) -> anyhow::Result<LinkHandle> {
    let peer = peer.context("no peer at the end")?;
    let deadline = Instant::now() + Duration::from_secs(120);
    let mut link = peer.next_link(wait).await?;
    client.begin_link();
    link.hello(REQUEST_WAIT).await?;
    link.initialize(REQUEST_WAIT).await?;
    client.resend_deletes(&mut link).await?;
    while Instant::now() < deadline {
        client.reattach(&mut link).await?;
        client.follow(&mut link, Duration::from_secs(3)).await?;
        // Deletes kept while offline come right after initialize; give them a moment.
        client.settle(&link);
        if client.open_turns() == 0 && client.unconfirmed_deletes() == 0 {
            break;
        }
        tokio::time::sleep(Duration::from_millis(300)).await;
        client.settle(&link);
    }
    Ok(link)
}

/// Where `lembas` is: beside this binary (both are built into the same target folder).
pub fn default_lembas() -> std::path::PathBuf {
    std::env::current_exe()
        .ok()
        .and_then(|p| p.parent().map(|d| d.join("lembas")))
        .filter(|p| Path::new(p).exists())
        .unwrap_or_else(|| "lembas".into())
}
