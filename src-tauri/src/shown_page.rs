//! The `shown` protocol: an HTML page a session showed, served to the viewer's sandboxed frame with
//! a policy of its own (its inline scripts and styles, nothing else: no network, no frames, no
//! forms), in the response's header and again as the page's first tag. A `srcdoc` frame would
//! inherit the window's policy, under which a page's scripts never run; loaded from here they run,
//! in the frame's opaque origin (the viewer's `sandbox="allow-scripts"`), reaching nothing.

use lembas_device::control::Client;
use lembas_device::paths::Dirs;
use lembas_protocol::ControlMethod;
use serde_json::json;
use tauri::http::{Request, Response, StatusCode, header};
use tauri::{Manager, Runtime, UriSchemeContext, UriSchemeResponder};

pub const SCHEME: &str = "shown";
/// The page's policy (the UI test serves its stand-in frames with this same string).
pub const PAGE_CSP: &str = "default-src 'none'; script-src 'unsafe-inline'; style-src 'unsafe-inline'; img-src data:; form-action 'none'; base-uri 'none'";

/// Answers `shown://localhost/<id>` (`http://shown.localhost/<id>` on Windows) with the page, once
/// the runtime has read it; anything but a kept HTML file is a 404.
pub fn serve<R: Runtime>(
    context: UriSchemeContext<'_, R>,
    request: Request<Vec<u8>>,
    responder: UriSchemeResponder,
) {
    let id = request.uri().path().trim_start_matches('/').to_string();
    let dirs = context.app_handle().state::<Dirs>().inner().clone();
    tauri::async_runtime::spawn(async move {
        let response = match read(&dirs, &id).await {
            Some(text) => page(
                StatusCode::OK,
                format!("<meta http-equiv=\"Content-Security-Policy\" content=\"{PAGE_CSP}\">{text}"),
            ),
            None => page(StatusCode::NOT_FOUND, "No such shown page is kept.".into()),
        };
        responder.respond(response);
    });
}

/// The text of the shown HTML file `id`, while the runtime keeps it.
async fn read(dirs: &Dirs, id: &str) -> Option<String> {
    let mut client = Client::connect(dirs).await.ok()?;
    let answer = client
        .call(ControlMethod::ShownRead.name(), json!({ "id": id }))
        .await
        .ok()?;
    if answer["file"]["kind"] != "html" {
        return None;
    }
    answer["text"].as_str().map(str::to_string)
}

fn page(status: StatusCode, body: String) -> Response<Vec<u8>> {
    Response::builder()
        .status(status)
        .header(header::CONTENT_TYPE, "text/html; charset=utf-8")
        .header("Content-Security-Policy", PAGE_CSP)
        .header("X-Content-Type-Options", "nosniff")
        .header("Referrer-Policy", "no-referrer")
        .header(header::CACHE_CONTROL, "no-store")
        .body(body.into_bytes())
        .unwrap_or_default()
}
