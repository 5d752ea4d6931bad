//! Terminals opened and closed over the link. Under Wine 8 a shell in a pseudo console gets no
//! input and gives no output, and ends at once (Wine's `powershell.exe` stub and its `cmd.exe`
//! alike): what is checked is the open's answer, the close taken, the exit told, and that a
//! terminal gone frees its place (a link holds at most four). The shell is Wine's Windows
//! PowerShell, so the open says `other` with the marks on: the shell was started with its
//! integration's command.

use lembas_peer::LinkHandle;
use serde_json::json;

use crate::{WAIT, Work};

/// More than the four terminals a link may hold at once.
const OPENED: usize = 5;

/// `_lembas/terminal/open` in the first root opens a shell there at the size asked;
/// `_lembas/terminal/close` is taken, and the device tells the client the shell exited; five in a
/// row, so each one gone was let go.
pub async fn open_and_close(link: &mut LinkHandle, work: &Work) -> Result<(), String> {
    let mut said = Vec::new();
    for _ in 0..OPENED {
        let opened = link
            .request("_lembas/terminal/open", json!({ "cols": 80, "rows": 24 }), WAIT)
            .await
            .map_err(|e| format!("_lembas/terminal/open was not answered: {e}"))?;
        let result = &opened["result"];
        let Some(id) = result["terminalId"].as_str().map(str::to_string) else {
            return Err(format!("_lembas/terminal/open did not open one: {opened}"));
        };
        if result["shell"] != "other" || result["integration"] != true {
            return Err(format!(
                "the terminal is not PowerShell (`other`) with its marks: {opened}"
            ));
        }
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
            .map_err(|e| format!("no _lembas/terminal/exit for {id}: {e}"))?;
        if exit["params"]["terminalId"] != id.as_str() {
            return Err(format!("the exit names another terminal than {id}: {exit}"));
        }
        said.push(format!(
            "{id} ({}) exit {}",
            result["shell"], exit["params"]["code"]
        ));
    }
    println!(
        "terminals: {OPENED} opened in {}, closed, each exit told: {}",
        work.windows,
        said.join(", ")
    );
    Ok(())
}
