// The boundary to the app: typed calls to the device runtime's control methods (through the
// app's control_call command), the window's own commands (the folder picker, the view to open on)
// and its events. Tests replace the Tauri IPC underneath this file, never this file itself.
import { invoke } from '@tauri-apps/api/core';
import { listen, type UnlistenFn } from '@tauri-apps/api/event';
import { getCurrentWindow } from '@tauri-apps/api/window';
import type { ControlMethod, ControlPushMethod, Reason } from './protocol';

// What the device sends, declared once in Rust and generated (wire.ts); the window's own below.
export type {
  ApprovalCard, Decided, Detail, Did, Entry, Grant, ListedSession, ListedTerminal, Mode, PutBackAnswer, Risk,
  SettingChange, Snapshot, Step, Timeline, TimelineTurn,
} from './wire';
import type {
  ActivityParams, AnswerParams, Entry, Grant, ListedSession, ListedTerminal, PutBackAnswer, RevokeParams, SessionParams,
  SettingChange, ShownListParams, ShownReadParams, Snapshot, TerminalParams, TerminalWriteParams, Timeline, UndoParams,
  Verdict,
} from './wire';

/** The newest lines of the activity log, newest first. */
export interface ActivityPage { lines: Entry[]; unreadable: number; path: string }

/** Where the app asks the window to go (the tray's activity log, a clicked notification). */
export type View =
  | { view: 'activity' } | { view: 'card'; tool_call_id: string } | { view: 'session'; session_id: string }
  | { view: 'home'; notice: string | null };

/** A notification the device runtime pushed over the control endpoint, passed on as sent. */
export interface ControlPush { method: ControlPushMethod; params: unknown }

/** What every command rejects with: a control method's `data.reason` is its code; the app adds
 * `method_not_found` and, with no runtime, `not_running` or `unreachable`. */
export interface CommandError { code: Reason | 'method_not_found' | 'not_running' | 'refused'; message: string }

// The Terminals view's.
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
    const answer: Verdict = ({ once: 'allow', session: 'allow_for_chat', deny: 'deny' } as const)[optionId];
    try {
      await call('approvals/answer', { id: toolCallId, answer } satisfies AnswerParams);
      return true;
    } catch (e) {
      if (asCommandError(e).code === 'not_open') return false;
      throw e;
    }
  },
  readActivity: (limit?: number) =>
    call<ActivityPage>('activity', { n: limit ?? ACTIVITY_MOST, described: true } satisfies ActivityParams),
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
  timeline: (sessionId: string) =>
    call<Timeline>('sessions/timeline', { session_id: sessionId } satisfies SessionParams),
  /** The files `turnId` and later turns changed, put back as they were before it. */
  putBack: (sessionId: string, turnId: string) =>
    call<PutBackAnswer>('sessions/undo', { session_id: sessionId, turn_id: turnId } satisfies UndoParams),
  /** Takes back an "Allow for this chat"; the grants left. */
  revokeGrant: (sessionId: string, grant: Grant) =>
    call<Grant[]>('sessions/revoke', { session_id: sessionId, grant } satisfies RevokeParams),
  stopSession: (sessionId: string) => call<unknown>('sessions/stop', { session_id: sessionId } satisfies SessionParams),
  listTerminals: () => call<ListedTerminal[]>('terminals/list'),
  writeTerminal: (id: string, data: string) =>
    call<unknown>('terminals/write', { id, data } satisfies TerminalWriteParams),
  replayTerminal: (id: string) => call<Replay>('terminals/replay', { id } satisfies TerminalParams),
  hangUpTerminal: (id: string) => call<unknown>('terminals/hang_up', { id } satisfies TerminalParams),
  listShown: () => call<ShownFile[]>('shown/list', {} satisfies ShownListParams),
  readShown: (id: string) => call<{ file: ShownFile; text: string }>('shown/read', { id } satisfies ShownReadParams),
  /** Every notification the runtime pushes to the window's control subscription. */
  onControlPush: (take: (p: ControlPush) => void): Promise<UnlistenFn> =>
    listen<ControlPush>('control-push', (event) => take(event.payload)),
};
