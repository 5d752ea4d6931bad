//! `lembas completions <shell>`: the script each shell loads, tried in the real bash, fish and zsh,
//! and `--version`.

use std::process::Command;

fn lembas(args: &[&str]) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_lembas"))
        .args(args)
        .output()
        .unwrap()
}

fn script(shell: &str) -> std::path::PathBuf {
    let out = lembas(&["completions", shell]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let dir = std::env::temp_dir().join(format!("lembas-completions-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join(format!("lembas.{shell}"));
    std::fs::write(&file, &out.stdout).unwrap();
    file
}

fn shell(program: &str, line: &str) -> String {
    let out = Command::new(program).arg("-c").arg(line).output().unwrap();
    assert!(
        out.status.success(),
        "{program}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

#[test]
fn bash_and_fish_complete_the_subcommands_and_zsh_reads_its_script() {
    let bash = script("bash");
    let offered = shell(
        "bash",
        &format!(
            "source {}; COMP_WORDS=(lembas se); COMP_CWORD=1; COMP_LINE='lembas se'; COMP_POINT=9; \
             _lembas lembas se lembas; printf '%s\\n' \"${{COMPREPLY[@]}}\"",
            bash.display()
        ),
    );
    let mut words: Vec<&str> = offered.lines().collect();
    words.sort();
    assert_eq!(words, ["serve", "service", "sessions"], "{offered}");

    let fish = script("fish");
    let offered = shell(
        "fish",
        &format!("source {}; complete -C 'lembas rem'", fish.display()),
    );
    assert!(offered.starts_with("remote\t"), "{offered}");

    let zsh = script("zsh");
    shell("zsh", &format!("zsh -n {}", zsh.display()));
    assert!(
        std::fs::read_to_string(&zsh)
            .unwrap()
            .starts_with("#compdef lembas")
    );

    let unknown = lembas(&["completions", "nosh"]);
    assert_eq!(unknown.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&unknown.stderr).contains("possible values: bash"));
}

#[test]
fn version_is_the_package_s() {
    let out = lembas(&["--version"]);
    assert!(out.status.success());
    assert_eq!(
        String::from_utf8_lossy(&out.stdout).trim(),
        format!("lembas {}", env!("CARGO_PKG_VERSION"))
    );
}
