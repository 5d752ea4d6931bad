//! The link's send side: bounded, with room kept for control messages. Answers and notifications
//! that matter go on the control lane; bulk output (terminal output) goes on the bulk lane, whose
//! small bound is what stops a flooding shell from being read while the link is behind. The writer
//! always drains control first, so bulk output never starves an answer.

use serde_json::Value;
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
}

/// The writer's end.
#[derive(Debug)]
pub struct OutboundQueue {
    control: mpsc::Receiver<String>,
    bulk: mpsc::Receiver<String>,
}

pub fn channel() -> (Outbound, OutboundQueue) {
    let (control, control_rx) = mpsc::channel(CONTROL_BOUND);
    let (bulk, bulk_rx) = mpsc::channel(BULK_BOUND);
    (
        Outbound { control, bulk },
        OutboundQueue {
            control: control_rx,
            bulk: bulk_rx,
        },
    )
}

impl Outbound {
    /// An answer or a notification that must not wait behind bulk output.
    pub async fn control(&self, text: String) -> Result<(), Closed> {
        self.control.send(text).await.map_err(|_| Closed)
    }

    /// Bulk output: waits while the link is behind (this wait is the backpressure).
    pub async fn bulk(&self, text: String) -> Result<(), Closed> {
        self.bulk.send(text).await.map_err(|_| Closed)
    }

    pub async fn notify(&self, method: &str, params: Value) -> Result<(), Closed> {
        self.control(rpc::notification(method, params)).await
    }

    pub async fn answer(&self, id: &Value, result: Result<Value, rpc::RpcError>) -> Result<(), Closed> {
        self.control(rpc::answer(id, result)).await
    }

    pub fn is_closed(&self) -> bool {
        self.control.is_closed()
    }
}

impl OutboundQueue {
    /// A frame already waiting, control first; for flushing before a close.
    pub fn try_next(&mut self) -> Option<String> {
        self.control.try_recv().or_else(|_| self.bulk.try_recv()).ok()
    }

    /// The next frame to write: control first, then bulk. `None` once every sender is gone.
    pub async fn next(&mut self) -> Option<String> {
        tokio::select! {
            biased;
            Some(text) = self.control.recv() => Some(text),
            Some(text) = self.bulk.recv() => Some(text),
            else => None,
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
    async fn closes_when_senders_are_gone() {
        let (out, mut queue) = channel();
        drop(out);
        assert_eq!(queue.next().await, None);
    }
}
