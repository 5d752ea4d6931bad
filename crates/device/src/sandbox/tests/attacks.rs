//! The attack table itself: each case of issue 33 as a command in the box, refused. Runs in a child
//! of the test binary with a made-up home (the harness in the module above).

use std::path::{Path, PathBuf};
use std::time::Duration;

use super::super::*;
use super::{CHILD, CONFIG_MARKER, KEY_MARKER, SECRET_MARKER, SMALL_DISK, STATE_MARKER};
use crate::monitor::{WatchOutcome, run_command};
use crate::settings::{Remote, SandboxSetting};

/// The built-in watch numbers, as the programs hand them down.
fn monitor_numbers() -> &'static crate::decisions::Monitor {
    &crate::decisions::Decisions::built_in().scheduled.monitor
}

/// Runs in the child only, with the made-up home in its environment.
#[test]
#[ignore = "run by sandboxed_commands_keep_to_their_limits in a child with a made-up home"]
fn sandboxed_commands_child() {
    let base = PathBuf::from(std::env::var_os(CHILD).expect("run by its parent test"));
    let (home, root) = (base.join("home"), base.join("home/work"));
    let state = home.join(".local/state/lembas");
    // The device is not dumpable, as the programs make it: the box must be made all the same.
    harden_this_process();
    // The person's sockets: an agent, a session bus, an abstract one (X11's kind).
    let agent = std::os::unix::net::UnixListener::bind(home.join("agent.sock")).unwrap();
    let bus = std::os::unix::net::UnixListener::bind(base.join("run-user/bus")).unwrap();
    let abstract_name = format!("lembas-test-{}", std::process::id());
    let abstract_socket = {
        use std::os::linux::net::SocketAddrExt;
        let address = std::os::unix::net::SocketAddr::from_abstract_name(&abstract_name).unwrap();
        std::os::unix::net::UnixListener::bind_addr(&address).unwrap()
    };
    let dirs = Dirs::from_env();
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    // A command in `folder` with its own time limit; `run`, in the root with a minute.
    let run_at = |sandbox: &Sandbox, folder: &Path, line: &str, limit: Duration| -> WatchOutcome {
        runtime
            .block_on(run_command(
                folder,
                line,
                limit,
                1 << 16,
                sandbox,
                monitor_numbers(),
            ))
            .unwrap_or_else(|e| panic!("{line}: {e}"))
    };
    let run = |sandbox: &Sandbox, line: &str| run_at(sandbox, &root, line, Duration::from_secs(60));
    let ok = |outcome: &WatchOutcome, line: &str| {
        assert_eq!(
            outcome.watched.exit,
            Some(0),
            "{line}: {}",
            outcome.watched.excerpt
        );
        assert_eq!(outcome.sandbox_refusal, None, "{line}");
    };
    let failed = |outcome: &WatchOutcome, line: &str, markers: &[&str]| {
        assert_ne!(
            outcome.watched.exit,
            Some(0),
            "{line}: {}",
            outcome.watched.excerpt
        );
        for marker in markers {
            assert!(
                !outcome.watched.excerpt.contains(marker),
                "{line}: {}",
                outcome.watched.excerpt
            );
        }
    };
    let refused = |outcome: &WatchOutcome, line: &str| {
        failed(
            outcome,
            line,
            &[KEY_MARKER, SECRET_MARKER, CONFIG_MARKER, STATE_MARKER],
        );
        let why = outcome.sandbox_refusal.as_deref().unwrap_or_default();
        assert!(
            why.starts_with("[the sandbox refused"),
            "{line}: {why:?} {}",
            outcome.watched.excerpt
        );
    };
    let remote = Remote {
        env_keep: vec!["KEEP_TOKEN".into(), "SSH_AUTH_SOCK".into()],
        ..Remote::default()
    };
    let edit = Sandbox::for_remote(&remote, std::slice::from_ref(&root), &[], Mode::Edit, &dirs)
        .with_temp(state.join("tmp/ses_a"));
    assert!(
        support().starts_with("namespaces, landlock ABI "),
        "{}",
        support()
    );
    let prepared = edit.prepare().unwrap();
    assert!(prepared.boxed(), "namespaces on this machine");
    let (abi, _) = prepared.landlock_rules().expect("Landlock on this kernel");
    assert!(abi >= 6, "the scopes need ABI 6; this kernel has {abi}");

    // Writes: inside the root, in the session's temp folder and to the devices; nowhere else.
    for line in [
        "echo made > made.txt && cat made.txt && echo gone > /dev/null",
        "f=$(mktemp) && echo temp > \"$f\" && cat \"$f\" && rm \"$f\"",
        "mkdir -p sub/deeper && mv made.txt sub/deeper/ && rm -r sub",
        "cat .git/config .lembas/config.yaml >/dev/null && git --version >/dev/null",
    ] {
        ok(&run(&edit, line), line);
    }
    for line in [
        "echo new > ~/new.txt",
        "echo more >> ~/notes.txt",
        "mkdir ~/newdir",
        "touch /etc/lembas-x",
    ] {
        let outcome = run(&edit, line);
        refused(&outcome, line);
        let why = outcome.sandbox_refusal.unwrap();
        assert!(
            why.contains(&format!(
                "writes only inside {} and its temp folder /tmp",
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

    // The temp folder is the session's own: not the machine's, kept from one command to the next.
    let marker = format!("box-temp-{}", std::process::id());
    ok(
        &run(
            &edit,
            &format!("echo kept > /tmp/{marker} && test \"$TMPDIR\" = /tmp"),
        ),
        "temp",
    );
    assert!(!Path::new("/tmp").join(&marker).exists());
    assert!(edit.temp.join(&marker).exists());
    ok(
        &run(
            &edit,
            &format!("grep -q kept /tmp/{marker} && ! ls /tmp/.X11-unix 2>/dev/null"),
        ),
        "temp kept",
    );

    // Reads: anywhere but the protected places, wherever the environment puts them.
    for line in [
        "cat ~/notes.txt",
        "ls ~ /usr/bin >/dev/null",
        "cat /etc/passwd /proc/self/status >/dev/null",
    ] {
        ok(&run(&edit, line), line);
    }
    let config = base.join("xdg-config/lembas");
    let keyring = base.join("xdg-data/keyrings/login.keyring");
    let (config_file, token_file) = (
        format!("cat {}/config.yaml", config.display()),
        format!("cat {}/device-token", config.display()),
    );
    let keyring_file = format!("cat {}", keyring.display());
    for line in [
        "cat ~/.ssh/id_ed25519",
        &config_file,
        &token_file,
        "cat ~/.local/state/lembas/status.json",
        &keyring_file,
        "cp ~/.ssh/id_ed25519 stolen",
        "cat ~/.git-credentials",
        "cat ~/.netrc",
        "cat ~/.npmrc",
        "cat ~/.config/gh/hosts.yml",
        "cat ~/.docker/config.json",
        "cat ~/.kube/config",
        "cat ~/.cargo/credentials.toml",
        "cat ~/.mozilla/firefox/cookies.sqlite",
        // Inside the root: the secret files are not there, the governing places are read-only.
        "cat .env",
        "python3 -c 'print(open(\".env\").read())'",
        "cat deploy/server.pem",
        "echo '[core] fsmonitor = evil' >> .git/config",
        "echo evil > .git/hooks/post-checkout",
        "echo evil > .git/info/attributes",
        "echo evil > .lembas/config.yaml",
    ] {
        refused(&run(&edit, line), line);
    }
    assert!(!root.join("stolen").exists() && !root.join(".git/hooks/post-checkout").exists());
    assert_eq!(
        std::fs::read_to_string(root.join(".git/config")).unwrap(),
        "[core]\n"
    );
    assert_eq!(std::fs::read_to_string(root.join(".env")).unwrap(), SECRET_MARKER);

    // A governing place the project lacks is swept after the command that made it.
    let line = "mkdir -p .agent/commands && echo evil > .agent/commands/deploy.md";
    let outcome = run(&edit, line);
    assert_eq!(outcome.watched.exit, Some(0), "{}", outcome.watched.excerpt);
    let why = outcome.sandbox_refusal.unwrap_or_default();
    assert!(
        why.contains("the sandbox removed") && why.contains(".agent"),
        "{why}"
    );
    assert!(!root.join(".agent").exists());

    // Sockets: none of the person's, by path, by the environment or abstract.
    let connect = |target: &str| {
        format!(
            "python3 -c \"import socket; s = socket.socket(socket.AF_UNIX); s.connect({target}); print('CONNECTED')\""
        )
    };
    for line in [
        connect(&format!("'{}'", home.join("agent.sock").display())),
        connect("__import__('os').environ.get('SSH_AUTH_SOCK', '/nowhere')"),
        connect(&format!("'{}'", base.join("run-user/bus").display())),
        connect(&format!("'\\0{abstract_name}'")),
    ] {
        let outcome = run(&edit, &line);
        failed(&outcome, &line, &["CONNECTED"]);
    }
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
    for name in [
        "MY_API_KEY",
        "GH_PAT",
        "DATABASE_URL",
        "MYSQL_PWD",
        "SSH_AUTH_SOCK",
        "DBUS_SESSION_BUS_ADDRESS",
        "XDG_RUNTIME_DIR",
        CHILD,
    ] {
        assert!(!names.contains(&name), "{name} in {names:?}");
    }
    assert!(!outcome.watched.excerpt.contains(SECRET_MARKER));
    ok(
        &run(
            &edit,
            &format!("test -z \"$(ls -A {})\"", base.join("run-user").display()),
        ),
        "runtime emptied",
    );

    // Processes: the device and the rest are not there; nothing can be traced or typed into.
    let me = std::process::id();
    for line in [format!("cat /proc/{me}/environ"), format!("kill -KILL {me}")] {
        let outcome = run(&edit, &line);
        failed(&outcome, &line, &[SECRET_MARKER]);
    }
    // Its own processes only (bash, ls, grep); its parent is outside, at 0.
    ok(
        &run(
            &edit,
            "test $(ls /proc | grep -c '^[0-9]') -lt 6 && test $PPID = 0 && kill -KILL $PPID; echo alive",
        ),
        "own /proc",
    );
    let probe = "import ctypes, fcntl, termios\nlibc = ctypes.CDLL(None, use_errno=True)\n\
        def errno(r): return ctypes.get_errno() if r == -1 else 0\n\
        print('ptrace', errno(libc.ptrace(0, 0, 0, 0)))\n\
        print('io_uring', errno(libc.syscall(425, 1, 0)))\n\
        print('vm_readv', errno(libc.syscall(310 if __import__('platform').machine() == 'x86_64' else 270, 1, 0, 0, 0, 0, 0)))\n\
        try:\n    fcntl.ioctl(0, termios.TIOCSTI, b'x'); print('tiocsti 0')\nexcept OSError as e: print('tiocsti', e.errno)\n";
    let outcome = run(&edit, &format!("python3 -c \"{probe}\""));
    let seen = &outcome.watched.excerpt;
    for call in ["ptrace 1", "io_uring 1", "vm_readv 1", "tiocsti 1"] {
        assert!(seen.contains(call), "{call}: {seen}");
    }
    let outcome = run(&edit, "grep -E 'NoNewPrivs|Seccomp:|CapEff' /proc/self/status");
    for want in ["NoNewPrivs:\t1", "Seccomp:\t2", "CapEff:\t0000000000000000"] {
        assert!(
            outcome.watched.excerpt.contains(want),
            "{want}: {}",
            outcome.watched.excerpt
        );
    }

    // Lifetime: what a command starts ends with it, setsid and job control included.
    for (line, file) in [
        (
            "setsid sh -c 'while :; do echo x >> left-a.txt; sleep 0.05; done' >/dev/null 2>&1 & sleep 0.2",
            "left-a.txt",
        ),
        (
            "set -m; (while :; do echo x >> left-b.txt; sleep 0.05; done) >/dev/null 2>&1 & sleep 0.2",
            "left-b.txt",
        ),
    ] {
        run(&edit, line);
        let size = || std::fs::metadata(root.join(file)).map(|m| m.len()).unwrap_or(0);
        let then = size();
        std::thread::sleep(Duration::from_millis(400));
        assert_eq!(size(), then, "{line} outlived its command");
        std::fs::remove_file(root.join(file)).unwrap();
    }

    // In the box the command is not PID 1: it takes signals as anywhere, and the watch says so.
    let outcome = run(&edit, "printf before; kill -9 $$");
    assert_eq!(
        (outcome.watched.exit, outcome.watched.excerpt.as_str()),
        (None, "before")
    );
    let outcome = run(&edit, "kill -TERM $$");
    assert_eq!(outcome.watched.exit, None);
    // A timeout stops the box whole, a background job holding the output included; a job left
    // behind by a command that ended ends with it.
    let outcome = run_at(&edit, &root, "sleep 100.25 & sleep 100.5", Duration::from_secs(1));
    assert!(outcome.watched.timed_out);
    let outcome = run(&edit, "sleep 100.75 & echo started");
    assert_eq!(
        (outcome.watched.exit, outcome.watched.timed_out),
        (Some(0), false)
    );
    let outcome = run_at(
        &edit,
        &root,
        "trap '' TERM; sleep 101 & wait",
        Duration::from_secs(1),
    );
    assert!(outcome.watched.timed_out);
    // SAFETY: getuid cannot fail. (The other account's run goes on beside this one.)
    let uid = unsafe { libc::getuid() }.to_string();
    let left = |pattern: &str| {
        let out = std::process::Command::new("pgrep")
            .args(["-c", "-u", &uid, "-f", pattern])
            .output()
            .unwrap();
        String::from_utf8_lossy(&out.stdout).trim().to_string()
    };
    for pattern in ["sleep 100.25", "sleep 100.5", "sleep 100.75", "sleep 101"] {
        assert_eq!(left(pattern), "0", "{pattern} outlived its command");
    }

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
        "cat ~/.netrc",
    ] {
        refused(&run(&whole_home, line), line);
    }
    assert!(home.join(".ssh/id_ed25519").exists() && !home.join(".ssh/authorized_keys").exists());

    // The session's own attachments are reachable though the state folder is not.
    let own = [state.join("attachments/s1")];
    let with_own = Sandbox::for_remote(&remote, std::slice::from_ref(&root), &own, Mode::Edit, &dirs);
    let line = format!("cat {}/pasted.txt", own[0].display());
    ok(&run(&with_own, &line), &line);
    // The rest of the state folder is not there at all.
    failed(
        &run(&with_own, "cat ~/.local/state/lembas/status.json"),
        "other state",
        &[STATE_MARKER],
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

    // Bad input: a root that is a link, a root that goes away while a command runs, many forks.
    let link = base.join("work-link");
    std::os::unix::fs::symlink(&root, &link).unwrap();
    let linked = Sandbox::for_remote(&remote, std::slice::from_ref(&link), &[], Mode::Edit, &dirs);
    let outcome = run_at(&linked, &root, "echo l > via-link.txt", Duration::from_secs(60));
    assert_eq!(outcome.watched.exit, Some(0), "{}", outcome.watched.excerpt);
    // A root on another file system, and one the box covers with its own (`/dev/shm`).
    let elsewhere = tempfile::Builder::new()
        .prefix("lembas-root-")
        .tempdir_in("/dev/shm")
        .unwrap();
    let elsewhere_root = std::fs::canonicalize(elsewhere.path()).unwrap();
    let on_tmpfs = Sandbox::for_remote(
        &remote,
        std::slice::from_ref(&elsewhere_root),
        &[],
        Mode::Edit,
        &dirs,
    );
    let outcome = run_at(
        &on_tmpfs,
        &elsewhere_root,
        "echo s > on-tmpfs.txt && pwd",
        Duration::from_secs(60),
    );
    assert_eq!(outcome.watched.exit, Some(0), "{}", outcome.watched.excerpt);
    assert!(elsewhere_root.join("on-tmpfs.txt").exists());
    // A command that fills its disk is stopped before the disk is full, and says why.
    if let Some(small) = std::env::var_os(SMALL_DISK).map(PathBuf::from) {
        let filling = Sandbox::for_remote(&remote, std::slice::from_ref(&small), &[], Mode::Edit, &dirs);
        let line = "while :; do head -c 1048576 /dev/zero >> fill || exit 9; sleep 0.02; done";
        let outcome = run_at(&filling, &small, line, Duration::from_secs(60));
        assert!(!outcome.watched.timed_out, "{}", outcome.watched.excerpt);
        assert!(
            outcome
                .watched
                .excerpt
                .contains("[the sandbox stopped the command: the disk"),
            "{:?} {}",
            outcome.watched.exit,
            outcome.watched.excerpt
        );
        let size = std::fs::metadata(small.join("fill")).unwrap().len();
        assert!(size < 64 << 20, "{size}");
        std::fs::remove_file(small.join("fill")).unwrap();
        ok(
            &run_at(
                &filling,
                &small,
                "echo room again > after.txt",
                Duration::from_secs(60),
            ),
            "after the fill",
        );
    }
    let doomed = base.join("doomed");
    std::fs::create_dir_all(&doomed).unwrap();
    let gone_root = Sandbox::for_remote(&remote, std::slice::from_ref(&doomed), &[], Mode::Edit, &dirs);
    let remover = {
        let doomed = doomed.clone();
        std::thread::spawn(move || {
            std::thread::sleep(Duration::from_millis(300));
            std::fs::remove_dir_all(doomed).unwrap();
        })
    };
    let outcome = run_at(
        &gone_root,
        &doomed,
        "sleep 0.6; echo late > late.txt",
        Duration::from_secs(60),
    );
    remover.join().unwrap();
    assert_ne!(outcome.watched.exit, Some(0), "{}", outcome.watched.excerpt);
    // Ten thousand forks (an ordinary account meets the process limit first): the device goes
    // on, and none of them outlives the command.
    let forks = "for i in $(seq 10000); do sleep 31.5 & done 2>/dev/null; echo forked";
    run_at(&edit, &root, forks, Duration::from_secs(20));
    ok(&run(&edit, "echo still here"), "after the forks");
    // Thousands of processes take the kernel a while to end on a loaded machine; the watch waits
    // only its grace for them.
    for _ in 0..100 {
        if left("sleep 31.5") == "0" {
            break;
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    assert_eq!(left("sleep 31.5"), "0", "forks outlived the command");

    drop((agent, bus, abstract_socket));

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
            monitor_numbers(),
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
