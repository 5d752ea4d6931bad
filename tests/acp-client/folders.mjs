// An editor made of the official ACP SDK giving a chat further folders (`additionalDirectories`):
// refused ones (a relative path, a folder that is not there, a protected one) are each a -32602;
// a chat with one more folder, in edit mode, writes there as in its own folder, without asking;
// resumed with a refused folder it is refused and stays as it was. Prints one JSON object with
// what the editor saw. Run by crates/cli/tests/stdio/sdk.rs.
//
// usage: node folders.mjs <lembas binary> <folder> <another folder> <protected folder>

import * as acp from "@agentclientprotocol/sdk";
import { deadline, run } from "./editor.mjs";

const [lembas, folder, another, protectedFolder] = process.argv.slice(2);
if (!protectedFolder) {
  console.error("usage: node folders.mjs <lembas binary> <folder> <another folder> <protected folder>");
  process.exit(2);
}

const timer = deadline("folders.mjs", 60);

/** A request whose error is an answer too: `{ error: { code, message } }`. */
async function attempt(ctx, method, params) {
  try {
    return { result: await ctx.request(method, params) };
  } catch (e) {
    return { error: { code: e.code, message: e.message } };
  }
}

const session = acp.methods.agent.session;
const seen = await run(
  lembas,
  async (ctx) => {
    const opening = (additionalDirectories) =>
      attempt(ctx, session.new, { cwd: folder, mcpServers: [], additionalDirectories });
    const relative = await opening(["other"]);
    const missing = await opening([`${another}/not-there`]);
    const protectedOne = await opening([protectedFolder]);
    const opened = await ctx.request(session.new, { cwd: folder, mcpServers: [], additionalDirectories: [another] });
    await ctx.request(session.setMode, { sessionId: opened.sessionId, modeId: "edit" });
    const prompt = await ctx.request(session.prompt, {
      sessionId: opened.sessionId,
      prompt: [{ type: "text", text: "Write the note in the other folder." }],
    });
    const resumedBadly = await attempt(ctx, session.resume, {
      sessionId: opened.sessionId,
      cwd: folder,
      mcpServers: [],
      additionalDirectories: [protectedFolder],
    });
    return { relative, missing, protectedOne, opened, prompt, resumedBadly };
  },
  () => "reject_once",
);

clearTimeout(timer);
process.stdout.write(JSON.stringify(seen) + "\n");
