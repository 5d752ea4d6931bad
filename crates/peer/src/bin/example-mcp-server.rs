//! `example-mcp-server`: a small MCP server on standard input and output (the official SDK, `rmcp`),
//! named `example`. It is what an editor's MCP server is in the tests of `lembas serve --stdio`
//! running the servers an editor names in `session/new`, and the server of the benchmark comparing a
//! tool call made through the device with one made directly. Besides tools that work (`echo`, `add`,
//! `sleep`), it misbehaves on demand, as real servers do: it exits mid-call (`exit`), writes a line
//! that is not JSON-RPC (`garbage`, `--garbage-first`), dies before a word (`--exit-at-start`) or
//! never answers `initialize` (`--hang-at-start`). See `--help`.

use std::io::{Read, Write};
use std::process::ExitCode;
use std::time::Duration;

use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ContentBlock, Implementation, JsonObject,
    ListToolsResult, PaginatedRequestParams, ServerCapabilities, ServerConfig, Tool,
};
use rmcp::service::{RequestContext, ServerInitializeError};
use rmcp::transport::stdio;
use rmcp::{ErrorData, RoleServer, ServerHandler, ServiceExt};
use serde_json::{Value, json};

const USAGE: &str = "usage: example-mcp-server [--garbage-first | --exit-at-start | --hang-at-start]
  An MCP server named `example` on standard input and output, for tests and benchmarks.
  Tools: echo {text}, add {a, b}, sleep {seconds}, exit {} (exits with code 3 mid-call, without
  answering), garbage {} (writes a line that is not JSON-RPC on standard output, then answers).
  It exits (0) when its standard input closes.
  --garbage-first  write `this is not json-rpc{` on standard output, then serve normally
  --exit-at-start  say so on standard error and exit with code 2 before reading anything
  --hang-at-start  never answer initialize: read standard input until it closes, then sleep
                   until killed
  --help           print this";

/// The line `garbage` and `--garbage-first` write where JSON-RPC is expected.
const GARBAGE_LINE: &str = "this is not json-rpc{";

/// The exit code of the `exit` tool, and of `--exit-at-start`.
const EXIT_TOOL_CODE: i32 = 3;
const EXIT_AT_START_CODE: u8 = 2;
/// What an unknown flag exits with (sysexits' EX_USAGE).
const USAGE_ERROR_CODE: u8 = 64;

/// The longest `sleep` taken: a test that asks for more has a typo, and the server should not
/// outlive it by days.
const LONGEST_SLEEP_SECONDS: f64 = 3600.0;

/// How the server begins, as its flag says.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Mode {
    Normal,
    GarbageFirst,
    ExitAtStart,
    HangAtStart,
}

fn main() -> ExitCode {
    let mut mode = Mode::Normal;
    for argument in std::env::args().skip(1) {
        mode = match argument.as_str() {
            "--garbage-first" => Mode::GarbageFirst,
            "--exit-at-start" => Mode::ExitAtStart,
            "--hang-at-start" => Mode::HangAtStart,
            "--help" | "-h" => {
                println!("{USAGE}");
                return ExitCode::SUCCESS;
            }
            other => {
                eprintln!("example-mcp-server: unknown argument {other:?}\n{USAGE}");
                return ExitCode::from(USAGE_ERROR_CODE);
            }
        };
    }
    match mode {
        Mode::ExitAtStart => {
            eprintln!("example-mcp-server: exiting at start (--exit-at-start)");
            return ExitCode::from(EXIT_AT_START_CODE);
        }
        Mode::HangAtStart => hang(),
        Mode::GarbageFirst => write_garbage_line(),
        Mode::Normal => {}
    }
    let runtime = match tokio::runtime::Builder::new_current_thread().enable_all().build() {
        Ok(runtime) => runtime,
        Err(error) => {
            eprintln!("example-mcp-server: could not start its runtime: {error}");
            return ExitCode::FAILURE;
        }
    };
    runtime.block_on(serve())
}

async fn serve() -> ExitCode {
    let running = match Example.serve(stdio()).await {
        Ok(running) => running,
        // The client went away before initializing: nothing was asked, nothing failed.
        Err(ServerInitializeError::ConnectionClosed(_)) => return ExitCode::SUCCESS,
        Err(error) => {
            eprintln!("example-mcp-server: {error}");
            return ExitCode::FAILURE;
        }
    };
    match running.waiting().await {
        Ok(_) => ExitCode::SUCCESS,
        Err(error) => {
            eprintln!("example-mcp-server: {error}");
            ExitCode::FAILURE
        }
    }
}

