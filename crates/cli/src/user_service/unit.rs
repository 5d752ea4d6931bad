//! The files that start the device at login: a systemd user unit and a launchd agent, made from
//! the executable's path. Pure, so both are tested on every platform.

use std::path::Path;

/// The unit's name under `~/.config/systemd/user/`.
pub const SYSTEMD_NAME: &str = "lembas.service";
/// The launchd agent's label (its file is `<label>.plist` under `~/Library/LaunchAgents/`).
pub const LAUNCHD_LABEL: &str = "ai.lembas.device";

/// A systemd user unit running `<exe> service run`, restarted when it fails (not when it is stopped:
/// `lembas service run` exits 0 on SIGTERM). No network target: a user manager cannot order on the
/// system's network, and the link retries by itself with backoff.
pub fn systemd(exe: &Path) -> String {
    format!(
        "# Written by `lembas service install`; `lembas service uninstall` removes it.\n\
         [Unit]\n\
         Description=LLeMbas device: links this computer to your LLeMbas, within the limits you set\n\
         \n\
         [Service]\n\
         Type=exec\n\
         ExecStart={} service run\n\
         Restart=on-failure\n\
         RestartSec=5s\n\
         \n\
         [Install]\n\
         WantedBy=default.target\n",
        systemd_word(&exe.to_string_lossy())
    )
}

/// One word of an `ExecStart=` line: quoted when it holds a space or a quote, with systemd's
/// specifiers (`%`) and variables (`$`) doubled so a path is taken as it is.
fn systemd_word(word: &str) -> String {
    let escaped = word.replace('%', "%%").replace('$', "$$");
    if escaped
        .chars()
        .any(|c| c.is_whitespace() || c == '"' || c == '\'' || c == '\\')
    {
        format!("\"{}\"", escaped.replace('\\', "\\\\").replace('"', "\\\""))
    } else {
        escaped
    }
}

/// A launchd agent running `<exe> service run` at login, started again when it exits with an error,
/// its output in `log`.
pub fn launchd(exe: &Path, log: &Path) -> String {
    format!(
        r#"<?xml version="1.0" encoding="UTF-8"?>
<!DOCTYPE plist PUBLIC "-//Apple//DTD PLIST 1.0//EN" "http://www.apple.com/DTDs/PropertyList-1.0.dtd">
<!-- Written by `lembas service install`; `lembas service uninstall` removes it. -->
<plist version="1.0">
<dict>
  <key>Label</key>
  <string>{LAUNCHD_LABEL}</string>
  <key>ProgramArguments</key>
  <array>
    <string>{}</string>
    <string>service</string>
    <string>run</string>
  </array>
  <key>RunAtLoad</key>
  <true/>
  <key>KeepAlive</key>
  <dict>
    <key>SuccessfulExit</key>
    <false/>
  </dict>
  <key>ThrottleInterval</key>
  <integer>5</integer>
  <key>ProcessType</key>
  <string>Background</string>
  <key>StandardOutPath</key>
  <string>{}</string>
  <key>StandardErrorPath</key>
  <string>{}</string>
</dict>
</plist>
"#,
        xml_text(&exe.to_string_lossy()),
        xml_text(&log.to_string_lossy()),
        xml_text(&log.to_string_lossy()),
    )
}

fn xml_text(text: &str) -> String {
    text.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn exec_start_takes_a_path_as_it_is() {
        let cases = [
            ("/usr/bin/lembas", "/usr/bin/lembas"),
            ("/home/a b/lembas", "\"/home/a b/lembas\""),
            ("/opt/100%/lembas", "/opt/100%%/lembas"),
            ("/opt/$HOME/lembas", "/opt/$$HOME/lembas"),
            ("/opt/\"q\"/lembas", "\"/opt/\\\"q\\\"/lembas\""),
            ("/opt/back\\slash", "\"/opt/back\\\\slash\""),
        ];
        for (path, word) in cases {
            assert_eq!(systemd_word(path), word, "{path}");
            assert!(systemd(Path::new(path)).contains(&format!("ExecStart={word} service run\n")));
        }
    }

    #[test]
    fn the_agent_escapes_its_paths() {
        let plist = launchd(Path::new("/Users/a&b/<lembas>"), Path::new("/Users/a&b/log"));
        assert!(plist.contains("<string>/Users/a&amp;b/&lt;lembas&gt;</string>"));
        assert!(plist.contains("<string>/Users/a&amp;b/log</string>"));
        assert!(plist.contains(&format!("<string>{LAUNCHD_LABEL}</string>")));
    }
}
