//! The box's layout as the parent plans it, and a box made for real around a root below `/tmp`.

use std::os::unix::process::CommandExt;

use super::*;

/// `OsStr` of a C string.
fn shown(c: &CString) -> &std::ffi::OsStr {
    std::ffi::OsStr::from_bytes(c.as_bytes())
}

#[test]
fn roots_below_the_temp_places_are_attached_after_them_with_their_folders_made() {
    let roots = [PathBuf::from("/tmp/a/b/root"), PathBuf::from("/home/p/w")];
    let own = [PathBuf::from("/home/p/.local/state/lembas/attachments/s1")];
    let layout = Layout::new(&Description {
        roots: &roots,
        own: &own,
        plan: false,
        temp: Path::new("/home/p/.local/state/lembas/tmp/s1"),
        governing: &[],
        hidden: &[],
        absent_file: Path::new("/dev/null"),
        emptied: &[],
        cwd: Path::new("/home/p/w"),
    })
    .unwrap();
    let targets: Vec<&std::ffi::OsStr> = layout.attach.iter().map(|a| shown(&a.target)).collect();
    assert_eq!(targets, ["/home/p/w", "/tmp", "/var/tmp", "/tmp/a/b/root"]);
    let made: Vec<&std::ffi::OsStr> = layout.attach[3].make.iter().map(shown).collect();
    assert_eq!(made, ["/tmp/a", "/tmp/a/b", "/tmp/a/b/root"]);
    assert_eq!(
        folders_below(Path::new("/s/x/y"), Path::new("/s")),
        [Path::new("/s/x")]
    );
}

/// A root and the temp folder both below the machine's /tmp (a test's, or a person's scratch
/// folder): the root is attached into the box's own /tmp, and the command starts in it.
#[test]
fn a_root_below_tmp_is_reached_in_the_box() {
    for plan in [false, true] {
        root_below_tmp(plan);
    }
}

fn root_below_tmp(plan: bool) {
    let base = tempfile::tempdir().unwrap();
    let base = std::fs::canonicalize(base.path()).unwrap();
    let (root, temp) = (base.join("repo"), base.join("state/tmp/s1"));
    std::fs::create_dir_all(&root).unwrap();
    std::fs::create_dir_all(&temp).unwrap();
    let roots = [root.clone()];
    let mut layout = Layout::new(&Description {
        roots: &roots,
        own: &[],
        plan,
        temp: &temp,
        governing: &[],
        hidden: &[base.join("state")],
        absent_file: Path::new("/dev/null"),
        emptied: &[],
        cwd: &root,
    })
    .unwrap();
    let mut command = std::process::Command::new("sh");
    let line = if plan {
        "pwd && echo t > /tmp/t.txt && ! touch made.txt 2>/dev/null"
    } else {
        "pwd && echo made > made.txt && echo t > /tmp/t.txt"
    };
    command.args(["-c", line]);
    // SAFETY: `enter` is made for this place.
    unsafe {
        command.pre_exec(move || layout.enter());
    }
    let output = command.output().unwrap();
    assert!(output.status.success(), "{output:?}");
    assert_eq!(
        String::from_utf8_lossy(&output.stdout).trim(),
        root.display().to_string()
    );
    assert_eq!(root.join("made.txt").exists(), !plan);
    assert!(temp.join("t.txt").exists());
}
