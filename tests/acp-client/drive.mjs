// An editor made of the official ACP SDK: starts `lembas serve --stdio`, runs one whole prompt
// (initialize, session/new, session/set_mode, session/prompt), allows once every permission the
// agent asks for, then closes the agent's input and waits for it to exit. Prints one JSON object
// with everything it saw. Run by crates/cli/tests/stdio/sdk.rs.
//
// usage: node drive.mjs <lembas binary> <session folder> <mode> <prompt text>

import { spawn } from "node:child_process";
import { Readable, Writable } from "node:stream";
import * as acp from "@agentclientprotocol/sdk";

const [lembas, cwd, mode, text] = process.argv.slice(2);
if (!text) {
  console.error("usage: node drive.mjs <lembas binary> <session folder> <mode> <prompt text>");
  process.exit(2);
}

const seen = { updates: [], permissions: [], others: [] };
const agent = spawn(lembas, ["serve", "--stdio"], { stdio: ["pipe", "pipe", "inherit"] });
const exited = new Promise((resolve) => agent.on("exit", (code, signal) => resolve({ code, signal })));
const deadline = setTimeout(() => {
  console.error("drive.mjs: no end within 60 s; seen so far:", JSON.stringify(seen));
  agent.kill("SIGKILL");
  process.exit(1);
}, 60_000);

const editor = acp
  .client({ name: "lembas-test-editor" })
  .onRequest(acp.methods.client.session.requestPermission, ({ params }) => {
    seen.permissions.push(params);
    const allow = params.options.find((o) => o.kind === "allow_once");
    return { outcome: { outcome: "selected", optionId: allow.optionId } };
  })
  .onNotification(acp.methods.client.session.update, ({ params }) => {
    seen.updates.push(params);
  })
  // Anything else the agent sends (an editor that did not say _meta.lembas should get nothing).
  .onNotification("*", ({ method, params }) => {
    seen.others.push({ method, params });
  })
  .onRequest("*", ({ method, params }) => {
    seen.others.push({ method, params });
    throw acp.RequestError.methodNotFound(method);
  });

const stream = acp.ndJsonStream(Writable.toWeb(agent.stdin), Readable.toWeb(agent.stdout));
const result = await editor.connectWith(stream, async (ctx) => {
  const initialize = await ctx.request(acp.methods.agent.initialize, {
    protocolVersion: acp.PROTOCOL_VERSION,
    clientCapabilities: { fs: { readTextFile: false, writeTextFile: false }, terminal: false },
    clientInfo: { name: "lembas-test-editor", version: "1.0.0" },
  });
  const session = await ctx.request(acp.methods.agent.session.new, { cwd, mcpServers: [] });
  const setMode = await ctx.request(acp.methods.agent.session.setMode, {
    sessionId: session.sessionId,
    modeId: mode,
  });
  const prompt = await ctx.request(acp.methods.agent.session.prompt, {
    sessionId: session.sessionId,
    prompt: [{ type: "text", text }],
  });
  return { initialize, session, setMode, prompt };
});
// The editor closes: the agent's input ends.
try {
  agent.stdin.end();
} catch {
  // already closed with the connection
}
const exit = await exited;
clearTimeout(deadline);
process.stdout.write(JSON.stringify({ ...result, ...seen, exit }) + "\n");