/// Reads standard input until it closes, so the client's writes never block, and never answers.
fn hang() -> ! {
    let mut sink = [0u8; 4096];
    let mut stdin = std::io::stdin().lock();
    while matches!(stdin.read(&mut sink), Ok(read) if read > 0) {}
    // A hung server does not notice its client leaving either: the client must kill it.
    loop {
        std::thread::sleep(Duration::from_secs(3600));
    }
}

/// Writes [`GARBAGE_LINE`] straight to standard output, past rmcp. The lock keeps it from landing
/// inside a message: rmcp's writes go through the same `std::io::Stdout`.
fn write_garbage_line() {
    let mut stdout = std::io::stdout().lock();
    // A closed standard output ends the server at its next message anyway.
    let _ = writeln!(stdout, "{GARBAGE_LINE}").and_then(|()| stdout.flush());
}

/// The server: no state, so every tool is a function of its arguments.
#[derive(Clone)]
struct Example;

fn object(value: Value) -> JsonObject {
    match value {
        Value::Object(object) => object,
        // Only called with object literals.
        _ => JsonObject::new(),
    }
}

fn tools() -> Vec<Tool> {
    vec![
        Tool::new(
            "echo",
            "Answer with the text given, unchanged.",
            object(json!({
                "type": "object",
                "properties": { "text": { "type": "string", "description": "the text to answer with" } },
                "required": ["text"],
            })),
        ),
        Tool::new(
            "add",
            "Add two numbers; the answer is the sum as text.",
            object(json!({
                "type": "object",
                "properties": {
                    "a": { "type": "number", "description": "the first number" },
                    "b": { "type": "number", "description": "the second number" },
                },
                "required": ["a", "b"],
            })),
        ),
        Tool::new(
            "sleep",
            "Wait the given number of seconds, then answer \"slept\".",
            object(json!({
                "type": "object",
                "properties": {
                    "seconds": {
                        "type": "number",
                        "minimum": 0,
                        "maximum": LONGEST_SLEEP_SECONDS,
                        "description": "how long to wait, in seconds (fractions allowed)",
                    },
                },
                "required": ["seconds"],
            })),
        ),
        Tool::new(
            "exit",
            "Exit the server at once with code 3, without answering (a server crashing mid-call).",
            object(json!({ "type": "object", "properties": {} })),
        ),
        Tool::new(
            "garbage",
            "Write a line that is not JSON-RPC on standard output, then answer normally.",
            object(json!({ "type": "object", "properties": {} })),
        ),
    ]
}

fn text(sentence: impl Into<String>) -> Result<CallToolResponse, ErrorData> {
    Ok(CallToolResult::success(vec![ContentBlock::text(sentence)]).into())
}

/// A call the tool cannot make sense of: a result the model reads, not a protocol error.
fn refused(why: impl Into<String>) -> Result<CallToolResponse, ErrorData> {
    Ok(CallToolResult::error(vec![ContentBlock::text(why)]).into())
}

impl ServerHandler for Example {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(ServerCapabilities::builder().enable_tools().build())
            .with_server_info(Implementation::new("example", env!("CARGO_PKG_VERSION")))
    }

    fn get_tool(&self, name: &str) -> Option<Tool> {
        tools().into_iter().find(|tool| tool.name == name)
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        Ok(ListToolsResult::with_all_items(tools()))
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        let arguments = request.arguments.unwrap_or_default();
        let number = |name: &str| arguments.get(name).and_then(Value::as_f64);
        match &*request.name {
            "echo" => match arguments.get("text").and_then(Value::as_str) {
                Some(given) => text(given),
                None => refused("echo needs text: a string"),
            },
            "add" => match (number("a"), number("b")) {
                (Some(a), Some(b)) => text((a + b).to_string()),
                _ => refused("add needs a and b: two numbers"),
            },
            "sleep" => match number("seconds").filter(|s| (0.0..=LONGEST_SLEEP_SECONDS).contains(s)) {
                Some(seconds) => {
                    tokio::time::sleep(Duration::from_secs_f64(seconds)).await;
                    text("slept")
                }
                None => refused(format!(
                    "sleep needs seconds: a number from 0 to {LONGEST_SLEEP_SECONDS}"
                )),
            },
            "exit" => std::process::exit(EXIT_TOOL_CODE),
            "garbage" => {
                write_garbage_line();
                text(format!("wrote {GARBAGE_LINE:?} on standard output"))
            }
            other => Err(ErrorData::invalid_params(format!("unknown tool: {other}"), None)),
        }
    }
}
