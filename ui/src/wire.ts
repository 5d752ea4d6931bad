// Generated from the device's types (crates/device/src/control/window_types.rs); do not edit.
// A test checks it is fresh: `LEMBAS_GENERATE=1 cargo test -p lembas-device window_types`.

export type ActivityLines = Array<JsonValue> | Array<Line>;

export type ActivityPage = { lines: ActivityLines, unreadable: number, path: string, };

export type ActivityParams = { 
/**
 * How many of the newest lines (50 when absent).
 */
n?: number, 
/**
 * Each line as a sentence (`{ at_ms, kind, text }`) rather than as logged; at most 1,000.
 */
described: boolean, };

export type AnswerMeta = { lembas: AnswerSays | null, };

export type AnswerParams = { 
/**
 * The card's tool call id.
 */
id: string, answer: Verdict, };

export type AnswerSays = { command: string | null, feedback: string | null, };

export type Answered = { id: string, session_id: string, answer: Verdict, };

export type ApprovalCard = { 
/**
 * The tool call's id: what an answer names (`lembas approvals allow|deny <id>`).
 */
id: string, session_id: string, 
/**
 * The card's title as the client got it: the device's headline where it has one (a plan's:
 * "Approve the plan"); a face shows `headline`, and the model's words are `agent_says`.
 */
title: string, 
/**
 * ACP's tool kind (`execute`, `edit`, …); none on a plan card.
 */
kind: ToolKind | null, 
/**
 * Why it asks (the judge's sentence).
 */
reason: string, 
/**
 * What the call would do, as a face draws it: the command, the change as a diff, the plan,
 * or the arguments.
 */
detail: Detail, 
/**
 * The command line, for bash.
 */
command: string | null, 
/**
 * The change, for a file tool that writes.
 */
diff: Diff | null, 
/**
 * When it was asked (Unix ms) and how long it has waited.
 */
asked_ms: number, waiting_s: number, 
/**
 * Set when a scheduled run asks: nobody is at the chat.
 */
scheduled: ScheduledRun | null, 
/**
 * A plan card's plan, for a face that shows it whole (the tray's window).
 */
plan?: Plan | null, 
/**
 * The call's arguments as the agent gave them, for a tool that neither runs a command nor
 * changes a file (those are in `command` and `diff`).
 */
arguments?: JsonValue | null, 
/**
 * What the call does, in the device's words: "Run a command in ~/work/proj".
 */
headline: string, 
/**
 * The session's folder, the whole path (the headline says it as `~/…`).
 */
cwd: string, session_title: string, 
/**
 * When the wait ends and the card counts as denied (Unix ms).
 */
deadline_ms: number | null, risks: Array<Risk>, 
/**
 * The model's own description of the call, when it gave one: shown last, as its words.
 */
agent_says: string | null, 
/**
 * A write's or edit's change as a unified diff against the file on disk, when it could be
 * read (`tools::preview`).
 */
unified_diff: string | null, };

export type ApprovalOption = "once" | "session" | "deny";

export type AvailableCommand = { name: string, description: string, input?: CommandInput | null, _meta: LembasMeta<CommandKind>, };

export type Awake = { held: boolean, why: string, };

export type CardAnswer = PermissionAnswer | QuestionAnswer | PlanAnswer;

export type ChatAnswerParams = { session_id: string, tool_call_id: string, answer: CardAnswer, };

export type ChatModel = { id: string, name: string, };

export type ChatOpened = { session_id: string, cwd: string, title: string, model: string, mode: Mode, max_mode: Mode, effort: Effort, sharing: Sharing, 
/**
 * The chat so far; no turns for a new one.
 */
timeline: Timeline, commands: Array<AvailableCommand>, };

export type CommandInput = { hint: string, };

export type CommandKind = { 
/**
 * `builtin`, `custom` or `skill`.
 */
kind: string, };

export type CommandList = { commands: Array<AvailableCommand>, };

export type ConfigureParams = { session_id: string, model?: string | null, mode?: Mode | null, effort?: Effort | null, };

export type Configured = { model: string, mode: Mode, effort: Effort, };

export type Decided = { 
/**
 * `allow`, `ask` or `deny`: the verdict before anyone answered.
 */
decision: string, mode: string | null, reason: string | null, granted: boolean, answered_by: string | null, answer: ApprovalOption | null, answered_ms: number | null, at_ms: number | null, };

export type Detail = { "type": "command", command: string, } | { "type": "change", path: string, diff: string, } | { "type": "arguments", json: string, } | { "type": "plan", path: string, text: string, };

export type Did = { "kind": "command", command: string, } | { "kind": "change", path: string, diff: string | null, } | { "kind": "call", arguments: string, };

