// The boundary to the app: typed calls to the device runtime's control methods (through the
// app's control_call command), the window's own commands (the folder picker, the view to open on)
// and its events. Tests replace the Tauri IPC underneath this file, never this file itself.
import { invoke } from '@tauri-apps/api/core';
import { listen, type UnlistenFn } from '@tauri-apps/api/event';
import { getCurrentWindow } from '@tauri-apps/api/window';
import type { ControlMethod, ControlPushMethod, Reason } from './protocol';

export type LinkState =
  | 'starting' | 'problem' | 'connecting' | 'linked' | 'offline'
  | 'not_logged_in' | 'server_needs_update' | 'token_refused' | 'stopped';

export interface Root { path: string; trusted: boolean }
export interface Entry { at_ms: number; kind: string; text: string }

/** What an approval card's call would do. */
export type Detail =
  | { type: 'command'; command: string }
  | { type: 'change'; path: string; diff: string }
  | { type: 'arguments'; json: string }
  | { type: 'plan'; path: string; text: string };

/** What a call may do, as the device reads it (never the model's words). */
export type Risk = 'deletes' | 'outside_folder' | 'network' | 'pipe_to_shell' | 'sudo' | 'protected' | 'writes';

/** An approval card waiting for an answer: the one card the device makes, for the window, the
 * notifications and `lembas approvals` alike. */
export interface Card {
  /** The tool call's id: what an answer names. */
  id: string;
  session_id: string;
  /** The model's own title of the call; shown only as `agent_says`. */
  title: string;
  reason: string;
  detail: Detail;
  /** When it was asked (Unix ms). */
  asked_ms: number;
  /** A scheduled run's: nobody is at the chat, and it is denied after `wait_s`. */
  scheduled: { schedule_id: string; run_id: string; title: string | null; wait_s: number } | null;
  /** What the call does, in the device's words. */
  headline: string;
  cwd?: string;
  session_title?: string;
  /** When the wait ends and the card counts as denied. */
  deadline_ms?: number | null;
  risks?: Risk[];
  /** The model's own description of the call. */
  agent_says?: string | null;
  /** A write's or edit's change as a unified diff against the file on disk (also in `detail`). */
  unified_diff?: string | null;
}

/** The newest lines of the activity log, newest first. */
export interface ActivityPage { lines: Entry[]; unreadable: number; path: string }

/** Where the app asks the window to go (the tray's activity log, a clicked notification). */
export type View =
  | { view: 'activity' } | { view: 'card'; tool_call_id: string } | { view: 'session'; session_id: string }
  | { view: 'home'; notice: string | null };

export interface Snapshot {
  link: { state: LinkState; line: string };
  held_by: string | null;
  server: string | null;
  connection: string | null;
  last_error: string | null;
  limits: unknown;
  settings_error: string | null;
  remote: {
    enabled: boolean; scheduled: boolean; terminal: boolean; require_trust: boolean;
    max_mode: string; roots: Root[]; sandbox: string;
  };
  scheduled_setting: { label: string; description: string };
  modes: string[];
  now: { terminals: number; watches: number; turns: number };
  now_line: string;
  activity: Entry[];
  cards: Card[];
}

/** A notification the device runtime pushed over the control endpoint, passed on as sent. */
export interface ControlPush { method: ControlPushMethod; params: unknown }

/** What every command rejects with: a control method's `data.reason` is its code; the app adds
 * `method_not_found` and, with no runtime, `not_running` or `unreachable`. */
export interface CommandError { code: Reason | 'method_not_found' | 'not_running' | 'refused'; message: string }

// The Sessions view's.
export interface ListedSession {
  id: string; title: string; cwd: string; created_ms: number; updated_ms: number; messages: number;
  running: boolean; open: boolean; model: string | null; mode: string | null; scheduled: boolean;
}

/** What let a step run or stopped it (the device's record of the call). */
export interface Decided {
  decision: 'allow' | 'ask' | 'deny'; mode: string | null; reason: string | null; granted: boolean;
  answered_by: 'client' | 'desktop' | 'timeout' | null; answer: string | null;
  answered_ms: number | null; at_ms: number | null;
}

/** What a step ran or changed, as the device saw it. */
export type Did =
  | { kind: 'command'; command: string }
  | { kind: 'change'; path: string; diff: string | null }
  | { kind: 'call'; arguments: string };

export interface Step {
  tool_call_id: string; tool: string; headline: string; agent_says: string | null; did: Did;
  decided: Decided | null;
  result: { status: 'pending' | 'completed' | 'failed' | 'denied'; output: string; cut: boolean };
}

export interface TimelineTurn {
  turn_id: string | null; prompt: string; steps: Step[]; reply: string; rewound: boolean;
  /** The files Put back would restore (copies kept before the turn's first write of each). */
  kept: string[];
  put_back: { at_ms: number; files: string[]; left: string[] } | null;
}

/** An "Allow for this chat" answer in force. */
export type Grant = { kind: 'writes' } | { kind: 'command'; pattern: string } | { kind: 'tool'; name: string };

/** A chat's timeline (`sessions/timeline`). */
export interface Timeline {
  session_id: string; title: string; root: string; running: boolean; grants: Grant[];
  /** Older turns the device left out (it carries the newest 200). */
  earlier_turns: number; turns: TimelineTurn[];
}

export interface PutBackAnswer { session_id: string; turn_id: string; files: string[]; left: string[] }

