//! A session's background jobs as data (docs/protocol.md "Background jobs"): each job's `JobInfo`,
//! the last `jobs.output_kept_bytes` of its output counted in characters, the model's read mark, and
//! what stops it; the finished ones beyond `jobs.finished_kept` are forgotten. Running them is
//! `engine::jobs`'s.

use lembas_protocol::jobs::{JobInfo, JobOutput, JobState};
use tokio::sync::{oneshot, watch};

use crate::policy::Mode;

/// Why the limits stopped a job, rather than someone's stop (docs/protocol.md "Background jobs": a
/// job obeys the limits at every moment). Its end note says it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LimitStop {
    /// Remote work was turned off (in the config, from any front end).
    RemoteOff,
    /// "Stop all remote work" was pressed.
    StopAll,
    /// The session's folder left the roots, or lost its trust, or became protected.
    FolderLeft,
    /// The mode fell to plan, whose commands only read, under a job started to write.
    ModeFellToPlan,
}

impl LimitStop {
    /// Why, as the job's end note gives it to the model ("stopped because …").
    pub fn says(self) -> &'static str {
        match self {
            LimitStop::RemoteOff => "remote work was turned off",
            LimitStop::StopAll => "the person pressed Stop all remote work",
            LimitStop::FolderLeft => "its session's folder is no longer one remote work may use",
            LimitStop::ModeFellToPlan => "the mode fell to plan, in which commands only read",
        }
    }
}

/// A job's output: the last part kept as text, with every character it ever wrote counted, so a
/// reader's `since` stays valid after the start is dropped.
#[derive(Default)]
pub struct Output {
    text: String,
    /// Characters dropped from the front.
    dropped: u64,
    /// Characters written in all.
    total: u64,
    /// The start of a character split between two reads.
    partial: Vec<u8>,
}

impl Output {
    /// Takes a chunk as read: UTF-8 decoded (invalid bytes as U+FFFD), the oldest text dropped past
    /// `keep` bytes.
    pub fn push(&mut self, bytes: &[u8], keep: usize) {
        let mut data = std::mem::take(&mut self.partial);
        data.extend_from_slice(bytes);
        let mut rest = &data[..];
        loop {
            match std::str::from_utf8(rest) {
                Ok(text) => {
                    self.append(text);
                    break;
                }
                Err(e) => {
                    let (valid, after) = rest.split_at(e.valid_up_to());
                    // Checked by from_utf8 just now.
                    self.append(std::str::from_utf8(valid).unwrap_or_default());
                    match e.error_len() {
                        Some(bad) => {
                            self.append("\u{FFFD}");
                            rest = &after[bad..];
                        }
                        None => {
                            self.partial = after.to_vec();
                            break;
                        }
                    }
                }
            }
        }
        self.trim(keep);
    }

    /// The output has ended: a character left unfinished is written as U+FFFD.
    pub fn close(&mut self, keep: usize) {
        if !std::mem::take(&mut self.partial).is_empty() {
            self.append("\u{FFFD}");
            self.trim(keep);
        }
    }

    fn append(&mut self, text: &str) {
        self.text.push_str(text);
        self.total += text.chars().count() as u64;
    }

    /// Drops the oldest text once it is a quarter past `keep`, down to `keep` (at a character's
    /// start), so a flood is not moved in memory at every read.
    fn trim(&mut self, keep: usize) {
        if self.text.len() <= keep + keep / 4 {
            return;
        }
        let mut cut = self.text.len() - keep;
        while !self.text.is_char_boundary(cut) {
            cut += 1;
        }
        self.dropped += self.text[..cut].chars().count() as u64;
        self.text.drain(..cut);
    }

    /// Characters written in all.
    pub fn length(&self) -> u64 {
        self.total
    }

    /// The text from character `since` (or from the oldest one kept).
    pub fn since(&self, since: u64) -> &str {
        let skip = since.saturating_sub(self.dropped);
        match self
            .text
            .char_indices()
            .nth(usize::try_from(skip).unwrap_or(usize::MAX))
        {
            Some((at, _)) => &self.text[at..],
            None => "",
        }
    }
}

/// One job of a session.
pub struct Job {
    pub info: JobInfo,
    output: Output,
    /// How far the model has read (characters).
    read: u64,
    /// Fires the stop; `None` once used, or for a job not running here.
    stop: Option<oneshot::Sender<()>>,
    /// Its state, for those waiting for it to end.
    ended: watch::Sender<JobState>,
    /// Output came since the last `update` event.
    news: bool,
    /// Started in a mode that writes: its box lets it write in the roots, so it needs such a mode
    /// for as long as it runs.
    writes: bool,
    /// Why the limits stopped it, when they did.
    stopped_by: Option<LimitStop>,
}

