// An editor made of the official ACP SDK that renders forms (`elicitation.form`): the agent's
// question and its plan come as `elicitation/create` forms; the question is answered with a choice
// and words of the person's own, the plan approved into manual mode. Prints one JSON object with
// what the editor saw. Run by crates/cli/tests/stdio/sdk.rs.
//
// usage: node forms.mjs <lembas binary> <folder>

import * as acp from "@agentclientprotocol/sdk";
import { deadline, run } from "./editor.mjs";

const [lembas, folder] = process.argv.slice(2);
if (!folder) {
  console.error("usage: node forms.mjs <lembas binary> <folder>");
  process.exit(2);
}

const timer = deadline("forms.mjs", 60);
const session = acp.methods.agent.session;
// The first form is the question, the second the plan.
const filled = [
  { action: "accept", content: { q01: "Postgres", q02_other: "call it lembas" } },
  { action: "accept", content: { decision: "approve_manual" } },
];
const seen = await run(
  lembas,
  async (ctx) => {
    const opened = await ctx.request(session.new, { cwd: folder, mcpServers: [] });
    await ctx.request(session.setMode, { sessionId: opened.sessionId, modeId: "plan" });
    const prompt = await ctx.request(session.prompt, {
      sessionId: opened.sessionId,
      prompt: [{ type: "text", text: "Plan the database." }],
    });
    return { opened, prompt };
  },
  () => "reject_once",
  { elicitation: { form: {} } },
  ["serve", "--stdio"],
  { [acp.methods.client.elicitation.create]: () => filled.shift() ?? { action: "cancel" } },
);
clearTimeout(timer);
process.stdout.write(JSON.stringify(seen) + "\n");
