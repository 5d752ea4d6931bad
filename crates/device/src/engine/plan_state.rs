//! The session's structured plan (capability `plan_state`, docs/protocol.md "The structured
//! plan"): the `plan_write`, `plan_update` and `plan_clear` tools, the plan kept in the session
//! file (replayed on open), and the client told after every change: ACP's `plan` update (every
//! task as an entry, the whole plan in `_meta.lembas.plan`, `null` once cleared) and the `plan`
//! event.

use lembas_protocol::plan::{Phase, Plan, Step, Task, TaskStatus};
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::Value;
use std::collections::HashSet;
use std::sync::Arc;

use super::Engine;
use super::model::ToolCall;
use super::session::{Session, ToolResult};
use super::unjudged_call;
use crate::decisions::PlanLimits;
use crate::store::Record;
use crate::tools::{ToolDefinition, ToolName};
use lembas_protocol::LembasMeta;
use lembas_protocol::event::Event;
use lembas_protocol::update::{PlanEntry, PlanMeta, SessionUpdate};

/// What the model is told of `plan_write`, `plan_update` and `plan_clear`.
pub fn definition(tool: PlanTool) -> ToolDefinition {
    match tool {
        PlanTool::Write => ToolDefinition::of::<PlanWriteArguments>(
            ToolName::PlanWrite,
            "Keep a structured plan of the work for the person to follow: phases of tasks, each \
             with steps. It replaces the plan you had. Use it for work of several steps; then mark \
             progress with plan_update as you go.",
        ),
        PlanTool::Update => ToolDefinition::of::<PlanUpdateArguments>(
            ToolName::PlanUpdate,
            "Change one task of the plan (its status, or a step done) or add a finding.",
        ),
        PlanTool::Clear => ToolDefinition::of::<NoArguments>(
            ToolName::PlanClear,
            "Clear the plan, when the work it planned is over or abandoned.",
        ),
    }
}

/// The plan tools.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PlanTool {
    Write,
    Update,
    Clear,
}

/// Runs a plan tool, reported to the client as a `think` tool call; a plan that changed is kept
/// and told.
pub async fn run(
    engine: &Engine,
    session: &Arc<Session>,
    turn_id: &str,
    call: &ToolCall,
    tool: PlanTool,
) -> ToolResult {
    let title = match tool {
        PlanTool::Write => "Write the plan",
        PlanTool::Update => "Update the plan",
        PlanTool::Clear => "Clear the plan",
    };
    let work = async {
        let args = unjudged_call::arguments(call)?;
        let current = session.plan();
        let limits = &engine.setup().decisions.plan;
        let (plan, said) = match tool {
            PlanTool::Write => {
                let plan = write(&args, limits)?;
                let said = format!("The plan is kept: {}.", outline(&plan));
                (Some(plan), said)
            }
            PlanTool::Update => {
                let plan = update(current.as_ref(), &args, limits)?;
                let said = format!("The plan now: {}.", outline(&plan));
                (Some(plan), said)
            }
            PlanTool::Clear => (None, "The plan is cleared.".to_string()),
        };
        keep(engine, session, plan).await;
        Ok(said)
    };
    unjudged_call::reported(engine, session, turn_id, call, title, work).await
}

/// The session's plan becomes `plan`: recorded, and the client told.
async fn keep(engine: &Engine, session: &Session, plan: Option<Plan>) {
    session.replace_plan(plan.clone());
    session.record(Record::Plan { plan: plan.clone() });
    session.flush();
    tell(engine, &session.id, plan.as_ref()).await;
}

/// ACP's `plan` update and the `plan` event for the plan as it is (after a change, and when a
/// session with a plan is opened from the store).
pub async fn tell(engine: &Engine, session_id: &str, plan: Option<&Plan>) {
    engine.update(session_id, update_of(plan)).await;
    engine
        .event(session_id, Event::Plan { plan: plan.cloned() })
        .await;
}

/// ACP's `plan` session update: every task in order as an entry (a dropped task `completed`,
/// ACP having no word for it), and the whole plan in `_meta.lembas.plan`.
pub fn update_of(plan: Option<&Plan>) -> SessionUpdate {
    let entries = plan
        .into_iter()
        .flat_map(Plan::tasks)
        .map(|t| PlanEntry {
            content: t.content.clone(),
            priority: "medium".to_string(),
            status: t.status.acp().to_string(),
        })
        .collect();
    SessionUpdate::Plan {
        entries,
        meta: LembasMeta {
            lembas: PlanMeta { plan: plan.cloned() },
        },
    }
}

/// A short account of the plan for the model.
fn outline(plan: &Plan) -> String {
    let tasks: Vec<String> = plan
        .tasks()
        .map(|t| {
            let status = match t.status {
                TaskStatus::Dropped => "dropped",
                other => other.acp(),
            };
            format!("{} {} ({status})", t.id, t.content)
        })
        .collect();
    format!("{} — {}", plan.title, tasks.join("; "))
}

