//! The sandbox on this machine's real kernel (Landlock), through the bash tool's own runner. The
//! commands' shells inherit `HOME` and `XDG_*`, which a test may not change in its own process, so
//! the checks run in a child of this test binary with a made-up home: a key file holding a marker,
//! a config folder outside the home (`XDG_CONFIG_HOME`) and the state folder inside it, a keyring
//! under `XDG_DATA_HOME`.

use std::path::{Path, PathBuf};
use std::time::Duration;

use super::*;
use crate::monitor::{WatchOutcome, run_command};
use crate::settings::{Remote, SandboxSetting};

const CHILD: &str = "LEMBAS_SANDBOX_TEST_CHILD";
const KEY_MARKER: &str = "KEY-MARKER-5b1e";
const CONFIG_MARKER: &str = "CONFIG-MARKER-90c2";
const STATE_MARKER: &str = "STATE-MARKER-33d7";

/// The made-up tree, outside the temp folders (which the sandbox lets every command write): beside
/// the test binary.
struct Tree {
    _dir: tempfile::TempDir,
    base: PathBuf,
}

impl Tree {
    fn new() -> Self {
        let exe = std::env::current_exe().unwrap();
        let beside = exe.parent().and_then(Path::parent).unwrap();
        let dir = tempfile::Builder::new()
            .prefix("sandbox-test-")
            .tempdir_in(beside)
            .unwrap();
        let base = std::fs::canonicalize(dir.path()).unwrap();
        let write = |rel: &str, text: &str| {
            let path = base.join(rel);
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            std::fs::write(path, text).unwrap();
        };
        write("home/.ssh/id_ed25519", KEY_MARKER);
        write("home/notes.txt", "notes\n");
        write("home/work/README", "readme\n");
        write("xdg-config/lembas/config.yaml", CONFIG_MARKER);
        write("xdg-config/lembas/device-token", CONFIG_MARKER);
        write("xdg-data/keyrings/login.keyring", KEY_MARKER);
        write("home/.local/state/lembas/status.json", STATE_MARKER);
        write("home/.local/state/lembas/attachments/s1/pasted.txt", "attached\n");
        Self { _dir: dir, base }
    }
}

#[test]
fn sandboxed_commands_keep_to_their_limits() {
    let tree = Tree::new();
    let output = std::process::Command::new(std::env::current_exe().unwrap())
        .args([
            "--exact",
            "sandbox::tests::sandboxed_commands_child",
            "--ignored",
            "--test-threads=1",
            "--nocapture",
        ])
        .env(CHILD, &tree.base)
        .env("HOME", tree.base.join("home"))
        .env("XDG_CONFIG_HOME", tree.base.join("xdg-config"))
        .env_remove("XDG_STATE_HOME")
        .env("MY_API_KEY", "x")
        .env("KEEP_TOKEN", "kept")
        .env("XDG_DATA_HOME", tree.base.join("xdg-data"))
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&output.stdout);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(output.status.success(), "{stdout}\n{stderr}");
    assert!(stdout.contains("1 passed"), "{stdout}");
}

