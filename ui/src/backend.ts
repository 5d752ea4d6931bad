// The boundary to the app: typed calls to the device runtime's control methods (through the
// app's control_call command), the window's own commands (the folder picker, the view to open on)
// and its events. Tests replace the Tauri IPC underneath this file, never this file itself.
import { invoke } from '@tauri-apps/api/core';
import { listen, type UnlistenFn } from '@tauri-apps/api/event';
import { getCurrentWindow } from '@tauri-apps/api/window';
import type { ControlMethod, ControlPushMethod, Reason } from './protocol';

// What the device sends, declared once in Rust and generated (wire.ts); the window's own below.
export type {
  ApprovalCard, ApprovalOption, Decided, Detail, Did, Entry, Grant, ListedSession, ListedTerminal, Mode, PutBackAnswer, Replay, Risk,
  SettingChange, ShownFile, ShownKind, Snapshot, Step, Timeline, TimelineTurn, View,
} from './wire';
import type { ActivityPage as Page, ApprovalOption, ControlCalls, Grant, Line, SettingChange, Snapshot, Verdict, View } from './wire';

/** The newest lines of the activity log, newest first, each described. */
export type ActivityPage = Omit<Page, 'lines'> & { lines: Line[] };


/** A notification the device runtime pushed over the control endpoint, passed on as sent. */
export interface ControlPush { method: ControlPushMethod; params: unknown }

/** What every command rejects with: a control method's `data.reason` is its code; the app adds
 * `method_not_found` and, with no runtime, `not_running` or `unreachable`. */
export interface CommandError { code: Reason | 'method_not_found' | 'not_running' | 'refused'; message: string }

export function asCommandError(e: unknown): CommandError {
  if (e && typeof e === 'object' && 'code' in e && 'message' in e) {
    return { code: String(e.code) as CommandError['code'], message: String(e.message) };
  }
  return { code: 'internal', message: String(e) };
}

/** One request to the device runtime's control endpoint: its params and answer as the device
 * declares them for the method (crates/device/src/control/calls.rs, generated into wire.ts). */
function call<M extends ControlMethod & keyof ControlCalls>(
  method: M,
  params: ControlCalls[M]['params'],
): Promise<ControlCalls[M]['answer']> {
  return invoke<ControlCalls[M]['answer']>('control_call', { method, params });
}

/** How many lines of the activity log the Activity view reads at most. */
const ACTIVITY_MOST = 1000;

export const backend = {
  getState: () => call('window/state', {}),
  change: (change: SettingChange) => call('settings/change', change),
  /** The system's folder picker, then `settings/change add_root`; a cancelled picker changes nothing. */
  pickRoot: async (): Promise<Snapshot> => {
    const folder = await invoke<string | null>('pick_root');
    return folder === null ? backend.getState() : backend.change({ setting: 'add_root', value: folder });
  },
  login: (server: string, token: string) => call('login', { server, token }),
  logout: async () => (await call('logout', {})).message,
  stopRemoteWork: async (): Promise<Snapshot> => {
    await call('remote/stop', {});
    return backend.getState();
  },
  /** False when the card had been answered elsewhere first. The socket says an option in its own
   * words (`Verdict`). */
  answerApproval: async (toolCallId: string, option: ApprovalOption): Promise<boolean> => {
    const answer: Verdict = ({ once: 'allow', session: 'allow_for_chat', deny: 'deny' } as const)[option];
    try {
      await call('approvals/answer', { id: toolCallId, answer });
      return true;
    } catch (e) {
      if (asCommandError(e).code === 'not_open') return false;
      throw e;
    }
  },
  /** Described, so each line is a `Line` (the device's `ActivityLines::Described`). */
  readActivity: async (limit?: number): Promise<ActivityPage> => {
    const page = await call('activity', { n: limit ?? ACTIVITY_MOST, described: true });
    return { ...page, lines: page.lines as Line[] };
  },
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
  listSessions: () => call('sessions/list', {}),
  timeline: (sessionId: string) =>
    call('sessions/timeline', { session_id: sessionId }),
  /** The files `turnId` and later turns changed, put back as they were before it. */
  putBack: (sessionId: string, turnId: string) =>
    call('sessions/undo', { session_id: sessionId, turn_id: turnId }),
  /** Takes back an "Allow for this chat"; the grants left. */
  revokeGrant: (sessionId: string, grant: Grant) =>
    call('sessions/revoke', { session_id: sessionId, grant }),
  stopSession: (sessionId: string) => call('sessions/stop', { session_id: sessionId }),
  listTerminals: () => call('terminals/list', {}),
  writeTerminal: (id: string, data: string) =>
    call('terminals/write', { id, data }),
  replayTerminal: (id: string) => call('terminals/replay', { id }),
  hangUpTerminal: (id: string) => call('terminals/hang_up', { id }),
  listShown: () => call('shown/list', {}),
  readShown: (id: string) => call('shown/read', { id }),
  /** Every notification the runtime pushes to the window's control subscription. */
  onControlPush: (take: (p: ControlPush) => void): Promise<UnlistenFn> =>
    listen<ControlPush>('control-push', (event) => take(event.payload)),
};