impl Job {
    /// Its `JobInfo` with `unread` as it is now.
    pub fn info(&self) -> JobInfo {
        let mut info = self.info.clone();
        info.unread = self.output.length().saturating_sub(self.read);
        info
    }

    /// What `_lembas/job/output` and `job_output` give from `since`.
    pub fn output_since(&self, since: u64) -> JobOutput {
        JobOutput {
            text: self.output.since(since).to_string(),
            length: self.output.length(),
            state: self.info.state,
        }
    }

    /// Its state, changing when it ends.
    pub fn ended(&self) -> watch::Receiver<JobState> {
        self.ended.subscribe()
    }

    /// The model read up to `to`.
    pub fn mark_read(&mut self, to: u64) {
        self.read = self.read.max(to);
    }
}

pub struct Board {
    /// In the order they started.
    jobs: Vec<Job>,
    /// How many finished jobs are listed (the decisions' `jobs.finished_kept`).
    finished_kept: usize,
    /// Notes of jobs that ended, not yet given to the model: `(job id, note)`.
    notes: Vec<(String, String)>,
}

impl Board {
    /// An empty board listing at most `finished_kept` finished jobs.
    pub fn keeping(finished_kept: usize) -> Board {
        Board {
            jobs: Vec::new(),
            finished_kept,
            notes: Vec::new(),
        }
    }

    /// A job's end to tell the model: at the next step of a running turn, or as a machine turn.
    pub fn note(&mut self, id: String, note: String) {
        self.notes.push((id, note));
    }

    pub fn has_notes(&self) -> bool {
        !self.notes.is_empty()
    }

    /// The notes not yet given to the model, taken.
    pub fn take_notes(&mut self) -> Vec<(String, String)> {
        std::mem::take(&mut self.notes)
    }

    pub fn running(&self) -> usize {
        self.jobs
            .iter()
            .filter(|j| j.info.state == JobState::Running)
            .count()
    }

    /// A job started in `mode`, and what stops it.
    pub fn add(&mut self, info: JobInfo, mode: Mode, stop: oneshot::Sender<()>) {
        self.jobs.push(Job {
            ended: watch::channel(info.state).0,
            info,
            output: Output::default(),
            read: 0,
            stop: Some(stop),
            news: false,
            writes: mode != Mode::Plan,
            stopped_by: None,
        });
    }

    pub fn get(&self, id: &str) -> Option<&Job> {
        self.jobs.iter().find(|j| j.info.id == id)
    }

    pub fn get_mut(&mut self, id: &str) -> Option<&mut Job> {
        self.jobs.iter_mut().find(|j| j.info.id == id)
    }

    /// Every job kept: the running ones first, then the finished ones, each in the order they
    /// started.
    pub fn list(&self) -> Vec<JobInfo> {
        let (running, finished): (Vec<&Job>, Vec<&Job>) =
            self.jobs.iter().partition(|j| j.info.state == JobState::Running);
        running.into_iter().chain(finished).map(Job::info).collect()
    }

    /// Asks a running job to stop; `false` when it has no stop to fire (not running here).
    pub fn stop(&mut self, id: &str) -> bool {
        match self.get_mut(id).and_then(|j| j.stop.take()) {
            Some(stop) => stop.send(()).is_ok(),
            None => false,
        }
    }

    /// Stops the running jobs the limits no longer allow (`why`): every one, or with the mode now
    /// `Plan`, those started to write. How many were stopped.
    pub fn stop_for_limits(&mut self, why: LimitStop) -> usize {
        let mut stopped = 0;
        for job in &mut self.jobs {
            if why == LimitStop::ModeFellToPlan && !job.writes {
                continue;
            }
            if let Some(stop) = job.stop.take() {
                job.stopped_by = Some(why);
                let _ = stop.send(());
                stopped += 1;
            }
        }
        stopped
    }

    /// The session's mode is now `mode`: in plan, the jobs started to write stop.
    pub fn hold_to_mode(&mut self, mode: Mode) {
        if mode == Mode::Plan {
            self.stop_for_limits(LimitStop::ModeFellToPlan);
        }
    }

    /// Stops every running job (the session is deleted).
    pub fn stop_all(&mut self) {
        for job in &mut self.jobs {
            if let Some(stop) = job.stop.take() {
                let _ = stop.send(());
            }
        }
    }

    /// Output the job wrote, kept (past `keep` bytes the oldest goes), and news to tell.
    pub fn keep_output(&mut self, id: &str, chunk: &[u8], keep: usize) {
        if let Some(job) = self.get_mut(id) {
            job.output.push(chunk, keep);
            job.news = true;
        }
    }

