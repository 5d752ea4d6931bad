//! Real folders for the tools' tests: `<tmp>/work` is the one root, `<tmp>/work/proj` the session's
//! project, `<tmp>/outside` is outside the roots and `<tmp>/home` the home folder.

use std::path::PathBuf;

use serde_json::Value;

use super::{FileTool, Planned, ToolContext, ToolName, ToolOutput, plan, run};

use crate::policy::protected::Protected;

/// The file tool of that name, for tests that name tools as the model does.
pub fn file_tool(name: &str) -> FileTool {
    ToolName::parse(name)
        .and_then(FileTool::of)
        .unwrap_or_else(|| panic!("{name} is not a file tool"))
}

pub struct Fixture {
    _dir: tempfile::TempDir,
    pub ctx: ToolContext,
    // Read by the symlink cases, which are Unix's.
    #[cfg_attr(not(unix), allow(dead_code))]
    pub outside: PathBuf,
}

impl Fixture {
    pub fn new() -> Self {
        let dir = tempfile::tempdir().expect("a temporary folder");
        let base = std::fs::canonicalize(dir.path()).expect("the temporary folder resolves");
        let ctx = ToolContext {
            project: base.join("work/proj"),
            roots: vec![base.join("work")],
            protected: Protected::under_home(&base.join("home")),
            copies: None,
            additional: Vec::new(),
            numbers: &crate::decisions::Decisions::built_in().tools,
        };
        let outside = base.join("outside");
        for folder in [&ctx.project, ctx.protected.home(), &outside] {
            std::fs::create_dir_all(folder).expect("fixture folders");
        }
        Self {
            _dir: dir,
            ctx,
            outside,
        }
    }

    pub fn path(&self, relative: &str) -> PathBuf {
        self.ctx.project.join(relative)
    }

    /// Writes a file in the project, creating its folders.
    pub fn file(&self, relative: &str, content: &str) -> PathBuf {
        self.bytes(relative, content.as_bytes())
    }

    pub fn bytes(&self, relative: &str, content: &[u8]) -> PathBuf {
        let path = self.path(relative);
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent).expect("parent folders");
        }
        std::fs::write(&path, content).expect("a fixture file");
        path
    }

    pub fn folder(&self, relative: &str) -> PathBuf {
        let path = self.path(relative);
        std::fs::create_dir_all(&path).expect("a fixture folder");
        path
    }

    #[cfg_attr(not(unix), allow(dead_code))]
    pub fn outside_file(&self, name: &str, content: &str) -> PathBuf {
        let path = self.outside.join(name);
        std::fs::write(&path, content).expect("a file outside the roots");
        path
    }

    /// A symlink at `relative` in the project pointing at `target` (the cases using it are Unix's).
    #[cfg(unix)]
    pub fn symlink(&self, target: &std::path::Path, relative: &str) {
        std::os::unix::fs::symlink(target, self.path(relative)).expect("a symlink");
    }

    pub fn read(&self, relative: &str) -> String {
        std::fs::read_to_string(self.path(relative)).expect("a file the test wrote")
    }

    pub fn planned(&self, name: &str, args: Value) -> Planned {
        plan(file_tool(name), &args.to_string(), &self.ctx)
            .expect("a call that plans")
            .0
    }

    /// Plans and runs a call, as the engine does once the permission is given.
    pub fn call(&self, name: &str, args: Value) -> ToolOutput {
        let (planned, args) = plan(file_tool(name), &args.to_string(), &self.ctx).expect("a call that plans");
        run(&planned, &args, &self.ctx)
    }

    /// A call's text, which must not be an error.
    pub fn ok(&self, name: &str, args: Value) -> String {
        let output = self.call(name, args);
        assert!(!output.is_error, "{name} failed: {}", output.text);
        output.text
    }

    /// A call's text, which must be an error.
    pub fn err(&self, name: &str, args: Value) -> String {
        let output = self.call(name, args);
        assert!(output.is_error, "{name} should have failed: {}", output.text);
        output.text
    }
}
