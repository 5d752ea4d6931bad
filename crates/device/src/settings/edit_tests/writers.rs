//! Writers racing, crashing or never stopping: the file is always one whole save.

use super::*;

#[test]
fn another_writer_between_read_and_rename_is_not_lost() {
    let home = Home::new();
    let path = home.config();
    fs::write(&path, "# mine\nremote:\n  enabled: false\n  max_mode: plan\n").unwrap();
    let mut calls = 0;
    let settings = apply_with_hook(&path, no_home(), &[Change::RemoteEnabled(true)], &mut || {
        calls += 1;
        if calls == 1 {
            // An editor saves its own change while ours waits in the temporary file.
            fs::write(
                &path,
                "# mine\n# theirs\nremote:\n  enabled: false\n  max_mode: manual\n",
            )
            .unwrap();
        }
    })
    .unwrap();
    assert_eq!(calls, 2, "the edit should have been redone once");
    assert_eq!(
        read(&path),
        "# mine\n# theirs\nremote:\n  enabled: true\n  max_mode: manual\n"
    );
    assert!(settings.remote.enabled);
    assert_eq!(settings.remote.max_mode, Mode::Manual);
    assert!(leftovers(&home.at("conf")).is_empty());
}

#[test]
fn writers_at_the_same_time_all_land() {
    let home = Home::new();
    let path = home.config();
    fs::write(&path, "# shared\n").unwrap();
    let folders: Vec<PathBuf> = (0..8).map(|i| home.at(&format!("w{i}"))).collect();
    std::thread::scope(|scope| {
        for folder in &folders {
            fs::create_dir(folder).unwrap();
            let path = &path;
            scope.spawn(move || {
                for _ in 0..5 {
                    apply_to(path, no_home(), &[Change::AddRoot(folder.clone())]).unwrap();
                    apply_to(path, no_home(), &[Change::RemoveRoot(folder.clone())]).unwrap();
                }
                apply_to(
                    path,
                    no_home(),
                    &[Change::AddRoot(folder.clone()), Change::Trust(folder.clone())],
                )
                .unwrap();
            });
        }
    });
    let mut settings = load_from(&path, no_home()).unwrap();
    settings.remote.roots.sort();
    settings.trusted.sort();
    assert_eq!(settings.remote.roots, folders);
    assert_eq!(settings.trusted, folders);
    assert!(read(&path).starts_with("# shared\n"));
}

#[test]
fn a_writer_that_never_stops_gives_up_without_writing() {
    let home = Home::new();
    let path = home.config();
    fs::write(&path, "remote:\n  enabled: false\n").unwrap();
    let mut calls = 0;
    let error = apply_with_hook(&path, no_home(), &[Change::RemoteEnabled(true)], &mut || {
        calls += 1;
        let text = read(&path);
        fs::write(&path, format!("{text}# theirs {calls}\n")).unwrap();
    })
    .unwrap_err();
    assert!(
        matches!(
            error,
            SettingsError::Contended {
                attempts: atomic_write::MAX_ATTEMPTS,
                ..
            }
        ),
        "{error}"
    );
    let text = read(&path);
    assert!(
        text.starts_with("remote:\n  enabled: false\n"),
        "ours must not be written: {text}"
    );
    assert!(text.ends_with(&format!("# theirs {}\n", atomic_write::MAX_ATTEMPTS)));
    assert!(leftovers(&home.at("conf")).is_empty());
}

const CRASH_CHILD: &str = "LEMBAS_SETTINGS_CRASH_CHILD";

/// The child process of [`a_killed_writer_never_corrupts_the_file`]: edits forever. Every file it
/// saves whole satisfies [`whole_save`].
#[test]
#[ignore = "runs only as the child process of a_killed_writer_never_corrupts_the_file"]
fn crash_child_writer() {
    let path = PathBuf::from(std::env::var_os(CRASH_CHILD).unwrap());
    let folder = path.parent().unwrap().parent().unwrap().join("b");
    for round in 0u64.. {
        let padding = "x".repeat((round * 37 % 2000) as usize);
        let server = Change::SetServer {
            url: format!("https://example.test/{padding}/{round}"),
            connection: Some(round.to_string()),
        };
        let trust = if round % 2 == 0 {
            Change::Trust(folder.clone())
        } else {
            Change::Untrust(folder.clone())
        };
        apply_to(
            &path,
            no_home(),
            &[server, trust, Change::RemoteEnabled(round % 2 == 0)],
        )
        .unwrap();
    }
}

/// Whether `text` is a file the crash child saved whole (or the starting file).
fn whole_save(text: &str, header: &str, folder: &Path) -> Result<(), String> {
    if !text.starts_with(header) || !text.ends_with('\n') {
        return Err("cut short".into());
    }
    let settings = parse(Path::new("config.yaml"), text).map_err(|e| e.to_string())?;
    if let Some(server) = settings.server {
        let connection = server.connection.ok_or("no connection")?;
        if !server.url.ends_with(&format!("/{connection}")) {
            return Err("url and connection are from different saves".into());
        }
        let trusted = connection.parse::<u64>().map_err(|e| e.to_string())? % 2 == 0;
        if settings.remote.enabled != trusted
            || settings.trusted != if trusted { vec![folder.to_owned()] } else { vec![] }
        {
            return Err("remote and trusted are from different saves".into());
        }
    }
    Ok(())
}

#[test]
fn a_killed_writer_never_corrupts_the_file() {
    let home = Home::new();
    let path = home.config();
    let header = "# header that must survive\nkeep: [1, 2, 3]\n";
    fs::write(&path, header).unwrap();
    let exe = std::env::current_exe().unwrap();
    for _ in 0..40 {
        let before = read(&path);
        let mut child = std::process::Command::new(&exe)
            .args([
                "--exact",
                "settings::edit::tests::writers::crash_child_writer",
                "--ignored",
                "--test-threads=1",
            ])
            .env(CRASH_CHILD, &path)
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .spawn()
            .unwrap();
        // Let it save at least once, then kill it at some point in its loop.
        let deadline = Instant::now() + Duration::from_secs(60);
        while read(&path) == before {
            assert!(Instant::now() < deadline, "the child never wrote");
            assert!(child.try_wait().unwrap().is_none(), "the child exited early");
            std::thread::sleep(Duration::from_millis(1));
        }
        std::thread::sleep(Duration::from_micros(fastrand::u64(0..10_000)));
        child.kill().unwrap(); // SIGKILL
        child.wait().unwrap();

        let text = read(&path);
        if let Err(problem) = whole_save(&text, header, &home.at("b")) {
            panic!("config.yaml is corrupt after a kill ({problem}):\n{text}");
        }
    }
    // A killed writer may leave a temporary file; it never shadows config.yaml and the next
    // writer clears it.
    fs::write(
        home.at("conf/.config.yaml.1.00000000deadbeef.tmp"),
        "remote: [broken",
    )
    .unwrap();
    apply_to(&path, no_home(), &[Change::Scheduled(true)]).unwrap();
    assert!(load_from(&path, no_home()).unwrap().remote.scheduled);
    assert!(leftovers(&home.at("conf")).is_empty());
}