    /// The job as it is now when output came since its news was last taken; the news taken.
    pub fn take_news(&mut self, id: &str) -> Option<JobInfo> {
        let job = self.get_mut(id)?;
        std::mem::take(&mut job.news).then(|| job.info())
    }

    /// The job's command ended (or could not run): `said` (why, for the model) ends its output, the
    /// output is closed and the job finished as [`Board::finish`] does. Its `JobInfo` as it ended,
    /// and the limit that stopped it (only when it ended stopped: a limit's stop that came as the
    /// job ended by itself is no reason).
    pub fn end(
        &mut self,
        id: &str,
        said: Option<String>,
        keep: usize,
        state: JobState,
        exit: Option<i32>,
        ended: u64,
    ) -> Option<(JobInfo, Option<LimitStop>)> {
        let job = self.get_mut(id)?;
        if let Some(said) = said {
            job.output.push(format!("\n{said}\n").as_bytes(), keep);
        }
        job.output.close(keep);
        let stopped_by = job.stopped_by.filter(|_| state == JobState::Stopped);
        let info = self.finish(id, state, exit, ended)?;
        Some((info, stopped_by))
    }

    /// A job ended: its state and exit set, and the oldest finished ones past
    /// `jobs.finished_kept` forgotten. Its `JobInfo` as it ended (`None` for an id not here).
    pub fn finish(&mut self, id: &str, state: JobState, exit: Option<i32>, ended: u64) -> Option<JobInfo> {
        let info = self.get_mut(id).map(|job| {
            job.info.state = state;
            job.info.exit = exit;
            job.info.ended = Some(ended);
            job.stop = None;
            job.ended.send_replace(state);
            job.info()
        });
        let kept = self.finished_kept;
        let mut finished = self
            .jobs
            .iter()
            .filter(|j| j.info.state != JobState::Running)
            .count();
        self.jobs.retain(|j| {
            if finished > kept && j.info.state != JobState::Running {
                finished -= 1;
                return false;
            }
            true
        });
        info
    }