export type Diff = { path: string, old_text: string | null, new_text: string, };

export type Effort = "off" | "default" | "low" | "medium" | "high";

export type Empty = Record<symbol, never>;

export type Entry = { 
/**
 * Unix milliseconds.
 */
at_ms: number, 
/**
 * `terminal_opened`, `terminal_closed`, `watch_started`, `watch`, `refused`, `link`, `error`,
 * `session`, `turn`, `approval`, `tool`.
 */
kind: string, text: string, };

export type FilesFound = { 
/**
 * The folder searched; every path is relative to it.
 */
root: string, files: Array<FoundFile>, };

export type FilesSearchParams = { sessionId: SessionId | null, 
/**
 * Absolute.
 */
cwd: string | null, 
/**
 * What was typed after `@`; empty for the recent files.
 */
query: string, limit: number | null, };

export type FolderParams = { sessionId: SessionId | null, 
/**
 * Absolute.
 */
cwd: string | null, };

export type FoundFile = { path: string, 
/**
 * `file` or `dir`.
 */
kind: string, };

export type Grant = { "kind": "writes" } | { "kind": "command", pattern: string, } | { "kind": "tool", name: string, };

export type HelloParams = { cookie: string, };

export type JsonValue = number | string | boolean | Array<JsonValue> | { [key in string]: JsonValue } | null;

export type LembasMeta<T> = { lembas: T, };

export type Limits = { 
/**
 * The folders remote work may use, as set (none while remote work is off).
 */
roots: Array<string>, 
/**
 * The most a remote session may be.
 */
max_mode: Mode, 
/**
 * Whether a session's folder must be a trusted project: said in hello only.
 */
require_trust?: boolean, 
/**
 * Whether the device accepts scheduled work.
 */
scheduled: boolean, };

export type Line = { at_ms: number, kind: string, text: string, };

export type LinkView = { 
/**
 * The state's code, for the UI to branch on (`linked`, `offline`, `not_logged_in`, ...).
 */
state: string, 
/**
 * The tray's status line.
 */
line: string, };

export type ListedSession = { 
/**
 * A turn is running or waiting in this runtime.
 */
running: boolean, 
/**
 * Open in this runtime (model and mode known).
 */
open: boolean, model: string | null, mode: string | null, 
/**
 * The running turn is a scheduled run.
 */
scheduled: boolean, id: string, title: string, cwd: string, created_ms: number, updated_ms: number, messages: number, 
/**
 * Made for (or opened by) the link's client: it may delete the session wherever its folder is.
 */
given: boolean, };

export type ListedTerminal = { id: string, 
/**
 * The folder it started in (the shell's own `cd`s come as OSC 7 in its output).
 */
cwd: string, shell: string, opened_ms: number, 
/**
 * Bytes of output so far: where the next output starts.
 */
offset: number, 
/**
 * The PTY's size, as the instance last set it: the window draws the same screen.
 */
cols: number, rows: number, };

export type LoginParams = { server: string, token: string, };

export type Mode = "plan" | "manual" | "edit" | "auto";

export type Now = { terminals: number, watches: number, 
/**
 * Agent turns running (a chat at work), on the link or not.
 */
turns: number, };

export type OpenParams = { 
/**
 * Absolute.
 */
cwd?: string | null, session_id?: string | null, latest: boolean, 
/**
 * An instance model id; the login's default when absent.
 */
model?: string | null, 
/**
 * Shared from its start or not; absent: as `chat.share` says.
 */
share?: boolean | null, };

export type PermissionAnswer = { outcome: PermissionOutcome, _meta: AnswerMeta | null, };

export type PermissionOutcome = { "outcome": "selected", optionId: string, } | { "outcome": "cancelled" };

export type Plan = { path: string, text: string, };

export type PlanAnswer = { "outcome": "approve", mode: Mode, } | { "outcome": "revise", feedback: string, } | { "outcome": "dismissed" };

export type PromptParams = { session_id: string, text: string, 
/**
 * The front end's own id for the turn (a prompt sent twice runs once); made up when absent.
 */
turn_id?: string | null, };

export type Prompted = { turn_id: string, };

export type PutBack = { at_ms: number, files: Array<string>, 
/**
 * Left as they are: the limits no longer let remote work write there, or the folder moved.
 */
left: Array<string>, };

export type PutBackAnswer = { session_id: string, turn_id: string, files: Array<string>, left: Array<string>, };

export type QuestionAnswer = { "outcome": "answered", answers: Array<QuestionAnswered>, } | { "outcome": "dismissed" };

