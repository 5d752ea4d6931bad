//! LLeMbas Desktop's window: a process of its own, started by the tray process (`lembas-desktop`)
//! when the window opens, ending when it closes, so WebKit's memory goes with it. It reaches the
//! device runtime only over the control socket (`relay.rs`); the tray writes it lines on its
//! standard input (see [`window::follow_tray`]).

mod commands;
mod held;
mod relay;
mod shown_page;
#[cfg(target_os = "linux")]
pub mod warm_up;
mod window;

use lembas_protocol::view::View;

/// What the tray passed: the view to open on.
struct Args {
    view: Option<View>,
}

fn args() -> Result<Args, String> {
    let mut view = None;
    let mut args = std::env::args_os().skip(1);
    while let Some(arg) = args.next() {
        match arg.to_str() {
            Some("--view") => {
                let text = args.next().and_then(|v| v.into_string().ok()).unwrap_or_default();
                view = Some(serde_json::from_str(&text).map_err(|e| format!("--view is not a view: {e}"))?);
            }
            _ => return Err(format!("unknown argument {arg:?}")),
        }
    }
    Ok(Args { view })
}

/// Runs the window until it closes; `dirs` are the device's folders (its control socket's).
pub fn run(dirs: lembas_device::paths::Dirs) {
    tracing_subscriber::fmt()
        .with_writer(std::io::stderr)
        .with_env_filter(
            tracing_subscriber::EnvFilter::try_from_default_env().unwrap_or_else(|_| "info".into()),
        )
        .init();
    let args = match args() {
        Ok(args) => args,
        Err(e) => {
            eprintln!("lembas-window: {e}");
            std::process::exit(2);
        }
    };
    let app = tauri::Builder::default()
        .plugin(tauri_plugin_dialog::init())
        .register_asynchronous_uri_scheme_protocol(shown_page::SCHEME, shown_page::serve)
        .manage(window::PendingView::new(args.view))
        .manage(dirs)
        .manage(held::Held::default())
        .invoke_handler(tauri::generate_handler![
            commands::pick_root,
            commands::take_view,
            commands::drawn,
            relay::control_call,
        ])
        .setup(|app| {
            window::build(app.handle())?;
            window::follow_tray(app.handle().clone());
            tauri::async_runtime::spawn(relay::forward_pushes(app.handle().clone()));
            Ok(())
        })
        .build(tauri::generate_context!("../tauri.conf.json"));
    match app {
        // Ends when its window closes (Tauri's default once the last window is gone).
        Ok(app) => app.run(|_, _| {}),
        Err(e) => {
            eprintln!("LLeMbas Desktop's window cannot start: {e}");
            std::process::exit(1);
        }
    }
}