/// `plan_write`'s arguments as the model writes them.
#[derive(JsonSchema)]
struct PlanWriteArguments {
    #[allow(dead_code)]
    plan: Written,
}

/// A tool that takes no arguments.
#[derive(JsonSchema)]
struct NoArguments {}

/// The task's status.
#[derive(JsonSchema)]
#[serde(rename_all = "snake_case")]
#[allow(dead_code)]
enum StatusName {
    Pending,
    InProgress,
    Completed,
    Dropped,
}

/// The plan: phases of tasks; ids are given by the device where missing. Fields it does not read
/// are passed over, as in every tool's arguments: a plan in ENGINE.md's own shape, `version`
/// included, is taken as written.
#[derive(Deserialize, JsonSchema)]
struct Written {
    title: String,
    #[serde(default)]
    #[schemars(with = "String")]
    summary: String,
    #[serde(default)]
    objectives: Vec<String>,
    #[serde(default)]
    findings: Vec<String>,
    #[serde(default)]
    phases: Vec<WrittenPhase>,
}

#[derive(Deserialize, JsonSchema)]
struct WrittenPhase {
    #[serde(default)]
    #[schemars(with = "String")]
    id: Option<String>,
    title: String,
    #[serde(default)]
    tasks: Vec<WrittenTask>,
}

#[derive(Deserialize, JsonSchema)]
struct WrittenTask {
    /// Given by the device when missing.
    #[serde(default)]
    #[schemars(with = "String")]
    id: Option<String>,
    content: String,
    #[serde(default)]
    #[schemars(with = "StatusName")]
    status: TaskStatus,
    #[serde(default)]
    steps: Vec<WrittenStep>,
}

#[derive(Deserialize, JsonSchema)]
#[serde(untagged)]
enum WrittenStep {
    Text(String),
    Full {
        text: String,
        #[serde(default)]
        done: bool,
    },
}

/// `plan_write { plan }`: the whole plan, ids given where missing or taken twice.
pub fn write(args: &Value, limits: &PlanLimits) -> Result<Plan, String> {
    let given = args
        .get("plan")
        .ok_or("plan_write needs `plan`: { title, summary?, objectives?, findings?, phases: [{ title, tasks: [{ content, status?, steps? }] }] }.")?;
    let written: Written = serde_json::from_value(given.clone())
        .map_err(|e| format!("The plan is not in the expected shape: {e}."))?;
    let mut phase_ids = Ids::new("p");
    let mut task_ids = Ids::new("t");
    let plan = Plan {
        version: 1,
        title: written.title,
        summary: written.summary,
        objectives: written.objectives,
        findings: written.findings,
        phases: written
            .phases
            .into_iter()
            .map(|phase| Phase {
                id: phase_ids.take(phase.id),
                title: phase.title,
                tasks: phase
                    .tasks
                    .into_iter()
                    .map(|task| Task {
                        id: task_ids.take(task.id),
                        content: task.content,
                        status: task.status,
                        steps: task
                            .steps
                            .into_iter()
                            .map(|step| match step {
                                WrittenStep::Text(text) => Step { text, done: false },
                                WrittenStep::Full { text, done } => Step { text, done },
                            })
                            .collect(),
                    })
                    .collect(),
            })
            .collect(),
    };
    check(&plan, limits)?;
    Ok(plan)
}

/// The ids of one kind in a plan: the model's own where it gave a usable one, else `<prefix><n>`.
struct Ids {
    prefix: &'static str,
    taken: HashSet<String>,
    next: usize,
}

impl Ids {
    fn new(prefix: &'static str) -> Self {
        Self {
            prefix,
            taken: HashSet::new(),
            next: 1,
        }
    }

    fn take(&mut self, given: Option<String>) -> String {
        let given = given.map(|id| id.trim().to_string());
        if let Some(id) = given.filter(|id| !id.is_empty() && id.len() <= 64)
            && self.taken.insert(id.clone())
        {
            return id;
        }
        loop {
            let id = format!("{}{}", self.prefix, self.next);
            self.next += 1;
            if self.taken.insert(id.clone()) {
                return id;
            }
        }
    }
}

/// `plan_update`'s arguments as the model writes them.
#[derive(Deserialize, JsonSchema)]
struct PlanUpdateArguments {
    /// The task's id (t1, t2, …).
    #[serde(default)]
    #[schemars(with = "String")]
    task: Option<String>,
    #[serde(default)]
    #[schemars(with = "StatusName")]
    status: Option<TaskStatus>,
    /// A step of the task (1-based).
    #[serde(default)]
    #[schemars(with = "u64", range(min = 1))]
    step: Option<usize>,
    /// Whether that step is done (default true).
    #[serde(default)]
    #[schemars(with = "bool")]
    done: Option<bool>,
    /// Something you learnt, added to the plan's findings.
    #[serde(default)]
    #[schemars(with = "String")]
    finding: Option<String>,
}

