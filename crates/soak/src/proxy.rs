//! The fault-injecting TCP proxy on loopback, between the device and the peer. Plain HTTP
//! connections (discovery, the model) are carried untouched; a connection that starts with the
//! link's upgrade request is a link connection, and only those are cut and stalled: cut now, cut
//! after a random number of bytes of the next chunk in one direction (mid-frame), or stalled both
//! ways for a while with the sockets kept open (a sleeping laptop). Every link connection's
//! opening and end are recorded, for the backoff check.

use std::net::SocketAddr;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use lembas_device::poison::Recover;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;
use tokio::net::tcp::{OwnedReadHalf, OwnedWriteHalf};
use tokio::sync::watch;
use tokio::time::Instant;

/// Which way bytes flow.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Direction {
    DeviceToPeer,
    PeerToDevice,
}

/// One link connection as the proxy saw it.
#[derive(Debug, Clone)]
pub struct LinkSpan {
    pub opened: Instant,
    pub ended: Option<Instant>,
    /// The proxy cut it (rather than one of the ends closing it).
    pub cut: bool,
}

/// A link connection being carried.
struct Carried {
    index: usize,
    kill: watch::Sender<bool>,
    /// Cut after this many bytes of the next chunk flowing this way.
    cut_after: Mutex<Option<(Direction, usize)>>,
}

#[derive(Default)]
struct Shared {
    spans: Mutex<Vec<LinkSpan>>,
    carried: Mutex<Vec<Arc<Carried>>>,
    /// Link bytes wait until this moment, both ways.
    stalled_until: Mutex<Option<Instant>>,
}

pub struct Proxy {
    pub addr: SocketAddr,
    shared: Arc<Shared>,
}

/// The upgrade request's start, as the device's dial writes it.
const LINK_REQUEST: &[u8] = b"GET /api/devices/link";

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().recover()
}

impl Proxy {
    pub async fn start(target: SocketAddr) -> anyhow::Result<Proxy> {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await?;
        let addr = listener.local_addr()?;
        let shared = Arc::new(Shared::default());
        let accepting = shared.clone();
        tokio::spawn(async move {
            while let Ok((inbound, _)) = listener.accept().await {
                tokio::spawn(carry(inbound, target, accepting.clone()));
            }
        });
        Ok(Proxy { addr, shared })
    }

    pub fn url(&self) -> String {
        format!("http://{}", self.addr)
    }

    /// Every link connection so far, in the order they opened.
    pub fn spans(&self) -> Vec<LinkSpan> {
        lock(&self.shared.spans).clone()
    }

    /// Cuts every link connection now, without a close frame.
    pub fn cut(&self) {
        for carried in lock(&self.shared.carried).iter() {
            self.mark_cut(carried.index);
            let _ = carried.kill.send(true);
        }
    }

    /// Arms every open link connection to forward only `1..len` bytes of the next chunk flowing
    /// `direction` and then be cut: the stream ends inside a frame.
    pub fn cut_mid_frame(&self, direction: Direction) {
        for carried in lock(&self.shared.carried).iter() {
            *lock(&carried.cut_after) = Some((direction, 0));
        }
    }

    /// Holds link bytes both ways for `pause`, the sockets kept open.
    pub fn stall(&self, pause: Duration) {
        *lock(&self.shared.stalled_until) = Some(Instant::now() + pause);
    }

    fn mark_cut(&self, index: usize) {
        if let Some(span) = lock(&self.shared.spans).get_mut(index) {
            span.cut = true;
        }
    }
}

async fn carry(mut inbound: TcpStream, target: SocketAddr, shared: Arc<Shared>) {
    let Ok(mut outbound) = TcpStream::connect(target).await else {
        // The peer is down: the device sees its connection refused-like (closed at once).
        return;
    };
    let _ = inbound.set_nodelay(true);
    let _ = outbound.set_nodelay(true);
    // The first bytes say what this connection is.
    let mut first = vec![0u8; 4096];
    let n = match inbound.read(&mut first).await {
        Ok(0) | Err(_) => return,
        Ok(n) => n,
    };
    first.truncate(n);
    if outbound.write_all(&first).await.is_err() {
        return;
    }
    if !first.starts_with(LINK_REQUEST) {
        let _ = tokio::io::copy_bidirectional(&mut inbound, &mut outbound).await;
        return;
    }
    let (kill, killed) = watch::channel(false);
    let carried = {
        let mut spans = lock(&shared.spans);
        spans.push(LinkSpan {
            opened: Instant::now(),
            ended: None,
            cut: false,
        });
        Arc::new(Carried {
            index: spans.len() - 1,
            kill,
            cut_after: Mutex::new(None),
        })
    };
    lock(&shared.carried).push(carried.clone());
    let (ri, wi) = inbound.into_split();
    let (ro, wo) = outbound.into_split();
    let up = pump(
        ri,
        wo,
        Direction::DeviceToPeer,
        carried.clone(),
        shared.clone(),
        killed.clone(),
    );
    let down = pump(
        ro,
        wi,
        Direction::PeerToDevice,
        carried.clone(),
        shared.clone(),
        killed,
    );
    // Either way ending ends the connection: a half-open link is not what a drop looks like.
    tokio::select! {
        _ = up => {}
        _ = down => {}
    }
    lock(&shared.carried).retain(|c| !Arc::ptr_eq(c, &carried));
    if let Some(span) = lock(&shared.spans).get_mut(carried.index) {
        span.ended = Some(Instant::now());
    }
    // Dropping both halves here closes both sockets.
}

async fn pump(
    mut from: OwnedReadHalf,
    mut to: OwnedWriteHalf,
    direction: Direction,
    carried: Arc<Carried>,
    shared: Arc<Shared>,
    mut killed: watch::Receiver<bool>,
) {
    let mut buf = vec![0u8; 16 * 1024];
    loop {
        let mut n = tokio::select! {
            read = from.read(&mut buf) => match read {
                Ok(0) | Err(_) => return,
                Ok(n) => n,
            },
            _ = killed.wait_for(|k| *k) => return,
        };
        // A stall holds what was read until it is over (and any later stall after it), still
        // reading meanwhile so an end that closes its socket during the stall ends the connection
        // then, as the device's own close would on a real network.
        loop {
            let until = *lock(&shared.stalled_until);
            match until {
                Some(until) if until > Instant::now() => {
                    if n == buf.len() {
                        buf.resize(n * 2, 0);
                    }
                    tokio::select! {
                        _ = tokio::time::sleep_until(until) => {}
                        _ = killed.wait_for(|k| *k) => return,
                        read = from.read(&mut buf[n..]) => match read {
                            Ok(0) | Err(_) => return,
                            Ok(more) => n += more,
                        },
                    }
                }
                _ => break,
            }
        }
        let armed = {
            let mut cut = lock(&carried.cut_after);
            match *cut {
                Some((d, _)) if d == direction => cut.take(),
                _ => None,
            }
        };
        if armed.is_some() {
            // Forward a strict prefix of this chunk, then cut: the other end gets part of a frame.
            let keep = if n > 1 { fastrand::usize(1..n) } else { 0 };
            let _ = to.write_all(&buf[..keep]).await;
            let _ = to.flush().await;
            if let Some(span) = lock(&shared.spans).get_mut(carried.index) {
                span.cut = true;
            }
            let _ = carried.kill.send(true);
            return;
        }
        if to.write_all(&buf[..n]).await.is_err() {
            return;
        }
    }
}
