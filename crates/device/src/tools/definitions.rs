//! The tools as the model is told about them: entries of the OpenAI `tools` array, each a function
//! with a JSON Schema for its arguments. The numbers in the texts come from `decisions.json`.

use serde::Serialize;
use serde_json::{Value, json};

use crate::decisions::decisions;

/// Every tool of this module and the engine's `bash`, `ask_user`, `plan_submit` and plan tools, in
/// the order the model is given them.
pub fn tool_names() -> Vec<&'static str> {
    vec![
        "read",
        "ls",
        "glob",
        "grep",
        "write",
        "edit",
        "bash",
        "ask_user",
        "plan_submit",
        "plan_write",
        "plan_update",
        "plan_clear",
        "job_list",
        "job_output",
        "job_stop",
    ]
}

/// The `tools` array entries, in the order of [`tool_names`].
pub fn definitions() -> Vec<ToolDefinition> {
    let numbers = &decisions().tools;
    let lines = numbers.read_default_lines;
    let most = numbers.list_max_entries;
    let bash = &numbers.bash_timeout_seconds;
    let question = &decisions().question;
    vec![
        function(
            "read",
            &format!(
                "Read a text file. Lines come numbered like `cat -n`; at most {lines} lines unless \
                 `limit` says otherwise. Use `offset` to read on from a later line."
            ),
            json!({
                "path": path_schema("The file: relative to the session's folder, or absolute."),
                "offset": { "type": "integer", "minimum": 1, "description": "The first line to show (1-based)." },
                "limit": { "type": "integer", "minimum": 1, "description": format!("How many lines to show (default {lines}).") },
            }),
            &["path"],
        ),
        function(
            "ls",
            "List a folder: its entries sorted by name, folders with a trailing `/`. Entries \
             .gitignore hides are left out.",
            json!({
                "path": path_schema("The folder (default: the session's folder)."),
            }),
            &[],
        ),
        function(
            "glob",
            &format!(
                "Find files by name with a glob pattern (`**` matches any number of folders: \
                 `**/*.rs`). Paths are relative to the folder searched, newest first, at most {most}; \
                 files .gitignore hides are left out."
            ),
            json!({
                "pattern": { "type": "string", "description": "The glob, matched against paths relative to the folder searched." },
                "path": path_schema("The folder to search (default: the session's folder)."),
            }),
            &["pattern"],
        ),
        function(
            "grep",
            &format!(
                "Search file contents with a regular expression (Rust regex syntax, like ripgrep). \
                 Prints `path:line:text` for each matching line, sorted by path, at most {most} lines; \
                 binary files and files .gitignore hides are skipped."
            ),
            json!({
                "pattern": { "type": "string", "description": "The regular expression." },
                "path": path_schema("The file or folder to search (default: the session's folder)."),
                "glob": { "type": "string", "description": "Only files matching this glob, like `*.rs` (matched against the name) or `src/**/*.ts` (against the path)." },
                "ignore_case": { "type": "boolean", "description": "Match letters in any case (default false)." },
            }),
            &["pattern"],
        ),
        function(
            "write",
            "Write a file whole, creating it and its folders when missing, replacing it when \
             present. To change part of a file, use edit.",
            json!({
                "path": path_schema("The file: relative to the session's folder, or absolute."),
                "content": { "type": "string", "description": "The file's whole new content." },
            }),
            &["path", "content"],
        ),
        function(
            "edit",
            "Replace text in a file. `old_string` must occur exactly once (include enough of the \
             surrounding lines to make it unique) unless `replace_all` is true. Read the file first \
             and copy the text exactly, indentation included.",
            json!({
                "path": path_schema("The file: relative to the session's folder, or absolute."),
                "old_string": { "type": "string", "description": "The exact text to replace." },
                "new_string": { "type": "string", "description": "The text to put in its place." },
                "replace_all": { "type": "boolean", "description": "Replace every occurrence (default false)." },
            }),
            &["path", "old_string", "new_string"],
        ),
        function(
            "bash",
            "Run a command line with `bash -c` in the session's folder. Standard output and error \
             come back as one text; there is no input.",
            json!({
                "command": { "type": "string", "description": "The command line." },
                "timeout_s": {
                    "type": "integer",
                    "minimum": 1,
                    "maximum": bash.max,
                    "description": format!("Seconds before the command is stopped (default {}, at most {}).", bash.default, bash.max),
                },
                "description": { "type": "string", "description": "What the command does, in a few words, for the person watching." },
                "background": {
                    "type": "boolean",
                    "description": format!(
                        "Start it as a background job (a server, a watcher, a long build) and go on at once: the answer is the job's id, \
                         and you are told when it ends. No time limit; at most {} run at once.",
                        decisions().jobs.running_max
                    ),
                },
            }),
            &["command"],
        ),
        function(
            "ask_user",
            &format!(
                "Ask the person questions when you cannot go on without their choice. At most {} \
                 questions of at most {} options each; the person may also answer in their own \
                 words, skip a question or dismiss the card. Mark the option you would choose \
                 `recommended`.",
                question.max_questions, question.max_options
            ),
            json!({
                "questions": {
                    "type": "array",
                    "maxItems": question.max_questions,
                    "items": {
                        "type": "object",
                        "properties": {
                            "header": { "type": "string", "description": "A word or two naming the question." },
                            "question": { "type": "string", "description": "The question itself." },
                            "multiple": { "type": "boolean", "description": "More than one option may be chosen (default false)." },
                            "options": {
                                "type": "array",
                                "maxItems": question.max_options,
                                "items": {
                                    "type": "object",
                                    "properties": {
                                        "label": { "type": "string", "description": format!("The choice, short (at most {} characters are shown).", question.label_chars) },
                                        "description": { "type": "string", "description": "What choosing it means." },
                                        "recommended": { "type": "boolean", "description": "The option you recommend." },
                                    },
                                    "required": ["label"],
                                },
                            },
                        },
                        "required": ["header", "question", "options"],
                    },
                },
                "why": { "type": "string", "description": "Why you ask, in a sentence." },
            }),
            &["questions"],
        ),
        function(
            "plan_submit",
            "Submit your plan for the person to approve before you change anything. It is saved \
             as a markdown file in the project. When approved, carry it out; when the person asks \
             for changes, revise it and submit it again.",
            json!({
                "text": { "type": "string", "description": "The plan, in markdown." },
                "path": path_schema("Where to save it, relative to the session's folder (default .agent/plans/<time>-plan.md)."),
            }),
            &["text"],
        ),
        function(
            "plan_write",
            "Keep a structured plan of the work for the person to follow: phases of tasks, each \
             with steps. It replaces the plan you had. Use it for work of several steps; then mark \
             progress with plan_update as you go.",
            json!({
                "plan": {
                    "type": "object",
                    "properties": {
                        "title": { "type": "string" },
                        "summary": { "type": "string" },
                        "objectives": { "type": "array", "items": { "type": "string" } },
                        "findings": { "type": "array", "items": { "type": "string" } },
                        "phases": {
                            "type": "array",
                            "items": {
                                "type": "object",
                                "properties": {
                                    "id": { "type": "string" },
                                    "title": { "type": "string" },
                                    "tasks": {
                                        "type": "array",
                                        "items": {
                                            "type": "object",
                                            "properties": {
                                                "id": { "type": "string", "description": "Given by the device when missing." },
                                                "content": { "type": "string" },
                                                "status": { "type": "string", "enum": STATUSES },
                                                "steps": { "type": "array", "items": { "type": "string" } },
                                            },
                                            "required": ["content"],
                                        },
                                    },
                                },
                                "required": ["title", "tasks"],
                            },
                        },
                    },
                    "required": ["title", "phases"],
                },
            }),
            &["plan"],
        ),
        function(
            "plan_update",
            "Change one task of the plan (its status, or a step done) or add a finding.",
            json!({
                "task": { "type": "string", "description": "The task's id (t1, t2, …)." },
                "status": { "type": "string", "enum": STATUSES },
                "step": { "type": "integer", "minimum": 1, "description": "A step of the task (1-based)." },
                "done": { "type": "boolean", "description": "Whether that step is done (default true)." },
                "finding": { "type": "string", "description": "Something you learnt, added to the plan's findings." },
            }),
            &[],
        ),
        function(
            "plan_clear",
            "Clear the plan, when the work it planned is over or abandoned.",
            json!({}),
            &[],
        ),
        function(
            "job_list",
            "List this session's background jobs: running ones first, then those that ended.",
            json!({}),
            &[],
        ),
        function(
            "job_output",
            "Read a background job's output, from character `since` (default 0). The answer says \
             how much there is, so the next call can carry on where this one stopped.",
            json!({
                "id": { "type": "string", "description": "The job's id (job_…)." },
                "since": { "type": "integer", "minimum": 0, "description": "The first character to read." },
            }),
            &["id"],
        ),
        function(
            "job_stop",
            "Stop a background job (its whole process group). You are told when it has ended.",
            json!({
                "id": { "type": "string", "description": "The job's id (job_…)." },
            }),
            &["id"],
        ),
    ]
}

