//! A command's environment: a list of what passes, not of what is left out (a list of forbidden
//! words always misses one: `GH_PAT`, `DATABASE_URL` with a password, `MYSQL_PWD`, a webhook URL).
//! No socket address passes, even when `remote.env_keep` names it: the sockets are not in the box.

use std::ffi::{OsStr, OsString};

/// What a program needs to behave as in the person's terminal.
const PASSED: [&str; 16] = [
    "PATH",
    "HOME",
    "USER",
    "LOGNAME",
    "SHELL",
    "LANG",
    "LANGUAGE",
    "TERM",
    "COLORTERM",
    "TZ",
    "EDITOR",
    "VISUAL",
    "PAGER",
    "NO_COLOR",
    "CLICOLOR",
    "LS_COLORS",
];
/// Addresses of the person's sockets and agents.
const SOCKETS: [&str; 11] = [
    "SSH_AUTH_SOCK",
    "SSH_AGENT_PID",
    "GPG_AGENT_INFO",
    "DBUS_SESSION_BUS_ADDRESS",
    "DBUS_SYSTEM_BUS_ADDRESS",
    "DISPLAY",
    "WAYLAND_DISPLAY",
    "XAUTHORITY",
    "XDG_RUNTIME_DIR",
    "DOCKER_HOST",
    "KRB5CCNAME",
];

/// The variables of `vars` that pass: the list, `LC_*`, and the names `keep` gives exactly; then
/// `TMPDIR`, the command's temp folder.
pub fn passed(
    vars: impl Iterator<Item = (OsString, OsString)>,
    keep: &[String],
    temp: &OsStr,
) -> Vec<(OsString, OsString)> {
    let mut passed: Vec<(OsString, OsString)> = vars
        .filter(|(name, _)| {
            let name = name.to_string_lossy();
            let socket = SOCKETS.contains(&name.as_ref());
            !socket
                && (PASSED.contains(&name.as_ref())
                    || name.starts_with("LC_")
                    || keep.iter().any(|k| *k == name))
        })
        .collect();
    passed.push(("TMPDIR".into(), temp.to_owned()));
    passed
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_the_list_the_kept_names_and_the_temp_folder_pass() {
        let vars = [
            ("PATH", "/usr/bin"),
            ("HOME", "/home/p"),
            ("LC_TIME", "C"),
            ("GH_PAT", "ghp_x"),
            ("DATABASE_URL", "postgres://u:pw@h/db"),
            ("MYSQL_PWD", "pw"),
            ("NPM_CONFIG__AUTH", "x"),
            ("SLACK_WEBHOOK", "https://hooks.example/x"),
            ("SSH_AUTH_SOCK", "/tmp/agent"),
            ("DBUS_SESSION_BUS_ADDRESS", "unix:path=/run/user/1/bus"),
            ("KEEP_ME", "kept"),
            ("TMPDIR", "/var/host-tmp"),
        ]
        .map(|(n, v)| (OsString::from(n), OsString::from(v)));
        let keep = ["KEEP_ME".to_string(), "SSH_AUTH_SOCK".to_string()];
        let got = passed(vars.into_iter(), &keep, OsStr::new("/tmp"));
        let names: Vec<String> = got
            .iter()
            .map(|(n, v)| format!("{}={}", n.to_string_lossy(), v.to_string_lossy()))
            .collect();
        assert_eq!(
            names,
            [
                "PATH=/usr/bin",
                "HOME=/home/p",
                "LC_TIME=C",
                "KEEP_ME=kept",
                "TMPDIR=/tmp"
            ]
        );
    }
}
