//! The sandbox on this machine's real kernel (namespaces, Landlock, seccomp), through the bash
//! tool's own runner: the attacks as a table, each refused. The commands' shells inherit
//! `HOME` and `XDG_*`, which a test may not change in its own process, so the checks run in a child
//! of this test binary with a made-up home — as this account, and, when the tests run as root, as
//! an ordinary account too (`lembas-test`, made by `scripts/setup`): root's capabilities hide what a
//! person's account can and cannot do.

use std::path::{Path, PathBuf};

mod attacks;

use super::*;

const CHILD: &str = "LEMBAS_SANDBOX_TEST_CHILD";
const KEY_MARKER: &str = "KEY-MARKER-5b1e";
const CONFIG_MARKER: &str = "CONFIG-MARKER-90c2";
const STATE_MARKER: &str = "STATE-MARKER-33d7";
const SECRET_MARKER: &str = "SECRET-MARKER-7a41";
/// Where the parent mounted a small file system, when it could.
const SMALL_DISK: &str = "LEMBAS_SANDBOX_TEST_SMALL_DISK";
/// The ordinary account the cases run as too, when the tests run as root.
const ORDINARY: &str = "lembas-test";

/// The made-up tree, outside the machine's temp folders (which the box replaces): beside the test
/// binary, or in the ordinary account's home.
struct Tree {
    _dir: tempfile::TempDir,
    base: PathBuf,
}

impl Tree {
    fn new(beside: &Path) -> Self {
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
        for place in [
            ".git-credentials",
            ".netrc",
            ".npmrc",
            ".config/gh/hosts.yml",
            ".docker/config.json",
            ".kube/config",
            ".cargo/credentials.toml",
            ".mozilla/firefox/cookies.sqlite",
        ] {
            write(&format!("home/{place}"), SECRET_MARKER);
        }
        write("home/notes.txt", "notes\n");
        write("home/work/README", "readme\n");
        write("home/work/.env", SECRET_MARKER);
        write("home/work/deploy/server.pem", SECRET_MARKER);
        write("home/work/.git/config", "[core]\n");
        write("home/work/.git/hooks/pre-commit.sample", "#!/bin/sh\n");
        write("home/work/.git/info/exclude", "\n");
        write("home/work/.lembas/config.yaml", "rules: []\n");
        write("xdg-config/lembas/config.yaml", CONFIG_MARKER);
        write("xdg-config/lembas/device-token", CONFIG_MARKER);
        write("xdg-data/keyrings/login.keyring", KEY_MARKER);
        write("home/.local/state/lembas/status.json", STATE_MARKER);
        write("home/.local/state/lembas/attachments/s1/pasted.txt", "attached\n");
        std::fs::create_dir_all(base.join("run-user")).unwrap();
        Self { _dir: dir, base }
    }
}

/// A small file system (a 64 MiB tmpfs) in the tree, for a command that fills its disk; only root
/// can mount one, and `None` elsewhere.
struct SmallDisk(PathBuf);

impl SmallDisk {
    fn mount(tree: &Tree, account: Option<(u32, u32)>) -> Option<Self> {
        // SAFETY: getuid cannot fail.
        if unsafe { libc::getuid() } != 0 {
            return None;
        }
        let at = tree.base.join("small-disk");
        std::fs::create_dir_all(&at).unwrap();
        let (uid, gid) = account.unwrap_or((0, 0));
        let mounted = std::process::Command::new("mount")
            .args([
                "-t",
                "tmpfs",
                "-o",
                &format!("size=64m,uid={uid},gid={gid}"),
                "lembas-small",
            ])
            .arg(&at)
            .status()
            .unwrap();
        if !mounted.success() {
            // A machine that lets root mount nothing (some containers): the case cannot run here.
            eprintln!("no tmpfs could be mounted: the full-disk case is left out");
            return None;
        }
        Some(Self(at))
    }
}

impl Drop for SmallDisk {
    fn drop(&mut self) {
        let _ = std::process::Command::new("umount").arg(&self.0).status();
    }
}