/// A task's statuses, as the plan tools take them.
const STATUSES: [&str; 4] = ["pending", "in_progress", "completed", "dropped"];

/// The `show` tool, offered only in a session whose client said `show: true` and never in a
/// scheduled turn (the engine decides; see `engine::show`), so it is not in [`definitions`].
pub fn show_definition() -> ToolDefinition {
    let most = decisions().show.max_bytes;
    function(
        "show",
        &format!(
            "Show a file to the person in their viewer beside the chat: markdown rendered, code \
             highlighted, HTML as a page. Use it when the person should see a file (a report, a \
             page you made, the code you mean) rather than read about it. Text files of at most \
             {most} bytes only."
        ),
        json!({
            "path": path_schema("The file: relative to the session's folder, or absolute."),
            "line": { "type": "integer", "minimum": 1, "description": "A line to scroll to (1-based)." },
        }),
        &["path"],
    )
}

fn path_schema(description: &str) -> Value {
    json!({ "type": "string", "description": description })
}

fn function(name: &str, description: &str, properties: Value, required: &[&str]) -> ToolDefinition {
    let parameters = json!({
        "type": "object",
        "properties": properties,
        "required": required,
        "additionalProperties": false,
    });
    ToolDefinition::function(name, description, parameters)
}

/// A tool as the model API offers it: a function, its name, what it does, and the JSON Schema of
/// its arguments (the model's to read: the device writes it and never reads it back).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ToolDefinition {
    #[serde(rename = "type")]
    kind: &'static str,
    pub function: FunctionDefinition,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct FunctionDefinition {
    pub name: String,
    pub description: String,
    pub parameters: Value,
}

