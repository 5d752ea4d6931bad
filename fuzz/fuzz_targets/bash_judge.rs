//! The bash judge on any line: never a panic, and never an allow for a line the
//! naive reference (`lembas_fuzz::hardline`) calls hardline.

#![no_main]

use std::path::{Path, PathBuf};

use lembas_device::policy::Mode;
use lembas_device::policy::bash_judge::{self, Decision, JudgeContext};
use lembas_device::settings::BashRules;
use lembas_fuzz::hardline::{self, FOLDER, HOME, ROOT};
use libfuzzer_sys::fuzz_target;

fuzz_target!(
    // The judge catches a panic inside brush-parser (an unreadable line); libfuzzer-sys's hook would
    // abort at the panic before it is caught, so the default hook is put back. A panic that escapes
    // the judge still ends the run: fuzz_target! aborts on it.
    init: {
        let _ = std::panic::take_hook();
    },
    |data: &[u8]| {
    let Ok(line) = std::str::from_utf8(data) else {
        return;
    };
    // Auto mode with a rule allowing everything is where the judge allows the most (plan allows
    // only reads; opaque lines ask in every mode): a hardline line allowed anywhere is allowed
    // there. Plan with no rules takes the judge's other branches. Two judgements an input, not
    // eight: each parses the line again.
    let no_rules = BashRules::default();
    let allow_all = BashRules {
        allow: vec!["*".into()],
        ..BashRules::default()
    };
    let roots = [PathBuf::from(ROOT)];
    let protected = lembas_device::policy::protected::Protected::under_home(Path::new(HOME));
    let reference = hardline::hardline(line);
    for (mode, rules) in [(Mode::Auto, &allow_all), (Mode::Plan, &no_rules)] {
        let ctx = JudgeContext {
            mode,
            global: rules,
            project: None,
            folder: Path::new(FOLDER),
            roots: &roots,
            home: Path::new(HOME),
            protected: &protected,
        };
        let judged = bash_judge::judge_in_process(line, &ctx);
        assert!(!judged.reason.is_empty(), "a judgement says why: {line:?}");
        if let Some(why) = &reference {
            assert!(
                judged.decision != Decision::Allow,
                "{mode} allows {line:?}, which is hardline ({why}): {}",
                judged.reason
            );
        }
    }
});
