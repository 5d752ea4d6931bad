//! The link: hello and initialize with the limits set, `lembas status` over the control pipe, and
//! a change of the limits (the device closes the link and dials again with the new ones).

use lembas_peer::{LinkHandle, Peer};
use serde_json::{Value, json};

use crate::{WAIT, Wine, Work, said};

/// The device's first link: its hello says the limits set, initialize the sandbox (none) and the
/// capabilities (terminals on); the link past initialize.
pub async fn linked(peer: &Peer, work: &Work) -> Result<LinkHandle, String> {
    let mut link = peer
        .next_link(WAIT)
        .await
        .map_err(|e| format!("the service did not link: {e}"))?;
    let hello = link.hello(WAIT).await.map_err(|e| format!("no hello: {e}"))?;
    let limits = &hello["limits"];
    if limits["roots"] != json!([work.windows])
        || limits["max_mode"] != "edit"
        || limits["scheduled"] != false
    {
        return Err(format!(
            "the hello's limits are not those set (roots [{}], max_mode edit, scheduled off): {hello}",
            work.windows
        ));
    }
    if hello["device"]["platform"] != "windows" {
        return Err(format!("the hello does not say the platform is windows: {hello}"));
    }
    let initialized = link
        .initialize(WAIT)
        .await
        .map_err(|e| format!("initialize was not answered: {e}"))?;
    let sandbox = initialized["_meta"]["lembas"]["sandbox"]
        .as_str()
        .unwrap_or_default();
    if !sandbox.starts_with("none") {
        return Err(format!("initialize said the sandbox is {sandbox:?}, not none"));
    }
    let capabilities = &initialized["_meta"]["lembas"]["capabilities"];
    if !capabilities
        .as_array()
        .is_some_and(|c| c.contains(&json!("terminal")))
    {
        return Err(format!("initialize does not offer terminals: {capabilities}"));
    }
    println!("link: hello with the limits {limits}; initialize, sandbox {sandbox:?}");
    Ok(link)
}

/// `lembas status` asks the running device over its control pipe until it says it is linked.
pub async fn status_over_the_pipe(wine: &Wine) -> Result<(), String> {
    let started = std::time::Instant::now();
    loop {
        let status = wine.run(&["status"])?;
        let text = String::from_utf8_lossy(&status.stdout).into_owned();
        if text.contains("Linked to") {
            print!("status over the control pipe:\n{text}");
            return Ok(());
        }
        if started.elapsed() > WAIT {
            return Err(format!(
                "lembas status never said it is linked: {}",
                said(&status)
            ));
        }
        tokio::time::sleep(std::time::Duration::from_millis(500)).await;
    }
}

/// `lembas remote scheduled on` while the device runs: it closes the link (1000) once nothing
/// works and dials again, its hello saying the new limit; the new link past initialize.
pub async fn limits_change(wine: &Wine, peer: &Peer, mut link: LinkHandle) -> Result<LinkHandle, String> {
    wine.run_saying(&["remote", "scheduled", "on"], "")?;
    let closed = link
        .closed(WAIT)
        .await
        .map_err(|e| format!("the link stayed open after the limits changed: {e}"))?;
    if closed.as_ref().map(|c| c.0) != Some(1000) {
        return Err(format!("the device did not close the link with 1000: {closed:?}"));
    }
    let mut again = peer
        .next_link(WAIT)
        .await
        .map_err(|e| format!("the device did not dial again after the limits changed: {e}"))?;
    let hello = again.hello(WAIT).await.map_err(|e| format!("no hello: {e}"))?;
    if hello["limits"]["scheduled"] != Value::Bool(true) {
        return Err(format!(
            "the new hello does not say scheduled work is on: {hello}"
        ));
    }
    again
        .initialize(WAIT)
        .await
        .map_err(|e| format!("initialize on the new link was not answered: {e}"))?;
    println!(
        "limits change: closed with 1000, dialled again, hello says {}",
        hello["limits"]
    );
    Ok(again)
}
