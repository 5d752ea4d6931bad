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
