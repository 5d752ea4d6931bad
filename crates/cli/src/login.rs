//! `lembas login --token-stdin --server <url>` and `lembas logout`: the sentences and the JSON line
//! around `lembas_device::login`.

use std::io::{BufRead, IsTerminal, Read};
use std::process::ExitCode;

use lembas_device::keychain::Token;
use lembas_device::login::{self, LoginDone, TokenStorage};
use lembas_device::setup::Setup;
use serde_json::json;

/// More than any token; a larger input is not a token (a file piped in by mistake).
const MAX_TOKEN_BYTES: u64 = 64 * 1024;

pub fn login(setup: &Setup, token_stdin: bool, server: &str, json: bool, insecure_storage: bool) -> ExitCode {
    if !token_stdin {
        return fail(
            json,
            "lembas login takes the device token on standard input only: add --token-stdin, e.g. lembas login --token-stdin --server <url> < file-holding-the-token".to_string(),
        );
    }
    let token = match read_token() {
        Ok(token) => token,
        Err(message) => return fail(json, message),
    };
    let storage = if insecure_storage {
        eprintln!(
            "Warning: --insecure-storage keeps the device token in {}, a plain file only you can read (0600), not in the OS keychain. Log in again without --insecure-storage once a keychain is available.",
            setup.keychain.token_file().display()
        );
        TokenStorage::InsecureFile
    } else {
        TokenStorage::Keychain
    };
    let runtime = match tokio::runtime::Builder::new_current_thread().enable_all().build() {
        Ok(rt) => rt,
        Err(e) => return fail(json, format!("cannot start: {e}")),
    };
    match runtime.block_on(login::login(setup, server, token, storage)) {
        Ok(done) => {
            if json {
                // Straight from the struct, so the keys keep the spec's order, `event` first.
                match serde_json::to_string(&done) {
                    Ok(line) => println!("{line}"),
                    Err(e) => return fail(json, format!("cannot write the done line: {e}")),
                }
            } else {
                print_done(setup, &done);
            }
            ExitCode::SUCCESS
        }
        Err(e) => fail(json, e.to_string()),
    }
}

fn read_token() -> Result<Token, String> {
    let stdin = std::io::stdin();
    let _hidden = crate::unechoed::EchoOff::on_stdin();
    if stdin.is_terminal() {
        eprintln!("Paste the device token (it is not shown), then press Enter and Ctrl-D:");
    }
    let mut bytes = Vec::new();
    stdin
        .lock()
        .take(MAX_TOKEN_BYTES + 1)
        .read_to_end(&mut bytes)
        .map_err(|e| format!("cannot read the token from standard input: {e}"))?;
    if bytes.len() as u64 > MAX_TOKEN_BYTES {
        return Err(format!(
            "Standard input holds more than {} KiB, which is not a device token; give only the token.",
            MAX_TOKEN_BYTES / 1024
        ));
    }
    let text = String::from_utf8(bytes).map_err(|_| {
        "Standard input is not text, so it is not a device token; give only the token.".to_string()
    })?;
    Token::new(&text).map_err(|_| {
        "No token on standard input: pipe the device token in, e.g. lembas login --token-stdin --server <url> < file-holding-the-token".to_string()
    })
}

fn print_done(setup: &Setup, done: &LoginDone) {
    let instance = done
        .name
        .as_deref()
        .or(done.connection.as_deref())
        .unwrap_or("LLeMbas");
    let account = done
        .account
        .as_deref()
        .map(|a| format!(" as {a}"))
        .unwrap_or_default();
    let again = if done.fresh { "" } else { " again" };
    println!(
        "Logged in{again} to {instance} ({}), LLeMbas {}{account}.",
        done.base_url, done.version
    );
    if done.models.is_empty() {
        println!("The instance lists no chat models for this token.");
    } else {
        println!("Chat models: {}.", done.models.join(", "));
    }
    if let Some(model) = &done.embedding_set {
        println!("Embedding model set to {model}.");
    }
    match done.storage {
        TokenStorage::Keychain => println!("The token is in the OS keychain."),
        TokenStorage::InsecureFile => println!(
            "The token is in {} (--insecure-storage), not in the OS keychain.",
            setup.keychain.token_file().display()
        ),
    }
    println!(
        "A running lembas service run picks the login up by itself; otherwise start one with: lembas service run"
    );
}

