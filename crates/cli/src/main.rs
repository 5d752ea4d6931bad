//! `lembas`: the headless LLeMbas device command. A thin layer over lembas-device.

use clap::{Parser, Subcommand};
use std::process::ExitCode;

mod service;

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
    /// Whether this device is linked, to which server, with which limits.
    Status {
        /// One JSON object instead of sentences.
        #[arg(long)]
        json: bool,
    },
}

#[derive(Subcommand)]
enum ServiceCommand {
    /// Run the device in the foreground (Ctrl-C or SIGTERM closes the link and exits).
    Run,
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    match cli.command {
        Command::Service {
            command: ServiceCommand::Run,
        } => service::run(),
        Command::Status { json } => service::status(json),
    }
}
