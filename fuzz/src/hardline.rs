//! A naive reference for docs/protocol.md's hardline list, written apart from the judge: whatever it
//! says is hardline the judge must never allow. It only speaks for lines simple enough that
//! splitting on separators and spaces is how bash reads them (no quotes, escapes, expansions,
//! comments, redirections or groupings); for any other line it says nothing.

/// The judge's home, root and folder in the `bash_judge` target: those of the judge's table tests,
/// so their lines are the seeds as they are.
pub const HOME: &str = "/home/p";
pub const ROOT: &str = "/home/p/work";
pub const FOLDER: &str = "/home/p/work/proj";

/// Characters bash takes literally in a word (besides `~` at a word's start), plus the separators.
fn simple(line: &str) -> bool {
    line.chars()
        .all(|c| c.is_ascii_alphanumeric() || " \t\n_./~:=+,@%-;|&".contains(c))
}

/// Why the line is hardline, or `None` when it is not (or is not simple enough to tell).
pub fn hardline(line: &str) -> Option<String> {
    if let Some(bomb) = fork_bomb(line) {
        return Some(bomb);
    }
    if !simple(line) {
        return None;
    }
    line.split([';', '|', '&', '\n'])
        .find_map(|segment| command(&segment.split_whitespace().collect::<Vec<_>>()))
}

/// `NAME(){ NAME|NAME& };NAME` as the whole line, spaces anywhere bash allows them.
fn fork_bomb(line: &str) -> Option<String> {
    if line.contains(['\'', '"', '\\', '#', '$', '`']) {
        return None;
    }
    let squeezed: String = line.chars().filter(|c| !c.is_whitespace()).collect();
    let name = squeezed.split("(){").next()?;
    let named = !name.is_empty()
        && name
            .chars()
            .all(|c| c == ':' || c.is_ascii_alphanumeric() || c == '_');
    (named && squeezed == format!("{name}(){{{name}|{name}&}};{name}")).then(|| format!("fork bomb {name}"))
}

/// One simple command, its words already split.
fn command(words: &[&str]) -> Option<String> {
    // Reserved words before a command, and assignments, do not change what runs.
    let prefixes = [
        "if", "then", "else", "elif", "do", "while", "until", "time", "coproc",
    ];
    let mut rest = words;
    while let Some((first, after)) = rest.split_first() {
        let assignment = first.split_once('=').is_some_and(|(name, _)| {
            !name.is_empty()
                && !name.starts_with(|c: char| c.is_ascii_digit())
                && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
        });
        if prefixes.contains(first) || assignment {
            rest = after;
        } else {
            break;
        }
    }
    let (&program, args) = rest.split_first()?;
    // Words that start a compound command the reference does not read.
    if ["for", "case", "select", "function", "in", "fi", "done", "esac"].contains(&program) {
        return None;
    }
    let name = program.rsplit('/').next().unwrap_or(program);
    let why = |what: &str| Some(format!("{what}: {}", words.join(" ")));
    match name {
        "sudo" | "su" | "doas" | "pkexec" | "shutdown" | "reboot" | "halt" | "poweroff" => why(name),
        _ if name.starts_with("mkfs") => why("mkfs"),
        "init" if matches!(args.first(), Some(&"0" | &"6")) => why("init 0/6"),
        "dd" if args.iter().any(|a| {
            a.strip_prefix("of=/dev/")
                .is_some_and(|d| !d.is_empty() && d != "null")
        }) =>
        {
            why("dd of=/dev/*")
        }
        "rm" => {
            let (flags, targets) = flags_and_targets(args);
            let recursive = flags.iter().any(|f| short(f, &['r', 'R']) || f == "-recursive");
            let force = flags.iter().any(|f| short(f, &['f']) || f == "-force");
            (recursive && force && targets.iter().any(|t| everything(t, true)))
                .then(|| format!("rm -rf: {}", words.join(" ")))
        }
        "chmod" | "chown" => {
            let (flags, targets) = flags_and_targets(args);
            let recursive = flags.iter().any(|f| short(f, &['R']) || f == "-recursive");
            (recursive && targets.iter().any(|t| everything(t, false)))
                .then(|| format!("{name} -R: {}", words.join(" ")))
        }
        _ => None,
    }
}

/// A cluster of short options (`-rf` kept as `rf`) holding one of `letters`.
fn short(flag: &str, letters: &[char]) -> bool {
    !flag.starts_with('-') && flag.contains(letters)
}

/// Options (without their first `-`; long ones keep one) before `--`, and the other words.
fn flags_and_targets<'a>(args: &[&'a str]) -> (Vec<String>, Vec<&'a str>) {
    let mut flags = Vec::new();
    let mut targets = Vec::new();
    let mut options = true;
    for &arg in args {
        if options && arg == "--" {
            options = false;
        } else if options && arg.len() > 1 && arg.starts_with('-') {
            flags.push(arg[1..].to_string());
        } else {
            targets.push(arg);
        }
    }
    (flags, targets)
}

/// `/`, `~`, `$HOME` spelled out, or (for rm) the root the judge works in: with trailing slashes
/// or `/.`, as bash hands them to the command.
fn everything(target: &str, roots_too: bool) -> bool {
    let mut t = target.to_string();
    if let Some(after) = t.strip_prefix('~') {
        if after.is_empty() || after.starts_with('/') {
            t = format!("{HOME}{after}");
        }
    }
    loop {
        let trimmed = t
            .strip_suffix("/.")
            .or_else(|| t.strip_suffix('/').filter(|s| !s.is_empty()))
            .map(str::to_string);
        match trimmed {
            Some(shorter) if !shorter.is_empty() => t = shorter,
            _ => break,
        }
    }
    let slashes = !t.is_empty() && t.chars().all(|c| c == '/');
    slashes || t == HOME || (roots_too && t == ROOT)
}
