// What the SDK test scripts share: one run of `lembas serve --stdio` with the official ACP SDK as
// the editor. The SDK checks every message it gets against its own schema.
import { spawn } from "node:child_process";
import { Readable, Writable } from "node:stream";
import * as acp from "@agentclientprotocol/sdk";

/**
 * Starts the agent, initializes it, runs `steps(ctx, seen, initialize)`, closes its input and waits for it to
 * exit. `answer(params)` picks the kind of option each permission request is answered with;
 * `capabilities` are added to the client's; `args` start the agent; `handlers` answer other requests
 * of the agent by method (each seen in `others` too). Gives back what the steps returned, every update,
 * permission and other message seen, and the exit.
 */
export async function run(lembas, steps, answer, capabilities = {}, args = ["serve", "--stdio"], handlers = {}) {
  const seen = { updates: [], permissions: [], others: [] };
  const agent = spawn(lembas, args, { stdio: ["pipe", "pipe", "inherit"] });
  const exited = new Promise((resolve) => agent.on("exit", (code, signal) => resolve({ code, signal })));
  let builder = acp.client({ name: "lembas-test-editor" });
  for (const [method, handler] of Object.entries(handlers)) {
    builder = builder.onRequest(method, ({ params }) => {
      seen.others.push({ method, params });
      return handler(params);
    });
  }
  const editor = builder
    .onRequest(acp.methods.client.session.requestPermission, ({ params }) => {
      seen.permissions.push(params);
      const kind = answer(params);
      const option = params.options.find((o) => o.kind === kind);
      return { outcome: { outcome: "selected", optionId: option.optionId } };
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
      clientCapabilities: { fs: { readTextFile: false, writeTextFile: false }, terminal: false, ...capabilities },
      clientInfo: { name: "lembas-test-editor", version: "1.0.0" },
    });
    return { initialize, ...(await steps(ctx, seen, initialize)) };
  });
  // The editor closes: the agent's input ends.
  try {
    agent.stdin.end();
  } catch {
    // already closed with the connection
  }
  return { ...result, ...seen, exit: await exited };
}

/** Ends the script with a failure when it has not finished within `seconds`. */
export function deadline(script, seconds) {
  return setTimeout(() => {
    console.error(`${script}: no end within ${seconds} s`);
    process.exit(1);
  }, seconds * 1000);
}
