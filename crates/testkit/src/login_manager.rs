//! A login manager (logind's `Inhibit`) and a power daemon (UPower's `OnBattery`) of the test's own,
//! on a private bus played by a real `dbus-daemon`: the device is pointed at it as its system bus
//! (`DBUS_SYSTEM_BUS_ADDRESS`). Each inhibitor is a pipe whose write end the device gets; the test
//! sees it released when the read end here reads end of file, as logind does.

use std::io::{BufRead, BufReader, Read};
use std::process::{Child, Command, Stdio};
use std::sync::{Arc, Mutex};

use zbus::zvariant::OwnedFd;

/// One `Inhibit` call, as the device made it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Inhibitor {
    pub what: String,
    pub who: String,
    pub why: String,
    pub mode: String,
    /// Whether the device still holds it (its end of the pipe open).
    pub held: bool,
}

type Inhibitors = Arc<Mutex<Vec<Inhibitor>>>;

struct Login1 {
    inhibitors: Inhibitors,
}

#[zbus::interface(name = "org.freedesktop.login1.Manager")]
impl Login1 {
    async fn inhibit(
        &self,
        what: String,
        who: String,
        why: String,
        mode: String,
    ) -> zbus::fdo::Result<OwnedFd> {
        let (mut reader, writer) = std::io::pipe().map_err(|e| zbus::fdo::Error::Failed(e.to_string()))?;
        let index = {
            let mut list = self.inhibitors.lock().unwrap_or_else(|p| p.into_inner());
            list.push(Inhibitor {
                what,
                who,
                why,
                mode,
                held: true,
            });
            list.len() - 1
        };
        let inhibitors = self.inhibitors.clone();
        // Nothing is ever written: a read returns when every copy of the write end is closed.
        std::thread::spawn(move || {
            let mut byte = [0u8; 1];
            while matches!(reader.read(&mut byte), Ok(n) if n > 0) {}
            if let Some(entry) = inhibitors
                .lock()
                .unwrap_or_else(|p| p.into_inner())
                .get_mut(index)
            {
                entry.held = false;
            }
        });
        Ok(OwnedFd::from(std::os::fd::OwnedFd::from(writer)))
    }
}

struct UPower {
    on_battery: bool,
}

#[zbus::interface(name = "org.freedesktop.UPower")]
impl UPower {
    #[zbus(property)]
    fn on_battery(&self) -> bool {
        self.on_battery
    }
}

/// The private bus with the fakes on it; dropped, the bus ends.
pub struct LoginManager {
    daemon: Child,
    address: String,
    inhibitors: Inhibitors,
    _bus: zbus::Connection,
}

impl LoginManager {
    /// Starts a bus and serves logind's manager and UPower (saying `on_battery`) on it.
    pub async fn start(on_battery: bool) -> anyhow::Result<LoginManager> {
        let mut daemon = Command::new("dbus-daemon")
            .args(["--session", "--nofork", "--print-address=1"])
            .stdout(Stdio::piped())
            .stdin(Stdio::null())
            .spawn()?;
        let mut address = String::new();
        if let Some(out) = daemon.stdout.take() {
            BufReader::new(out).read_line(&mut address)?;
        }
        let address = address.trim().to_string();
        anyhow::ensure!(!address.is_empty(), "dbus-daemon printed no address");
        let inhibitors = Inhibitors::default();
        let bus = zbus::connection::Builder::address(address.as_str())?
            .name("org.freedesktop.login1")?
            .name("org.freedesktop.UPower")?
            .serve_at(
                "/org/freedesktop/login1",
                Login1 {
                    inhibitors: inhibitors.clone(),
                },
            )?
            .serve_at("/org/freedesktop/UPower", UPower { on_battery })?
            .build()
            .await?;
        Ok(LoginManager {
            daemon,
            address,
            inhibitors,
            _bus: bus,
        })
    }

    /// What to set `DBUS_SYSTEM_BUS_ADDRESS` to.
    pub fn address(&self) -> &str {
        &self.address
    }

    /// Every `Inhibit` call so far, in order.
    pub fn inhibitors(&self) -> Vec<Inhibitor> {
        self.inhibitors.lock().unwrap_or_else(|p| p.into_inner()).clone()
    }

    /// How many inhibitors the device holds now.
    pub fn held(&self) -> usize {
        self.inhibitors().iter().filter(|i| i.held).count()
    }
}

impl Drop for LoginManager {
    fn drop(&mut self) {
        let _ = self.daemon.kill();
        let _ = self.daemon.wait();
    }
}
