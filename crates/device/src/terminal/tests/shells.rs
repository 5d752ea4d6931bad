//! Shell integration: OSC 133/OSC 7 marks, start and logout files, the environment.

use super::*;

#[tokio::test]
async fn bash_marks_every_prompt() {
    let files = [
        (".bash_profile", "PROMPT_COMMAND='PS1=\"rebuilt\\$ \"'\n"),
        (".profile", "echo profile-must-not-be-read\n"),
    ];
    let mut h = Harness::new("/bin/bash", &files);
    marks_dialogue(&mut h, "bash", "(exit 3)", "rebuilt$ ").await;
    assert!(!h.text("t1").contains("profile-must-not-be-read"));
}

#[tokio::test]
async fn zsh_marks_every_prompt() {
    let rc = "autoload -Uz add-zsh-hook\n__rebuild() { PS1='rebuilt%# ' }\nadd-zsh-hook precmd __rebuild\n";
    let mut h = Harness::new("/usr/bin/zsh", &[(".zshrc", rc)]);
    marks_dialogue(&mut h, "zsh", "(exit 3)", "rebuilt# ").await;
}

#[tokio::test]
async fn fish_marks_every_prompt() {
    let config = "function fish_prompt\n    echo -n 'rebuilt> '\nend\n";
    let mut h = Harness::new("/usr/bin/fish", &[(".config/fish/config.fish", config)]);
    marks_dialogue(&mut h, "fish", "sh -c 'exit 3'", "rebuilt> ").await;
    // A prompt defined afresh at run time (as a theme does) is wrapped again.
    h.send("t1", "function fish_prompt; echo -n 'again> '; end\r")
        .await;
    h.until("the redefined prompt with B", "t1", |h| {
        h.text("t1").contains("again> \x1b]133;B\x07")
    })
    .await;
}

#[tokio::test]
async fn bash_reads_logout_files_and_exit_comes_last() {
    let files = [
        (".bash_logout", "echo logged-out > \"$HOME/logout-ran\"\n"),
        (".bashrc", "echo bashrc-read\n"),
    ];
    let mut h = Harness::new("/bin/bash", &files);
    let id = h.open_id().await;
    h.until("the first prompt", &id, |h| h.count(&id, "B") >= 1).await;
    h.send(&id, "echo some-output; exit 3\r").await;
    h.until("the exit", &id, |h| h.exit_code(&id).is_some()).await;
    assert_eq!(h.exit_code(&id), Some(json!(3)));
    assert!(h.home.join("logout-ran").exists(), "~/.bash_logout did not run");
    // A login shell does not read ~/.bashrc by itself (only when ~/.profile sources it).
    assert!(!h.text(&id).contains("bashrc-read"));
    let exit_at = h
        .events
        .iter()
        .position(|e| matches!(e, Event::Exit(..)))
        .unwrap();
    assert!(
        h.events[..exit_at]
            .iter()
            .any(|e| matches!(e, Event::Output(_, d) if d.windows(11).any(|w| w == b"some-output")))
    );
    // Nothing of this terminal after its exit.
    let next = tokio::time::timeout(Duration::from_millis(300), h.queue.next()).await;
    assert!(next.is_err(), "a frame after the exit: {next:?}");
    assert_eq!(h.terminals.open_count(), 0);

    // `logout` works as in a login shell, and reads the logout files too.
    std::fs::remove_file(h.home.join("logout-ran")).unwrap();
    let id = h.open_id().await;
    h.until("the first prompt", &id, |h| h.count(&id, "B") >= 1).await;
    h.send(&id, "logout\r").await;
    h.until("the exit", &id, |h| h.exit_code(&id).is_some()).await;
    assert_eq!(h.exit_code(&id), Some(json!(0)), "{}", h.text(&id));
    assert!(
        h.home.join("logout-ran").exists(),
        "~/.bash_logout did not run on logout"
    );
}

#[tokio::test]
async fn a_shell_that_ignores_the_hangup_is_killed() {
    let mut h = Harness::new("/bin/bash", &[(".bash_profile", "trap '' HUP\n")]);
    let id = h.open_id().await;
    h.until("the first prompt", &id, |h| h.count(&id, "B") >= 1).await;
    let pid = h.terminals.session(&id).unwrap().pid();
    h.terminals
        .close(params(method::TerminalClose, json!({ "terminalId": id })))
        .await
        .unwrap();
    h.until("the exit", &id, |h| h.exit_code(&id).is_some()).await;
    assert_eq!(h.exit_code(&id), Some(json!(128 + libc::SIGKILL)));
    assert_ne!(unsafe { libc::kill(pid, 0) }, 0, "the shell {pid} is still there");
}

