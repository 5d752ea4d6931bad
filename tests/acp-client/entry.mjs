// An editor's configured entry tried with the official ACP SDK: the agent started with the entry's
// arguments, initialized, and a session/list answered. Prints one JSON object with what the editor
// saw. Run by crates/cli/tests/stdio/editors.rs for the registry manifest and each editor's entry
// in docs/using.md.
//
// usage: node entry.mjs <lembas binary> <the entry's arguments, as JSON>

import * as acp from "@agentclientprotocol/sdk";
import { deadline, run } from "./editor.mjs";

const [lembas, args] = process.argv.slice(2);
if (!args) {
  console.error("usage: node entry.mjs <lembas binary> <the entry's arguments, as JSON>");
  process.exit(2);
}

const timer = deadline("entry.mjs", 30);
const seen = await run(
  lembas,
  async (ctx) => ({ listed: await ctx.request(acp.methods.agent.session.list, {}) }),
  () => "reject_once",
  {},
  JSON.parse(args),
);
clearTimeout(timer);
process.stdout.write(JSON.stringify(seen) + "\n");