impl ToolDefinition {
    pub fn function(name: &str, description: &str, parameters: Value) -> ToolDefinition {
        ToolDefinition {
            kind: "function",
            function: FunctionDefinition {
                name: name.to_string(),
                description: description.to_string(),
                parameters,
            },
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The definitions as the model reads them.
    fn written() -> Vec<Value> {
        definitions().iter().map(|d| json!(d)).collect()
    }

    #[test]
    fn every_tool_in_order_with_an_object_schema() {
        let defs = written();
        let names: Vec<&str> = defs
            .iter()
            .filter_map(|d| d["function"]["name"].as_str())
            .collect();
        assert_eq!(names, tool_names());
        assert_eq!(
            names,
            [
                "read",
                "ls",
                "glob",
                "grep",
                "write",
                "edit",
                "bash",
                "ask_user",
                "plan_submit",
                "plan_write",
                "plan_update",
                "plan_clear",
                "job_list",
                "job_output",
                "job_stop"
            ]
        );
        for def in &defs {
            assert_eq!(def["type"], "function");
            let parameters = &def["function"]["parameters"];
            assert_eq!(parameters["type"], "object");
            let properties = parameters["properties"].as_object().expect("properties");
            for required in parameters["required"].as_array().expect("required") {
                let key = required.as_str().expect("a name");
                assert!(
                    properties.contains_key(key),
                    "{} requires {key}",
                    def["function"]["name"]
                );
            }
            assert!(!def["function"]["description"].as_str().unwrap_or("").is_empty());
        }
    }

    #[test]
    fn numbers_come_from_the_decisions() {
        let defs = written();
        let bash = &defs[6]["function"]["parameters"]["properties"]["timeout_s"];
        assert_eq!(bash["maximum"], 600);
        let text = bash["description"].as_str().unwrap_or("");
        assert!(
            text.contains("default 120") && text.contains("at most 600"),
            "{text}"
        );
        let read = defs[0]["function"]["description"].as_str().unwrap_or("");
        assert!(read.contains("2000 lines"), "{read}");
    }
}
