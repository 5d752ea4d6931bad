//! The structured plan (capability `plan_state`), through the link as LLeMbas sees it: the plan
//! tools in any mode, ACP's `plan` update (validated against the official schema) with the whole
//! plan in `_meta.lembas.plan`, the `plan` event, `plan` in `_lembas/session/status` and on the
//! plan card, the plan back after the device restarts, and a flooded plan refused with a sentence.

use super::*;

fn plan_args() -> Value {
    json!({ "plan": {
        "title": "Fix the parser",
        "summary": "Two bugs, one test each.",
        "objectives": ["No panic on bad input"],
        "phases": [
            { "title": "Find", "tasks": [
                { "content": "Reproduce the panic", "steps": ["write a failing test", "run it"] },
            ] },
            { "title": "Fix", "tasks": [
                { "content": "Patch the tokenizer" },
                { "content": "Patch the printer", "status": "dropped" },
            ] },
        ],
    } })
}

/// The `plan` updates and the `plan` events the client got for `session`, in order.
fn told(l: &Linked, session: &str) -> (Vec<Value>, Vec<Value>) {
    let plans: Vec<Value> = updates(&l.link)
        .into_iter()
        .filter(|u| u["sessionUpdate"] == "plan")
        .collect();
    let events: Vec<Value> = l
        .link
        .received()
        .into_iter()
        .filter(|m| {
            m["method"] == "_lembas/event"
                && m["params"]["sessionId"] == session
                && m["params"]["event"]["type"] == "plan"
        })
        .map(|m| m["params"]["event"]["plan"].clone())
        .collect();
    (plans, events)
}

#[tokio::test(flavor = "multi_thread")]
async fn the_plan_is_kept_told_after_every_change_and_back_after_a_restart() {
    let mut l = linked("").await;
    let caps = l.link.received();
    let listed = caps
        .iter()
        .find_map(|m| m["result"]["_meta"]["lembas"]["capabilities"].as_array().cloned())
        .unwrap_or_default();
    assert!(listed.contains(&json!("plan_state")), "{listed:?}");
    // Plan mode reads only: the plan tools touch no file, so they run there too.
    let session = l.new_session("plan").await;
    l.model()
        .push(ModelReply::tool_call("call_w", "plan_write", plan_args()));
    l.model().push(ModelReply::tool_call(
        "call_u",
        "plan_update",
        json!({ "task": "t1", "status": "in_progress", "step": 1 }),
    ));
    l.model().push(ModelReply::tool_call(
        "call_f",
        "plan_update",
        json!({ "finding": "The tokenizer reads past the end." }),
    ));
    l.model().push(reply_text("Planned."));
    let answer = l.prompt(&session, "plan it", "turn-1").await;
    assert_eq!(answer["result"]["stopReason"], "end_turn", "{answer}");

    let (plans, events) = told(&l, &session);
    assert_eq!(plans.len(), 3, "{plans:?}");
    assert_eq!(events.len(), 3);
    let first = &plans[0];
    assert_eq!(
        first["entries"],
        json!([
            { "content": "Reproduce the panic", "priority": "medium", "status": "pending" },
            { "content": "Patch the tokenizer", "priority": "medium", "status": "pending" },
            { "content": "Patch the printer", "priority": "medium", "status": "completed" },
        ])
    );
    let plan = &first["_meta"]["lembas"]["plan"];
    assert_eq!(plan["version"], 1);
    assert_eq!(plan["phases"][1]["tasks"][1]["status"], "dropped");
    assert_eq!(
        plan["phases"][0]["tasks"][0]["steps"][0],
        json!({ "text": "write a failing test", "done": false })
    );
    let last = &plans[2]["_meta"]["lembas"]["plan"];
    assert_eq!(last["phases"][0]["tasks"][0]["status"], "in_progress");
    assert_eq!(last["phases"][0]["tasks"][0]["steps"][0]["done"], true);
    assert_eq!(last["findings"], json!(["The tokenizer reads past the end."]));
    assert_eq!(&events[2], last);
    assert!(tool_text(&l, "call_u").contains("t1 Reproduce the panic (in_progress)"));
    let kinds: Vec<Value> = updates(&l.link)
        .iter()
        .filter(|u| u["sessionUpdate"] == "tool_call" && u["toolCallId"] == "call_w")
        .map(|u| u["kind"].clone())
        .collect();
    assert_eq!(kinds, [json!("think")]);
    assert_eq!(&session_status(&mut l, &session).await["plan"], last);

    // The device restarts: the plan is in the session file, in the status before it is opened,
    // and told again when the session is opened from the store.
    l.service.signal(15);
    l.service.wait_exit(WAIT);
    let service = l.home.service();
    let _old = std::mem::replace(&mut l.service, service);
    l.link = relink(&l.peer).await;
    let stored = session_status(&mut l, &session).await;
    assert_eq!(stored["held"], "none");
    assert_eq!(&stored["plan"], last);
    l.model()
        .push(ModelReply::tool_call("call_c", "plan_clear", json!({})));
    l.model().push(reply_text("Cleared."));
    let answer = l.prompt(&session, "drop the plan", "turn-2").await;
    assert_eq!(answer["result"]["stopReason"], "end_turn", "{answer}");
    let (plans, events) = told(&l, &session);
    assert_eq!(plans.len(), 2, "reopened, then cleared: {plans:?}");
    assert_eq!(&plans[0]["_meta"]["lembas"]["plan"], last);
    assert_eq!(
        plans[1],
        json!({ "sessionUpdate": "plan", "entries": [], "_meta": { "lembas": { "plan": null } } })
    );
    assert_eq!(events[1], Value::Null);
    assert_eq!(session_status(&mut l, &session).await["plan"], Value::Null);
}

