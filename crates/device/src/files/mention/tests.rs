use super::*;

/// The built-in numbers, as the programs hand them down.
fn decisions() -> &'static Decisions {
    Decisions::built_in()
}

fn one(text: &str) -> Mention {
    let found = mentions(text);
    assert_eq!(found.len(), 1, "{text}: {found:?}");
    found.into_iter().next().unwrap_or_else(|| unreachable!())
}

/// What is typed, the names to try, the line range.
type Case = (&'static str, &'static [&'static str], Option<(usize, usize)>);

#[test]
fn escapes_ranges_and_trailing_punctuation() {
    let cases: [Case; 10] = [
        ("see @src/main.rs", &["src/main.rs"], None),
        ("@my\\ notes.md please", &["my notes.md"], None),
        ("@a\\#b.md", &["a#b.md"], None),
        ("@c.md#10-20", &["c.md"], Some((10, 20))),
        ("@c.md#7", &["c.md"], Some((7, 7))),
        ("@c.md#20-10,", &["c.md"], Some((10, 20))),
        ("look at @dir/", &["dir/"], None),
        ("is it @notes.md?", &["notes.md?", "notes.md"], None),
        ("@x#notes", &["x#notes"], None),
        ("(@a\\ b.txt)", &[], None),
    ];
    for (text, candidates, range) in cases {
        if candidates.is_empty() {
            // `(@…`: the `@` does not start a word, so it is no mention.
            assert!(mentions(text).is_empty(), "{text}");
            continue;
        }
        let m = one(text);
        assert_eq!(m.candidates, candidates, "{text}");
        assert_eq!(m.range, range, "{text}");
    }
}

#[test]
fn words_that_are_not_mentions() {
    for text in [
        "mail me at sam@example.com",
        "@ alone",
        "a@b",
        "@#12",
        "trailing \\@x",
    ] {
        assert!(mentions(text).is_empty(), "{text}: {:?}", mentions(text));
    }
    assert_eq!(mentions("@a and @b\n@c").len(), 3);
}

struct Fixture {
    _dir: tempfile::TempDir,
    root: PathBuf,
    roots: Vec<PathBuf>,
    // Read by the symlink cases, which are Unix's.
    #[cfg_attr(not(unix), allow(dead_code))]
    outside: PathBuf,
    protected: crate::policy::protected::Protected,
}

impl Fixture {
    /// A root holding the project `p` and a sibling folder `other`; `outside` is not in the root.
    fn new() -> Fixture {
        let dir = tempfile::tempdir().unwrap();
        let base = std::fs::canonicalize(dir.path()).unwrap();
        let root_folder = base.join("root");
        let root = root_folder.join("p");
        let outside = base.join("outside");
        for d in [&root, &root_folder.join("other"), &outside] {
            std::fs::create_dir_all(d).unwrap();
        }
        Fixture {
            _dir: dir,
            root,
            roots: vec![root_folder],
            outside,
            protected: crate::policy::protected::Protected::under_home(&base.join("home")),
        }
    }

    fn write(&self, path: &str, text: &str) {
        let path = self.root.join(path);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
    }

    fn attach(&self, text: &str) -> Vec<Attached> {
        let scope = Scope {
            root: &self.root,
            roots: &self.roots,
            protected: &self.protected,
            decisions: decisions(),
        };
        attach(&[text], &scope)
    }
}

#[test]
fn files_are_attached_line_numbered() {
    let f = Fixture::new();
    f.write("my notes.md", "one\ntwo\nthree\n");
    f.write("a#b.md", "hash\n");
    let attached = f.attach("read @my\\ notes.md and @a\\#b.md, twice @a\\#b.md");
    assert_eq!(attached.len(), 2);
    assert_eq!(
        attached[0].text,
        "<file path=\"my notes.md\">\n     1\tone\n     2\ttwo\n     3\tthree\n</file>"
    );
    assert_eq!(attached[0].resolved, f.root.join("my notes.md"));
    assert_eq!(attached[1].text, "<file path=\"a#b.md\">\n     1\thash\n</file>");
}

#[test]
fn a_range_a_listing_and_odd_files() {
    let f = Fixture::new();
    let text: String = (1..=30).map(|n| format!("line {n}\n")).collect();
    f.write("c.md", &text);
    f.write("dir/x.rs", "");
    f.write("dir/sub/y.rs", "");
    f.write("dir/.env", "SECRET=1");
    f.write("dir/.gitignore", "ignored.txt\n");
    f.write("dir/ignored.txt", "");
    f.write("empty.txt", "");
    std::fs::write(f.root.join("blob.bin"), [0u8, 1, 2, 3]).unwrap();
    f.write("pic.png", "not really");
    let attached = f.attach("@c.md#10-12 @dir/ @empty.txt @blob.bin @pic.png @c.md#99");
    let texts: Vec<&str> = attached.iter().map(|a| a.text.as_str()).collect();
    assert_eq!(
        texts[0],
        "<file path=\"c.md\" lines=\"10-12\">\n    10\tline 10\n    11\tline 11\n    12\tline 12\n</file>"
    );
    assert_eq!(
        texts[1],
        "<folder path=\"dir/\">\n.gitignore\nsub/\nx.rs\n</folder>"
    );
    assert_eq!(texts[2], "<file path=\"empty.txt\">\n(empty file)\n</file>");
    assert_eq!(
        texts[3],
        "<file path=\"blob.bin\">\n(binary file, 4 bytes)\n</file>"
    );
    assert!(texts[4].contains("(an image, 10 bytes"), "{}", texts[4]);
    assert!(texts[5].contains("The file has 30 lines: line 99 is past its end."));
}

#[test]
fn a_long_file_is_cut_where_the_limits_say() {
    let f = Fixture::new();
    let max = decisions().tools.read_default_lines;
    let text: String = (1..=max + 5).map(|n| format!("{n}\n")).collect();
    f.write("long.txt", &text);
    let attached = f.attach("@long.txt");
    assert!(
        attached[0].text.ends_with(&format!(
            "(Lines 1–{max} attached; the file goes on: read it from line {}.)\n</file>",
            max + 1
        )),
        "{}",
        &attached[0].text[attached[0].text.len() - 200..]
    );
}

#[cfg(unix)]
#[test]
fn nothing_outside_the_project_or_protected_is_attached() {
    let f = Fixture::new();
    f.write("ok.txt", "fine\n");
    f.write(".env", "SECRET=1\n");
    f.write("server.key", "KEY\n");
    std::fs::write(f.outside.join("secret.txt"), "secret\n").unwrap();
    std::fs::write(f.roots[0].join("other/sibling.txt"), "sibling\n").unwrap();
    std::fs::create_dir_all(f.root.join(".git")).unwrap();
    std::fs::write(f.root.join(".git/config"), "[core]\n").unwrap();
    // Symlinks that lead out: to a file outside the roots, to a protected file, and a folder.
    std::os::unix::fs::symlink(f.outside.join("secret.txt"), f.root.join("link.txt")).unwrap();
    std::os::unix::fs::symlink(&f.outside, f.root.join("out")).unwrap();
    std::os::unix::fs::symlink(f.root.join(".env"), f.root.join("harmless.txt")).unwrap();
    let outside = f.outside.join("secret.txt");
    for text in [
        "@link.txt",
        "@out/secret.txt",
        "@../../outside/secret.txt",
        "@../other/sibling.txt",
        &format!("@{}", outside.display()),
        "@.env",
        "@server.key",
        "@.git/config",
        "@harmless.txt",
        "@missing.txt",
        "@out/",
    ] {
        assert!(f.attach(text).is_empty(), "{text} was attached");
    }
    // A `..` that stays inside is fine.
    assert_eq!(f.attach("@../p/ok.txt").len(), 1);
}

#[test]
fn at_most_so_many_files() {
    let f = Fixture::new();
    let max = decisions().files.mention_max_files;
    let mut text = String::new();
    for n in 0..max + 3 {
        f.write(&format!("f{n}.txt"), "x\n");
        text.push_str(&format!("@f{n}.txt "));
    }
    assert_eq!(f.attach(&text).len(), max);
}

#[test]
fn one_huge_line_is_cut_too() {
    let f = Fixture::new();
    let max = decisions().files.mention_max_bytes;
    f.write("min.js", &"x".repeat(max * 2));
    let attached = f.attach("@min.js");
    let text = &attached[0].text;
    assert!(text.len() < max + 200, "{}", text.len());
    assert!(
        text.contains("(Line 1 cut after"),
        "{}",
        &text[text.len() - 120..]
    );
}
