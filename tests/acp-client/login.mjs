// An editor made of the official ACP SDK, able to run a terminal login, on a computer not logged
// in: session/new and authenticate are answered auth-required; the person runs `lembas login` and
// the editor's authenticate reads it; it logs out and session/new is refused again; the editor
// runs the terminal method (the agent's command with its args, the server and token typed in) and
// a chat starts; it logs out again, and a prompt into that chat is answered auth-required. Prints one JSON object with what the editor saw. Run by
// crates/cli/tests/login/editor.rs.
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
  async (ctx, _seen, initialize) => {
    const newBefore = await attempt(ctx, agent.session.new, { cwd: folder, mcpServers: [] });
    const authBefore = await attempt(ctx, agent.authenticate, { methodId: "lembas-login" });
    const unknownMethod = await attempt(ctx, agent.authenticate, { methodId: "password" });
    const terminalThroughAuthenticate = await attempt(ctx, agent.authenticate, { methodId: "lembas-login-terminal" });
    // `lembas login` in a terminal, then authenticate.
    const login = spawnSync(lembas, ["login", "--token-stdin", "--server", server], { input: `${token}\n` });
    const loggedIn = { status: login.status, stderr: login.stderr.toString() };
    const auth = await attempt(ctx, agent.authenticate, { methodId: "lembas-login" });
    const newAfterAuth = await attempt(ctx, agent.session.new, { cwd: folder, mcpServers: [] });
    const logout = await attempt(ctx, agent.logout, {});
    const newLoggedOut = await attempt(ctx, agent.session.new, { cwd: folder, mcpServers: [] });
    // The terminal method as an editor runs it (the agent's command with the method's args), then
    // a chat with no authenticate between.
    const terminalArgs = initialize.authMethods.find((m) => m.type === "terminal")?.args ?? [];
    const terminal = spawnSync(lembas, ["serve", "--stdio", ...terminalArgs], { input: `${server}\n${token}\n` });
    const terminalLogin = { status: terminal.status, stderr: terminal.stderr.toString() };
    const newAfterTerminal = await attempt(ctx, agent.session.new, { cwd: folder, mcpServers: [] });
    const logoutAgain = await attempt(ctx, agent.logout, {});
    // A prompt into the chat made before the logout: auth-required too, so the editor offers the login.
    const promptLoggedOut = await attempt(ctx, agent.session.prompt, {
      sessionId: newAfterTerminal.result?.sessionId ?? "",
      prompt: [{ type: "text", text: "hello" }],
    });
    return {
      newBefore,
      authBefore,
      unknownMethod,
      terminalThroughAuthenticate,
      loggedIn,
      auth,
      newAfterAuth,
      logout,
      newLoggedOut,
      terminalLogin,
      newAfterTerminal,
      logoutAgain,
      promptLoggedOut,
    };
  },
  () => "reject_once",
  { auth: { terminal: true } },
);

clearTimeout(timer);
process.stdout.write(JSON.stringify(seen) + "\n");
