//! What a control connection may reach in the runtime, handed to every handler (below the server
//! that accepts connections and the handlers that serve them).

use std::sync::{Arc, Mutex};
use tokio::sync::{broadcast, watch};

use crate::desktop_view::activity::Activity;
use crate::engine::Engine;
use crate::events::DeviceEvent;
use crate::status::Status;

/// What a connection may reach in the runtime.
#[derive(Clone)]
pub(crate) struct RuntimeHandles {
    pub status: watch::Receiver<Status>,
    pub events: broadcast::Sender<DeviceEvent>,
    pub engine: Engine,
    /// The remote terminals open on this computer (`terminals/*`).
    pub board: crate::terminal::board::Board,
    /// Ends the link at once (Stop all remote work), or dials again after a login.
    pub wake: broadcast::Sender<()>,
    /// The recent activity and what runs now, folded from the events (the window shows them).
    pub activity: Arc<Mutex<Activity>>,
    /// How this runtime names itself in the device lock.
    pub holder: String,
}
