//! The one table the bench prints: each figure beside its same-run baseline, the ratio, the goal
//! and whether it was met.

use std::time::Duration;

pub struct Row {
    pub name: String,
    pub figure: String,
    pub baseline: String,
    /// figure ÷ baseline (or the reverse for throughputs), as the goal reads it.
    pub ratio: Option<f64>,
    pub goal: String,
    /// `None`: not judged (the figure could not be measured, or is informative only).
    pub met: Option<bool>,
    pub note: String,
}

impl Row {
    pub fn new(name: impl Into<String>, figure: impl Into<String>, baseline: impl Into<String>) -> Self {
        Row {
            name: name.into(),
            figure: figure.into(),
            baseline: baseline.into(),
            ratio: None,
            goal: String::new(),
            met: None,
            note: String::new(),
        }
    }

    pub fn ratio(mut self, ratio: f64) -> Self {
        self.ratio = Some(ratio);
        self
    }

    pub fn goal(mut self, goal: impl Into<String>, met: bool) -> Self {
        self.goal = goal.into();
        self.met = Some(met);
        self
    }

    pub fn note(mut self, note: impl Into<String>) -> Self {
        self.note = note.into();
        self
    }

    /// A row whose benchmark could not run: the table still has it, with the reason.
    pub fn failed(name: &str, error: &anyhow::Error) -> Self {
        Row::new(name, "error", "-").note(format!("{error:#}"))
    }
}

/// Milliseconds with three decimals (microsecond resolution).
pub fn ms(d: Duration) -> String {
    format!("{:.3} ms", d.as_secs_f64() * 1e3)
}

/// `figure - baseline` in milliseconds, signed: what the figure adds (or saves) over its baseline.
pub fn ms_added(figure: Duration, baseline: Duration) -> String {
    let added = (figure.as_secs_f64() - baseline.as_secs_f64()) * 1e3;
    format!("{added:+.3} ms")
}

/// Decimal megabytes, the unit the goals use.
pub fn mb(bytes: u64) -> String {
    format!("{:.1} MB", bytes as f64 / 1e6)
}

pub fn render(rows: &[Row]) -> String {
    let header = [
        "benchmark",
        "figure",
        "baseline (same run)",
        "ratio",
        "goal",
        "met",
        "note",
    ];
    let cells: Vec<[String; 7]> = rows
        .iter()
        .map(|row| {
            [
                row.name.clone(),
                row.figure.clone(),
                row.baseline.clone(),
                row.ratio
                    .map(|r| format!("{r:.2}x"))
                    .unwrap_or_else(|| "-".into()),
                if row.goal.is_empty() {
                    "-".into()
                } else {
                    row.goal.clone()
                },
                match row.met {
                    Some(true) => "yes".into(),
                    Some(false) => "NO".into(),
                    None => "-".into(),
                },
                row.note.clone(),
            ]
        })
        .collect();
    let mut widths: Vec<usize> = header.iter().map(|h| h.chars().count()).collect();
    for line in &cells {
        for (width, cell) in widths.iter_mut().zip(line) {
            *width = (*width).max(cell.chars().count());
        }
    }
    let format_line = |line: &[String]| {
        let padded: Vec<String> = line
            .iter()
            .zip(&widths)
            .map(|(cell, width)| format!("{cell:<width$}"))
            .collect();
        format!("| {} |\n", padded.join(" | "))
    };
    let mut out = format_line(&header.map(String::from));
    let rule: Vec<String> = widths.iter().map(|w| "-".repeat(*w)).collect();
    out.push_str(&format!("|-{}-|\n", rule.join("-|-")));
    for line in &cells {
        out.push_str(&format_line(line));
    }
    out
}
