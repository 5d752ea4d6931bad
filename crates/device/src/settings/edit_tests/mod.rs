use super::*;
use crate::settings::{Server, load_from};
use std::fs;
use std::os::unix::fs::{PermissionsExt, symlink};
use std::time::{Duration, Instant};

mod writers;

/// A home no test's folder is in: these tests write absolute paths, so `~` means nothing to them.
fn no_home() -> &'static Path {
    Path::new("/home/nobody-here")
}

/// A folder with real sub-folders `a`, `b`, `c` and a file `f`, its path resolved.
struct Home {
    _dir: tempfile::TempDir,
    root: PathBuf,
}

impl Home {
    fn new() -> Self {
        let dir = tempfile::tempdir().unwrap();
        let root = fs::canonicalize(dir.path()).unwrap();
        for sub in ["a", "b", "c", "conf"] {
            fs::create_dir(root.join(sub)).unwrap();
        }
        fs::write(root.join("f"), "not a folder").unwrap();
        Self { _dir: dir, root }
    }

    fn at(&self, name: &str) -> PathBuf {
        self.root.join(name)
    }

    fn s(&self, name: &str) -> String {
        self.at(name).to_str().unwrap().to_owned()
    }

    fn config(&self) -> PathBuf {
        self.at("conf/config.yaml")
    }
}

/// `text` with the single occurrence of `from` replaced by `to`.
fn replace_once(text: &str, from: &str, to: &str) -> String {
    assert_eq!(
        text.matches(from).count(),
        1,
        "{from:?} should occur once in:\n{text}"
    );
    text.replacen(from, to, 1)
}

fn read(path: &Path) -> String {
    fs::read_to_string(path).unwrap()
}

fn leftovers(dir: &Path) -> Vec<String> {
    fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.ends_with(".tmp"))
        .collect()
}

const BASE: &str = "\
# LLeMbas device config, written by hand.

server:
  url: https://old.example   # the instance
  connection: conn-1

future_top: keep me   # a key from a newer version
remote:
  enabled: false  # off for now
  unknown_inner: [1, 2]
  roots:
    - ROOT_A
    # a comment between items
    - ROOT_B
  max_mode: plan

# trusted projects
trusted:
  - ROOT_A