export type QuestionAnswered = { "kind": "options", labels: Array<string>, } | { "kind": "custom", text: string, } | { "kind": "back", text: string, } | { "kind": "skipped" };

export type RemoteStopped = { remote_enabled: boolean, 
/**
 * How many turns were stopped.
 */
stopped_turns: number, };

export type RemoteView = { enabled: boolean, scheduled: boolean, terminal: boolean, require_trust: boolean, max_mode: Mode, roots: Array<RootView>, 
/**
 * Whether remote commands run in a kernel sandbox here, as a sentence.
 */
sandbox: string, };

export type Replay = { id: string, data: string, offset: number, };

export type RevokeParams = { session_id: string, grant: Grant, };

export type Risk = "deletes" | "outside_folder" | "network" | "pipe_to_shell" | "sudo" | "protected" | "writes";

export type RootView = { path: string, trusted: boolean, };

export type Said = { message: string, };

export type ScheduledRun = { schedule_id: string, run_id: string, 
/**
 * The schedule's title, when the run gave one.
 */
title: string | null, 
/**
 * How long the device waits for an answer before denying.
 */
wait_s: number, };

export type SessionId = string;

export type SessionParams = { session_id: string, };

export type SettingChange = { "setting": "remote_enabled", "value": boolean } | { "setting": "scheduled", "value": boolean } | { "setting": "terminal", "value": boolean } | { "setting": "require_trust", "value": boolean } | { "setting": "max_mode", "value": Mode } | { "setting": "add_root", "value": string } | { "setting": "remove_root", "value": string } | { "setting": "trust", "value": string } | { "setting": "untrust", "value": string };

export type SettingText = { label: string, description: string, };

export type ShareParams = { session_id: string, share: boolean, 
/**
 * The answer to the `ask` question, kept for the chat's folder.
 */
remember: boolean, };

export type Sharing = { shared: boolean, 
/**
 * Why it cannot be shared (outside the roots, remote work off, not logged in); `None` when it can.
 */
refused: string | null, 
/**
 * `chat.share` is `ask` and this folder was never asked: the front end asks once, then calls
 * `chat/share` with `remember: true`.
 */
ask: boolean, 
/**
 * A link is up now.
 */
linked: boolean, };

export type ShownFile = { id: string, session_id: string, 
/**
 * As the client was sent it: relative to the session's folder when inside it.
 */
path: string, kind: ShownKind, language?: string, line?: number, 
/**
 * The text's length in bytes.
 */
size: number, shown_ms: number, };

export type ShownKind = "markdown" | "code" | "text" | "html";

export type ShownListParams = { session_id?: string, };

export type ShownReadParams = { id: string, };

export type ShownText = { file: ShownFile, text: string, };

export type Snapshot = { link: LinkView, held_by: string | null, server: string | null, connection: string | null, last_error: string | null, 
/**
 * The limits as last sent to the instance.
 */
limits: Limits | null, 
/**
 * The config cannot be read: the reason, and the settings shown are the defaults.
 */
settings_error: string | null, remote: RemoteView, scheduled_setting: SettingText, modes: Array<Mode>, now: Now, now_line: string, 
/**
 * The person's home folder: a face shows folders under it as `~/…` (cards and sessions carry
 * whole paths).
 */
home: string, activity: Array<Entry>, 
/**
 * The approval cards waiting for an answer, oldest first.
 */
cards: Array<ApprovalCard>, };

export type Status = { pid: number, server: string | null, connection: string | null, 
/**
 * The limits as last sent to the instance. A newer runtime's that this version cannot read
 * (a mode it does not know) reads as none, so the rest of its status still does.
 */
limits: Limits | null, last_error: string | null, 
/**
 * Which walls stand under remote commands: `namespaces, landlock ABI n (scopes), seccomp`, `seatbelt` or `none: <why>`
 * (absent in a file an older device wrote).
 */
sandbox: string | null, 
/**
 * Agent turns running now, and the folders they work in (absent in an older file).
 */
agents_working: number, working_in: Array<string>, 
/**
 * While remote work runs: whether the computer is kept from sleeping, and why (or why not).
 */
keep_awake: Awake | null, 
/**
 * Unix milliseconds of the last change.
 */
updated_ms: number, } & ({ "state": "starting" } | { "state": "not_logged_in" } | { "state": "connecting" } | { "state": "linked" } | { "state": "offline", retry_in_ms: number, } | { "state": "server_needs_update" } | { "state": "token_refused" } | { "state": "stopped" });

export type StatusAnswer = { 
/**
 * Always true: an answer comes from a running runtime.
 */
running: boolean, status: Status, };

export type SteerParams = { session_id: string, text: string, };

export type Steered = { queued: number, };

