"""scripts/link/hot-first's matching, on objects made here with functions of chosen names and sizes:
the list's name taken as it is, else by its hash-free name and its size, else by its hash-free name
when one symbol has it; generic instances sharing a name are not guessed. (CI builds no release
lembas, so this is where the ordering's rules run there.) Run by scripts/check."""
import importlib.machinery
import importlib.util
import subprocess
import tempfile
import unittest
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
# The script has no .py name: loaded by its path.
loader = importlib.machinery.SourceFileLoader("hot_first", str(ROOT / "scripts/link/hot-first"))
hot_first = importlib.util.module_from_spec(importlib.util.spec_from_loader("hot_first", loader))
loader.exec_module(hot_first)


def legacy(path: str, hash_: str) -> str:
    return "_ZN" + "".join(f"{len(p)}{p}" for p in path.split("::")) + f"17h{hash_}E"


class Ordering(unittest.TestCase):
    def link(self, functions: dict[str, int], listed: list[tuple[str, int]]) -> list[str]:
        """The ordering for an object holding `functions` (name: instructions) and a list."""
        with tempfile.TemporaryDirectory() as folder:
            folder = Path(folder)
            body = "".join(
                f'__asm__(".section .text.f{i},\\"ax\\",@progbits\\n.globl {name}\\n.type {name},@function\\n'
                f'{name}:\\n' + "nop\\n" * size + f'.size {name}, .-{name}\\n");\n'
                for i, (name, size) in enumerate(functions.items()))
            (folder / "f.c").write_text(body)
            subprocess.run(["cc", "-c", "-o", folder / "f.o", folder / "f.c"], check=True)
            (folder / "list.txt").write_text("# a comment\n" + "".join(f"{n} {s}\n" for n, s in listed))
            hot_first.LIST = folder / "list.txt"
            return hot_first.ordering(["-o", str(folder / "lembas"), str(folder / "f.o")])

    def test_names_are_taken_as_they_are_in_the_lists_order(self):
        a, b = legacy("dev::a", "00000000000000aa"), legacy("dev::b", "00000000000000bb")
        self.assertEqual(self.link({a: 3, b: 5}, [(b, 5), (a, 3)]), [b, a])

    def test_a_name_hashed_otherwise_is_found_by_its_size_then_alone(self):
        here = legacy("dev::sized", "1111111111111111")
        listed = legacy("dev::sized", "2222222222222222")
        self.assertEqual(self.link({here: 4}, [(listed, 4)]), [here])
        self.assertEqual(self.link({here: 4}, [(listed, 9)]), [here], "one symbol has the name")

    def test_instances_sharing_a_name_are_not_guessed(self):
        one, two = legacy("dev::generic", "1" * 16), legacy("dev::generic", "2" * 16)
        listed = legacy("dev::generic", "3" * 16)
        self.assertEqual(self.link({one: 4, two: 6}, [(listed, 6)]), [two], "the one of that size")
        self.assertEqual(self.link({one: 4, two: 6}, [(listed, 8)]), [], "neither")

    def test_keys_drop_what_a_build_changes(self):
        self.assertEqual(hot_first.key(legacy("a::b", "0123456789abcdef") + ".llvm.42"), "_ZN1a1bE")
        self.assertEqual(hot_first.key("_RNvCsabc123_5crate4func.7"), "_RNvCs_5crate4func")


if __name__ == "__main__":
    unittest.main()