/// `plan_update { task?, status?, step?, done?, finding? }`: one task's status or step, or a
/// finding added.
pub fn update(current: Option<&Plan>, args: &Value, limits: &PlanLimits) -> Result<Plan, String> {
    let asked: PlanUpdateArguments = serde_json::from_value(args.clone())
        .map_err(|e| format!("The arguments of plan_update are not right: {e}."))?;
    let mut plan = current
        .cloned()
        .ok_or("There is no plan yet: write one with plan_write first.")?;
    let changes_task = asked.status.is_some() || asked.step.is_some() || asked.done.is_some();
    if !changes_task && asked.finding.is_none() {
        return Err(
            "plan_update changes nothing: give a task with its status (or a step and done), or a finding."
                .into(),
        );
    }
    if changes_task {
        let id = asked
            .task
            .as_deref()
            .ok_or("plan_update needs `task` (its id) to change a task.")?;
        let ids: Vec<String> = plan.tasks().map(|t| t.id.clone()).collect();
        let task = plan
            .phases
            .iter_mut()
            .flat_map(|p| p.tasks.iter_mut())
            .find(|t| t.id == id)
            .ok_or_else(|| {
                format!(
                    "There is no task {id} in the plan (its tasks: {}).",
                    ids.join(", ")
                )
            })?;
        if let Some(status) = asked.status {
            task.status = status;
        }
        match (asked.step, asked.done) {
            (Some(n), done) => {
                let count = task.steps.len();
                let step = n
                    .checked_sub(1)
                    .and_then(|i| task.steps.get_mut(i))
                    .ok_or_else(|| format!("Task {id} has {count} steps; step {n} is not one of them."))?;
                step.done = done.unwrap_or(true);
            }
            (None, Some(_)) => return Err("`done` goes with `step`: which step is done?".into()),
            (None, None) => {}
        }
    }
    if let Some(finding) = asked.finding {
        plan.findings.push(finding);
    }
    check(&plan, limits)?;
    Ok(plan)
}