export type Step = { tool_call_id: string, tool: string, 
/**
 * The device's words for the call ("Run a command in ~/proj", "Write src/main.rs").
 */
headline: string, 
/**
 * What the agent said it would do: its description of the call, else its words before it.
 */
agent_says: string | null, did: Did, 
/**
 * What let it run or stopped it; absent while it is being decided.
 */
decided: Decided | null, result: StepResult, };

export type StepResult = { status: StepStatus, output: string, 
/**
 * The output is longer than shown.
 */
cut: boolean, };

export type StepStatus = "pending" | "completed" | "failed" | "denied";

export type Stopped = { session_id: string, stopped: boolean, };

export type Streams = { 
/**
 * Every session's updates (the window's timelines and chats).
 */
sessions: boolean, 
/**
 * The remote terminals' output.
 */
terminals: boolean, };

export type TerminalParams = { id: string, };

export type TerminalWriteParams = { id: string, 
/**
 * What was typed, as text (the window's xterm.js gives its keys as a string).
 */
data: string, };

export type Timeline = { session_id: string, title: string, 
/**
 * The session's folder.
 */
root: string, 
/**
 * A turn runs or waits in this runtime now.
 */
running: boolean, 
/**
 * "Allow for this chat" answers in force (they last while the chat is open in this runtime).
 */
grants: Array<Grant>, 
/**
 * Older turns left out ([`TURNS_SHOWN`]).
 */
earlier_turns: number, turns: Array<TimelineTurn>, };

export type TimelineTurn = { 
/**
 * Absent in sessions written before turns had ids (those cannot be put back).
 */
turn_id: string | null, prompt: string, steps: Array<Step>, 
/**
 * The agent's words to the person in this turn.
 */
reply: string, 
/**
 * Taken out of the conversation (`/undo`, a rewind); its steps happened all the same.
 */
rewound: boolean, 
/**
 * The files putting this turn back would restore: copies kept before its first write of each.
 */
kept: Array<string>, put_back: PutBack | null, };

export type ToolKind = "read" | "edit" | "delete" | "move" | "search" | "execute" | "think" | "fetch" | "switch_mode" | "other";

export type UndoParams = { session_id: string, turn_id: string, };

export type Verdict = "allow" | "allow_for_chat" | "deny";

export type View = { "view": "activity" } | { "view": "card", tool_call_id: string, } | { "view": "session", session_id: SessionId, } | { "view": "home", notice: string | null, };

export type ControlCalls = {
  "hello": { params: HelloParams, answer: Empty },
  "status": { params: Empty, answer: StatusAnswer },
  "subscribe": { params: Streams, answer: Empty },
  "approvals/list": { params: Empty, answer: Array<ApprovalCard> },
  "approvals/answer": { params: AnswerParams, answer: Answered },
  "activity": { params: ActivityParams, answer: ActivityPage },
  "window/state": { params: Empty, answer: Snapshot },
  "settings/change": { params: SettingChange, answer: Snapshot },
  "login": { params: LoginParams, answer: Said },
  "logout": { params: Empty, answer: Said },
  "sessions/list": { params: Empty, answer: Array<ListedSession> },
  "sessions/timeline": { params: SessionParams, answer: Timeline },
  "sessions/stop": { params: SessionParams, answer: Stopped },
  "sessions/undo": { params: UndoParams, answer: PutBackAnswer },
  "sessions/revoke": { params: RevokeParams, answer: Array<Grant> },
  "terminals/list": { params: Empty, answer: Array<ListedTerminal> },
  "terminals/replay": { params: TerminalParams, answer: Replay },
  "terminals/hang_up": { params: TerminalParams, answer: TerminalParams },
  "terminals/write": { params: TerminalWriteParams, answer: Empty },
  "remote/stop": { params: Empty, answer: RemoteStopped },
  "shown/list": { params: ShownListParams, answer: Array<ShownFile> },
  "shown/read": { params: ShownReadParams, answer: ShownText },
  "chat/open": { params: OpenParams, answer: ChatOpened },
  "chat/prompt": { params: PromptParams, answer: Prompted },
  "chat/steer": { params: SteerParams, answer: Steered },
  "chat/share": { params: ShareParams, answer: Sharing },
  "chat/close": { params: SessionParams, answer: Empty },
  "chat/configure": { params: ConfigureParams, answer: Configured },
  "chat/models": { params: Empty, answer: Array<ChatModel> },
  "chat/answer": { params: ChatAnswerParams, answer: Empty },
  "chat/files": { params: FilesSearchParams, answer: FilesFound },
  "chat/commands": { params: FolderParams, answer: CommandList },
};