    /// The jobs a session file recorded (its `job` records, the last of each id winning): one that
    /// was running when the device's process ended is `lost`, its output gone with the process.
    pub fn replayed(records: Vec<JobInfo>, finished_kept: usize) -> Board {
        let mut board = Board::keeping(finished_kept);
        for mut info in records {
            if info.state == JobState::Running {
                info.state = JobState::Lost;
            }
            info.unread = 0;
            match board.get_mut(&info.id) {
                Some(job) => job.info = info,
                None => board.jobs.push(Job {
                    ended: watch::channel(info.state).0,
                    info,
                    output: Output::default(),
                    read: 0,
                    stop: None,
                    news: false,
                    writes: false,
                    stopped_by: None,
                }),
            }
        }
        let excess = board.jobs.len().saturating_sub(finished_kept);
        board.jobs.drain(..excess);
        board
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use lembas_protocol::jobs::JobKind;

    fn kept() -> usize {
        crate::decisions::Decisions::built_in().jobs.finished_kept
    }

    fn info(id: &str, state: JobState) -> JobInfo {
        JobInfo {
            id: id.into(),
            kind: JobKind::Command,
            state,
            description: "d".into(),
            command: Some("sleep 1".into()),
            started: 1,
            ended: None,
            exit: None,
            unread: 0,
        }
    }

    #[test]
    fn output_counts_characters_across_split_reads_and_drops_the_oldest() {
        let mut out = Output::default();
        let snowman = "☃".as_bytes();
        out.push(b"ab", 1000);
        out.push(&snowman[..1], 1000);
        assert_eq!((out.since(0), out.length()), ("ab", 2));
        out.push(&snowman[1..], 1000);
        out.push(b"\xffz", 1000);
        assert_eq!((out.since(0), out.length()), ("ab☃\u{FFFD}z", 5));
        assert_eq!(out.since(2), "☃\u{FFFD}z");
        assert_eq!(out.since(9), "");
        out.push(&snowman[..2], 1000);
        out.close(1000);
        assert_eq!(out.since(5), "\u{FFFD}");

        // Past a quarter over what is kept, the oldest goes; offsets stay those of the whole.
        let mut out = Output::default();
        out.push("x".repeat(10).as_bytes(), 8);
        assert_eq!(out.since(0), "x".repeat(10), "kept up to a quarter past");
        out.push(b"x", 8);
        assert_eq!((out.since(0), out.length()), ("xxxxxxxx", 11));
        out.push(b"0123", 8);
        assert_eq!((out.since(0), out.length()), ("xxxx0123", 15));
        assert_eq!(out.since(13), "23");
    }

    #[test]
    fn the_list_puts_running_first_and_keeps_only_so_many_finished() {
        let mut board = Board::keeping(kept());
        let kept = kept();
        for n in 0..kept + 3 {
            board.add(
                info(&format!("job_{n}"), JobState::Running),
                Mode::Auto,
                oneshot::channel().0,
            );
        }
        for n in 1..kept + 3 {
            board.finish(&format!("job_{n}"), JobState::Done, Some(0), 2);
        }
        let list = board.list();
        assert_eq!(list[0].id, "job_0");
        assert_eq!(list.len(), kept + 1);
        assert_eq!(list[1].id, "job_3", "the oldest finished went first");
        assert_eq!(board.running(), 1);
    }

    #[test]
    fn unread_is_what_the_model_has_not_read() {
        let mut board = Board::keeping(kept());
        board.add(info("job_a", JobState::Running), Mode::Auto, oneshot::channel().0);
        let job = board.get_mut("job_a").unwrap();
        job.output.push(b"hello", 100);
        assert_eq!(job.info().unread, 5);
        job.mark_read(3);
        job.mark_read(2);
        assert_eq!(job.info().unread, 2);
    }

    #[test]
    fn plan_stops_only_the_jobs_started_to_write_and_says_why() {
        let mut board = Board::keeping(kept());
        let (reading, mut reading_stop) = oneshot::channel();
        let (writing, mut writing_stop) = oneshot::channel();
        board.add(info("job_r", JobState::Running), Mode::Plan, reading);
        board.add(info("job_w", JobState::Running), Mode::Edit, writing);
        assert_eq!(board.stop_for_limits(LimitStop::ModeFellToPlan), 1);
        assert!(writing_stop.try_recv().is_ok());
        assert!(
            reading_stop.try_recv().is_err(),
            "a job that only reads runs on in plan"
        );
        let stopped_by = |board: &Board, id| board.get(id).and_then(|j| j.stopped_by);
        assert_eq!(stopped_by(&board, "job_w"), Some(LimitStop::ModeFellToPlan));
        assert_eq!(stopped_by(&board, "job_r"), None);

        // Remote work off stops the rest; a job already stopping keeps its first reason.
        assert_eq!(board.stop_for_limits(LimitStop::RemoteOff), 1);
        assert!(reading_stop.try_recv().is_ok());
        assert_eq!(stopped_by(&board, "job_r"), Some(LimitStop::RemoteOff));
        assert_eq!(stopped_by(&board, "job_w"), Some(LimitStop::ModeFellToPlan));
    }

    #[test]
    fn news_is_told_once_and_an_end_names_the_limit_only_when_it_stopped_the_job() {
        let mut board = Board::keeping(kept());
        board.add(info("job_a", JobState::Running), Mode::Edit, oneshot::channel().0);
        board.add(info("job_b", JobState::Running), Mode::Edit, oneshot::channel().0);
        assert_eq!(board.take_news("job_a"), None);
        board.keep_output("job_a", b"built", 100);
        assert_eq!(board.take_news("job_a").map(|i| i.unread), Some(5));
        assert_eq!(board.take_news("job_a"), None);

        board.stop_for_limits(LimitStop::ModeFellToPlan);
        let said = Some("the box refused a write".to_string());
        let (a, why) = board
            .end("job_a", said, 100, JobState::Stopped, None, 9)
            .expect("job_a is on the board");
        assert_eq!((a.state, a.ended), (JobState::Stopped, Some(9)));
        assert_eq!(why, Some(LimitStop::ModeFellToPlan));
        let output = board.get("job_a").expect("kept").output_since(0).text;
        assert_eq!(output, "built\nthe box refused a write\n");
        // Stopped by the limit, but it had ended by itself: no reason to give.
        let (_, why) = board
            .end("job_b", None, 100, JobState::Done, Some(0), 9)
            .expect("job_b is on the board");
        assert_eq!(why, None);
        assert!(
            board
                .end("job_c", None, 100, JobState::Done, Some(0), 9)
                .is_none()
        );
    }

    #[test]
    fn a_job_running_when_the_process_ended_is_lost() {
        let mut done = info("job_b", JobState::Done);
        (done.ended, done.exit, done.unread) = (Some(2), Some(3), 7);
        let records = vec![
            info("job_a", JobState::Running),
            info("job_b", JobState::Running),
            done,
        ];
        let board = Board::replayed(records, kept());
        let states: Vec<_> = board
            .list()
            .iter()
            .map(|j| (j.id.clone(), j.state, j.exit))
            .collect();
        assert_eq!(
            states,
            [
                ("job_a".to_string(), JobState::Lost, None),
                ("job_b".to_string(), JobState::Done, Some(3))
            ]
        );
    }
}
