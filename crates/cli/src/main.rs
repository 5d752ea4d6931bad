//! `lembas`: the headless LLeMbas device command. A thin layer over lembas-device.

use clap::{CommandFactory, Parser, Subcommand};
use std::path::PathBuf;
use std::process::ExitCode;

mod activity;
mod approvals;
mod chat;
mod doctor;
mod live;
mod login;
mod remote;
mod serve;
mod service;
mod sessions;
mod unechoed;
mod user_service;

use lembas_device::control::ApprovalOption;
use lembas_device::setup::Setup;
use remote::{KeepAwakeArg, ModeArg, OnOff};

#[derive(Parser)]
#[command(
    name = "lembas",
    version,
    about = "Link this computer to your LLeMbas, within the limits you set."
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// The device service: holds the link to your LLeMbas.
    Service {
        #[command(subcommand)]
        command: ServiceCommand,
    },
    /// Prints the shell completion script for lembas (bash, zsh, fish, elvish or powershell), e.g.
    /// `lembas completions bash > ~/.local/share/bash-completion/completions/lembas`.
    Completions { shell: clap_complete::Shell },
    /// The agent for an editor: ACP on stdin and stdout, one JSON-RPC message a line (Zed's custom
    /// agent: command lembas, args serve --stdio).
    Serve {
        /// Speak on stdin and stdout (the only way this command serves).
        #[arg(long, required = true)]
        stdio: bool,
        /// Log in instead, asking in this terminal for the server and the device token (what an
        /// editor's terminal login runs), then exit.
        #[arg(long)]
        login: bool,
    },
    /// Checks that this computer can link and work: the config, the login and the server, the
    /// device running here, the sandbox, the desktop's D-Bus parts; each failure with what to do.
    Doctor {
        /// One JSON array of checks instead of lines.
        #[arg(long)]
        json: bool,
    },
    /// Whether this device is linked, to which server, with which limits.
    Status {
        /// One JSON object instead of sentences.
        #[arg(long)]
        json: bool,
    },
    /// Log in with a device token read from standard input (never from an argument).
    Login {
        /// Read the token from standard input (the only way this command takes one).
        #[arg(long)]
        token_stdin: bool,
        /// The LLeMbas instance, e.g. https://llembas.example.org
        #[arg(long, value_name = "URL")]
        server: String,
        /// One JSON line: the done line, or { "event": "error", "message" }.
        #[arg(long)]
        json: bool,
        /// Keep the token in a file only you can read instead of the OS keychain.
        #[arg(long)]
        insecure_storage: bool,
    },
    /// Remove the login: the token and the server in the config.
    Logout {
        /// One JSON line instead of sentences.
        #[arg(long)]
        json: bool,
    },
    /// What remote work may do on this computer.
    Remote {
        #[command(subcommand)]
        command: RemoteCommand,
    },
    /// Trust a project folder (and everything in it) for remote work.
    Trust {
        path: PathBuf,
        /// Print the new settings as JSON.
        #[arg(long)]
        json: bool,
    },
    /// Stop trusting a project folder.
    Untrust {
        path: PathBuf,
        /// Print the new settings as JSON.
        #[arg(long)]
        json: bool,
    },
    /// What the instance did on this computer, newest first (the activity log).
    Activity {
        /// One JSON array of the log's lines ({ at_ms, kind, … }), newest first.
        #[arg(long)]
        json: bool,
        /// How many lines.
        #[arg(short = 'n', value_name = "N", default_value_t = 50,
              value_parser = clap::value_parser!(u64).range(1..))]
        n: u64,
    },
    /// Approval cards of the running device waiting for a person; answer one with allow|deny.
    Approvals {
        #[command(subcommand)]
        command: Option<ApprovalsCommand>,
        /// One JSON array of the waiting cards ({ id, session_id, title, reason, command, diff,
        /// asked_ms, waiting_s, scheduled }), the oldest first.
        #[arg(long)]
        json: bool,
    },
    /// Chat with the agent in this terminal, in this folder (or -C's): the instance's models, the
    /// limits you set, and shared with your LLeMbas when you want (/share, /unshare).
    Chat {
        /// The chat's folder (the current one when absent).
        #[arg(short = 'C', value_name = "DIR")]
        dir: Option<PathBuf>,
        /// An instance model id (the login's default when absent).
        #[arg(long, value_name = "ID")]
        model: Option<String>,
        /// Continue the latest chat in this folder (a new one when there is none).
        #[arg(short = 'c', long = "continue")]
        continue_latest: bool,
        /// Share the new chat with your LLeMbas from its start.
        #[arg(long, conflicts_with = "no_share")]
        share: bool,
        /// Keep the new chat on this computer (/share still shares it).
        #[arg(long)]
        no_share: bool,
    },
    /// The agent sessions kept on this computer.
    Sessions {
        #[command(subcommand)]
        command: SessionsCommand,
    },
}