/// `lembas serve --stdio --login`: an editor's terminal login (ACP's `terminal` auth method). The
/// server and the token are asked for on this terminal, one line each; then as `lembas login`.
pub fn in_terminal(setup: &Setup) -> ExitCode {
    let configured = lembas_device::settings::load(&setup.dirs)
        .ok()
        .and_then(|s| s.server)
        .map(|s| s.url);
    match &configured {
        Some(url) => eprint!("The LLeMbas instance (Enter for {url}): "),
        None => eprint!("The LLeMbas instance, e.g. https://llembas.example.org: "),
    }
    let server = match read_line() {
        Ok(line) if line.trim().is_empty() => match configured {
            Some(url) => url,
            None => {
                return fail(
                    false,
                    "No instance given: run this again and type its address.".to_string(),
                );
            }
        },
        Ok(line) => line.trim().to_string(),
        Err(message) => return fail(false, message),
    };
    let typed = {
        // Off before the question shows: nothing typed after it is echoed.
        let _hidden = crate::unechoed::EchoOff::on_stdin();
        eprint!(
            "Paste the device token from the instance's device page (it is not shown), then press Enter: "
        );
        read_line()
    };
    let token = match typed.map(|line| Token::new(line.trim())) {
        Ok(Ok(token)) => token,
        Ok(Err(_)) => return fail(false, "No token given: run this again and paste it.".to_string()),
        Err(message) => return fail(false, message),
    };
    let runtime = match tokio::runtime::Builder::new_current_thread().enable_all().build() {
        Ok(rt) => rt,
        Err(e) => return fail(false, format!("cannot start: {e}")),
    };
    match runtime.block_on(login::login(setup, &server, token, TokenStorage::Keychain)) {
        Ok(done) => {
            print_done(setup, &done);
            println!("Back in the editor, the chat can start.");
            ExitCode::SUCCESS
        }
        Err(e) => fail(false, e.to_string()),
    }
}

/// One line of standard input, at most [`MAX_TOKEN_BYTES`].
fn read_line() -> Result<String, String> {
    let mut line = String::new();
    std::io::stdin()
        .lock()
        .take(MAX_TOKEN_BYTES)
        .read_line(&mut line)
        .map_err(|e| format!("cannot read standard input: {e}"))?;
    Ok(line)
}

pub fn logout(setup: &Setup, json: bool) -> ExitCode {
    let runtime = match tokio::runtime::Builder::new_current_thread().enable_all().build() {
        Ok(rt) => rt,
        Err(e) => return fail(json, format!("cannot start: {e}")),
    };
    match runtime.block_on(login::logout(setup)) {
        Ok(done) => {
            if json {
                println!("{}", json!({ "event": "done", "server": done.server }));
            } else {
                match &done.server {
                    Some(server) => println!(
                        "Logged out of {server}: the login is gone from the config and the token from this computer."
                    ),
                    None => {
                        println!("This device was not logged in to a server; any token left is gone too.")
                    }
                }
            }
            ExitCode::SUCCESS
        }
        Err(e) => {
            if e.config.is_none() && !json {
                println!("The login is gone from the config.");
            }
            fail(json, e.to_string())
        }
    }
}

/// Says what went wrong (one JSON line on stdout with `--json`, a sentence on stderr otherwise).
pub fn fail(json: bool, message: String) -> ExitCode {
    if json {
        println!("{}", json!({ "event": "error", "message": message }));
    } else {
        eprintln!("lembas: {message}");
    }
    ExitCode::FAILURE
}
