//! `_lembas/directories` (capability `directories`): the folders a session could use, for the
//! client's folder picker. Every `accepted`/`reason` comes from the roots policy.

use lembas_protocol::directories::{Directories, DirectoriesParams, Directory};
use std::path::{Path, PathBuf};

use crate::policy::roots::{self, FolderRules};
use crate::rpc::RpcError;

fn name_of(path: &Path) -> String {
    path.file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| path.display().to_string())
}

fn dir(path: &Path, rules: &FolderRules) -> Directory {
    let verdict = match roots::resolve(path) {
        Ok(resolved) => roots::folder_verdict(&resolved, rules),
        Err(reason) => roots::Verdict {
            accepted: false,
            reason: Some(reason.to_string()),
        },
    };
    Directory {
        path: path.display().to_string(),
        name: name_of(path),
        accepted: verdict.accepted,
        reason: verdict.reason,
    }
}

pub fn handle(
    params: DirectoriesParams,
    configured_roots: &[PathBuf],
    rules: &FolderRules,
) -> Result<Directories, RpcError> {
    match params.path.filter(|p| !p.is_empty()) {
        None => Ok(places(configured_roots, rules)),
        Some(path) => listing(Path::new(&path), rules),
    }
}

/// The roots (as configured, a missing one with its reason) and every trusted folder inside them.
fn places(configured_roots: &[PathBuf], rules: &FolderRules) -> Directories {
    let mut places = Vec::new();
    if rules.enabled {
        places.extend(configured_roots.iter().map(|root| dir(root, rules)));
        for trusted in &rules.trusted {
            let inside = rules.roots.iter().any(|r| roots::is_within(trusted, r));
            if inside && !rules.roots.contains(trusted) {
                places.push(dir(trusted, rules));
            }
        }
    }
    Directories::Places {
        path: String::new(),
        places,
    }
}