/// Runs in the child only, with the made-up home in its environment.
#[test]
#[ignore = "run by sandboxed_commands_keep_to_their_limits in a child with a made-up home"]
fn sandboxed_commands_child() {
    let base = PathBuf::from(std::env::var_os(CHILD).expect("run by its parent test"));
    let (home, root) = (base.join("home"), base.join("home/work"));
    let state = home.join(".local/state/lembas");
    // The device's folders as a program run in this environment finds them; the commands' shells
    // inherit the same environment (their `~` is the made-up home).
    let dirs = Dirs::from_env();
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let run = |sandbox: &Sandbox, line: &str| -> WatchOutcome {
        runtime
            .block_on(run_command(
                &root,
                line,
                Duration::from_secs(60),
                1 << 16,
                sandbox,
            ))
            .unwrap_or_else(|e| panic!("{line}: {e}"))
    };
    let ok = |outcome: &WatchOutcome, line: &str| {
        assert_eq!(
            outcome.watched.exit,
            Some(0),
            "{line}: {}",
            outcome.watched.excerpt
        );
        assert_eq!(outcome.sandbox_refusal, None, "{line}");
    };
    let refused = |outcome: &WatchOutcome, line: &str| {
        assert_ne!(
            outcome.watched.exit,
            Some(0),
            "{line}: {}",
            outcome.watched.excerpt
        );
        assert!(
            outcome.watched.excerpt.contains("Permission denied"),
            "{line}: {}",
            outcome.watched.excerpt
        );
        let why = outcome.sandbox_refusal.as_deref().unwrap_or_default();
        assert!(why.starts_with("[the sandbox refused"), "{line}: {why:?}");
    };
    let remote = Remote {
        env_keep: vec!["KEEP_TOKEN".into()],
        ..Remote::default()
    };
    let edit = Sandbox::for_remote(&remote, std::slice::from_ref(&root), &[], Mode::Edit, &dirs);
    assert!(support().starts_with("landlock ABI "), "{}", support());
    let (_, rules) = edit
        .prepare()
        .unwrap()
        .landlock_rules()
        .expect("Landlock on this kernel");
    assert!(rules > 0);

    // Writes: inside the root, in the temp folder and to the devices; nowhere else.
    for line in [
        "echo made > made.txt && cat made.txt && echo gone > /dev/null",
        "f=$(mktemp) && echo temp > \"$f\" && cat \"$f\" && rm \"$f\"",
        "mkdir -p sub/deeper && mv made.txt sub/deeper/ && rm -r sub",
    ] {
        ok(&run(&edit, line), line);
    }
    for line in [
        "echo new > ~/new.txt",
        "echo more >> ~/notes.txt",
        "mkdir ~/newdir",
    ] {
        let outcome = run(&edit, line);
        refused(&outcome, line);
        let why = outcome.sandbox_refusal.unwrap();
        assert!(
            why.contains(&format!(
                "writes only inside {} and the temp folder",
                root.display()
            )),
            "{why}"
        );
    }
    assert!(!home.join("new.txt").exists() && !home.join("newdir").exists());
    assert_eq!(
        std::fs::read_to_string(home.join("notes.txt")).unwrap(),
        "notes\n"
    );

    // Reads: anywhere but the protected places, wherever the environment puts them.
    for line in [
        "cat ~/notes.txt",
        "ls ~ /usr/bin >/dev/null",
        "cat /etc/passwd /proc/self/status >/dev/null",
    ] {
        ok(&run(&edit, line), line);
    }
    for (line, marker) in [
        ("cat ~/.ssh/id_ed25519", KEY_MARKER),
        ("cat \"$XDG_CONFIG_HOME/lembas/config.yaml\"", CONFIG_MARKER),
        ("cat \"$XDG_CONFIG_HOME/lembas/device-token\"", CONFIG_MARKER),
        ("cat ~/.local/state/lembas/status.json", STATE_MARKER),
        ("cat \"$XDG_DATA_HOME/keyrings/login.keyring\"", KEY_MARKER),
        ("cp ~/.ssh/id_ed25519 stolen", KEY_MARKER),
    ] {
        let outcome = run(&edit, line);
        refused(&outcome, line);
        assert!(
            !outcome.watched.excerpt.contains(marker),
            "{line}: {}",
            outcome.watched.excerpt
        );
    }
    assert!(!root.join("stolen").exists());

    // A protected place inside a root stays out of reach, for writes too.
    let whole_home = Sandbox::for_remote(&remote, std::slice::from_ref(&home), &[], Mode::Edit, &dirs);
    ok(
        &run(&whole_home, "echo w > ~/work/w.txt && cat ~/notes.txt"),
        "whole home",
    );
    for line in [
        "cat ~/.ssh/id_ed25519",
        "echo k > ~/.ssh/authorized_keys",
        "rm ~/.ssh/id_ed25519",
    ] {
        let outcome = run(&whole_home, line);
        refused(&outcome, line);
        assert!(!outcome.watched.excerpt.contains(KEY_MARKER), "{line}");
    }
    assert!(home.join(".ssh/id_ed25519").exists() && !home.join(".ssh/authorized_keys").exists());

    // The session's own attachments are reachable though the state folder is not.
    let own = [state.join("attachments/s1")];
    let with_own = Sandbox::for_remote(&remote, std::slice::from_ref(&root), &own, Mode::Edit, &dirs);
    let line = format!("cat {}/pasted.txt", own[0].display());
    ok(&run(&with_own, &line), &line);
    refused(
        &run(&with_own, "cat ~/.local/state/lembas/status.json"),
        "other state",
    );

    // Plan mode: not even the root is written.
    let plan = Sandbox::for_remote(&remote, std::slice::from_ref(&root), &own, Mode::Plan, &dirs);
    let outcome = run(&plan, "echo p > plan.txt");
    refused(&outcome, "plan");
    assert!(outcome.sandbox_refusal.unwrap().contains("(plan mode)"));
    assert!(!root.join("plan.txt").exists());
    ok(
        &run(&plan, "cat README && f=$(mktemp) && rm \"$f\""),
        "plan reads and temp",
    );

    // No new privileges; no secret-looking variables unless kept.
    let outcome = run(&edit, "grep NoNewPrivs /proc/self/status");
    assert!(
        outcome.watched.excerpt.contains("NoNewPrivs:\t1"),
        "{}",
        outcome.watched.excerpt
    );
    let outcome = run(&edit, "env");
    let names: Vec<&str> = outcome
        .watched
        .excerpt
        .lines()
        .filter_map(|l| l.split('=').next())
        .collect();
    assert!(
        names.contains(&"PATH") && names.contains(&"KEEP_TOKEN"),
        "{names:?}"
    );
    assert!(!names.contains(&"MY_API_KEY"), "{names:?}");

    // remote.sandbox: required refuses where none can be had; auto runs as before.
    let lacks = || Kernel::Lacks("no Landlock in this test".into());
    let required = Remote {
        sandbox: SandboxSetting::Required,
        ..Remote::default()
    };
    let strict = Sandbox::new(
        &required,
        std::slice::from_ref(&root),
        &[],
        Mode::Edit,
        lacks(),
        &dirs,
    );
    let error = runtime
        .block_on(run_command(
            &root,
            "touch refused.txt",
            Duration::from_secs(60),
            1024,
            &strict,
        ))
        .unwrap_err();
    assert!(error.to_string().contains("remote.sandbox: required"), "{error}");
    assert!(error.to_string().contains("no Landlock in this test"), "{error}");
    assert!(!root.join("refused.txt").exists());
    let loose = Sandbox::new(
        &remote,
        std::slice::from_ref(&root),
        &[],
        Mode::Edit,
        lacks(),
        &dirs,
    );
    ok(&run(&loose, "echo open > ~/open.txt"), "auto without a sandbox");
    assert!(home.join("open.txt").exists());
}
