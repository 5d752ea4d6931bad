//! A device linked to the reference peer, for the benchmarks that need what the lean instance does
//! not serve: a scripted model that calls tools, and the instance's `/mcp`.

use std::path::Path;

use anyhow::Context;
use lembas_peer::{LinkHandle, Peer, PeerConfig};
use serde_json::json;

use crate::agent::REQUEST_WAIT;

use crate::device::{DeviceHome, DeviceProcess, LINK_WAIT};
use crate::model_server::TOKEN;

pub struct PeerDevice {
    pub peer: Peer,
    pub home: DeviceHome,
    pub device: DeviceProcess,
    pub link: LinkHandle,
}

/// The peer started with `change` made to its config (the bench's token already set), and a
/// device in a new home, its remote block given its work folder, linked to it.
pub async fn linked(
    change: impl FnOnce(&mut PeerConfig),
    remote: impl Fn(&Path) -> String,
) -> anyhow::Result<PeerDevice> {
    let mut config = PeerConfig::with_token(TOKEN);
    change(&mut config);
    let peer = Peer::start(config).await?;
    let home = DeviceHome::new(&peer.url(), remote)?;
    let device = home.spawn()?;
    let mut link = peer.next_link(LINK_WAIT).await?;
    link.hello(LINK_WAIT).await?;
    link.initialize(LINK_WAIT).await?;
    Ok(PeerDevice {
        peer,
        home,
        device,
        link,
    })
}

/// `session/new` in `cwd` on `model`, in `mode` (the device's default when `None`); the session's id.
pub async fn new_session(
    link: &mut LinkHandle,
    cwd: &Path,
    mode: Option<&str>,
    model: &str,
) -> anyhow::Result<String> {
    let mut meta = json!({ "lembas_model": model });
    if let Some(mode) = mode {
        meta["mode"] = json!(mode);
    }
    let answer = link
        .request(
            "session/new",
            json!({ "cwd": cwd, "mcpServers": [], "_meta": meta }),
            REQUEST_WAIT,
        )
        .await?;
    Ok(answer["result"]["sessionId"]
        .as_str()
        .context(format!("session/new failed: {answer}"))?
        .to_string())
}
