//! A terminal opened and closed over the link. Its output is not checked: Wine 8's pseudo console
//! passes none of the shell's output back (docs/testing.md).

use lembas_peer::LinkHandle;
use serde_json::json;

use crate::{WAIT, Work};

/// `_lembas/terminal/open` in the first root opens a shell there; `_lembas/terminal/close` hangs
/// it up and the device tells the client it exited.
pub async fn open_and_close(link: &mut LinkHandle, work: &Work) -> Result<(), String> {
    let opened = link
        .request("_lembas/terminal/open", json!({ "cols": 80, "rows": 24 }), WAIT)
        .await
        .map_err(|e| format!("_lembas/terminal/open was not answered: {e}"))?;
    let result = &opened["result"];
    let Some(id) = result["terminalId"].as_str().map(str::to_string) else {
        return Err(format!("_lembas/terminal/open did not open one: {opened}"));
    };
    if result["cwd"] != work.windows.as_str() || result["cols"] != 80 || result["rows"] != 24 {
        return Err(format!(
            "the terminal is not in {} at 80×24: {opened}",
            work.windows
        ));
    }
    link.notify("_lembas/terminal/close", json!({ "terminalId": id }))
        .await
        .map_err(|e| format!("_lembas/terminal/close was not sent: {e}"))?;
    let exit = link
        .recv_notification("_lembas/terminal/exit", WAIT)
        .await
        .map_err(|e| format!("no _lembas/terminal/exit after the close: {e}"))?;
    if exit["params"]["terminalId"] != id.as_str() {
        return Err(format!("the exit names another terminal: {exit}"));
    }
    println!(
        "terminal: {} opened in {} ({}), closed, exit {}",
        id, result["cwd"], result["shell"], exit["params"]["code"]
    );
    Ok(())
}
