#!/usr/bin/env python3
"""Reads and clicks the tray menu of the running app over D-Bus, as a desktop's tray would.

The app's tray (libayatana-appindicator) exports a StatusNotifierItem whose menu is served with the
com.canonical.dbusmenu interface. Usage:
  tray_menu.py find                 prints "<bus name> <menu path>" once the menu is exported
  tray_menu.py list                 prints each item as JSON: {id, label, enabled, toggle}
  tray_menu.py click <label start>  sends "clicked" to the first item whose label starts so
"""
import json
import re
import subprocess
import sys
import time

ITEM_ROOT = "/org/ayatana/NotificationItem"


def gdbus(*args):
    return subprocess.run(["gdbus", *args], check=True, capture_output=True, text=True, timeout=10).stdout


def parse_gvariant(text):
    """Turns gdbus's GVariant text into Python values (strings kept exactly as written)."""
    out, i, n = [], 0, len(text)
    while i < n:
        c = text[i]
        if c in "'\"":
            j, buf = i + 1, [c]
            while text[j] != c:
                if text[j] == "\\":
                    buf.append(text[j : j + 2])
                    j += 2
                    continue
                buf.append(text[j])
                j += 1
            buf.append(c)
            out.append("".join(buf))
            i = j + 1
        elif c in "<>":  # variant boxes
            i += 1
        elif c == "@":  # a type annotation such as @av or @a{sv}
            m = re.match(r"@[a-z{}()]+\s*", text[i:])
            i += len(m.group(0))
        else:
            m = re.match(r"(true|false|uint32|int32|byte|uint64|int64|objectpath)\b", text[i:])
            if m:
                word = m.group(1)
                out.append({"true": "True", "false": "False"}.get(word, ""))
                i += len(word)
            else:
                out.append(c)
                i += 1
    import ast

    return ast.literal_eval("".join(out))


def bus_names():
    listed = gdbus("call", "--session", "--dest", "org.freedesktop.DBus", "--object-path",
                   "/org/freedesktop/DBus", "--method", "org.freedesktop.DBus.ListNames")
    return re.findall(r"'(:[0-9.]+)'", listed)


def pid_of(name):
    said = gdbus("call", "--session", "--dest", "org.freedesktop.DBus", "--object-path", "/org/freedesktop/DBus",
                 "--method", "org.freedesktop.DBus.GetConnectionUnixProcessID", name)
    return int(re.search(r"uint32 (\d+)", said).group(1))


def menu_path(name):
    try:
        tree = gdbus("introspect", "--session", "--dest", name, "--object-path", ITEM_ROOT, "--recurse")
    except subprocess.SubprocessError:
        return None
    path = None
    for line in tree.splitlines():
        m = re.match(r"\s*node (\S+) \{", line)
        if m:
            path = m.group(1)
        elif "interface com.canonical.dbusmenu" in line and path:
            return path
    return None


_found = {}


def find(wait_s=20.0, pid=None):
    """The bus name and menu path of the tray (of process `pid` when given), once exported."""
    cached = _found.get(pid)
    if cached and cached[0] in bus_names():
        return cached
    deadline = time.monotonic() + wait_s
    others = set()  # names of other processes: asked once
    while True:
        for name in bus_names():
            if name in others:
                continue
            if pid is not None:
                try:
                    if pid_of(name) != pid:
                        others.add(name)
                        continue
                except subprocess.SubprocessError:
                    continue
            path = menu_path(name)
            if path:
                _found[pid] = _found[None] = (name, path)
                return name, path
        if time.monotonic() > deadline:
            raise SystemExit("tray_menu: no tray menu on the session bus")
        time.sleep(0.02)


def icon_name(name, path):
    """The StatusNotifierItem's icon (the item sits at the menu's parent path)."""
    said = gdbus("call", "--session", "--dest", name, "--object-path", path.rsplit("/", 1)[0], "--method",
                 "org.freedesktop.DBus.Properties.Get", "org.kde.StatusNotifierItem", "IconName")
    return parse_gvariant(said)[0]


def status(name, path):
    """The StatusNotifierItem's Status: Passive, Active or NeedsAttention."""
    said = gdbus("call", "--session", "--dest", name, "--object-path", path.rsplit("/", 1)[0], "--method",
                 "org.freedesktop.DBus.Properties.Get", "org.kde.StatusNotifierItem", "Status")
    return parse_gvariant(said)[0]


def items(name, path):
    layout = parse_gvariant(gdbus("call", "--session", "--dest", name, "--object-path", path, "--method",
                                  "com.canonical.dbusmenu.GetLayout", "--", "0", "-1", "[]"))
    _revision, (_root, _props, children) = layout
    found = []
    for child_id, props, _grandchildren in children:
        if props.get("type") == "separator":
            continue
        found.append({
            "id": child_id,
            "label": props.get("label", ""),
            "enabled": props.get("enabled", True),
            "toggle": props.get("toggle-state") if props.get("toggle-type") == "checkmark" else None,
        })
    return found


def click(name, path, label_start):
    for item in items(name, path):
        if item["label"].startswith(label_start):
            gdbus("call", "--session", "--dest", name, "--object-path", path, "--method",
                  "com.canonical.dbusmenu.Event", "--", str(item["id"]), "clicked", "<0>", "0")
            return item
    raise SystemExit(f"tray_menu: no item starting with {label_start!r}")


if __name__ == "__main__":
    command = sys.argv[1] if len(sys.argv) > 1 else "list"
    name, path = find()
    if command == "find":
        print(name, path)
    elif command == "list":
        for item in items(name, path):
            print(json.dumps(item))
    elif command == "click":
        print(json.dumps(click(name, path, sys.argv[2])))
    else:
        raise SystemExit(__doc__)