// The Terminals view's.
export interface ListedTerminal {
  id: string; cwd: string; shell: string; opened_ms: number; offset: number; cols: number; rows: number;
}

export interface Replay { id: string; data: string; offset: number }
// The viewer's.
export type ShownKind = 'markdown' | 'code' | 'text' | 'html';

/** One file a session showed (the runtime's ShownFile). */
export interface ShownFile {
  id: string;
  session_id: string;
  path: string;
  kind: ShownKind;
  language?: string;
  line?: number;
  size: number;
  shown_ms: number;
}



export type SettingChange =
  | { setting: 'remote_enabled' | 'scheduled' | 'terminal' | 'require_trust'; value: boolean }
  | { setting: 'max_mode'; value: string }
  | { setting: 'add_root' | 'remove_root' | 'trust' | 'untrust'; value: string };

export function asCommandError(e: unknown): CommandError {
  if (e && typeof e === 'object' && 'code' in e && 'message' in e) {
    return { code: String(e.code) as CommandError['code'], message: String(e.message) };
  }
  return { code: 'internal', message: String(e) };
}

/** One request to the device runtime's control endpoint (its methods: crates/device/src/control). */
function call<T>(method: ControlMethod, params?: object): Promise<T> {
  return invoke<T>('control_call', { method, params: params ?? {} });
}

/** How many lines of the activity log the Activity view reads at most. */
const ACTIVITY_MOST = 1000;

export const backend = {
  getState: () => call<Snapshot>('window/state'),
  change: (change: SettingChange) => call<Snapshot>('settings/change', change),
  /** The system's folder picker, then `settings/change add_root`; a cancelled picker changes nothing. */
  pickRoot: async (): Promise<Snapshot> => {
    const folder = await invoke<string | null>('pick_root');
    return folder === null ? backend.getState() : backend.change({ setting: 'add_root', value: folder });
  },
  login: (server: string, token: string) => call<{ message: string }>('login', { server, token }),
  logout: async () => (await call<{ message: string }>('logout')).message,
  stopRemoteWork: async (): Promise<Snapshot> => {
    await call('remote/stop');
    return backend.getState();
  },
  /** `once` or `deny`; false when the card had been answered elsewhere first. */
  answerApproval: async (toolCallId: string, optionId: 'once' | 'session' | 'deny'): Promise<boolean> => {
    const answer = { once: 'allow', session: 'allow_for_chat', deny: 'deny' }[optionId];
    try {
      await call('approvals/answer', { id: toolCallId, answer });
      return true;
    } catch (e) {
      if (asCommandError(e).code === 'not_open') return false;
      throw e;
    }
  },
  readActivity: (limit?: number) =>
    call<ActivityPage>('activity', { n: limit ?? ACTIVITY_MOST, described: true }),
  takeView: () => invoke<View | null>('take_view'),
  /** Says the first paint with the device's state is done (`performance.now()` then): the app
   * test measures open → drawn from it. */
  drawn: (ms: number) => invoke<void>('drawn', { ms }),
  /** The native window's title (the taskbar's, a window switcher's). */
  setTitle: (title: string) => getCurrentWindow().setTitle(title),
  /** A fresh snapshot whenever the runtime says something changed (its status or an event). One
   * read at a time: pushes that come meanwhile make one more read, not one each. */
  onState: (show: (s: Snapshot) => void): Promise<UnlistenFn> => {
    let reading = false;
    let again = false;
    const read = async () => {
      if (reading) { again = true; return; }
      reading = true;
      try {
        do {
          again = false;
          show(await backend.getState());
        } while (again);
      } catch {
        // The runtime went (or is restarting): its next push reads again.
      } finally {
        reading = false;
      }
    };
    return backend.onControlPush((push) => {
      if (push.method === 'status' || push.method === 'event' || push.method === 'missed') void read();
    });
  },
  onView: (go: (v: View) => void): Promise<UnlistenFn> =>
    listen<View>('show-view', (event) => go(event.payload)),
  listSessions: () => call<ListedSession[]>('sessions/list'),
  timeline: (sessionId: string) => call<Timeline>('sessions/timeline', { session_id: sessionId }),
  /** The files `turnId` and later turns changed, put back as they were before it. */
  putBack: (sessionId: string, turnId: string) => call<PutBackAnswer>('sessions/undo', { session_id: sessionId, turn_id: turnId }),
  /** Takes back an "Allow for this chat"; the grants left. */
  revokeGrant: (sessionId: string, grant: Grant) => call<Grant[]>('sessions/revoke', { session_id: sessionId, grant }),
  stopSession: (sessionId: string) => call<unknown>('sessions/stop', { session_id: sessionId }),
  listTerminals: () => call<ListedTerminal[]>('terminals/list'),
  writeTerminal: (id: string, data: string) => call<unknown>('terminals/write', { id, data }),
  replayTerminal: (id: string) => call<Replay>('terminals/replay', { id }),
  hangUpTerminal: (id: string) => call<unknown>('terminals/hang_up', { id }),
  listShown: () => call<ShownFile[]>('shown/list', {}),
  readShown: (id: string) => call<{ file: ShownFile; text: string }>('shown/read', { id }),
  /** Every notification the runtime pushes to the window's control subscription. */
  onControlPush: (take: (p: ControlPush) => void): Promise<UnlistenFn> =>
    listen<ControlPush>('control-push', (event) => take(event.payload)),
};