/// The plan within the decided limits; a sentence for the model when it is not.
fn check(plan: &Plan, limits: &PlanLimits) -> Result<(), String> {
    let chars = limits.text_chars;
    let too_long = |what: &str, text: &str| -> Result<(), String> {
        let n = text.chars().count();
        if n > chars {
            Err(format!(
                "The plan's {what} is {n} characters long; keep it within {chars}."
            ))
        } else {
            Ok(())
        }
    };
    let at_most = |what: &str, n: usize, most: usize| -> Result<(), String> {
        if n > most {
            Err(format!("The plan has {n} {what}; keep it to at most {most}."))
        } else {
            Ok(())
        }
    };
    if plan.title.trim().is_empty() {
        return Err("The plan needs a title.".into());
    }
    too_long("title", &plan.title)?;
    too_long("summary", &plan.summary)?;
    at_most("phases", plan.phases.len(), limits.max_phases)?;
    at_most("tasks", plan.tasks().count(), limits.max_tasks)?;
    at_most("objectives", plan.objectives.len(), limits.max_items)?;
    at_most("findings", plan.findings.len(), limits.max_items)?;
    for text in plan.objectives.iter().chain(&plan.findings) {
        too_long("objective or finding", text)?;
    }
    for phase in &plan.phases {
        too_long("phase title", &phase.title)?;
        for task in &phase.tasks {
            too_long("task", &task.content)?;
            at_most(
                &format!("steps in task {}", task.id),
                task.steps.len(),
                limits.max_steps_per_task,
            )?;
            for step in &task.steps {
                too_long("step", &step.text)?;
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn limits() -> &'static PlanLimits {
        &crate::decisions::Decisions::built_in().plan
    }

    fn write(args: &Value) -> Result<Plan, String> {
        super::write(args, limits())
    }

    fn update(current: Option<&Plan>, args: &Value) -> Result<Plan, String> {
        super::update(current, args, limits())
    }

    fn written() -> Value {
        json!({ "plan": {
            "title": "Ship it",
            "phases": [
                { "title": "Build", "tasks": [
                    { "content": "Write the code", "steps": ["types", { "text": "tests", "done": true }] },
                    { "id": "t1", "content": "Same id as the one given above by the device" },
                ] },
                { "id": "p1", "title": "Taken phase id", "tasks": [{ "content": "Review", "status": "in_progress" }] },
            ],
        } })
    }

    #[test]
    fn a_plan_in_the_documented_shape_is_taken_as_written() {
        // ENGINE.md's Plan, as the plan event and `_lembas/plan` give it back, written again.
        let documented = json!({ "plan": {
            "version": 1,
            "title": "Ship it",
            "summary": "",
            "objectives": ["ship"],
            "findings": [],
            "phases": [{ "id": "p1", "title": "Build", "tasks": [
                { "id": "t1", "content": "Write", "status": "completed",
                  "steps": [{ "text": "types", "done": true }], "note": "a field of tomorrow" },
            ] }],
        } });
        let plan = write(&documented).unwrap();
        assert_eq!(plan.version, 1);
        assert_eq!(plan.objectives, ["ship"]);
        assert_eq!(plan.phases[0].tasks[0].status, TaskStatus::Completed);
        assert!(plan.phases[0].tasks[0].steps[0].done);
        // And what the device gives back is what it takes.
        let again = write(&json!({ "plan": serde_json::to_value(&plan).unwrap() })).unwrap();
        assert_eq!(again, plan);
    }

    #[test]
    fn ids_are_given_where_missing_or_taken_twice() {
        let plan = write(&written()).unwrap();
        let ids: Vec<&str> = plan.tasks().map(|t| t.id.as_str()).collect();
        assert_eq!(ids, ["t1", "t2", "t3"]);
        let phases: Vec<&str> = plan.phases.iter().map(|p| p.id.as_str()).collect();
        assert_eq!(phases, ["p1", "p2"]);
        assert_eq!(
            plan.phases[0].tasks[0].steps[1],
            Step {
                text: "tests".into(),
                done: true
            }
        );
        assert_eq!(plan.version, 1);
    }

    #[test]
    fn entries_are_acp_plan_entries_and_a_dropped_task_is_completed() {
        let mut plan = write(&written()).unwrap();
        plan.phases[0].tasks[1].status = TaskStatus::Dropped;
        let update = json!(update_of(Some(&plan)));
        assert_eq!(
            update["entries"][1],
            json!({ "content": "Same id as the one given above by the device", "priority": "medium", "status": "completed" })
        );
        assert_eq!(update["entries"][2]["status"], "in_progress");
        assert_eq!(
            update["_meta"]["lembas"]["plan"]["phases"][0]["tasks"][1]["status"],
            "dropped"
        );
        assert_eq!(
            json!(update_of(None)),
            json!({ "sessionUpdate": "plan", "entries": [], "_meta": { "lembas": { "plan": null } } })
        );
    }

    #[test]
    fn updates_change_one_task_or_add_a_finding() {
        let plan = write(&written()).unwrap();
        let done = update(
            Some(&plan),
            &json!({ "task": "t1", "status": "completed", "step": 1 }),
        )
        .unwrap();
        assert_eq!(done.phases[0].tasks[0].status, TaskStatus::Completed);
        assert!(done.phases[0].tasks[0].steps[0].done);
        let found = update(Some(&done), &json!({ "finding": "The cache was stale." })).unwrap();
        assert_eq!(found.findings, ["The cache was stale."]);
        let refused: [(Option<&Plan>, Value, &str); 6] = [
            (None, json!({ "finding": "x" }), "no plan yet"),
            (
                Some(&plan),
                json!({ "task": "t9", "status": "completed" }),
                "no task t9",
            ),
            (Some(&plan), json!({ "task": "t1", "step": 3 }), "step 3 is not"),
            (
                Some(&plan),
                json!({ "task": "t1", "status": "finished" }),
                "not right",
            ),
            (Some(&plan), json!({}), "changes nothing"),
            (
                Some(&plan),
                json!({ "task": "t1", "done": true }),
                "goes with `step`",
            ),
        ];
        for (current, args, why) in refused {
            let said = update(current, &args).unwrap_err();
            assert!(said.contains(why), "{args}: {said}");
        }
    }

    #[test]
    fn a_flooded_plan_is_refused_with_a_sentence() {
        let tasks: Vec<Value> = (0..10_000)
            .map(|i| json!({ "content": format!("task {i}") }))
            .collect();
        let many = json!({ "plan": { "title": "Too much", "phases": [{ "title": "All", "tasks": tasks }] } });
        assert!(write(&many).unwrap_err().contains("10000 tasks"));
        let long = json!({ "plan": { "title": "x".repeat(1 << 20), "phases": [] } });
        assert!(write(&long).unwrap_err().contains("title is 1048576 characters"));
        assert!(
            write(&json!({ "plan": { "title": " ", "phases": [] } }))
                .unwrap_err()
                .contains("needs a title")
        );
        assert!(write(&json!({})).unwrap_err().contains("needs `plan`"));
        assert!(write(&json!({ "plan": { "title": "t", "phases": [{ "title": "p", "tasks": [{ "content": 5 }] }] } })).unwrap_err().contains("shape"));
    }
}
