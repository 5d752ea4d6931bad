// An editor made of the official ACP SDK: starts `lembas serve --stdio`, runs one whole prompt
// (initialize, session/new, session/set_mode, session/prompt), allows once every permission the
// agent asks for, then closes the agent's input and waits for it to exit. Prints one JSON object
// with everything it saw. Run by crates/cli/tests/stdio/sdk.rs.
//
// usage: node drive.mjs <lembas binary> <session folder> <mode> <prompt text>

import * as acp from "@agentclientprotocol/sdk";
import { deadline, run } from "./editor.mjs";

const [lembas, cwd, mode, text] = process.argv.slice(2);
if (!text) {
  console.error("usage: node drive.mjs <lembas binary> <session folder> <mode> <prompt text>");
  process.exit(2);
}

const timer = deadline("drive.mjs", 60);
const seen = await run(
  lembas,
  async (ctx) => {
    const session = await ctx.request(acp.methods.agent.session.new, { cwd, mcpServers: [] });
    const setMode = await ctx.request(acp.methods.agent.session.setMode, {
      sessionId: session.sessionId,
      modeId: mode,
    });
    const prompt = await ctx.request(acp.methods.agent.session.prompt, {
      sessionId: session.sessionId,
      prompt: [{ type: "text", text }],
    });
    return { session, setMode, prompt };
  },
  () => "allow_once",
);
clearTimeout(timer);
process.stdout.write(JSON.stringify(seen) + "\n");
