// An editor made of the official ACP SDK deleting chats and cancelling a request. Editor 1 makes
// two chats; editor 2 (a second run of `lembas serve --stdio` beside it) lists them and tries to
// delete one editor 1 holds, one that does not exist and one that is not an id, and sends a
// `$/cancel_request` for an id it never used; editor 1 deletes its second chat, then cancels a
// prompt whose model hangs mid-answer, and prompts again. Prints one JSON object with what each
// editor saw. Run by crates/cli/tests/stdio/sdk.rs.
//
// usage: node lifecycle.mjs <lembas binary> <folder>

import * as acp from "@agentclientprotocol/sdk";
import { deadline, run } from "./editor.mjs";

const [lembas, folder] = process.argv.slice(2);
if (!folder) {
  console.error("usage: node lifecycle.mjs <lembas binary> <folder>");
  process.exit(2);
}

const timer = deadline("lifecycle.mjs", 60);

/** A request whose error is an answer too: `{ error: { code, message } }`. */
async function attempt(ctx, method, params, options) {
  try {
    return { result: await ctx.request(method, params, options) };
  } catch (e) {
    return { error: { code: e.code, message: e.message } };
  }
}

/** Waits until `seen()` is true (the deadline ends a wait that never does). */
async function until(seen) {
  while (!seen()) {
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

const session = acp.methods.agent.session;
const first = await run(
  lembas,
  async (ctx, seen) => {
    const kept = await ctx.request(session.new, { cwd: folder, mcpServers: [] });
    const gone = await ctx.request(session.new, { cwd: folder, mcpServers: [] });
    const second = await run(
      lembas,
      async (other) => {
        const listed = await other.request(session.list, { cwd: folder });
        const heldElsewhere = await attempt(other, session.delete, { sessionId: kept.sessionId });
        const unknown = await attempt(other, session.delete, { sessionId: "ses_00000000000000000000000000" });
        const notAnId = await attempt(other, session.delete, { sessionId: "../../etc" });
        await other.notify(acp.methods.protocol.cancelRequest, { requestId: 4242 });
        const afterStrayCancel = await other.request(session.list, { cwd: folder });
        return { listed, heldElsewhere, unknown, notAnId, afterStrayCancel };
      },
      () => "reject_once",
    );
    const deleted = await attempt(ctx, session.delete, { sessionId: gone.sessionId });
    const deletedAgain = await attempt(ctx, session.delete, { sessionId: gone.sessionId });
    const listAfter = await ctx.request(session.list, { cwd: folder });

    // The model hangs after its first words: the prompt is cancelled by its request id.
    const cancel = new AbortController();
    const prompting = attempt(
      ctx,
      session.prompt,
      { sessionId: kept.sessionId, prompt: [{ type: "text", text: "Take your time." }] },
      { cancellationSignal: cancel.signal },
    );
    await until(() =>
      seen.updates.some(
        (u) => u.sessionId === kept.sessionId && u.update.sessionUpdate === "agent_message_chunk",
      ),
    );
    cancel.abort();
    const cancelled = await prompting;
    const again = await ctx.request(session.prompt, {
      sessionId: kept.sessionId,
      prompt: [{ type: "text", text: "Are you there?" }],
    });
    return { kept, gone, second, deleted, deletedAgain, listAfter, cancelled, again };
  },
  () => "reject_once",
);

clearTimeout(timer);
process.stdout.write(JSON.stringify(first) + "\n");