fn listing(path: &Path, rules: &FolderRules) -> Result<Directories, RpcError> {
    if !path.is_absolute() {
        return Err(RpcError::invalid_params(format!(
            "{} is not an absolute path.",
            path.display()
        )));
    }
    let resolved = roots::resolve(path).map_err(|e| RpcError::invalid_params(e.to_string()))?;
    // Listing needs remote work on and the folder inside a root; trust decides only `accepted`.
    let verdict = roots::folder_verdict(&resolved, &rules.roots_only());
    if !verdict.accepted {
        return Err(RpcError::invalid_params(verdict.reason.unwrap_or_default()));
    }
    let folder = dir(&resolved, rules);
    let parent = resolved
        .parent()
        .filter(|p| rules.roots.iter().any(|r| roots::is_within(p, r)))
        .map(|p| p.display().to_string());
    let mut entries = Vec::new();
    let mut error = None;
    match std::fs::read_dir(&resolved) {
        Ok(read) => {
            let mut paths: Vec<PathBuf> = read
                .filter_map(Result::ok)
                .filter(|e| !e.file_name().to_string_lossy().starts_with('.'))
                .map(|e| e.path())
                .filter(|p| p.is_dir())
                .collect();
            paths.sort();
            entries.extend(paths.iter().map(|p| dir(p, rules)));
        }
        Err(e) => error = Some(format!("{} cannot be read: {e}.", resolved.display())),
    }
    Ok(Directories::Listing {
        folder,
        parent,
        entries,
        error,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rpc;
    use lembas_protocol::request::{self, method};
    use serde_json::{Value, json};

    /// As the dispatcher serves it: the params read, the answer written.
    fn handle(params: Value, configured_roots: &[PathBuf], rules: &FolderRules) -> Result<Value, RpcError> {
        let params = request::read(method::Directories, params)?;
        request::answer(super::handle(params, configured_roots, rules)?)
    }

    struct Tree {
        _tmp: tempfile::TempDir,
        root: PathBuf,
    }

    fn tree() -> Tree {
        let tmp = tempfile::tempdir().unwrap();
        let root = std::fs::canonicalize(tmp.path()).unwrap().join("work");
        for d in ["proj/src", "other", ".hidden"] {
            std::fs::create_dir_all(root.join(d)).unwrap();
        }
        std::fs::write(root.join("file.txt"), "x").unwrap();
        Tree { _tmp: tmp, root }
    }

    fn rules(t: &Tree, enabled: bool) -> FolderRules {
        FolderRules {
            enabled,
            roots: vec![t.root.clone()],
            trusted: vec![t.root.join("proj")],
            require_trust: true,
            home: PathBuf::from("/nonexistent-home"),
        }
    }

    #[test]
    fn places_list_roots_and_trusted_inside_them() {
        let t = tree();
        let missing = t.root.join("gone");
        let v = handle(json!({}), &[t.root.clone(), missing.clone()], &rules(&t, true)).unwrap();
        let places = v["places"].as_array().unwrap();
        assert_eq!(places.len(), 3, "{v}");
        assert_eq!(places[0]["accepted"], false); // the root itself is not trusted
        assert_eq!(places[1]["path"], missing.display().to_string());
        assert!(places[1]["reason"].as_str().unwrap().contains("does not exist"));
        assert_eq!(places[2]["path"], t.root.join("proj").display().to_string());
        assert_eq!(places[2]["accepted"], true);
        let off = handle(json!({}), std::slice::from_ref(&t.root), &rules(&t, false)).unwrap();
        assert_eq!(off, json!({ "path": "", "places": [] }));
    }

    #[test]
    fn listing_shows_folders_with_verdicts() {
        let t = tree();
        let v = handle(
            json!({ "path": t.root.display().to_string() }),
            &[],
            &rules(&t, true),
        )
        .unwrap();
        let names: Vec<&str> = v["entries"]
            .as_array()
            .unwrap()
            .iter()
            .map(|e| e["name"].as_str().unwrap())
            .collect();
        assert_eq!(names, ["other", "proj"]);
        assert_eq!(v["parent"], Value::Null);
        assert_eq!(v["entries"][1]["accepted"], true);
        let sub = handle(
            json!({ "path": t.root.join("proj/src").display().to_string() }),
            &[],
            &rules(&t, true),
        )
        .unwrap();
        assert_eq!(sub["parent"], t.root.join("proj").display().to_string());
        assert_eq!(sub["accepted"], true);
    }

    #[test]
    fn meta_is_taken_as_every_method_takes_it() {
        let t = tree();
        let root = t.root.display().to_string();
        let with = handle(
            json!({ "path": root, "_meta": { "traceId": "x" } }),
            &[],
            &rules(&t, true),
        )
        .unwrap();
        let without = handle(json!({ "path": root }), &[], &rules(&t, true)).unwrap();
        assert_eq!(with, without);
        handle(
            json!({ "_meta": null }),
            std::slice::from_ref(&t.root),
            &rules(&t, true),
        )
        .unwrap();
    }

    #[test]
    fn refusals_carry_the_reason() {
        let t = tree();
        let outside = t.root.parent().unwrap().display().to_string();
        let cases = [
            (json!({ "path": outside }), "outside the folders"),
            (json!({ "path": "relative/x" }), "not an absolute path"),
            (
                json!({ "path": t.root.join("nope").display().to_string() }),
                "does not exist",
            ),
            (json!({ "path": 5 }), "params of _lembas/directories"),
        ];
        for (params, reason) in cases {
            let e = handle(params.clone(), &[], &rules(&t, true)).unwrap_err();
            assert_eq!(e.code, rpc::INVALID_PARAMS);
            assert!(e.message.contains(reason), "{params}: {}", e.message);
        }
        let off = handle(
            json!({ "path": t.root.display().to_string() }),
            &[],
            &rules(&t, false),
        )
        .unwrap_err();
        assert!(off.message.contains("Remote work is off"));
        // A field it does not read is passed over, as every method does: no refusal.
        let places = handle(json!({}), &[], &rules(&t, true)).unwrap();
        let newer = handle(json!({ "paths": "/", "_meta": {} }), &[], &rules(&t, true)).unwrap();
        assert_eq!(newer, places);
    }
}
