// An editor made of the official ACP SDK hears the session change however it changes: a command's
// front matter takes the model, the effort and the mode for its prompt (config_option_update,
// current_mode_update, then the session's model given back), the first prompt names the chat and a
// rename renames it (session_info_update). Prints one JSON object with what the editor saw. Run by
// crates/cli/tests/stdio/sdk.rs.
//
// usage: node updates.mjs <lembas binary> <folder>

import * as acp from "@agentclientprotocol/sdk";
import { deadline, run } from "./editor.mjs";

const [lembas, folder] = process.argv.slice(2);
if (!folder) {
  console.error("usage: node updates.mjs <lembas binary> <folder>");
  process.exit(2);
}

const timer = deadline("updates.mjs", 60);

const session = acp.methods.agent.session;
const seen = await run(
  lembas,
  async (ctx) => {
    const opened = await ctx.request(session.new, { cwd: folder, mcpServers: [] });
    const prompt = await ctx.request(session.prompt, {
      sessionId: opened.sessionId,
      prompt: [{ type: "text", text: "/deep the cache" }],
    });
    const renamed = await ctx.request("_lembas/session/title", { sessionId: opened.sessionId, title: "Cache work" });
    return { opened, prompt, renamed };
  },
  () => "reject_once",
);

clearTimeout(timer);
process.stdout.write(JSON.stringify(seen) + "\n");
