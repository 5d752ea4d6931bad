//! `lembas-peer`: a demo LLeMbas instance on this machine, built on the reference peer. It serves
//! discovery, the instance and the models, accepts devices presenting the token, sends each one
//! `initialize` and prints the result, and logs the link's traffic.

mod chat_demo;

use std::net::SocketAddr;
use std::process::ExitCode;
use std::time::Duration;

use anyhow::{Context, bail};
use lembas_peer::{LinkHandle, Peer, PeerConfig};
use serde_json::Value;

const USAGE: &str = "usage: lembas-peer [--port N] [--chat TEXT] --token-stdin
  Runs a demo LLeMbas instance on 127.0.0.1 for a device to link to.
  Its model, at POST /v1/chat/completions, streams the demo's answers (`run CMD`: a bash call).
  --port N       listen on port N (default: one the system picks)
  --chat TEXT    once a device links, open an agent chat in its first folder and send TEXT
                 (the demo model: `run <command>` asks for that command), allowing what it asks
  --scheduled    make that chat a scheduled run, as a schedule on this computer would
  --person-answers  leave the chat's approval cards to a person on the device (the tray app,
                 its notification, or `lembas approvals allow <id>`) instead of allowing them
  --chat-after S  wait S seconds after initialize before the chat (a window opened meanwhile
                 sees it happen)
  --not-shown REASON  answer the chat's _lembas/show requests with { shown: false, reason }
                 (default: { shown: true })
  --token-stdin  read the one token the instance accepts from standard input (required:
                 a token never goes on the command line)
  RUST_LOG       how much to log (default: info)";

/// How long a linked device has for its hello and its initialize answer.
const LINK_STEP_WAIT: Duration = Duration::from_secs(10);

struct Arguments {
    port: u16,
    chat: Option<String>,
    scheduled: bool,
    person_answers: bool,
    not_shown: Option<String>,
    chat_after: Duration,
}

fn parse_arguments(arguments: impl Iterator<Item = String>) -> anyhow::Result<Option<Arguments>> {
    let mut port = 0;
    let mut chat = None;
    let mut scheduled = false;
    let mut person_answers = false;
    let mut not_shown = None;
    let mut chat_after = Duration::ZERO;
    let mut token_stdin = false;
    let mut arguments = arguments;
    while let Some(argument) = arguments.next() {
        match argument.as_str() {
            "--help" | "-h" => return Ok(None),
            "--token-stdin" => token_stdin = true,
            "--scheduled" => scheduled = true,
            "--person-answers" => person_answers = true,
            "--chat-after" => {
                let value = arguments
                    .next()
                    .context("--chat-after needs a number of seconds after it")?;
                let seconds: u64 = value
                    .parse()
                    .with_context(|| format!("--chat-after {value}: not a number of seconds"))?;
                chat_after = Duration::from_secs(seconds);
            }
            "--not-shown" => {
                not_shown = Some(
                    arguments
                        .next()
                        .context("--not-shown needs the reason after it")?,
                )
            }
            "--chat" => {
                chat = Some(
                    arguments
                        .next()
                        .context("--chat needs the text to send after it")?,
                )
            }
            "--port" => {
                let value = arguments.next().context("--port needs a number after it")?;
                port = value
                    .parse()
                    .with_context(|| format!("--port {value}: not a port number (0-65535)"))?;
            }
            other => bail!("unknown argument {other:?}"),
        }
    }
    if !token_stdin {
        bail!("--token-stdin is required: pipe the token the instance should accept into standard input");
    }
    Ok(Some(Arguments {
        port,
        chat,
        scheduled,
        person_answers,
        not_shown,
        chat_after,
    }))
}

fn read_token() -> anyhow::Result<String> {
    let mut line = String::new();
    std::io::stdin()
        .read_line(&mut line)
        .context("could not read the token from standard input")?;
    let token = line.trim().to_string();
    if token.is_empty() {
        bail!(
            "standard input held no token: pipe one in, e.g. `echo \"$TOKEN\" | lembas-peer --token-stdin`"
        );
    }
    Ok(token)
}

#[tokio::main]
async fn main() -> ExitCode {
    tracing_subscriber::fmt()
        .with_env_filter(
            tracing_subscriber::EnvFilter::try_from_default_env()
                .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("info")),
        )
        .with_writer(std::io::stderr)
        .init();
    match run().await {
        Ok(()) => ExitCode::SUCCESS,
        Err(error) => {
            eprintln!("lembas-peer: {error:#}");
            ExitCode::FAILURE
        }
    }
}

async fn run() -> anyhow::Result<()> {
    let Some(arguments) = parse_arguments(std::env::args().skip(1)).map_err(|e| e.context(USAGE))? else {
        println!("{USAGE}");
        return Ok(());
    };
    let token = read_token()?;
    let address = SocketAddr::from(([127, 0, 0, 1], arguments.port));
    let peer = Peer::start_at(PeerConfig::with_token(token), address).await?;
    println!("{}", peer.url());
    tracing::info!(link = %peer.link_url(), "demo instance ready; stop it with Ctrl-C");
    loop {
        tokio::select! {
            link = peer.next_link(Duration::from_secs(3600)) => {
                if let Ok(link) = link {
                    let chat = arguments.chat.clone().map(|text| chat_demo::Chat {
                        text,
                        scheduled: arguments.scheduled,
                        person_answers: arguments.person_answers,
                        not_shown: arguments.not_shown.clone(),
                        after: arguments.chat_after,
                    });
                    tokio::spawn(demo_link(link, chat));
                }
            }
            _ = tokio::signal::ctrl_c() => break,
        }
    }
    peer.stop().await;
    Ok(())
}

/// Greets one device as LLeMbas would, then logs what it sends until it goes.
async fn demo_link(mut link: LinkHandle, chat: Option<chat_demo::Chat>) {
    let agent = link
        .headers
        .get("user-agent")
        .and_then(|v| v.to_str().ok())
        .unwrap_or("?")
        .to_string();
    tracing::info!(%agent, "a device linked");
    match link.hello(LINK_STEP_WAIT).await {
        Ok(hello) => tracing::info!(%hello, "hello"),
        Err(error) => {
            tracing::warn!("{error:#}");
            return;
        }
    }
    match link.initialize(LINK_STEP_WAIT).await {
        Ok(result) => {
            println!(
                "{}",
                serde_json::to_string_pretty(&result).unwrap_or_else(|_| result.to_string())
            );
            if let Some(chat) = chat
                && let Err(error) = chat_demo::run(&mut link, &result, &chat).await
            {
                tracing::warn!("the demo chat stopped: {error:#}");
            }
        }
        Err(error) => {
            tracing::warn!("{error:#}");
            return;
        }
    }
    loop {
        match link.recv(Duration::from_secs(3600)).await {
            Ok(message) => answer_demo(&mut link, message).await,
            // Quiet for an hour, or a frame that is not a message: go on while the link is open.
            Err(error) => match link.closed(Duration::ZERO).await {
                Err(_) => tracing::debug!("{error:#}"),
                Ok(close) => {
                    tracing::info!(?close, "the device's link ended");
                    return;
                }
            },
        }
    }
}

/// Logs a message; a request the demo cannot serve gets method-not-found, so the device never waits.
async fn answer_demo(link: &mut LinkHandle, message: Value) {
    tracing::info!(%message, "device → instance");
    let (Some(id), Some(method)) = (message.get("id"), message.get("method").and_then(Value::as_str)) else {
        return;
    };
    let text = format!("the demo instance does not answer {method}");
    if let Err(error) = link.answer_error(id.clone(), -32601, &text).await {
        tracing::warn!("{error:#}");
    }
}
