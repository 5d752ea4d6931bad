//! The wire of LLeMbas Desktop, declared once. Everything that crosses a process boundary is
//! named here: JSON-RPC itself ([`rpc`]), the capabilities the device lists in `initialize`
//! ([`Capability`]), the methods of the link to the instance ([`LinkMethod`], docs/protocol.md) with
//! what each request takes and answers ([`request`]), what the device tells as a turn goes
//! (`session/update`, [`update`]; `_lembas/event`, [`event`]), the methods and pushes of the local
//! control socket ([`ControlMethod`], [`ControlPush`]) and the codes an
//! error carries in `data.reason` ([`Reason`]). The device routes on these enums, its clients (the
//! CLI, the tray, the window, the reference peer) call through them, and `ui/src/protocol.ts` and
//! the tables of `docs/protocol.md` are generated from them ([`generated`]), so a method is added in
//! one place.
//!
//! Adding a link method: one line in [`link`]'s table (its name, who sends it, request or
//! notification, the capability that lists it), its params and answer declared beside its family
//! ([`session`], [`terminal`]…) and bound to it with one line in [`request`]'s table; the compiler
//! then points at the one `match` in the device's dispatcher (or the engine's router) that must
//! serve it, with [`request::serve`].

pub mod ask;
mod capability;
pub mod card;
pub mod composer;
pub mod content;
pub mod context;
mod control;
pub mod directories;
mod effort;
pub mod elicitation;
pub mod event;
pub mod generated;
mod ids;
pub mod initialize;
pub mod jobs;
pub mod limits;
mod link;
pub mod mcp;
mod meta;
mod mode;
pub mod notices;
pub mod permission;
pub mod plan;
pub mod prompt;
mod reason;
pub mod request;
pub mod rpc;
pub mod scheduled;
pub mod session;
pub mod show;
pub mod status;
pub mod terminal;
pub mod update;
pub mod view;

pub use capability::Capability;
pub use control::{ControlMethod, ControlPush};
pub use effort::Effort;
pub use ids::{SessionId, TurnId};
pub use link::{Direction, LinkMethod, MethodKind};
pub use meta::LembasMeta;
pub use mode::Mode;
pub use reason::Reason;
pub use show::ShownKind;

/// A `match` from a wire name to its variant and back, for the method tables below.
macro_rules! named {
    ($(#[$meta:meta])* $vis:vis enum $name:ident { $($(#[$doc:meta])* $variant:ident = $wire:literal,)* }) => {
        $(#[$meta])*
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
        $vis enum $name { $($(#[$doc])* $variant,)* }

        impl $name {
            /// Every one, in declaration order.
            pub const ALL: &'static [$name] = &[$($name::$variant,)*];

            /// Its name on the wire.
            pub const fn name(self) -> &'static str {
                match self { $($name::$variant => $wire,)* }
            }

            /// The one of that name, if there is one.
            pub fn from_name(name: &str) -> Option<Self> {
                match name { $($wire => Some($name::$variant),)* _ => None }
            }
        }

        impl std::fmt::Display for $name {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str(self.name())
            }
        }

        impl serde::Serialize for $name {
            fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
                s.serialize_str(self.name())
            }
        }

        impl<'de> serde::Deserialize<'de> for $name {
            fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
                let name = <std::borrow::Cow<'de, str>>::deserialize(d)?;
                Self::from_name(&name).ok_or_else(|| {
                    serde::de::Error::custom(format!("{name:?} is not a known {}", stringify!($name)))
                })
            }
        }
    };
}
pub(crate) use named;
