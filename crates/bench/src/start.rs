//! Row 2: process start to `_lembas/hello` received, spawning the real `lembas service run`
//! (discovery, keychain and dial included), against spawning `true` and waiting for it.

use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use anyhow::Context;

use crate::device::DeviceHome;
use crate::instance::LeanInstance;
use crate::report::{Row, ms};
use crate::stats::{max, percentile};

pub const ROWS: [&str; 1] = ["Start -> hello"];
const GOAL: Duration = Duration::from_millis(150);
const WAIT: Duration = Duration::from_secs(10);

pub async fn run(instance: &mut LeanInstance, repeats: usize) -> anyhow::Result<Vec<Row>> {
    let home = DeviceHome::new(&instance.url(), |_| String::new())?;
    let (mut device, mut raw) = (Vec::new(), Vec::new());
    for _ in 0..repeats {
        instance.forget_links();
        let started = Instant::now();
        let process = home.spawn()?;
        let mut link = instance
            .next_link(WAIT)
            .await
            .with_context(|| format!("device log: {}", home.log()))?;
        link.hello(WAIT).await?;
        device.push(started.elapsed());
        drop(process);

        let started = Instant::now();
        Command::new("true")
            .stdin(Stdio::null())
            .status()
            .context("cannot run true")?;
        raw.push(started.elapsed());
    }
    let figure = percentile(&device, 50.0);
    let baseline = percentile(&raw, 50.0);
    Ok(vec![
        Row::new(ROWS[0], ms(figure), format!("spawn true {}", ms(baseline)))
            .ratio(figure.as_secs_f64() / baseline.as_secs_f64().max(1e-9))
            .goal("<= 150 ms", figure <= GOAL)
            .note(format!("median of {repeats}, worst {}", ms(max(&device)))),
    ])
}