permissions:
  bash:
    allow: [\"git status\"]   # keep
";

#[test]
fn every_change_edits_only_its_value() {
    let home = Home::new();
    let (a, b, c) = (home.s("a"), home.s("b"), home.s("c"));
    symlink(home.at("a"), home.at("link-a")).unwrap();
    symlink(home.at("c"), home.at("link-c")).unwrap();
    let path = home.config();
    let mut expected = BASE.replace("ROOT_A", &a).replace("ROOT_B", &b);
    fs::write(&path, &expected).unwrap();

    let mut step = |changes: &[Change], from: &str, to: &str| {
        if !from.is_empty() {
            expected = replace_once(&expected, from, to);
        }
        let settings = apply_to(&path, no_home(), changes).unwrap();
        assert_eq!(read(&path), expected, "after {changes:?}");
        assert_eq!(settings, load_from(&path, no_home()).unwrap());
        settings
    };

    let s = step(
        &[Change::RemoteEnabled(true)],
        "enabled: false  #",
        "enabled: true  #",
    );
    assert!(s.remote.enabled);
    // Through a symlink: stored as the folder it resolves to.
    let s = step(
        &[Change::AddRoot(home.at("link-c"))],
        &format!("    - {b}\n"),
        &format!("    - {b}\n    - {c}\n"),
    );
    assert_eq!(s.remote.roots, [home.at("a"), home.at("b"), home.at("c")]);
    step(&[Change::AddRoot(home.at("b"))], "", "");
    step(&[Change::AddRoot(home.at("link-c"))], "", "");
    let s = step(
        &[Change::RemoveRoot(home.at("a"))],
        &format!("  roots:\n    - {a}\n"),
        "  roots:\n",
    );
    assert_eq!(s.remote.roots, [home.at("b"), home.at("c")]);
    let s = step(&[Change::MaxMode(Mode::Auto)], "max_mode: plan", "max_mode: auto");
    assert_eq!(s.remote.max_mode, Mode::Auto);
    let s = step(
        &[Change::RequireTrust(false)],
        "max_mode: auto\n",
        "max_mode: auto\n  require_trust: false\n",
    );
    assert!(!s.remote.require_trust);
    let s = step(
        &[
            Change::Terminal(true),
            Change::TerminalIntegration(false),
            Change::Scheduled(true),
        ],
        "require_trust: false\n",
        "require_trust: false\n  terminal: true\n  terminal_integration: false\n  scheduled: true\n",
    );
    assert!(s.remote.terminal && !s.remote.terminal_integration && s.remote.scheduled);
    assert_eq!(s.remote.keep_awake, KeepAwakeSetting::OnPower);
    let s = step(
        &[Change::KeepAwake(KeepAwakeSetting::Never)],
        "  scheduled: true\n",
        "  scheduled: true\n  keep_awake: never\n",
    );
    assert_eq!(s.remote.keep_awake, KeepAwakeSetting::Never);
    let s = step(
        &[Change::KeepAwake(KeepAwakeSetting::Always)],
        "keep_awake: never",
        "keep_awake: always",
    );
    assert_eq!(s.remote.keep_awake, KeepAwakeSetting::Always);
    let s = step(
        &[Change::Trust(home.at("b"))],
        &format!("  - {a}\n"),
        &format!("  - {a}\n  - {b}\n"),
    );
    assert_eq!(s.trusted, [home.at("a"), home.at("b")]);
    // Named through a symlink: matched by where it resolves.
    let s = step(
        &[Change::Untrust(home.at("link-a"))],
        &format!("trusted:\n  - {a}\n"),
        "trusted:\n",
    );
    assert_eq!(s.trusted, [home.at("b")]);
    let s = step(
        &[Change::SetServer {
            url: "https://new.example/x".into(),
            connection: None,
        }],
        "  url: https://old.example   # the instance\n  connection: conn-1\n",
        "  url: https://new.example/x   # the instance\n",
    );
    assert_eq!(
        s.server,
        Some(Server {
            url: "https://new.example/x".into(),
            connection: None
        })
    );
    let s = step(
        &[Change::SetEmbeddingIfUnset("conn-1/nomic".into())],
        "# keep\n",
        "# keep\nembedding: conn-1/nomic\n",
    );
    assert_eq!(s.embedding.as_deref(), Some("conn-1/nomic"));
    step(&[Change::SetEmbeddingIfUnset("other/model".into())], "", "");
    let s = step(
        &[Change::ClearServer],
        "server:\n  url: https://new.example/x   # the instance\n",
        "",
    );
    assert_eq!(s.server, None);
    step(&[Change::ClearServer], "", "");

    // What was never touched is still there, word for word.
    let text = read(&path);
    for kept in [
        "# LLeMbas device config, written by hand.\n\n",
        "future_top: keep me   # a key from a newer version\n",
        "  unknown_inner: [1, 2]\n",
        "    # a comment between items\n",
        "\n# trusted projects\n",
        "permissions:\n  bash:\n    allow: [\"git status\"]   # keep\n",
    ] {
        assert!(text.contains(kept), "{kept:?} was lost:\n{text}");
    }
    assert_eq!(
        load_from(&path, no_home()).unwrap().permissions.bash.allow,
        ["git status"]
    );
}

#[test]
fn a_missing_file_and_folder_are_created_private() {
    let home = Home::new();
    let path = home.at("new/deeper/config.yaml");
    let a = home.s("a");
    let settings = apply_to(
        &path,
        no_home(),
        &[
            Change::SetServer {
                url: "https://x.example".into(),
                connection: Some("c1".into()),
            },
            Change::RemoteEnabled(true),
            Change::AddRoot(home.at("a")),
            Change::Trust(home.at("a")),
            Change::SetEmbeddingIfUnset("c1/m".into()),
        ],
    )
    .unwrap();
    assert_eq!(
        read(&path),
        format!(
            "server:\n  url: https://x.example\n  connection: c1\nremote:\n  enabled: true\n  roots:\n    \
             - {a}\ntrusted:\n  - {a}\nembedding: c1/m\n"
        )
    );
    assert!(settings.remote.enabled);
    assert_eq!(settings.remote.roots, [home.at("a")]);
    assert_eq!(fs::metadata(&path).unwrap().permissions().mode() & 0o777, 0o600);
    for dir in ["new", "new/deeper"] {
        assert_eq!(
            fs::metadata(home.at(dir)).unwrap().permissions().mode() & 0o777,
            0o700,
            "{dir}"
        );
    }
    assert!(leftovers(&home.at("new/deeper")).is_empty());
}

#[test]
fn nothing_to_change_writes_nothing() {
    let home = Home::new();
    let path = home.config();
    let settings = apply_to(&path, no_home(), &[Change::ClearServer]).unwrap();
    let defaults = Settings {
        home: no_home().to_path_buf(),
        ..Settings::default()
    };
    assert_eq!(settings, defaults);
    assert!(!path.exists(), "a no-op must not create the file");
}

#[test]
fn a_file_with_only_comments_keeps_them() {
    let home = Home::new();
    let path = home.config();
    fs::write(&path, "# just a comment\n\n").unwrap();
    apply_to(&path, no_home(), &[Change::RemoteEnabled(true)]).unwrap();
    assert_eq!(read(&path), "# just a comment\n\nremote:\n  enabled: true\n");
}

#[test]
fn keys_are_added_to_a_block_that_lacks_them() {
    let home = Home::new();
    let path = home.config();
    let b = home.s("b");
    fs::write(
        &path,
        "remote:   # remote work\n    enabled: true\n\n# the end\nother: 1\n",
    )
    .unwrap();
    apply_to(
        &path,
        no_home(),
        &[Change::AddRoot(home.at("b")), Change::MaxMode(Mode::Plan)],
    )
    .unwrap();
    assert_eq!(
        read(&path),
        format!(
            "remote:   # remote work\n    enabled: true\n    roots:\n      - {b}\n    max_mode: plan\n\n# the \
             end\nother: 1\n"
        )
    );
}

#[test]
fn an_invalid_file_is_named_by_line_and_left_alone() {
    let home = Home::new();
    let path = home.config();
    for (text, line) in [
        ("# header\nremote:\n  enabled: true\n  max_mode: sideways\n", 4),
        ("remote:\n  enabled: maybe\n", 2),
        ("remote:\n  enabled: true\n  roots: [\n", 4),
        ("trusted:\n  - /a\n - /b\n", 3),
    ] {
        fs::write(&path, text).unwrap();
        let error = apply_to(&path, no_home(), &[Change::RemoteEnabled(false)]).unwrap_err();
        match &error {
            SettingsError::Invalid { line: Some(l), .. } => assert_eq!(*l, line, "{text:?}: {error}"),
            other => panic!("{text:?}: expected Invalid with a line, got {other:?}"),
        }
        assert!(error.to_string().contains(&format!("line {line}")), "{error}");
        assert_eq!(read(&path), text, "the invalid file must stay as it was");
        assert!(leftovers(&home.at("conf")).is_empty());
    }
}

#[test]
fn refused_changes_say_why_and_write_nothing() {
    let home = Home::new();
    let path = home.config();
    let original = format!("remote:\n  roots:\n    - {}\n", home.s("a"));
    fs::write(&path, &original).unwrap();

    let missing = home.at("gone");
    let error = apply_to(
        &path,
        no_home(),
        &[Change::RemoteEnabled(true), Change::AddRoot(missing.clone())],
    )
    .unwrap_err();
    assert!(matches!(error, SettingsError::Refused(_)));
    assert!(
        error
            .to_string()
            .contains(&format!("{} does not exist", missing.display())),
        "{error}"
    );

    let error = apply_to(&path, no_home(), &[Change::Trust(home.at("f"))]).unwrap_err();
    assert!(error.to_string().contains("is not a folder"), "{error}");

    let error = apply_to(&path, no_home(), &[Change::RemoveRoot(home.at("b"))]).unwrap_err();
    let message = error.to_string();
    assert!(
        message.contains("is not listed in remote.roots") && message.contains(&home.s("a")),
        "{message}"
    );

    let error = apply_to(&path, no_home(), &[Change::Untrust(home.at("b"))]).unwrap_err();
    assert!(error.to_string().contains("the list is empty"), "{error}");

    let error = apply_to(
        &path,
        no_home(),
        &[Change::SetServer {
            url: " ".into(),
            connection: None,
        }],
    )
    .unwrap_err();
    assert!(matches!(error, SettingsError::Refused(_)));

    assert_eq!(read(&path), original);
}

#[test]
fn permissions_and_symlinks_are_kept() {
    let home = Home::new();
    let real = home.at("a/dotfiles-config.yaml");
    fs::write(&real, "remote:\n  enabled: false\n").unwrap();
    fs::set_permissions(&real, fs::Permissions::from_mode(0o640)).unwrap();
    let path = home.config();
    symlink(&real, &path).unwrap();

    apply_to(&path, no_home(), &[Change::RemoteEnabled(true)]).unwrap();
    assert!(
        fs::symlink_metadata(&path).unwrap().file_type().is_symlink(),
        "the link was replaced"
    );
    assert_eq!(read(&real), "remote:\n  enabled: true\n");
    assert_eq!(fs::metadata(&real).unwrap().permissions().mode() & 0o777, 0o640);
}

#[test]
fn awkward_folder_names_round_trip() {
    let home = Home::new();
    let path = home.config();
    fs::write(&path, "# roots with odd names\nremote:\n  enabled: true\n").unwrap();
    let names = [
        "with space",
        "colon: x",
        "hash #x",
        "quote'd \"x\"",
        "ünïcödé",
        "- dash",
        "yes",
        "[x]",
        "{y}",
    ];
    let folders: Vec<PathBuf> = names.iter().map(|n| home.at(n)).collect();
    for folder in &folders {
        fs::create_dir(folder).unwrap();
    }
    let adds: Vec<Change> = folders.iter().cloned().map(Change::AddRoot).collect();
    let settings = apply_to(&path, no_home(), &adds).unwrap();
    assert_eq!(settings.remote.roots, folders);
    let removes: Vec<Change> = folders.iter().cloned().map(Change::RemoveRoot).collect();
    let settings = apply_to(&path, no_home(), &removes).unwrap();
    assert!(settings.remote.roots.is_empty());
    assert!(read(&path).starts_with("# roots with odd names\nremote:\n  enabled: true\n"));
}

#[test]
fn flow_lists_and_crlf_files_keep_their_style() {
    let home = Home::new();
    let path = home.config();
    let (a, b) = (home.s("a"), home.s("b"));
    fs::write(&path, format!("trusted: [{a}]   # flow\n")).unwrap();
    apply_to(&path, no_home(), &[Change::Trust(home.at("b"))]).unwrap();
    assert_eq!(read(&path), format!("trusted: [{a}, {b}]   # flow\n"));
    apply_to(&path, no_home(), &[Change::Untrust(home.at("a"))]).unwrap();
    assert_eq!(read(&path), format!("trusted: [{b}]   # flow\n"));

    fs::write(&path, "remote:\r\n  enabled: false # x\r\n").unwrap();
    apply_to(
        &path,
        no_home(),
        &[Change::RemoteEnabled(true), Change::Terminal(true)],
    )
    .unwrap();
    assert_eq!(
        read(&path),
        "remote:\r\n  enabled: true # x\r\n  terminal: true\r\n"
    );
}

#[test]
fn tilde_is_the_home_handed_down() {
    let home = Home::new();
    let dirs = crate::paths::Dirs {
        home: home.root.clone(),
        config: home.at("xdg/lembas"),
        state: home.at("state"),
        runtime: home.at("run"),
        keyrings: None,
    };
    let settings = apply(&dirs, &[Change::AddRoot("~/a".into()), Change::Trust("~".into())]).unwrap();
    assert_eq!(settings.remote.roots, [home.at("a")]);
    assert_eq!(settings.trusted, std::slice::from_ref(&home.root));
    // Removing by the `~` spelling finds the absolute entry.
    let settings = apply(
        &dirs,
        &[Change::RemoveRoot("~/a".into()), Change::AddRoot("~/b".into())],
    )
    .unwrap();
    assert_eq!(settings.remote.roots, [home.at("b")]);
    // An entry written by hand with `~` is recognised too, and read as the home's.
    let path = dirs.config_file();
    fs::write(&path, "trusted:\n  - ~/c\n").unwrap();
    let settings = apply(&dirs, &[Change::Trust("~/c".into())]).unwrap();
    assert_eq!(settings.trusted, [PathBuf::from("~/c")]);
    assert_eq!(settings.folder_rules().trusted, [home.at("c")]);
    assert!(
        apply(&dirs, &[Change::Untrust(home.at("c"))])
            .unwrap()
            .trusted
            .is_empty()
    );
    fs::write(&path, "trusted: []\n").unwrap();
    apply(&dirs, &[Change::Trust("~/c".into())]).unwrap();
    assert_eq!(read(&path), format!("trusted: [{}]\n", home.s("c")));
}

#[test]
fn an_edit_that_would_move_anything_else_is_refused() {
    let home = Home::new();
    let path = home.config();
    // Changing the anchored block through the text would change its alias as well.
    let original = "remote: &shared\n  enabled: false\nbackup: *shared\n";
    fs::write(&path, original).unwrap();
    let error = apply_to(&path, no_home(), &[Change::RemoteEnabled(true)]).unwrap_err();
    assert!(matches!(error, SettingsError::EditFailed { .. }), "{error:?}");
    assert!(error.to_string().contains("edit it by hand"), "{error}");
    assert_eq!(read(&path), original);
}

/// Found by the `settings` fuzz target: a tagged document or block (`! …`, `!!map`) reads as its map
/// or list, and changing it panicked (`unreachable!("just made a mapping")`). Now the change is made
/// and reads back, or is refused with the file left alone.
#[test]
fn tagged_maps_and_lists_are_edited_without_a_panic() {
    let home = Home::new();
    let path = home.config();
    let texts = [
        "!\t# LLeMbas device config\nserver:\n  url: https://llembas.example\n  connection: c1\n",
        "remote: !!map\n  enabled: false\n",
        "trusted: !!seq\n  - /x\n",
        "--- !settings\nremote:\n  terminal: true\n",
    ];
    let changes = [
        Change::MaxMode(Mode::Auto),
        Change::Trust(home.at("a")),
        Change::AddRoot(home.at("b")),
        Change::SetServer {
            url: "https://other.example".into(),
            connection: None,
        },
    ];
    for text in texts {
        for change in &changes {
            fs::write(&path, text).unwrap();
            match apply_to(&path, no_home(), std::slice::from_ref(change)) {
                Ok(settings) => assert_eq!(
                    load_from(&path, no_home()).unwrap(),
                    settings,
                    "{change:?} on {text:?}"
                ),
                Err(SettingsError::EditFailed { .. }) => assert_eq!(read(&path), text, "{change:?}"),
                Err(e) => panic!("{change:?} on {text:?}: {e}"),
            }
        }
    }
}

/// Found by the `settings` fuzz target: a tagged empty `embedding:` reads as no embedding, but the
/// edit took it as set, so a login's embedding was never written.
#[test]
fn a_tagged_empty_embedding_counts_as_unset() {
    let home = Home::new();
    let path = home.config();
    fs::write(&path, "server: null\nembedding: !'\n").unwrap();
    let settings = apply_to(
        &path,
        no_home(),
        &[Change::SetEmbeddingIfUnset("c1/embed".into())],
    );
    match settings {
        Ok(settings) => assert_eq!(settings.embedding.as_deref(), Some("c1/embed")),
        Err(SettingsError::EditFailed { .. }) => assert_eq!(read(&path), "server: null\nembedding: !'\n"),
        Err(e) => panic!("{e}"),
    }
}