#[tokio::test]
async fn zsh_follows_a_zdotdir_set_in_the_users_zshenv() {
    let files = [
        (
            ".zshenv",
            "echo \"zshenv sees ZDOTDIR=${ZDOTDIR-unset}\"\nZDOTDIR=$HOME/zdot\n",
        ),
        (".zshrc", "echo home-zshrc-must-not-be-read\n"),
        ("zdot/.zprofile", "echo zdot-zprofile-read\n"),
        (
            "zdot/.zshrc",
            "echo \"zdot-zshrc-read lembas=${(k)parameters[(I)__lembas*]}.${(k)functions[(I)__lembas*]}.\"\n",
        ),
        ("zdot/.zlogin", "echo zdot-zlogin-read\n"),
    ];
    let mut h = Harness::new("/usr/bin/zsh", &files);
    let id = h.open_id().await;
    h.until("the first prompt", &id, |h| h.count(&id, "B") >= 1).await;
    h.send(&id, "print -r -- \"now ZDOTDIR=$ZDOTDIR ${(t)ZDOTDIR} env=$(env | grep -c -e __lembas -e lembas-terminal)\"\r").await;
    h.until("the answer", &id, |h| h.text(&id).contains("now ZDOTDIR=/"))
        .await;
    let text = h.text(&id);
    assert!(text.contains("zshenv sees ZDOTDIR=unset"), "{text}");
    for read in [
        "zdot-zprofile-read",
        "zdot-zshrc-read lembas=..",
        "zdot-zlogin-read",
    ] {
        assert!(text.contains(read), "{read}: {text}");
    }
    assert!(!text.contains("home-zshrc-must-not-be-read"), "{text}");
    let zdot = h.home.join("zdot");
    assert!(
        text.contains(&format!("now ZDOTDIR={} scalar env=0", zdot.display())),
        "{text}"
    );
}

#[tokio::test]
async fn zsh_keeps_the_zdotdir_of_the_environment() {
    let files = [
        ("zconf/.zshrc", "echo zconf-zshrc-read\n"),
        (".zshrc", "echo home-zshrc-must-not-be-read\n"),
    ];
    let tmp_home = |h: &Harness| h.home.join("zconf");
    let mut h = Harness::new("/usr/bin/zsh", &files);
    let zconf = tmp_home(&h);
    h.terminals.environment = h.terminals.environment.clone().set("ZDOTDIR", &zconf);
    let id = h.open_id().await;
    h.until("the first prompt", &id, |h| h.count(&id, "B") >= 1).await;
    h.send(&id, "print -r -- \"now ZDOTDIR=$ZDOTDIR ${(t)ZDOTDIR}\"\r")
        .await;
    h.until("the answer", &id, |h| h.text(&id).contains("now ZDOTDIR=/"))
        .await;
    let text = h.text(&id);
    assert!(
        text.contains("zconf-zshrc-read") && !text.contains("home-zshrc-must-not-be-read"),
        "{text}"
    );
    assert!(
        text.contains(&format!("now ZDOTDIR={} scalar-export", zconf.display())),
        "{text}"
    );
}

#[tokio::test]
async fn plain_login_shells_without_integration() {
    let files = [
        (".profile", "echo profile-read\n"),
        (".bash_profile", "echo bash-profile-read\n"),
    ];
    let mut h = Harness::new("/bin/bash", &files);
    h.integration = false;
    let answer = h.open(json!({})).await.unwrap();
    assert_eq!(
        (answer["shell"].as_str(), answer["integration"].as_bool()),
        (Some("bash"), Some(false))
    );
    let id = answer["terminalId"].as_str().unwrap().to_string();
    h.send(&id, "echo \"zero=$0\"; true\r").await;
    h.until("the answer", &id, |h| h.text(&id).contains("zero=-bash"))
        .await;
    assert!(h.text(&id).contains("bash-profile-read"));
    assert!(h.prompt_marks(&id).is_empty(), "{:?}", h.marks(&id));

    h.integration = true;
    h.terminals.environment = h.terminals.environment.clone().set("SHELL", "/bin/sh");
    let answer = h.open(json!({})).await.unwrap();
    assert_eq!(
        (answer["shell"].as_str(), answer["integration"].as_bool()),
        (Some("other"), Some(false))
    );
    let id = answer["terminalId"].as_str().unwrap().to_string();
    h.send(&id, "echo \"zero=$0\"\r").await;
    h.until("the answer", &id, |h| h.text(&id).contains("zero=-sh"))
        .await;
    assert!(h.text(&id).contains("profile-read"));
}

/// The environment a command sees, as `sum=<md5>` of `env | sort`, for the newest terminal.
async fn env_digest(h: &mut Harness) -> String {
    let id = h.open_id().await;
    h.send(&id, "env | sort | md5sum | sed 's/^/sum=/'\r").await;
    let digest = |h: &Harness| {
        let text = h.text(&id);
        text.match_indices("sum=").find_map(|(at, _)| {
            let hex = text.get(at + 4..at + 36)?;
            hex.chars()
                .all(|c| c.is_ascii_hexdigit())
                .then(|| hex.to_string())
        })
    };
    h.until("the digest", &id, |h| digest(h).is_some()).await;
    digest(h).unwrap()
}

#[tokio::test]
async fn integration_leaves_the_environment_as_a_login_shell_has_it() {
    let files = [
        (".bash_profile", "export FROM_PROFILE=1\n"),
        (".zshenv", "export FROM_ZSHENV=1\n"),
        (".config/fish/config.fish", "set -gx FROM_FISH 1\n"),
    ];
    for shell in ["/bin/bash", "/usr/bin/zsh", "/usr/bin/fish"] {
        let mut h = Harness::new(shell, &files);
        h.integration = false;
        let plain = env_digest(&mut h).await;
        h.integration = true;
        let integrated = env_digest(&mut h).await;
        assert_eq!(plain, integrated, "{shell}: {}", h.text("t2"));
    }
}