/// Runs the child test with the made-up home, as `account` (uid, gid) when given.
fn run_child(tree: &Tree, account: Option<(u32, u32)>, exe: &Path) {
    let small = SmallDisk::mount(tree, account);
    let mut command = std::process::Command::new(exe);
    if let Some(SmallDisk(at)) = &small {
        command.env(SMALL_DISK, at);
    }
    command
        .args([
            "--exact",
            "sandbox::tests::attacks::sandboxed_commands_child",
            "--ignored",
            "--test-threads=1",
            "--nocapture",
        ])
        .env(CHILD, &tree.base)
        .env("HOME", tree.base.join("home"))
        .env("XDG_CONFIG_HOME", tree.base.join("xdg-config"))
        .env_remove("XDG_STATE_HOME")
        .env("XDG_RUNTIME_DIR", tree.base.join("run-user"))
        .env("SSH_AUTH_SOCK", tree.base.join("home/agent.sock"))
        .env(
            "DBUS_SESSION_BUS_ADDRESS",
            format!("unix:path={}", tree.base.join("run-user/bus").display()),
        )
        .env("MY_API_KEY", "x")
        .env("GH_PAT", SECRET_MARKER)
        .env("DATABASE_URL", format!("postgres://u:{SECRET_MARKER}@h/db"))
        .env("MYSQL_PWD", SECRET_MARKER)
        .env("KEEP_TOKEN", "kept")
        .env("XDG_DATA_HOME", tree.base.join("xdg-data"));
    if let Some((uid, gid)) = account {
        use std::os::unix::process::CommandExt;
        command.uid(uid).gid(gid);
    }
    let output = lembas_testkit::output_of_fresh_copy(&mut command);
    let stdout = String::from_utf8_lossy(&output.stdout);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(output.status.success(), "{account:?}\n{stdout}\n{stderr}");
    assert!(stdout.contains("1 passed"), "{stdout}");
}

#[test]
fn sandboxed_commands_keep_to_their_limits() {
    let exe = std::env::current_exe().unwrap();
    let beside = exe.parent().and_then(Path::parent).unwrap();
    run_child(&Tree::new(beside), None, &exe);
}

/// The same cases as an ordinary account: the tree and a copy of this binary in its home.
#[test]
fn sandboxed_commands_keep_to_their_limits_as_an_ordinary_account() {
    // SAFETY: getuid cannot fail.
    if unsafe { libc::getuid() } != 0 {
        // Not root: the test above ran as an ordinary account already.
        return;
    }
    let id = |flag: &str| -> u32 {
        let out = std::process::Command::new("id")
            .args([flag, ORDINARY])
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "the ordinary account {ORDINARY} is missing: scripts/setup makes it when run as root"
        );
        String::from_utf8_lossy(&out.stdout).trim().parse().unwrap()
    };
    let (uid, gid) = (id("-u"), id("-g"));
    let home = PathBuf::from(format!("/home/{ORDINARY}"));
    let tree = Tree::new(&home);
    let exe = tree.base.join("sandbox-test-binary");
    std::fs::copy(std::env::current_exe().unwrap(), &exe).unwrap();
    let chown = std::process::Command::new("chown")
        .args(["-R", &format!("{uid}:{gid}")])
        .arg(&tree.base)
        .status()
        .unwrap();
    assert!(chown.success());
    run_child(&tree, Some((uid, gid)), &exe);
}

#[test]
fn the_device_is_not_dumpable_once_hardened() {
    // In a child: this test binary's own process must stay as it is for the others.
    let output = std::process::Command::new(std::env::current_exe().unwrap())
        .args([
            "--exact",
            "sandbox::tests::hardened_child",
            "--ignored",
            "--nocapture",
        ])
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(stdout.contains("1 passed"), "{stdout}");
}

#[test]
#[ignore = "run by the_device_is_not_dumpable_once_hardened"]
fn hardened_child() {
    // SAFETY: a plain query.
    assert_eq!(unsafe { libc::prctl(libc::PR_GET_DUMPABLE) }, 1);
    harden_this_process();
    // SAFETY: a plain query.
    assert_eq!(unsafe { libc::prctl(libc::PR_GET_DUMPABLE) }, 0);
}
