// A stand-in for the app behind the Tauri IPC, injected before the page loads. It replaces only
// window.__TAURI_INTERNALS__ (what @tauri-apps/api calls into), so the UI's own code runs as built.
// It answers like the app and its device runtime: the same snapshot shape (window/state), the same
// { code, message } errors and sentences.
(() => {
  const folders = new Set(['/home/me/work', '/home/me/work/app', '/srv/data']);
  const state = {
    link: { state: 'not_logged_in', line: 'Not logged in' },
    held_by: null, server: null, connection: null, last_error: null, limits: null, settings_error: null,
    remote: { enabled: false, scheduled: false, terminal: false, require_trust: true, max_mode: 'edit', roots: [],
      sandbox: 'Commands run in a kernel sandbox (namespaces, landlock ABI 7 (scopes), seccomp): they write only inside these folders and their own temp folder, and never read your keys, sockets or other programs.' },
    scheduled_setting: {
      label: 'Accept scheduled work',
      description: 'Let your LLeMbas schedules run on this computer, in the folders you allowed.',
    },
    modes: ['plan', 'manual', 'edit', 'auto'],
    now: { terminals: 0, watches: 0, turns: 0 }, now_line: 'Now: no remote work on this computer', home: '/home/me', activity: [],
    cards: [],
  };
  const trusted = new Set();
  const fake = {
    calls: [],
    nextPick: null,
    listeners: new Map(),
    callbacks: new Map(),
    state,
    // The activity log's lines, newest first, as the app reads them from activity.jsonl.
    activityLog: [],
    // The view take_view hands out once (the app sets it before it makes the window).
    pendingView: null,
    // Cards the client answered first: approvals/answer refuses them as not open.
    answeredElsewhere: new Set(),
    // control_call's handlers by method: (params) => result, or a rejected { code, message }.
    control: {},
    emit(event, payload) {
      for (const id of fake.listeners.get(event) ?? []) fake.callbacks.get(id)?.({ event, id, payload });
    },
  };
  window.__fake = fake;
  const clone = () => {
    state.remote.roots = state.remote.roots.map((r) => ({ path: r.path, trusted: [...trusted].some((t) => r.path === t || r.path.startsWith(t + '/')) }));
    return JSON.parse(JSON.stringify(state));
  };
  const refuse = (code, message) => Promise.reject({ code, message });
  const change = ({ setting, value }) => {
    const r = state.remote;
    switch (setting) {
      case 'remote_enabled': r.enabled = value; break;
      case 'scheduled': r.scheduled = value; break;
      case 'terminal': r.terminal = value; break;
      case 'require_trust': r.require_trust = value; break;
      case 'max_mode': r.max_mode = value; break;
      case 'add_root':
        if (!folders.has(value)) return refuse('refused', `${value} does not exist on this computer.`);
        if (!r.roots.some((x) => x.path === value)) r.roots.push({ path: value, trusted: false });
        break;
      case 'remove_root':
        if (!r.roots.some((x) => x.path === value)) return refuse('refused', `${value} is not in remote.roots.`);
        r.roots = r.roots.filter((x) => x.path !== value);
        break;
      case 'trust': trusted.add(value); break;
      case 'untrust': trusted.delete(value); break;
      default: return refuse('internal', `unknown setting ${setting}`);
    }
    return Promise.resolve(clone());
  };
  // The device runtime's control methods the window calls (crates/device/src/control), with the
  // errors relay.rs hands the page: { code: data.reason, message }. A test adds or replaces
  // handlers in fake.control.
  Object.assign(fake.control, {
    'window/state': () => clone(),
    'settings/change': (params) => change(params),
    'remote/stop': () => { state.remote.enabled = false; return { remote_enabled: false }; },
    'approvals/answer': ({ id, answer }) => {
      if (!['allow', 'allow_for_chat', 'deny'].includes(answer)) return refuse('refused', `unknown answer ${answer}`);
      const open = state.cards.some((c) => c.id === id) && !fake.answeredElsewhere.has(id);
      state.cards = state.cards.filter((c) => c.id !== id);
      if (!open) return refuse('not_open', `No approval ${id} waits for an answer: it was already answered, timed out or withdrawn (lembas approvals lists those that wait).`);
      return { id, session_id: 'ses_1', answer };
    },
    activity: ({ n, described }) => {
      if (!described) return refuse('refused', 'the window reads described lines');
      return { lines: fake.activityLog.slice(0, n ?? 50), unreadable: 0, path: '/home/me/.local/state/lembas/activity.jsonl' };
    },
    login: ({ server, token }) => {
      if (!/^https?:\/\//.test(server)) return refuse('bad_server', `"${server}" is not a server address: give its URL, like https://llm.example.org.`);
      if (server.includes('unreachable')) return refuse('unreachable', `Cannot reach ${server} (connection refused). Check the address and your network, then log in again.`);
      if (token !== 'right-token') return refuse('token_refused', `${server} does not accept this token (401): it is mistyped, expired or revoked. Get a new device token from ${server} and log in again.`);
      state.server = server; state.connection = 'home';
      state.link = { state: 'connecting', line: 'Connecting…' };
      return { message: `Logged in to home (${server}), LLeMbas 2.0.0. The token is in the OS keychain.` };
    },
    logout: () => {
      const was = state.server;
      state.server = null; state.connection = null; state.link = { state: 'not_logged_in', line: 'Not logged in' };
      return { message: `Logged out of ${was}: the login is gone from the config and the token from this computer.` };
    },
  });
  // The chat methods (CHAT-API.md): chats the window holds, as the runtime keeps them. A chat is
  // held by the window's connection from chat/open until chat/close; chat/prompt and the rest
  // refuse one it does not hold (`not_held`). A test drives a turn with fake.chat.update, .card,
  // .settle and .finish, which push what the runtime would.
  const within = (path, root) => path === root || path.startsWith(`${root}/`);
  const chat = {
    models: [{ id: 'qwen', name: 'Qwen 3 Coder' }, { id: 'llama', name: 'Llama 4' }],
    /** `chat.share` in the config. */
    share: 'ask',
    /** Folders whose share question was answered (`remember: true`). */
    asked: new Set(),
    /** Chats in the store, by id: { cwd, title, timeline }. */
    stored: new Map(),
    /** Stored chats another front end or an editor holds now. */
    heldElsewhere: new Set(),
    /** The chats this window holds: id → { cwd, sharing }. */
    held: new Map(),
    /** Cards open, by tool call id: { session_id, card } (the card push's params). */
    cards: new Map(),
    answers: [],
    queued: 0,
    made: 0,
    commands: [
      { name: 'compact', description: 'Compact the conversation', _meta: { lembas: { kind: 'builtin' } } },
      { name: 'review', description: 'Review the changes so far', input: { hint: 'what to look at' }, _meta: { lembas: { kind: 'custom' } } },
    ],
    files: ['README.md', 'src/main.rs', 'src/lib.rs', 'docs/using.md'],
    push: (method, params) => setTimeout(() => fake.emit('control-push', { method, params }), 0),
    update: (session_id, update) => chat.push('session/update', { session_id, update }),
    /** A card opened in a chat, pushed as the runtime pushes it. */
    card: (session_id, card) => {
      const id = card.toolCall?.toolCallId ?? card.toolCallId;
      chat.cards.set(id, { session_id, card });
      chat.push('card', { session_id, card });
    },
    settle: (session_id, tool_call_id, by) => {
      chat.cards.delete(tool_call_id);
      chat.push('card/settled', { session_id, tool_call_id, by });
    },
    /** The running turn ends with `reply` as the agent's words. */
    finish: (session_id, reply) => {
      const t = chat.stored.get(session_id).timeline;
      t.running = false;
      t.turns[t.turns.length - 1].reply = reply;
      chat.update(session_id, { sessionUpdate: '_lembas_turn', running: false });
    },
    sharing: (cwd, share) => {
      const inside = state.remote.enabled && state.remote.roots.some((r) => within(cwd, r.path));
      const refused = !state.server ? 'This computer is not logged in to a LLeMbas, so nothing can be shared.'
        : !inside ? `${cwd} is not a folder remote work may use: this chat stays on this computer.` : null;
      return {
        shared: refused === null && (share ?? chat.share === 'always'),
        refused,
        ask: refused === null && share === undefined && chat.share === 'ask' && !chat.asked.has(cwd),
        linked: state.link.state === 'linked',
      };
    },
  };
  fake.chat = chat;
  const heldOr = (session_id) => chat.held.get(session_id)
    ?? refuse('not_held', 'This window does not hold that chat (it was let go): open it again to go on.');
  const listed = () => [...chat.stored].map(([id, c]) => ({
    id, title: c.title, cwd: c.cwd, created_ms: 1, updated_ms: 2, messages: c.timeline.turns.length * 2,
    running: c.timeline.running, open: chat.held.has(id), model: chat.held.has(id) ? 'qwen' : null,
    mode: chat.held.has(id) ? 'edit' : null, scheduled: false, given: false,
  }));
  Object.assign(fake.control, {
    'sessions/list': () => listed(),
    'sessions/timeline': ({ session_id }) => {
      const c = chat.stored.get(session_id);
      return c ? structuredClone(c.timeline) : refuse('unknown', `No session ${session_id} on this computer.`);
    },
    'sessions/stop': ({ session_id }) => {
      const c = chat.stored.get(session_id);
      if (c?.timeline.running) chat.finish(session_id, 'Stopped.');
      return { session_id, stopped: Boolean(c) };
    },
    'chat/models': () => (state.server ? chat.models
      : refuse('not_logged_in', 'This computer is not logged in to a LLeMbas: log in (Settings) to chat with its models.')),
    'chat/open': ({ cwd, session_id, latest, model, share }) => {
      if (!state.server) return refuse('not_logged_in', 'This computer is not logged in to a LLeMbas: log in (Settings) to chat with its models.');
      if (model !== undefined && !chat.models.some((m) => m.id === model)) return refuse('model', `The instance does not serve the model ${model} to this device.`);
      let id = session_id;
      if (id !== undefined) {
        if (!chat.stored.has(id)) return refuse('unknown', `No chat ${id} on this computer.`);
        if (chat.heldElsewhere.has(id) || chat.held.has(id)) return refuse('held', 'An editor has this chat open now: close it there to go on here.');
      } else {
        if (typeof cwd !== 'string' || !cwd.startsWith('/')) return refuse('folder', `The folder must be a whole path (from /), not ${JSON.stringify(cwd)}.`);
        if (!folders.has(cwd)) return refuse('folder', `${cwd} does not exist on this computer.`);
        if (latest) id = [...chat.stored].reverse().find(([, c]) => c.cwd === cwd)?.[0];
        if (id === undefined) {
          id = `ses_chat${++chat.made}`;
          chat.stored.set(id, { cwd, title: '', timeline: { session_id: id, title: '', root: cwd, running: false, grants: [], earlier_turns: 0, turns: [] } });
        }
      }
      const c = chat.stored.get(id);
      const sharing = chat.sharing(c.cwd, share);
      chat.held.set(id, { cwd: c.cwd, sharing, model: model ?? 'qwen', mode: 'edit', effort: 'default' });
      // The chat's open cards come again to the connection that took it.
      for (const open of chat.cards.values()) if (open.session_id === id) chat.push('card', open);
      return {
        session_id: id, cwd: c.cwd, title: c.title, model: model ?? 'qwen', mode: 'edit', max_mode: state.remote.max_mode,
        effort: 'default', sharing, timeline: structuredClone(c.timeline), commands: chat.commands,
      };
    },
    'chat/prompt': ({ session_id, text, turn_id }) => {
      const held = chat.held.get(session_id);
      if (!held) return heldOr(session_id);
      if (typeof text !== 'string' || !text.trim()) return refuse('refused', 'An empty prompt says nothing: type what the agent should do.');
      const t = chat.stored.get(session_id).timeline;
      const id = turn_id ?? `turn_${t.turns.length + 1}`;
      t.turns.push({ turn_id: id, prompt: text, steps: [], reply: '', rewound: false, kept: [], put_back: null });
      t.running = true;
      chat.update(session_id, { sessionUpdate: '_lembas_turn', running: true });
      return { turn_id: id };
    },
    'chat/steer': ({ session_id, text }) => {
      if (!chat.held.has(session_id)) return heldOr(session_id);
      if (!chat.stored.get(session_id).timeline.running) return refuse('not_running', 'Nothing runs in this chat now: send it as a prompt.');
      if (!text) return refuse('refused', 'Steering with nothing says nothing.');
      return { queued: ++chat.queued };
    },
    'chat/share': ({ session_id, share, remember }) => {
      const held = chat.held.get(session_id);
      if (!held) return heldOr(session_id);
      if (held.sharing.refused) return refuse('outside', held.sharing.refused);
      if (remember) chat.asked.add(held.cwd);
      held.sharing = { ...held.sharing, shared: Boolean(share), ask: false };
      return held.sharing;
    },
    'chat/close': ({ session_id }) => {
      if (!chat.held.delete(session_id)) return heldOr(session_id);
      // Letting go cancels the chat's running turn and withdraws its cards.
      if (chat.stored.get(session_id)?.timeline.running) chat.finish(session_id, 'Stopped.');
      for (const [id, open] of chat.cards) if (open.session_id === session_id) chat.settle(session_id, id, 'withdrawn');
      return {};
    },
    'chat/configure': ({ session_id, model, mode, effort }) => {
      const held = chat.held.get(session_id);
      if (!held) return heldOr(session_id);
      if (model !== undefined && !chat.models.some((m) => m.id === model)) return refuse('model', `The instance does not serve the model ${model} to this device.`);
      const modes = ['plan', 'manual', 'edit', 'auto'];
      // Lowered to the ceiling, as the link's configure does.
      const lowered = mode === undefined ? held.mode : modes[Math.min(modes.indexOf(mode), modes.indexOf(state.remote.max_mode))];
      Object.assign(held, { model: model ?? held.model, mode: lowered, effort: effort ?? held.effort });
      return { model: held.model, mode: held.mode, effort: held.effort };
    },
    'chat/answer': ({ session_id, tool_call_id, answer }) => {
      if (!chat.held.has(session_id)) return heldOr(session_id);
      if (chat.cards.get(tool_call_id)?.session_id !== session_id) {
        return refuse('not_open', `No card ${tool_call_id} waits for an answer: it was answered elsewhere, timed out or withdrawn.`);
      }
      chat.cards.delete(tool_call_id);
      chat.answers.push({ session_id, tool_call_id, answer });
      return {};
    },
    'chat/commands': ({ sessionId, cwd }) => ({ commands: chat.commands }),
    'chat/files': ({ sessionId, query, limit }) => {
      const held = chat.held.get(sessionId);
      const q = String(query ?? '').toLowerCase();
      const files = chat.files.filter((f) => f.toLowerCase().includes(q)).slice(0, limit ?? 20).map((path) => ({ path, kind: 'file' }));
      return { root: held?.cwd ?? '/', files };
    },
  });
  // The window's own commands; everything else goes through control_call.
  const commands = {
    // The system's folder picker: the folder chosen, or null when cancelled.
    pick_root: () => fake.nextPick,
    take_view: () => { const v = fake.pendingView; fake.pendingView = null; return v; },
    drawn: () => null,
    // A test puts a handler per method in fake.control, and pushes notifications with
    // fake.emit('control-push', { method, params }).
    control_call: ({ method, params }) => {
      const handle = fake.control[method];
      if (!handle) return refuse('method_not_found', `This device does not offer ${method}.`);
      return handle(params ?? {});
    },
    'plugin:event|listen': ({ event, handler }) => {
      if (!fake.listeners.has(event)) fake.listeners.set(event, []);
      fake.listeners.get(event).push(handler);
      return handler;
    },
    'plugin:event|unlisten': () => null,
    'plugin:window|set_title': ({ value }) => { fake.windowTitle = value; return null; },
  };
  let nextId = 1;
  window.__TAURI_INTERNALS__ = {
    invoke(cmd, args) {
      fake.calls.push({ cmd, args: JSON.parse(JSON.stringify(args ?? {})) });
      const run = commands[cmd];
      if (!run) return Promise.reject({ code: 'internal', message: `no command ${cmd}` });
      try { return Promise.resolve(run(args ?? {})); } catch (e) { return Promise.reject(e); }
    },
    transformCallback(callback) { const id = nextId++; fake.callbacks.set(id, callback); return id; },
    unregisterCallback(id) { fake.callbacks.delete(id); },
    // A custom protocol's address (the window's `shown` pages): a test serves them at fake.frameBase.
    convertFileSrc: (p, protocol) => `${fake.frameBase ?? `${protocol}://localhost/`}${encodeURIComponent(p)}`,
    metadata: { currentWindow: { label: 'main' }, currentWebview: { windowLabel: 'main', label: 'main' } },
  };
  window.__TAURI_EVENT_PLUGIN_INTERNALS__ = { unregisterListener() {} };
})();
