//! Files made from these declarations, checked in and checked fresh by this crate's tests
//! (`LEMBAS_GENERATE=1 cargo test -p lembas-protocol` writes them again): the window's names as
//! TypeScript (`ui/src/protocol.ts`) and the method tables of `docs/protocol.md`.

use crate::{Capability, ControlMethod, ControlPush, Direction, LinkMethod, MethodKind, Reason};

/// The whole of `ui/src/protocol.ts`.
pub fn typescript() -> String {
    let mut out = String::from(
        "// Generated from crates/protocol (the wire, declared once); do not edit. A test checks it is\n\
         // fresh: `LEMBAS_GENERATE=1 cargo test -p lembas-protocol` writes it again.\n",
    );
    let unions = [
        (
            "A request to the device runtime's control socket.",
            "ControlMethod",
            ControlMethod::ALL.iter().map(|m| m.name()).collect(),
        ),
        (
            "A notification the runtime pushes to a subscription.",
            "ControlPushMethod",
            ControlPush::ALL.iter().map(|m| m.name()).collect(),
        ),
        (
            "The code in an error's `data.reason`.",
            "Reason",
            Reason::ALL.iter().map(|r| r.name()).collect(),
        ),
        (
            "A capability of the link, as `initialize` lists it.",
            "Capability",
            Capability::ALL.iter().map(|c| c.name()).collect(),
        ),
        (
            "A method of the link to the instance.",
            "LinkMethod",
            LinkMethod::ALL.iter().map(|m| m.name()).collect::<Vec<_>>(),
        ),
    ];
    for (doc, name, members) in unions {
        union(&mut out, doc, name, &members);
    }
    out
}

fn union(out: &mut String, doc: &str, name: &str, members: &[&str]) {
    out.push_str(&format!("\n/** {doc} */\nexport type {name} =\n"));
    for member in members {
        out.push_str(&format!("  | '{member}'\n"));
    }
    out.truncate(out.len() - 1);
    out.push_str(";\n");
}

/// Where the tables go in `docs/protocol.md`: between these two lines.
pub const TABLES_START: &str =
    "<!-- generated from crates/protocol: LEMBAS_GENERATE=1 cargo test -p lembas-protocol -->";
pub const TABLES_END: &str = "<!-- end of generated tables -->";

/// The method tables of `docs/protocol.md` (what lies between [`TABLES_START`] and
/// [`TABLES_END`]).
pub fn markdown_tables() -> String {
    let mut out = String::from("\n| Link method | Sent by | Answered | Capability |\n|---|---|---|---|\n");
    for m in LinkMethod::ALL {
        let by = match m.direction() {
            Direction::ToDevice => "the client",
            Direction::FromDevice => "the device",
        };
        let answered = match m.kind() {
            MethodKind::Request => "yes",
            MethodKind::Notification => "no",
        };
        let capability = m
            .capability()
            .map_or("(always)".to_string(), |c| format!("`{c}`"));
        out.push_str(&format!(
            "| `{}` | {by} | {answered} | {capability} |\n",
            m.name()
        ));
    }
    let joined = |names: Vec<&str>| {
        names
            .iter()
            .map(|n| format!("`{n}`"))
            .collect::<Vec<_>>()
            .join(", ")
    };
    out.push_str(&format!(
        "\nCapabilities this protocol names: {}. Served on the link only, never to an editor: {}.\n",
        joined(Capability::ALL.iter().map(|c| c.name()).collect()),
        joined(
            Capability::ALL
                .iter()
                .filter(|c| c.link_only())
                .map(|c| c.name())
                .collect()
        ),
    ));
    out.push_str(&format!(
        "\nControl socket requests: {}.\n\nControl socket pushes: {}.\n\n`data.reason` codes: {}.\n\n",
        joined(ControlMethod::ALL.iter().map(|m| m.name()).collect()),
        joined(ControlPush::ALL.iter().map(|m| m.name()).collect()),
        joined(Reason::ALL.iter().map(|r| r.name()).collect()),
    ));
    out
}