#[tokio::test(flavor = "multi_thread")]
async fn the_plan_card_carries_the_plan_and_a_flooded_plan_is_refused() {
    let mut l = linked("").await;
    // The flood is a third of a megabyte of arguments (the scripted model sends them seven bytes an
    // event): a window that holds it, so no compaction comes between. The title is 32 times the
    // limit (2,000 characters); the unit tests try a megabyte.
    l.peer
        .set_config(|c| c.models["data"][0]["context_length"] = json!(10_000_000));
    let session = l.new_session("edit").await;
    let tasks: Vec<Value> = (0..10_000)
        .map(|i| json!({ "content": format!("task {i}") }))
        .collect();
    l.model().push(ModelReply::tool_call(
        "call_flood",
        "plan_write",
        json!({ "plan": { "title": "Everything", "phases": [{ "title": "All", "tasks": tasks }] } }),
    ));
    l.model().push(ModelReply::tool_call(
        "call_long",
        "plan_write",
        json!({ "plan": { "title": "x".repeat(1 << 16), "phases": [] } }),
    ));
    l.model().push(ModelReply::tool_call(
        "call_none",
        "plan_update",
        json!({ "task": "t1", "status": "completed" }),
    ));
    l.model()
        .push(ModelReply::tool_call("call_w", "plan_write", plan_args()));
    l.model().push(ModelReply::tool_call(
        "call_p",
        "plan_submit",
        json!({ "text": "# Fix the parser\n\n1. Reproduce\n2. Patch" }),
    ));
    l.model().push(reply_text("Submitted."));
    let prompt = l.send_prompt(&session, "plan and submit", "turn-1").await;
    let card = l.link.recv_request("_lembas/plan", WAIT).await.unwrap();
    assert_eq!(card["params"]["plan"]["title"], "Fix the parser", "{card}");
    assert_eq!(card["params"]["plan"]["phases"][1]["tasks"][0]["id"], "t2");
    l.link
        .answer(card["id"].clone(), json!({ "outcome": "dismissed" }))
        .await
        .unwrap();
    let answer = l.link.recv_answer(prompt, WAIT).await.unwrap();
    assert_eq!(answer["result"]["stopReason"], "end_turn", "{answer}");
    assert!(
        tool_text(&l, "call_flood").contains("10000 tasks"),
        "{}",
        tool_text(&l, "call_flood")
    );
    assert!(tool_text(&l, "call_long").contains("65536 characters"));
    assert!(tool_text(&l, "call_none").contains("no plan yet"));
    // Only the plan that was kept was told.
    let (plans, _) = told(&l, &session);
    assert_eq!(plans.len(), 1, "{plans:?}");
    let failed: Vec<Value> = updates(&l.link)
        .iter()
        .filter(|u| u["sessionUpdate"] == "tool_call_update" && u["toolCallId"] == "call_flood")
        .map(|u| u["status"].clone())
        .collect();
    assert_eq!(failed, [json!("failed")]);
}
