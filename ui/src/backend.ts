// The boundary to the app: typed calls to the device runtime's control methods (through the
// app's control_call command), the window's own commands (the folder picker, the view to open on)
// and its events. Tests replace the Tauri IPC underneath this file, never this file itself.
import { invoke } from '@tauri-apps/api/core';
import { listen, type UnlistenFn } from '@tauri-apps/api/event';
import { getCurrentWindow } from '@tauri-apps/api/window';
import type { ControlMethod, ControlPushMethod, Reason } from './protocol';

// What the device sends, declared once in Rust and generated (wire.ts); the window's own below.
export type {
  ApprovalCard, ApprovalOption, AvailableCommand, CardAnswer, ChatModel, ChatOpened, Decided, Detail, Did, Effort, Entry, Grant, ListedSession,
  ListedTerminal, Mode, PutBackAnswer, QuestionAnswered, Replay, Risk, SettingChange, Sharing, ShownFile, ShownKind, Snapshot, Step, Timeline,
  TimelineTurn, View,
} from './wire';
import type {
  ActivityPage as Page, ApprovalOption, CardAnswer, ControlCalls, Effort, Grant, JsonValue, Line, Mode, SettingChange, Sharing,
  Snapshot, ToolKind, Verdict, View,
} from './wire';

/** The newest lines of the activity log, newest first, each described. */
export type ActivityPage = Omit<Page, 'lines'> & { lines: Line[] };


// The chat pushes' cards: the request that shows a card as the link gets it (lembas_protocol's
// PermissionRequest, QuestionRequest and PlanRequest params, camelCase as sent), declared here by
// hand since those types are not generated into wire.ts yet.

/** ACP's diff content: a file's change (`oldText` null for a new file). */
export interface DiffContent { type: 'diff'; path: string; oldText: string | null; newText: string }

/** An approval card (`session/request_permission`'s params): the device's headline as the title. */
export interface PermissionCard {
  sessionId: string;
  toolCall: {
    toolCallId: string; title: string; kind: ToolKind; status: string; rawInput: JsonValue;
    content?: ({ type: string } | DiffContent)[];
  };
  options: { optionId: ApprovalOption; kind: string; name: string }[];
  /** Why it asks, the model's own words (`purpose`), what "Allow for this chat" covers. */
  _meta: { lembas: { reason: string; purpose?: string; always: string } };
}

/** A question card (`_lembas/question`'s params): the model's `ask_user`. */
export interface QuestionCard {
  sessionId: string; toolCallId: string; why?: string;
  questions: { header: string; question: string; multiple: boolean; options: { label: string; description?: string; recommended?: boolean }[] }[];
}

/** A plan card (`_lembas/plan`'s params): the plan to approve, revise or dismiss. */
export interface PlanCard { sessionId: string; toolCallId: string; path: string; text: string }

export type ChatCard = PermissionCard | QuestionCard | PlanCard;

export const cardIdOf = (card: ChatCard): string => ('toolCall' in card ? card.toolCall.toolCallId : card.toolCallId);

/** The `card` push: a card opened in a chat (and again for each open card of a chat just taken). */
export interface CardShown { session_id: string; card: ChatCard }
/** The `card/settled` push: answered elsewhere (`client`, `desktop`, `terminal`), `timeout` or `withdrawn`. */
export interface TakenDown { session_id: string; tool_call_id: string; by: string }
/** The `chat/sharing` push: a held chat's sharing changed by itself. */
export interface SharingChanged { session_id: string; sharing: Sharing }

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
  // A chat this window holds: the app passes these through the one connection that holds it.
  chatModels: () => call('chat/models', {}),
  /** A new chat in `cwd` (a folder of the roots here), or a stored one by its id. */
  openChat: (params: { cwd: string; model?: string } | { session_id: string }) => call('chat/open', params as ControlCalls['chat/open']['params']),
  prompt: (sessionId: string, text: string, turnId: string) =>
    call('chat/prompt', { session_id: sessionId, text, turn_id: turnId }),
  steer: (sessionId: string, text: string) => call('chat/steer', { session_id: sessionId, text }),
  share: (sessionId: string, share: boolean, remember = false) =>
    call('chat/share', { session_id: sessionId, share, remember }),
  closeChat: (sessionId: string) => call('chat/close', { session_id: sessionId }),
  configureChat: (sessionId: string, change: { model?: string; mode?: Mode; effort?: Effort }) =>
    call('chat/configure', { session_id: sessionId, ...change }),
  /** A card's answer in the link's own shapes (an approval's, a question's or a plan's). */
  answerCard: (sessionId: string, toolCallId: string, answer: CardAnswer) =>
    call('chat/answer', { session_id: sessionId, tool_call_id: toolCallId, answer }),
  chatCommands: (sessionId: string, cwd: string) => call('chat/commands', { sessionId, cwd }),
  chatFiles: (sessionId: string, cwd: string, query: string, limit: number) =>
    call('chat/files', { sessionId, cwd, query, limit }),
  /** The window's held connection ended (the runtime went or restarted): it let go of the chats
   * this window held. */
  onChatsLetGo: (take: () => void): Promise<UnlistenFn> => listen('chats-let-go', () => take()),
  /** Every notification the runtime pushes to the window's control subscription. */
  onControlPush: (take: (p: ControlPush) => void): Promise<UnlistenFn> =>
    listen<ControlPush>('control-push', (event) => take(event.payload)),
};
