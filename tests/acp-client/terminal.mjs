// An editor made of the official ACP SDK that draws a command's output as it comes (Zed's
// `_meta.terminal_output`): a prompt whose model runs a command in auto mode. Prints one JSON object
// with what the editor saw. Run by crates/cli/tests/stdio/sdk.rs.
//
// usage: node terminal.mjs <lembas binary> <folder>

import * as acp from "@agentclientprotocol/sdk";
import { deadline, run } from "./editor.mjs";

const [lembas, folder] = process.argv.slice(2);
if (!folder) {
  console.error("usage: node terminal.mjs <lembas binary> <folder>");
  process.exit(2);
}

const timer = deadline("terminal.mjs", 60);
const session = acp.methods.agent.session;
const seen = await run(
  lembas,
  async (ctx) => {
    const opened = await ctx.request(session.new, { cwd: folder, mcpServers: [] });
    await ctx.request(session.setMode, { sessionId: opened.sessionId, modeId: "auto" });
    const prompt = await ctx.request(session.prompt, {
      sessionId: opened.sessionId,
      prompt: [{ type: "text", text: "Count to two." }],
    });
    return { opened, prompt };
  },
  () => "reject_once",
  { _meta: { terminal_output: true } },
);
clearTimeout(timer);
process.stdout.write(JSON.stringify(seen) + "\n");
