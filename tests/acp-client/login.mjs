// An editor made of the official ACP SDK on a computer not logged in: session/new and authenticate
// are answered auth-required; the person logs in in a terminal (`lembas login`, run here); the
// editor authenticates again and its chat starts; then it logs out, and session/new is refused
// again. Prints one JSON object with what the editor saw. Run by crates/cli/tests/login.rs.
//
// usage: LEMBAS_TEST_TOKEN=<token> node login.mjs <lembas binary> <folder> <server url>

import { spawnSync } from "node:child_process";
import * as acp from "@agentclientprotocol/sdk";
import { deadline, run } from "./editor.mjs";

const [lembas, folder, server] = process.argv.slice(2);
const token = process.env.LEMBAS_TEST_TOKEN;
if (!server || !token) {
  console.error("usage: LEMBAS_TEST_TOKEN=<token> node login.mjs <lembas binary> <folder> <server url>");
  process.exit(2);
}

const timer = deadline("login.mjs", 60);

/** A request whose error is an answer too: `{ error: { code, message } }`. */
async function attempt(ctx, method, params) {
  try {
    return { result: await ctx.request(method, params) };
  } catch (e) {
    return { error: { code: e.code, message: e.message } };
  }
}

const agent = acp.methods.agent;
const seen = await run(
  lembas,
  async (ctx) => {
    const newBefore = await attempt(ctx, agent.session.new, { cwd: folder, mcpServers: [] });
    const authBefore = await attempt(ctx, agent.authenticate, { methodId: "lembas-login" });
    const unknownMethod = await attempt(ctx, agent.authenticate, { methodId: "password" });
    const login = spawnSync(lembas, ["login", "--token-stdin", "--server", server], { input: `${token}\n` });
    const loggedIn = { status: login.status, stderr: login.stderr.toString() };
    const auth = await attempt(ctx, agent.authenticate, { methodId: "lembas-login" });
    const newAfter = await attempt(ctx, agent.session.new, { cwd: folder, mcpServers: [] });
    const logout = await attempt(ctx, agent.logout, {});
    const newLoggedOut = await attempt(ctx, agent.session.new, { cwd: folder, mcpServers: [] });
    return { newBefore, authBefore, unknownMethod, loggedIn, auth, newAfter, logout, newLoggedOut };
  },
  () => "reject_once",
);

clearTimeout(timer);
process.stdout.write(JSON.stringify(seen) + "\n");
