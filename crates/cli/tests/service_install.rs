//! `lembas service install | uninstall | status` in a home of its own. Where a systemd user manager
//! answers, the unit is started by it; where none does (a container, CI), the unit file is checked
//! with `systemd-analyze --user verify`, and install says the command to run in a desktop session.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use lembas_testkit::Home;

fn unit_file(home: &Home) -> PathBuf {
    home.path().join(".config/systemd/user/lembas.service")
}

/// `exe` (the built lembas, or a copy of it) run in `home`, with no session bus: no user manager
/// answers, whatever the machine has.
fn run(exe: &Path, home: &Home, args: &[&str]) -> Output {
    lembas_testkit::output_of_fresh_copy(
        Command::new(exe)
            .args(args)
            .envs(home.env())
            .env_remove("DBUS_SESSION_BUS_ADDRESS"),
    )
}

fn lembas(home: &Home, args: &[&str]) -> Output {
    run(Path::new(env!("CARGO_BIN_EXE_lembas")), home, args)
}

fn text(out: &Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    )
}

fn status(home: &Home) -> serde_json::Value {
    let out = lembas(home, &["service", "status", "--json"]);
    assert!(out.status.success(), "{}", text(&out));
    serde_json::from_slice(&out.stdout).unwrap()
}

/// `systemd-analyze --user verify` on the unit: nothing said, status 0 (a bad line is only a
/// warning there, so silence is the check).
fn verify(home: &Home, unit: &Path) {
    let out = Command::new("systemd-analyze")
        .args(["--user", "verify"])
        .arg(unit)
        .env("XDG_RUNTIME_DIR", home.runtime_dir())
        .env("HOME", home.path())
        .output()
        .expect("systemd-analyze (Debian's systemd package) runs");
    assert!(
        out.status.success() && out.stderr.is_empty() && out.stdout.is_empty(),
        "systemd-analyze verify: {}",
        text(&out)
    );
}

#[test]
fn install_writes_a_unit_systemd_accepts_and_uninstall_removes_it() {
    let home = Home::new();
    let bin = env!("CARGO_BIN_EXE_lembas");
    let before = status(&home);
    assert_eq!(before["installed"], false);
    let said = text(&lembas(&home, &["service", "status"]));
    assert!(
        said.contains("Not installed") && said.contains("lembas service install"),
        "{said}"
    );

    let out = lembas(&home, &["service", "install"]);
    let said = text(&out);
    let unit = std::fs::read_to_string(unit_file(&home)).expect("the unit is written");
    assert!(unit.contains(&format!("ExecStart={bin} service run\n")), "{unit}");
    assert!(unit.contains("WantedBy=default.target"));
    verify(&home, &unit_file(&home));
    // Without a session bus no manager answers: the file stays, and the sentence says what to run.
    assert!(!out.status.success(), "{said}");
    assert!(
        said.contains("the service's file is written")
            && said
                .contains("systemctl --user daemon-reload && systemctl --user enable --now lembas.service"),
        "{said}"
    );
    let after = status(&home);
    assert_eq!(after["installed"], true);
    assert_eq!(after["starts"], bin);
    assert!(after["manager_error"].is_string(), "{after}");
    let said = text(&lembas(&home, &["service", "status"]));
    assert!(
        said.contains(&format!("starts {bin} service run at login")),
        "{said}"
    );

    // The same install again is no error of its own (the manager is asked again).
    let again = text(&lembas(&home, &["service", "install"]));
    assert!(!again.contains("already installed"), "{again}");

    let out = lembas(&home, &["service", "uninstall", "--json"]);
    assert!(out.status.success(), "{}", text(&out));
    let done: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(done["event"], "uninstalled");
    assert!(!unit_file(&home).exists());
    let said = text(&lembas(&home, &["service", "uninstall"]));
    assert!(said.contains("No service is installed"), "{said}");
}

#[test]
fn a_unit_for_another_lembas_is_kept_and_named() {
    let home = Home::new();
    let other = "# Written by `lembas service install`\n[Service]\nExecStart=/opt/other/lembas service run\n";
    std::fs::create_dir_all(unit_file(&home).parent().unwrap()).unwrap();
    std::fs::write(unit_file(&home), other).unwrap();
    let out = lembas(&home, &["service", "install", "--json"]);
    assert!(!out.status.success());
    let said: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let message = said["message"].as_str().unwrap();
    assert!(
        message.contains("already installed") && message.contains("lembas service uninstall"),
        "{message}"
    );
    assert_eq!(
        std::fs::read_to_string(unit_file(&home)).unwrap(),
        other,
        "nothing lost"
    );
    assert_eq!(status(&home)["starts"], "/opt/other/lembas");
}

#[test]
fn a_folder_that_cannot_hold_the_unit_is_a_sentence() {
    let home = Home::new();
    // A file where the folder must be (root ignores permissions; this it cannot write through).
    std::fs::write(home.path().join(".config/systemd"), "").unwrap();
    let out = lembas(&home, &["service", "install"]);
    assert!(!out.status.success());
    let said = text(&out);
    assert!(
        said.contains("cannot be written") && said.contains("then run `lembas service install` again"),
        "{said}"
    );
}

#[test]
fn a_unit_with_a_space_in_its_path_is_still_one_word_to_systemd() {
    let home = Home::new();
    let dir = home.path().join("my apps");
    std::fs::create_dir_all(&dir).unwrap();
    let exe = dir.join("lembas");
    std::fs::copy(env!("CARGO_BIN_EXE_lembas"), &exe).unwrap();
    let out = run(&exe, &home, &["service", "install"]);
    let written = std::fs::read_to_string(unit_file(&home)).unwrap_or_else(|_| panic!("{}", text(&out)));
    assert!(
        written.contains(&format!("ExecStart=\"{}\" service run", exe.display())),
        "{written}"
    );
    verify(&home, &unit_file(&home));
    assert_eq!(status(&home)["starts"], exe.to_str().unwrap());
}