#[derive(Subcommand)]
enum SessionsCommand {
    /// Every session kept on this computer, the latest first: id, title, folder, last change.
    List {
        /// One JSON array of { id, title, cwd, created_ms, updated_ms, messages }.
        #[arg(long)]
        json: bool,
    },
    /// Delete a session from this computer, its turns and attachments too; your LLeMbas deletes
    /// its chat when this device is next linked.
    Delete {
        /// The session's id (ses_…), as lembas sessions list shows it.
        id: String,
        /// One JSON line instead of sentences.
        #[arg(long)]
        json: bool,
    },
    /// Delete every session not changed for DAYS days, as delete does each; a session open in a
    /// running device or terminal is kept.
    Prune {
        /// How many days a session must have gone unchanged.
        #[arg(long, value_name = "DAYS")]
        older_than: u64,
        /// Only list what would be deleted.
        #[arg(long)]
        dry_run: bool,
        /// One JSON line: { event, dryRun, deleted: [id], kept: [{ sessionId, message }], failed }.
        #[arg(long)]
        json: bool,
    },
}

#[derive(Subcommand)]
enum ApprovalsCommand {
    /// Allow the call once: the turn goes on.
    Allow {
        /// The card's id, as lembas approvals lists it.
        id: String,
        /// Allow such calls for the rest of the chat too (what the card's "always" says).
        #[arg(long)]
        for_chat: bool,
        /// One JSON line instead of sentences.
        #[arg(long)]
        json: bool,
    },
    /// Deny the call: the model is told it was not allowed.
    Deny {
        /// The card's id, as lembas approvals lists it.
        id: String,
        /// One JSON line instead of sentences.
        #[arg(long)]
        json: bool,
    },
}

#[derive(Subcommand)]
enum ServiceCommand {
    /// Run the device in the foreground (Ctrl-C or SIGTERM closes the link and exits).
    Run,
    /// Start the device at login and now, with the OS's service manager (a systemd user unit on
    /// Linux, a launchd agent on macOS), running this lembas executable.
    Install {
        /// One JSON line instead of sentences.
        #[arg(long)]
        json: bool,
    },
    /// Stop the installed service and remove it: the device no longer starts at login.
    Uninstall {
        /// One JSON line instead of sentences.
        #[arg(long)]
        json: bool,
    },
    /// Whether the service is installed, what it starts, and what the service manager says of it.
    Status {
        /// One JSON object ({ installed, file, starts, enabled, active, manager_error }).
        #[arg(long)]
        json: bool,
    },
    /// Accept scheduled work on this computer, or not (the same as lembas remote scheduled).
    Scheduled {
        state: OnOff,
        /// Print the new settings as JSON.
        #[arg(long)]
        json: bool,
    },
}

#[derive(Subcommand)]
enum RemoteCommand {
    /// Show the remote settings and the trusted projects.
    List {
        /// The whole remote block and the trusted projects as JSON.
        #[arg(long)]
        json: bool,
    },
    /// Allow remote work within these limits.
    On {
        #[arg(long)]
        json: bool,
    },
    /// Refuse all remote work.
    Off {
        #[arg(long)]
        json: bool,
    },
    /// The folders remote work may use.
    Roots {
        #[command(subcommand)]
        command: RootsCommand,
    },
    /// The widest mode a remote session gets.
    MaxMode {
        mode: ModeArg,
        #[arg(long)]
        json: bool,
    },
    /// Terminals opened from LLeMbas.
    Terminal {
        state: OnOff,
        #[arg(long)]
        json: bool,
    },
    /// Whether a remote session's folder must be in a trusted project.
    Trust {
        state: OnOff,
        #[arg(long)]
        json: bool,
    },
    /// Accept scheduled work on this computer.
    Scheduled {
        state: OnOff,
        #[arg(long)]
        json: bool,
    },
    /// Keep this computer from sleeping while remote work runs: on mains power only (the
    /// default), always, or never.
    KeepAwake {
        setting: KeepAwakeArg,
        #[arg(long)]
        json: bool,
    },
}

#[derive(Subcommand)]
enum RootsCommand {
    /// Add an existing folder (stored resolved and absolute).
    Add {
        path: PathBuf,
        #[arg(long)]
        json: bool,
    },
    /// Remove a folder from the list.
    Remove {
        path: PathBuf,
        #[arg(long)]
        json: bool,
    },
}

/// The completion script, written whole; a reader that went away (`| head`) is no failure.
fn completions(shell: clap_complete::Shell) -> ExitCode {
    use std::io::Write;
    let mut script = Vec::new();
    clap_complete::generate(shell, &mut Cli::command(), "lembas", &mut script);
    match std::io::stdout().write_all(&script) {
        Err(e) if e.kind() != std::io::ErrorKind::BrokenPipe => {
            eprintln!("lembas: the completion script could not be written: {e}");
            ExitCode::FAILURE
        }
        _ => ExitCode::SUCCESS,
    }
}

