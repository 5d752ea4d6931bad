//! `lembas-bench`: the device's figures, each beside a baseline measured in the same run, as one
//! table. Run it through `scripts/bench` (a real keychain; the `lembas` binary built beside it).
//! `--quick` shortens every benchmark (its figures are not the goals' figures); `--smoke` runs each at
//! its smallest, for the smoke test.

mod agent;
mod bash_judge;
mod card_latency;
mod chat_screen;
mod child;
mod compaction;
mod device;
mod editor;
mod file_search;
mod grep_tool;
mod idle;
mod instance;
mod job_flood;
mod memory_read;
mod model_server;
mod monitor;
mod procfs;
mod raw_pty;
mod reference;
mod report;
mod round_trip;
mod sandbox;
mod start;
mod stats;
mod stored_sessions;
mod terminal;
mod token_relay;
mod turn_overhead;

use std::time::Duration;

use instance::LeanInstance;
use report::Row;

/// How long or how often each benchmark runs.
struct Plan {
    idle_window: Duration,
    round_trips: usize,
    starts: usize,
    terminal: terminal::Sizes,
    monitor_bytes: u64,
    relayed_chunks: u64,
    turns: usize,
    grep_files: usize,
    /// Lines judged each way by the bash judge benchmark.
    judged_lines: usize,
    /// The file search's tree, and how many searches are timed.
    search_files: usize,
    searches: usize,
    /// 5,000-message sessions reopened, each once.
    reopens: usize,
    /// `true` run by the bash tool's runner, each way.
    sandboxed_runs: usize,
    /// Sessions opened each way for the memory read.
    memory_sessions: usize,
    /// How long the flooding job prints.
    flood: Duration,
    /// Echo calls through the agent and straight to the server.
    mcp_calls: usize,
    /// Sessions loaded by an editor, each size.
    loads: usize,
    /// Approval cards timed to the window and the notification.
    cards: usize,
    /// Keys typed into `lembas chat`, and chunks streamed to its screen.
    chat_keys: usize,
    chat_tokens: u64,
}

impl Plan {
    fn full() -> Self {
        Plan {
            idle_window: Duration::from_secs(30),
            round_trips: 2000,
            starts: 10,
            terminal: terminal::Sizes {
                output_bytes: 256 << 20,
                echo_rounds: 500,
                ctrl_c_trials: 5,
            },
            monitor_bytes: 512 << 20,
            relayed_chunks: 2000,
            turns: 200,
            grep_files: 100_000,
            judged_lines: 600,
            search_files: 100_000,
            searches: 300,
            reopens: 5,
            sandboxed_runs: 1000,
            memory_sessions: 20,
            flood: Duration::from_secs(10),
            mcp_calls: 100,
            loads: 5,
            cards: 20,
            chat_keys: 500,
            chat_tokens: 200,
        }
    }

    fn quick() -> Self {
        Plan {
            idle_window: Duration::from_secs(3),
            round_trips: 200,
            starts: 3,
            terminal: terminal::Sizes {
                output_bytes: 16 << 20,
                echo_rounds: 50,
                ctrl_c_trials: 1,
            },
            monitor_bytes: 32 << 20,
            relayed_chunks: 200,
            turns: 20,
            grep_files: 5_000,
            judged_lines: 120,
            search_files: 5_000,
            searches: 30,
            reopens: 2,
            sandboxed_runs: 100,
            memory_sessions: 5,
            flood: Duration::from_secs(3),
            mcp_calls: 20,
            loads: 2,
            cards: 3,
            chat_keys: 50,
            chat_tokens: 30,
        }
    }

    /// Every benchmark once, at its smallest: the smoke test's check that each row still runs
    /// (`--quick` took it 45 s in a debug build). Its figures say nothing.
    fn smoke() -> Self {
        Plan {
            idle_window: Duration::from_secs(1),
            round_trips: 20,
            starts: 1,
            terminal: terminal::Sizes {
                output_bytes: 1 << 20,
                echo_rounds: 10,
                ctrl_c_trials: 1,
            },
            monitor_bytes: 1 << 20,
            relayed_chunks: 20,
            turns: 3,
            grep_files: 200,
            judged_lines: 10,
            search_files: 200,
            searches: 5,
            reopens: 1,
            sandboxed_runs: 5,
            memory_sessions: 1,
            flood: Duration::from_secs(1),
            mcp_calls: 3,
            loads: 1,
            cards: 1,
            chat_keys: 10,
            chat_tokens: 5,
        }
    }
}

fn main() -> std::process::ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let outcome = match args.first().map(String::as_str) {
        Some(monitor::IN_PROCESS_FLAG) => monitor::watch_in_process(&args[1..]),
        Some(round_trip::ECHO_FLAG) => round_trip::echo_server(),
        Some(sandbox::IN_PROCESS_FLAG) => sandbox::measure_in_process(&args[1..]),
        Some(bash_judge::IN_PROCESS_FLAG) => bash_judge::measure_in_process(&args[1..]),
        Some("--quick") if args.len() == 1 => run(Plan::quick()),
        Some("--smoke") if args.len() == 1 => run(Plan::smoke()),
        Some("--sandbox") if args.len() == 1 => sandbox_only(Plan::full().sandboxed_runs),
        Some("--chat") if args.len() == 1 => chat_only(&Plan::full()),
        None => run(Plan::full()),
        _ => {
            eprintln!("usage: lembas-bench [--quick | --smoke | --sandbox | --chat]");
            return std::process::ExitCode::from(2);
        }
    };
    match outcome {
        Ok(()) => std::process::ExitCode::SUCCESS,
        Err(error) => {
            eprintln!("lembas-bench: {error:#}");
            std::process::ExitCode::FAILURE
        }
    }
}

