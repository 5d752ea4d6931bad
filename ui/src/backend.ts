// The boundary to the app: typed calls to its commands and its one event. Tests replace the Tauri
// IPC underneath this file, never this file itself.
import { invoke } from '@tauri-apps/api/core';
import { listen, type UnlistenFn } from '@tauri-apps/api/event';

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

/** An approval card waiting for an answer. */
export interface Card {
  tool_call_id: string;
  session_id: string;
  title: string;
  reason: string;
  detail: Detail;
  asked_at_ms: number;
  scheduled: { title: string; wait_s: number } | null;
}

/** The newest lines of the activity log, newest first. */
export interface ActivityPage { lines: Entry[]; unreadable: number; path: string }

/** Where the app asks the window to go (the tray's activity log, a clicked notification). */
export type View = { view: 'activity' } | { view: 'card'; tool_call_id: string };

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
    max_mode: string; roots: Root[];
  };
  scheduled_setting: { label: string; description: string };
  modes: string[];
  now: { terminals: number; watches: number };
  now_line: string;
  activity: Entry[];
  cards: Card[];
}

/** A notification the device runtime pushed over the control endpoint, passed on as sent. */
export interface ControlPush { method: string; params: unknown }

/** What every command rejects with. */
export interface CommandError { code: string; message: string }

export type SettingChange =
  | { setting: 'remote_enabled' | 'scheduled' | 'terminal' | 'require_trust'; value: boolean }
  | { setting: 'max_mode'; value: string }
  | { setting: 'add_root' | 'remove_root' | 'trust' | 'untrust'; value: string };

export function asCommandError(e: unknown): CommandError {
  if (e && typeof e === 'object' && 'code' in e && 'message' in e) {
    return { code: String(e.code), message: String(e.message) };
  }
  return { code: 'internal', message: String(e) };
}

export const backend = {
  getState: () => invoke<Snapshot>('get_state'),
  change: (change: SettingChange) => invoke<Snapshot>('change_setting', { change }),
  pickRoot: () => invoke<Snapshot>('pick_root'),
  login: (server: string, token: string) => invoke<{ message: string }>('login', { server, token }),
  logout: () => invoke<string>('logout'),
  stopRemoteWork: () => invoke<Snapshot>('stop_remote_work'),
  /** `once` or `deny`; false when the card had been answered elsewhere first. */
  answerApproval: (toolCallId: string, optionId: 'once' | 'deny') =>
    invoke<boolean>('answer_approval', { toolCallId, optionId }),
  readActivity: (limit?: number) => invoke<ActivityPage>('read_activity', { limit: limit ?? null }),
  takeView: () => invoke<View | null>('take_view'),
  /** Says the first paint with the device's state is done (`performance.now()` then): the app
   * test measures open → drawn from it. */
  drawn: (ms: number) => invoke<void>('drawn', { ms }),
  onState: (show: (s: Snapshot) => void): Promise<UnlistenFn> =>
    listen<Snapshot>('device-state', (event) => show(event.payload)),
  onView: (go: (v: View) => void): Promise<UnlistenFn> =>
    listen<View>('show-view', (event) => go(event.payload)),
  /** One request to the device runtime's control endpoint (its methods: crates/device/src/control). */
  controlCall: <T>(method: string, params?: Record<string, unknown>) =>
    invoke<T>('control_call', { method, params: params ?? {} }),
  /** Every notification the runtime pushes to the window's control subscription. */
  onControlPush: (take: (p: ControlPush) => void): Promise<UnlistenFn> =>
    listen<ControlPush>('control-push', (event) => take(event.payload)),
};
