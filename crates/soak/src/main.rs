//! `lembas-soak [DROPS] [--short-timings] [--seed N] [--only FAULT]... [--keep-home]`: the chaos soak. Runs the
//! real `lembas service run` against the reference peer behind a fault-injecting proxy for DROPS
//! link drops (1000 by default), then prints the checks as a table and exits non-zero when one
//! failed. Needs a Secret Service: run it through `scripts/with-keyring` (`scripts/soak` does).

mod checks;
mod client;
mod device;
mod driver;
mod proxy;

use std::process::ExitCode;

use device::Timings;

const USAGE: &str =
    "usage: lembas-soak [DROPS] [--short-timings] [--seed N] [--only FAULT]... [--keep-home] [--lembas PATH]";

fn main() -> ExitCode {
    let mut drops = 1000;
    let mut timings = Timings::Decided;
    let mut seed = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_nanos() as u64)
        .unwrap_or(1);
    let mut lembas = driver::default_lembas();
    let mut only = Vec::new();
    let mut keep_home = false;
    let mut args = std::env::args().skip(1);
    while let Some(arg) = args.next() {
        match arg.as_str() {
            "--short-timings" => timings = Timings::Short,
            "--seed" => match args.next().and_then(|s| s.parse().ok()) {
                Some(s) => seed = s,
                None => return usage("--seed takes a number"),
            },
            "--keep-home" => keep_home = true,
            "--only" => {
                let named = args.next().unwrap_or_default();
                match driver::FAULTS
                    .iter()
                    .find(|f| format!("{f:?}").eq_ignore_ascii_case(&named))
                {
                    Some(f) => only.push(*f),
                    None => return usage(&format!("{named:?} is not a fault: one of {:?}", driver::FAULTS)),
                }
            }
            "--lembas" => match args.next() {
                Some(p) => lembas = p.into(),
                None => return usage("--lembas takes a path"),
            },
            other => match other.parse() {
                Ok(n) if n > 0 => drops = n,
                _ => return usage(&format!("{other:?} is not a number of drops")),
            },
        }
    }
    let runtime = match tokio::runtime::Runtime::new() {
        Ok(r) => r,
        Err(e) => {
            eprintln!("lembas-soak: cannot start: {e}");
            return ExitCode::FAILURE;
        }
    };
    println!(
        "soak: {drops} drops, {} link timings, seed {seed}, device {}",
        match timings {
            Timings::Decided => "decided",
            Timings::Short => "short",
        },
        lembas.display()
    );
    let outcome = match runtime.block_on(driver::run(driver::Options {
        drops,
        only,
        keep_home,
        timings,
        lembas,
        seed,
    })) {
        Ok(o) => o,
        Err(e) => {
            eprintln!("lembas-soak: the soak could not run: {e:#}");
            return ExitCode::FAILURE;
        }
    };
    let rows = checks::evaluate(&outcome, timings);
    let mut kinds = std::collections::BTreeMap::new();
    for f in &outcome.faults {
        *kinds.entry(format!("{f:?}")).or_insert(0) += 1;
    }
    println!(
        "\n{} drops in {:.0?} wall time; faults: {kinds:?}; {} approvals answered, {} terminals flooded, {} model requests",
        outcome.drops,
        outcome.wall,
        outcome.ledger.approvals_answered,
        outcome.ledger.terminals_opened,
        outcome.ledger.model_requests.len()
    );
    print!("{}", checks::table(&rows));
    if rows.iter().all(|r| r.pass) {
        ExitCode::SUCCESS
    } else {
        println!("soak FAILED (the device's log: kept in the output above only when a check failed)");
        for line in outcome
            .log
            .lines()
            .filter(|l| l.contains("ERROR") || l.contains("panicked"))
            .take(20)
        {
            println!("  {line}");
        }
        ExitCode::FAILURE
    }
}

fn usage(why: &str) -> ExitCode {
    eprintln!("lembas-soak: {why}\n{USAGE}");
    ExitCode::from(2)
}
