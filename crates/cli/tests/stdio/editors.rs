//! The entries that start `lembas serve --stdio`: the ACP registry's manifest
//! (packaging/acp-registry/agent.json, read as the registry's schema has it) and each editor's in
//! docs/using.md, each tried with the official ACP SDK as the editor.

use super::*;
use common::acp_sdk::{installed_sdk, run_script};
use serde::Deserialize;
use std::collections::BTreeMap;
use std::path::PathBuf;

fn repository() -> PathBuf {
    PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/../.."))
}

/// The registry's manifest, as far as its schema goes: no field it does not know.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct Manifest {
    id: String,
    name: String,
    version: String,
    description: String,
    authors: Vec<String>,
    license: String,
    distribution: Distribution,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct Distribution {
    binary: BTreeMap<String, BinaryTarget>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct BinaryTarget {
    archive: String,
    cmd: String,
    #[serde(default)]
    args: Vec<String>,
}

/// The platforms the registry knows.
const PLATFORMS: [&str; 6] = [
    "darwin-aarch64",
    "darwin-x86_64",
    "linux-aarch64",
    "linux-x86_64",
    "windows-aarch64",
    "windows-x86_64",
];

fn manifest() -> Manifest {
    let text = std::fs::read_to_string(repository().join("packaging/acp-registry/agent.json")).unwrap();
    serde_json::from_str(&text).unwrap_or_else(|e| panic!("agent.json is not the registry's shape: {e}"))
}

#[test]
fn the_registry_entry_is_the_registry_s_shape_and_this_build_s() {
    let manifest = manifest();
    let mut id = manifest.id.chars();
    assert!(
        id.next().is_some_and(|c| c.is_ascii_lowercase())
            && id.all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-'),
        "the registry's ids are lowercase letters, digits and hyphens: {}",
        manifest.id
    );
    assert!(!manifest.name.is_empty() && !manifest.description.is_empty());
    assert!(!manifest.authors.is_empty());
    assert_eq!(
        manifest.version,
        env!("CARGO_PKG_VERSION"),
        "bump agent.json with the workspace"
    );
    assert_eq!(manifest.license, "MIT", "the workspace's license");
    assert!(!manifest.distribution.binary.is_empty());
    for (platform, target) in &manifest.distribution.binary {
        assert!(PLATFORMS.contains(&platform.as_str()), "{platform}");
        assert!(
            target.archive.starts_with("https://") && target.archive.contains(&manifest.version),
            "{platform}: the archive of this version: {}",
            target.archive
        );
        let program = target.cmd.trim_end_matches(".exe");
        assert!(
            program.ends_with("/lembas") || program == "lembas",
            "{platform}: {}",
            target.cmd
        );
        assert_eq!(target.args, ["serve", "--stdio"], "{platform}");
    }
}

/// Each editor's entry in docs/using.md ("In an editor"): the editor, its command and its
/// arguments, read from its code block (JSON, Lua or Emacs Lisp).
fn documented_entries() -> Vec<(String, String, Vec<String>)> {
    let doc = std::fs::read_to_string(repository().join("docs/using.md")).unwrap();
    let start = doc
        .find("## In an editor")
        .expect("docs/using.md has \"In an editor\"");
    let section = &doc[start..];
    let section = &section[..section[3..].find("\n## ").map_or(section.len(), |end| end + 3)];
    let quoted =
        |text: &str| -> Vec<String> { text.split('"').skip(1).step_by(2).map(str::to_string).collect() };
    let mut entries = Vec::new();
    for part in section.split("\n### ").skip(1) {
        let editor = part.lines().next().unwrap_or_default().to_string();
        let Some(open) = part.find("```") else { continue };
        let block = &part[open + 3..];
        let (language, body) = block.split_once('\n').unwrap();
        let body = &body[..body.find("```").unwrap()];
        let (command, args) = match language {
            "json" => {
                let config: Value = serde_json::from_str(body).unwrap_or_else(|e| panic!("{editor}: {e}"));
                let entry = &config["agent_servers"]["LLeMbas"];
                let args = entry["args"].as_array().unwrap().iter();
                (
                    entry["command"].as_str().unwrap().to_string(),
                    args.map(|a| a.as_str().unwrap().to_string()).collect(),
                )
            }
            "lua" => {
                let start = body.find("commands = { default = {").unwrap();
                let line = &body[start..body[start..].find('}').unwrap() + start];
                let mut argv = quoted(line);
                (argv.remove(0), argv)
            }
            "elisp" => {
                let command = &body[body.find(":command \"").unwrap() + ":command ".len()..];
                let params = &body[body.find(":command-params '(").unwrap()..];
                let params = &params[..params.find(')').unwrap()];
                (quoted(command).remove(0), quoted(params))
            }
            other => panic!("{editor}: a {other} block"),
        };
        entries.push((editor, command, args));
    }
    entries
}

#[tokio::test(flavor = "multi_thread")]
async fn every_editor_s_entry_and_the_registry_s_start_the_agent_for_the_sdk() {
    let entries = documented_entries();
    let editors: Vec<&str> = entries.iter().map(|(editor, ..)| editor.as_str()).collect();
    assert_eq!(
        editors,
        [
            "Zed",
            "JetBrains IDEs",
            "Neovim (CodeCompanion)",
            "Emacs (`acp.el`)"
        ]
    );
    let mut starts: Vec<(String, Vec<String>)> = entries
        .into_iter()
        .map(|(editor, command, args)| {
            assert_eq!(command, "lembas", "{editor}");
            (editor, args)
        })
        .collect();
    for (platform, target) in manifest().distribution.binary {
        starts.push((format!("the registry ({platform})"), target.args));
    }

    let dir = installed_sdk();
    let (_peer, home) = logged_in().await;
    for (entry, args) in starts {
        let args = serde_json::to_string(&args).unwrap();
        let (seen, stderr) = run_script(&dir, &home, "entry.mjs", &[args.as_ref()]);
        validate_acp("InitializeResponse", &seen["initialize"]).unwrap();
        assert_eq!(
            seen["initialize"]["authMethods"][0]["id"], "lembas-login",
            "{entry}: {seen}"
        );
        assert!(seen["listed"]["sessions"].is_array(), "{entry}: {seen}");
        assert_eq!(
            seen["exit"],
            json!({ "code": 0, "signal": null }),
            "{entry}: {stderr}"
        );
    }
}
