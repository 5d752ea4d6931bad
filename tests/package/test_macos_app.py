"""scripts/package-macos --layout: LLeMbas Desktop.app as a Mac reads it, laid out here from
stand-ins for the three programs (the bundle is the same whatever they hold). Run by scripts/check."""
import os
import plistlib
import re
import struct
import subprocess
import tempfile
import unittest
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent.parent
PROGRAMS = ["lembas-desktop", "lembas-window", "lembas"]


def lay_out(bin_dir: Path, out: Path) -> subprocess.CompletedProcess:
    return subprocess.run([ROOT / "scripts/package-macos", "--layout", bin_dir, out],
                          capture_output=True, text=True)


class MacApp(unittest.TestCase):
    def setUp(self):
        self.dir = tempfile.TemporaryDirectory()
        self.bin = Path(self.dir.name, "bin")
        self.bin.mkdir()
        for program in PROGRAMS:
            path = self.bin / program
            path.write_text(f"#!/bin/sh\necho {program}\n")
            path.chmod(0o755)
        self.out = Path(self.dir.name, "out")

    def tearDown(self):
        self.dir.cleanup()

    def test_the_bundle_is_what_a_mac_reads(self):
        done = lay_out(self.bin, self.out)
        self.assertEqual(done.returncode, 0, done.stderr)
        app = Path(done.stdout.strip())
        # The notifier serves only a program whose main bundle's path ends in .app.
        self.assertEqual(app, self.out / "LLeMbas Desktop.app")
        contents = app / "Contents"
        info = plistlib.loads((contents / "Info.plist").read_bytes())
        version = re.search(r'^version = "(.*)"$', (ROOT / "Cargo.toml").read_text(), re.M).group(1)
        self.assertEqual(info["CFBundleShortVersionString"], version)
        self.assertEqual(info["CFBundleVersion"], version)
        self.assertEqual(info["CFBundlePackageType"], "APPL")
        self.assertTrue(info["CFBundleIdentifier"])
        self.assertIs(info["LSUIElement"], True, "a menu-bar app has no Dock icon")
        self.assertEqual((contents / "PkgInfo").read_text(), "APPL????")
        executable = contents / "MacOS" / info["CFBundleExecutable"]
        self.assertEqual(executable.name, "lembas-desktop")
        for program in PROGRAMS:
            path = contents / "MacOS" / program
            self.assertTrue(os.access(path, os.X_OK), program)
            self.assertEqual(path.read_text(), (self.bin / program).read_text())
        icon = (contents / "Resources" / info["CFBundleIconFile"]).read_bytes()
        self.assertEqual(icon[:4], b"icns")
        self.assertEqual(struct.unpack(">I", icon[4:8])[0], len(icon))
        at, sizes = 8, []
        while at < len(icon):
            kind, length = icon[at:at + 4], struct.unpack(">I", icon[at + 4:at + 8])[0]
            png = icon[at + 8:at + length]
            self.assertEqual(png[:8], b"\x89PNG\r\n\x1a\n", kind)
            sizes.append(struct.unpack(">I", png[16:20])[0])
            at += length
        self.assertEqual(at, len(icon))
        self.assertIn(512, sizes)

    def test_laid_out_again_it_keeps_nothing_of_the_last(self):
        self.assertEqual(lay_out(self.bin, self.out).returncode, 0)
        stale = self.out / "LLeMbas Desktop.app/Contents/MacOS/old-program"
        stale.write_text("left over")
        self.assertEqual(lay_out(self.bin, self.out).returncode, 0)
        self.assertFalse(stale.exists())

    def test_a_missing_program_is_said_and_fails(self):
        (self.bin / "lembas-window").unlink()
        done = lay_out(self.bin, self.out)
        self.assertNotEqual(done.returncode, 0)
        self.assertIn("lembas-window is missing", done.stderr)


if __name__ == "__main__":
    unittest.main()
