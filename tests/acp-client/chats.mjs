// An editor made of the official ACP SDK, over two runs of `lembas serve --stdio`, as Zed uses a
// custom agent across restarts. Run 1: a chat in folder A with the example MCP server, in manual
// mode, its model switched by a config option, one prompt whose permission requests are answered
// in turn Deny, Allow once, Always allow; a chat in folder B; the editor closes. Run 2: the chats
// listed (by folder, all, a cursor from nowhere), chat A reopened with session/load (its history
// replayed as session/update), an unknown chat loaded; the editor closes. Prints one JSON object
// with everything each run saw. Run by crates/cli/tests/stdio/sdk.rs.
//
// usage: node chats.mjs <lembas binary> <folder A> <folder B> <MCP server binary> <model>

import * as acp from "@agentclientprotocol/sdk";
import { deadline, run } from "./editor.mjs";

const [lembas, folderA, folderB, mcpServer, model] = process.argv.slice(2);
if (!model) {
  console.error("usage: node chats.mjs <lembas binary> <folder A> <folder B> <MCP server binary> <model>");
  process.exit(2);
}

const timer = deadline("chats.mjs", 90);

/** A request whose error is an answer too: `{ error: { code, message } }`. */
async function attempt(ctx, method, params) {
  try {
    return { result: await ctx.request(method, params) };
  } catch (e) {
    return { error: { code: e.code, message: e.message } };
  }
}

const example = { name: "example", command: mcpServer, args: [], env: [] };

// Each card is answered with the next of these kinds.
const answers = ["reject_once", "allow_once", "allow_always"];
const first = await run(
  lembas,
  async (ctx) => {
    const a = await ctx.request(acp.methods.agent.session.new, { cwd: folderA, mcpServers: [example] });
    await ctx.request(acp.methods.agent.session.setMode, { sessionId: a.sessionId, modeId: "manual" });
    const switched = await ctx.request(acp.methods.agent.session.setConfigOption, {
      sessionId: a.sessionId,
      configId: "model",
      value: model,
    });
    const promptA = await ctx.request(acp.methods.agent.session.prompt, {
      sessionId: a.sessionId,
      prompt: [{ type: "text", text: "Echo four words." }],
    });
    const b = await ctx.request(acp.methods.agent.session.new, { cwd: folderB, mcpServers: [] });
    const promptB = await ctx.request(acp.methods.agent.session.prompt, {
      sessionId: b.sessionId,
      prompt: [{ type: "text", text: "Hello from B." }],
    });
    return { a, switched, promptA, b, promptB };
  },
  () => answers.shift() ?? "reject_once",
);

const second = await run(lembas, async (ctx, seen) => {
  const listA = await ctx.request(acp.methods.agent.session.list, { cwd: folderA });
  const listAll = await ctx.request(acp.methods.agent.session.list, {});
  const badCursor = await attempt(ctx, acp.methods.agent.session.list, { cursor: "from-nowhere" });
  const before = seen.updates.length;
  const load = await ctx.request(acp.methods.agent.session.load, {
    sessionId: first.a.sessionId,
    cwd: folderA,
    mcpServers: [],
  });
  const replayed = seen.updates.slice(before);
  const unknown = await attempt(ctx, acp.methods.agent.session.load, {
    sessionId: "ses_00000000000000000000000000",
    cwd: folderA,
    mcpServers: [],
  });
  return { listA, listAll, badCursor, load, replayed, unknown };
}, () => "reject_once");

clearTimeout(timer);
process.stdout.write(JSON.stringify({ first, second }) + "\n");
