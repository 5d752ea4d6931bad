//! The link's send side: bounded, with room kept for control messages. Answers and notifications
//! that matter go on the control lane; bulk output (terminal output) goes on the bulk lane, whose
//! small bound is what stops a flooding shell from being read while the link is behind. The writer
//! always drains control first, so bulk output never starves an answer. Control messages not yet
//! written are counted, so that an answer written straight onto the socket (the link's reader does,
//! when the writer is idle) never overtakes one queued before it.

use lembas_protocol::LinkMethod;
use serde_json::Value;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use tokio::sync::mpsc;

use crate::rpc;

/// Control messages waiting at most; a handler that finds it full waits (its own task, not the reader).
const CONTROL_BOUND: usize = 256;
/// Bulk frames waiting at most: a few coalesced chunks, so memory stays bounded under a flood.
const BULK_BOUND: usize = 4;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Closed;

impl std::fmt::Display for Closed {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("the link is closed")
    }
}

impl std::error::Error for Closed {}

/// The handle every handler sends through. Cheap to clone.
#[derive(Clone, Debug)]
pub struct Outbound {
    control: mpsc::Sender<String>,
    bulk: mpsc::Sender<String>,
    /// Control messages handed to the queue (or waiting for room in it) and not yet written.
    unwritten: Arc<AtomicUsize>,
}

/// The writer's end.
#[derive(Debug)]
pub struct OutboundQueue {
    control: mpsc::Receiver<String>,
    bulk: mpsc::Receiver<String>,
    unwritten: Arc<AtomicUsize>,
}

/// Which lane a queued frame came by.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Lane {
    Control,
    Bulk,
}

pub fn channel() -> (Outbound, OutboundQueue) {
    let (control, control_rx) = mpsc::channel(CONTROL_BOUND);
    let (bulk, bulk_rx) = mpsc::channel(BULK_BOUND);
    let unwritten = Arc::new(AtomicUsize::new(0));
    (
        Outbound {
            control,
            bulk,
            unwritten: unwritten.clone(),
        },
        OutboundQueue {
            control: control_rx,
            bulk: bulk_rx,
            unwritten,
        },
    )
}

impl Outbound {
    /// An answer or a notification that must not wait behind bulk output.
    pub async fn control(&self, text: String) -> Result<(), Closed> {
        self.unwritten.fetch_add(1, Ordering::SeqCst);
        let sent = self.control.send(text).await.map_err(|_| Closed);
        if sent.is_err() {
            self.unwritten.fetch_sub(1, Ordering::SeqCst);
        }
        sent
    }

    /// [`Outbound::control`] without waiting: the text back when the lane is full or closed.
    pub fn try_control(&self, text: String) -> Result<(), String> {
        self.unwritten.fetch_add(1, Ordering::SeqCst);
        self.control.try_send(text).map_err(|e| {
            self.unwritten.fetch_sub(1, Ordering::SeqCst);
            e.into_inner()
        })
    }

    /// Whether every control message sent so far has been written: only then may a message go
    /// straight onto the socket without overtaking one.
    pub fn control_written(&self) -> bool {
        self.unwritten.load(Ordering::SeqCst) == 0
    }

    /// Bulk output: waits while the link is behind (this wait is the backpressure).
    pub async fn bulk(&self, text: String) -> Result<(), Closed> {
        self.bulk.send(text).await.map_err(|_| Closed)
    }

    pub async fn notify(&self, method: LinkMethod, params: Value) -> Result<(), Closed> {
        self.control(rpc::notification(method.name(), params)).await
    }

    pub async fn answer(&self, id: &Value, result: Result<Value, rpc::RpcError>) -> Result<(), Closed> {
        self.control(rpc::answer(id, result)).await
    }

    pub fn is_closed(&self) -> bool {
        self.control.is_closed()
    }
}

impl OutboundQueue {
    /// A frame already waiting, control first, counted as written; for flushing before a close.
    pub fn try_next(&mut self) -> Option<String> {
        let (lane, text) = match self.control.try_recv() {
            Ok(text) => (Lane::Control, text),
            Err(_) => (Lane::Bulk, self.bulk.try_recv().ok()?),
        };
        self.written(lane);
        Some(text)
    }

    /// The next frame to write, counted as written: for a writer nothing else writes beside.
    pub async fn next(&mut self) -> Option<String> {
        let (lane, text) = self.next_frame().await?;
        self.written(lane);
        Some(text)
    }

    /// The next frame to write: control first, then bulk. `None` once every sender is gone. The
    /// caller says [`OutboundQueue::written`] once it is on the wire.
    pub async fn next_frame(&mut self) -> Option<(Lane, String)> {
        tokio::select! {
            biased;
            Some(text) = self.control.recv() => Some((Lane::Control, text)),
            Some(text) = self.bulk.recv() => Some((Lane::Bulk, text)),
            else => None,
        }
    }

    /// A frame from [`OutboundQueue::next_frame`] is written.
    pub fn written(&self, lane: Lane) {
        if lane == Lane::Control {
            self.unwritten.fetch_sub(1, Ordering::SeqCst);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn control_goes_before_waiting_bulk() {
        let (out, mut queue) = channel();
        for i in 0..BULK_BOUND {
            out.bulk(format!("bulk{i}")).await.unwrap();
        }
        // The bulk lane is full: a further bulk send waits, a control send does not.
        let blocked =
            tokio::time::timeout(std::time::Duration::from_millis(50), out.bulk("late".into())).await;
        assert!(blocked.is_err(), "bulk must wait while its lane is full");
        out.control("answer".into()).await.unwrap();
        assert_eq!(queue.next().await.as_deref(), Some("answer"));
        assert_eq!(queue.next().await.as_deref(), Some("bulk0"));
    }

    #[tokio::test]
    async fn control_counts_as_unwritten_until_the_writer_says_so() {
        let (out, mut queue) = channel();
        assert!(out.control_written());
        out.bulk("bulk".into()).await.unwrap();
        assert!(out.control_written(), "bulk output does not hold answers back");
        out.control("one".into()).await.unwrap();
        assert_eq!(out.try_control("two".into()), Ok(()));
        let (lane, text) = queue.next_frame().await.unwrap();
        assert_eq!((lane, text.as_str()), (Lane::Control, "one"));
        assert!(!out.control_written(), "taken off the queue is not yet written");
        queue.written(lane);
        assert!(!out.control_written());
        assert_eq!(queue.next().await.as_deref(), Some("two"));
        assert!(out.control_written());
    }

    #[tokio::test]
    async fn closes_when_senders_are_gone() {
        let (out, mut queue) = channel();
        drop(out);
        assert_eq!(queue.next().await, None);
    }
}