/// The box's row alone, as the full run measures it (for a change to the box).
fn sandbox_only(runs: usize) -> anyhow::Result<()> {
    let runtime = tokio::runtime::Builder::new_multi_thread().enable_all().build()?;
    let rows = runtime.block_on(sandbox::run(runs))?;
    print!("{}", report::render(&rows));
    Ok(())
}

/// `lembas chat`'s rows alone, as the full run measures them (for a change to the chat).
fn chat_only(plan: &Plan) -> anyhow::Result<()> {
    device::store_token()?;
    let runtime = tokio::runtime::Builder::new_multi_thread().enable_all().build()?;
    let rows = runtime.block_on(async {
        let mut instance = LeanInstance::start().await?;
        let measured = chat_screen::run(&mut instance, plan.chat_keys, plan.chat_tokens).await;
        let mut rows = Vec::new();
        collect(&mut rows, &chat_screen::ROWS, measured);
        anyhow::Ok(rows)
    })?;
    print!("{}", report::render(&rows));
    Ok(())
}

fn run(plan: Plan) -> anyhow::Result<()> {
    device::store_token()?;
    let runtime = tokio::runtime::Builder::new_multi_thread().enable_all().build()?;
    let rows = runtime.block_on(measure(&plan))?;
    print!("{}", report::render(&rows));
    Ok(())
}

/// Every benchmark in turn; one that fails still gets its rows, saying why.
async fn measure(plan: &Plan) -> anyhow::Result<Vec<Row>> {
    let mut instance = LeanInstance::start().await?;
    let mut rows = Vec::new();
    let linked = linked_device(&mut instance, plan).await;
    collect(
        &mut rows,
        &[&round_trip::ROWS[..], &idle::ROWS[..]].concat(),
        linked,
    );
    collect(
        &mut rows,
        &start::ROWS,
        start::run(&mut instance, plan.starts).await,
    );
    collect(
        &mut rows,
        &terminal::ROWS,
        terminal::run(&mut instance, &plan.terminal).await,
    );
    collect(
        &mut rows,
        &monitor::ROWS,
        monitor::run(&mut instance, plan.monitor_bytes).await,
    );
    collect(
        &mut rows,
        &token_relay::ROWS,
        token_relay::run(&mut instance, plan.relayed_chunks).await,
    );
    collect(
        &mut rows,
        &turn_overhead::ROWS,
        turn_overhead::run(&mut instance, plan.turns).await,
    );
    collect(
        &mut rows,
        &stored_sessions::ROWS,
        stored_sessions::run(&mut instance, plan.reopens, plan.idle_window).await,
    );
    collect(
        &mut rows,
        &memory_read::ROWS,
        memory_read::run(plan.memory_sessions).await,
    );
    collect(&mut rows, &job_flood::ROWS, job_flood::run(plan.flood).await);
    collect(&mut rows, &compaction::ROWS, compaction::run(plan.turns).await);
    collect(
        &mut rows,
        &editor::ROWS,
        editor::run(plan.mcp_calls, plan.loads).await,
    );
    collect(&mut rows, &grep_tool::ROWS, grep_tool::run(plan.grep_files).await);
    collect(
        &mut rows,
        &bash_judge::ROWS,
        bash_judge::run(plan.judged_lines).await,
    );
    collect(&mut rows, &sandbox::ROWS, sandbox::run(plan.sandboxed_runs).await);
    collect(
        &mut rows,
        &file_search::ROWS,
        file_search::run(&mut instance, plan.search_files, plan.searches).await,
    );
    collect(
        &mut rows,
        &chat_screen::ROWS,
        chat_screen::run(&mut instance, plan.chat_keys, plan.chat_tokens).await,
    );
    // Last: it puts this process in a home of its own (the tray's host runs here).
    collect(
        &mut rows,
        &card_latency::ROWS,
        card_latency::run(plan.cards).await,
    );
    Ok(rows)
}

/// Rows 1 and 3 on one device: linked with remote work off, first left idle, then asked.
async fn linked_device(instance: &mut LeanInstance, plan: &Plan) -> anyhow::Result<Vec<Row>> {
    let home = device::DeviceHome::new(&instance.url(), |_| String::new())?;
    let (device, mut link) = home.link(instance).await?;
    let idle = idle::run(device.pid(), &mut link, plan.idle_window).await?;
    let mut rows = round_trip::run(&mut link, device.pid(), plan.round_trips).await?;
    rows.extend(idle);
    Ok(rows)
}

fn collect(rows: &mut Vec<Row>, names: &[&str], measured: anyhow::Result<Vec<Row>>) {
    match measured {
        Ok(measured) => rows.extend(measured),
        Err(error) => rows.extend(names.iter().map(|name| Row::failed(name, &error))),
    }
}
