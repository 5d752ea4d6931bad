//! The tray (`lembas-desktop.exe`, beside `lembas.exe`) under Wine on a display: it hosts the device,
//! which links to the peer with the login and limits already set, and `lembas status` reaches it
//! over the control pipe. Its icon, menu, window and toasts are not looked at (docs/testing.md).

use std::path::Path;
use std::process::{Command, Stdio};

use lembas_peer::Peer;

use crate::{WAIT, Wine, link};

pub async fn hosts_the_device(wine: &Wine, peer: &Peer, tray: &Path) -> Result<(), String> {
    if std::env::var_os("DISPLAY").is_none() {
        return Err("the tray needs a display: run the check on one (scripts/with-display)".into());
    }
    let mut child = Command::new(&wine.wine)
        .arg(tray)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .map_err(|e| format!("lembas-desktop.exe did not start: {e}"))?;
    let checked = async {
        let mut link = peer
            .next_link(WAIT)
            .await
            .map_err(|e| format!("the tray's device did not link: {e}"))?;
        let hello = link
            .hello(WAIT)
            .await
            .map_err(|e| format!("no hello from the tray: {e}"))?;
        link.initialize(WAIT)
            .await
            .map_err(|e| format!("the tray's device did not answer initialize: {e}"))?;
        link::status_over_the_pipe(wine).await?;
        println!(
            "tray: lembas-desktop.exe hosts the device, linked with {}",
            hello["limits"]
        );
        Ok(())
    }
    .await;
    let _ = child.kill();
    let _ = child.wait();
    checked
}