fn main() -> ExitCode {
    // First: nothing of the person's reads this process's memory or environment from here on.
    lembas_device::sandbox::harden_this_process();
    // Before any thread starts.
    lembas_device::heap::one_arena();
    let cli = Cli::parse();
    // The one reading of the environment's folders: every command below is handed them.
    let setup = &Setup::from_env();
    match cli.command {
        Command::Service { command } => match command {
            ServiceCommand::Run => service::run(setup),
            ServiceCommand::Install { json } => user_service::install(setup, json),
            ServiceCommand::Uninstall { json } => user_service::uninstall(setup, json),
            ServiceCommand::Status { json } => user_service::status(setup, json),
            ServiceCommand::Scheduled { state, json } => remote::scheduled(setup, state, json),
        },
        Command::Completions { shell } => completions(shell),
        Command::Serve {
            stdio: _,
            login: true,
        } => login::in_terminal(setup),
        Command::Serve {
            stdio: _,
            login: false,
        } => serve::stdio(setup),
        Command::Status { json } => service::status(setup, json),
        Command::Doctor { json } => doctor::run(setup, json),
        Command::Login {
            token_stdin,
            server,
            json,
            insecure_storage,
        } => login::login(setup, token_stdin, &server, json, insecure_storage),
        Command::Logout { json } => login::logout(setup, json),
        Command::Remote { command } => match command {
            RemoteCommand::List { json } => remote::list(setup, json),
            RemoteCommand::On { json } => remote::enabled(setup, true, json),
            RemoteCommand::Off { json } => remote::enabled(setup, false, json),
            RemoteCommand::Roots { command } => match command {
                RootsCommand::Add { path, json } => remote::add_root(setup, path, json),
                RootsCommand::Remove { path, json } => remote::remove_root(setup, path, json),
            },
            RemoteCommand::MaxMode { mode, json } => remote::max_mode(setup, mode, json),
            RemoteCommand::Terminal { state, json } => remote::terminal(setup, state, json),
            RemoteCommand::Trust { state, json } => remote::require_trust(setup, state, json),
            RemoteCommand::Scheduled { state, json } => remote::scheduled(setup, state, json),
            RemoteCommand::KeepAwake { setting, json } => remote::keep_awake(setup, setting, json),
        },
        Command::Trust { path, json } => remote::trust(setup, path, json),
        Command::Untrust { path, json } => remote::untrust(setup, path, json),
        Command::Activity { json, n } => {
            activity::show(setup, json, usize::try_from(n).unwrap_or(usize::MAX))
        }
        Command::Approvals { command, json } => match command {
            None => approvals::list(setup, json),
            Some(ApprovalsCommand::Allow {
                id,
                for_chat,
                json: j,
            }) => {
                let verdict = if for_chat {
                    ApprovalOption::Session
                } else {
                    ApprovalOption::Once
                };
                approvals::answer(setup, &id, verdict, json || j)
            }
            Some(ApprovalsCommand::Deny { id, json: j }) => {
                approvals::answer(setup, &id, ApprovalOption::Deny, json || j)
            }
        },
        Command::Chat {
            dir,
            model,
            continue_latest,
            share,
            no_share,
        } => chat::run(
            setup,
            chat::Options {
                cwd: dir,
                model,
                latest: continue_latest,
                share: match (share, no_share) {
                    (true, _) => Some(true),
                    (_, true) => Some(false),
                    _ => None,
                },
            },
        ),
        Command::Sessions { command } => match command {
            SessionsCommand::List { json } => sessions::list(setup, json),
            SessionsCommand::Delete { id, json } => sessions::delete(setup, &id, json),
            SessionsCommand::Prune {
                older_than,
                dry_run,
                json,
            } => sessions::prune(setup, older_than, dry_run, json),
        },
    }
}

#[cfg(test)]
mod man_pages {
    use clap::CommandFactory;
    use std::collections::BTreeMap;
    use std::path::Path;

    fn pages(dir: &Path) -> BTreeMap<String, String> {
        std::fs::read_dir(dir)
            .map(|entries| {
                entries
                    .flatten()
                    .map(|e| {
                        let text = std::fs::read_to_string(e.path()).unwrap_or_default();
                        (e.file_name().to_string_lossy().into_owned(), text)
                    })
                    .collect()
            })
            .unwrap_or_default()
    }

    /// `man/` holds the pages the package installs (lembas.1, lembas-service.1, …), made from the
    /// command's own definition; regenerate with `LEMBAS_GENERATE=1 cargo test -p lembas-cli man_pages`.
    #[test]
    fn the_man_pages_are_fresh() {
        let made = tempfile::tempdir().unwrap();
        clap_mangen::generate_to(super::Cli::command(), made.path()).unwrap();
        let kept_dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("man");
        if std::env::var_os("LEMBAS_GENERATE").is_some() {
            let _ = std::fs::remove_dir_all(&kept_dir);
            std::fs::create_dir_all(&kept_dir).unwrap();
            for (name, text) in pages(made.path()) {
                std::fs::write(kept_dir.join(name), text).unwrap();
            }
        }
        let made = pages(made.path());
        assert!(made.contains_key("lembas.1") && made.contains_key("lembas-service-install.1"));
        assert!(
            made == pages(&kept_dir),
            "crates/cli/man/ is stale: run LEMBAS_GENERATE=1 cargo test -p lembas-cli man_pages"
        );
    }
}
