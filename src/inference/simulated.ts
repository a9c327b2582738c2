/**
 * The `simulated` provider (decisions row 91): deterministic, so tests and demos can drive
 * every path of a turn from the messages they send.
 *
 * - Tokens are ⌈chars/4⌉ of the prompt as `render` writes it out.
 * - The last user message decides the answer. Each of its lines `/call <tool> <json>` asks
 *   for a tool (stop `tool_use`); `/fail <n>` fails the turn's attempts until n have
 *   failed; `/slow <ms>` delays the answer (abortable). Otherwise the answer echoes the
 *   message. Once the calls it asked for have results, it answers quoting them.
 * - `max_tokens` cuts the text to 4×n characters (stop `max_tokens`); the first `stop`
 *   sequence found cuts it before the sequence (stop `stop_sequence`).
 */
import {
  InferenceFailure,
  type InferenceAnswer,
  type InferenceProvider,
  type InferenceRequest,
  type PromptItem,
  type StopReason,
  type SummaryAnswer,
  type SummaryRequest,
  type ToolCall,
} from './provider.ts';

type ToolResult = Extract<PromptItem, { readonly role: 'tool' }>;

const MODEL = 'simulated';
/** A summary is at most this long, however much it replaces. */
const SUMMARY_LIMIT = 400;
/** How much of each item's beginning a summary keeps. */
const SUMMARY_EXCERPT = 48;

const CALL = /^\/call\s+(\S+)(?:\s+(.*))?$/;
const FAIL = /^\/fail\s+(\d+)\s*$/;
const SLOW = /^\/slow\s+(\d+)\s*$/;

/** ⌈chars/4⌉. */
export function tokensOf(text: string): number {
  return Math.ceil(text.length / 4);
}

function renderItem(item: PromptItem): string {
  switch (item.role) {
    case 'user':
      return `user: ${item.text}`;
    case 'summary':
      return `summary: ${item.text}`;
    case 'tool':
      return `tool ${item.tool} (${item.call}) ${item.ok ? 'ok' : 'error'}: ${item.content}`;
    case 'assistant': {
      const calls = item.toolCalls.map((c) => `call ${c.name} ${JSON.stringify(c.args)}`);
      return ['assistant: ' + (item.text ?? ''), ...calls].join('\n');
    }
  }
}

/** The prompt as the simulated model reads it: the one text tokens are counted on. */
export function render(instructions: string | null, prompt: readonly PromptItem[]): string {
  const parts = prompt.map(renderItem);
  return (instructions === null ? parts : [`system: ${instructions}`, ...parts]).join('\n');
}

/**
 * Each item's length as `render` writes it, kept per item object: a transcript's items
 * never change once added, and a long conversation's whole prompt is counted at every
 * inference (writing it out each time made a turn cost the length of the session).
 */
const renderedLengths = new WeakMap<PromptItem, number>();

function renderedLength(item: PromptItem): number {
  let length = renderedLengths.get(item);
  if (length === undefined) {
    length = renderItem(item).length;
    renderedLengths.set(item, length);
  }
  return length;
}

/** `render(instructions, prompt).length`, without writing the prompt out. */
export function renderedSize(instructions: string | null, prompt: readonly PromptItem[]): number {
  let size = instructions === null ? 0 : `system: ${instructions}`.length;
  let parts = instructions === null ? 0 : 1;
  for (const item of prompt) {
    size += renderedLength(item);
    parts += 1;
  }
  // `render` joins the parts with one newline between each two.
  return size + Math.max(0, parts - 1);
}

interface Directives {
  readonly calls: readonly { readonly name: string; readonly args: Record<string, unknown> }[];
  readonly fail: number;
  readonly slowMs: number;
}

function parseArgs(raw: string | undefined): Record<string, unknown> | null {
  if (raw === undefined || raw.trim() === '') return {};
  try {
    const value: unknown = JSON.parse(raw);
    return typeof value === 'object' && value !== null && !Array.isArray(value)
      ? (value as Record<string, unknown>)
      : null;
  } catch {
    return null;
  }
}

function directives(text: string): Directives {
  const calls: { name: string; args: Record<string, unknown> }[] = [];
  let fail = 0;
  let slowMs = 0;
  for (const line of text.split('\n').map((l) => l.trim())) {
    const call = CALL.exec(line);
    const args = call === null ? null : parseArgs(call[2]);
    if (call?.[1] !== undefined && args !== null) calls.push({ name: call[1], args });
    const failing = FAIL.exec(line);
    if (failing?.[1] !== undefined) fail = Number(failing[1]);
    const slow = SLOW.exec(line);
    if (slow?.[1] !== undefined) slowMs = Number(slow[1]);
  }
  return { calls, fail, slowMs };
}

function sleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal.aborted) {
      reject(signal.reason as Error);
      return;
    }
    const onAbort = (): void => {
      clearTimeout(timer);
      reject(signal.reason as Error);
    };
    const timer = setTimeout(() => {
      signal.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    signal.addEventListener('abort', onAbort, { once: true });
  });
}

/** Applies `max_tokens` and `stop` to a text answer. */
function bounded(
  text: string,
  params: InferenceRequest['params'],
): { readonly text: string; readonly stop: StopReason | null } {
  let cut: { text: string; stop: StopReason | null } = { text, stop: null };
  const at = params.stop
    .map((sequence) => (sequence === '' ? -1 : text.indexOf(sequence)))
    .filter((index) => index >= 0)
    .sort((a, b) => a - b)[0];
  if (at !== undefined) cut = { text: text.slice(0, at), stop: 'stop_sequence' };
  if (params.max_tokens !== null && tokensOf(cut.text) > params.max_tokens) {
    cut = { text: cut.text.slice(0, params.max_tokens * 4), stop: 'max_tokens' };
  }
  return cut;
}

export class SimulatedProvider implements InferenceProvider {
  readonly key = MODEL;

  promptTokens(instructions: string | null, prompt: readonly PromptItem[]): number {
    return Math.ceil(renderedSize(instructions, prompt) / 4);
  }

  async infer(request: InferenceRequest): Promise<InferenceAnswer> {
    const { prompt, signal } = request;
    signal.throwIfAborted();
    const lastUser = prompt.findLastIndex((item) => item.role === 'user');
    const message = prompt[lastUser];
    const said = message?.role === 'user' ? message.text : '';
    const wanted = directives(said);
    if (request.failures < wanted.fail) {
      throw new InferenceFailure(
        `simulated failure ${request.failures + 1} of ${wanted.fail} (/fail)`,
      );
    }
    if (wanted.slowMs > 0) await sleep(wanted.slowMs, signal);
    const input = this.promptTokens(request.instructions, prompt);
    const after = prompt.slice(lastUser + 1);
    const results = after.filter((item): item is ToolResult => item.role === 'tool');
    if (after.length === 0 && wanted.calls.length > 0) {
      const earlier = prompt.reduce(
        (n, item) => n + (item.role === 'assistant' ? item.toolCalls.length : 0),
        0,
      );
      const toolCalls: ToolCall[] = wanted.calls.map((call, i) => ({
        id: `call_${earlier + i + 1}`,
        name: call.name,
        args: call.args,
      }));
      const output = tokensOf(
        toolCalls.map((c) => `${c.name} ${JSON.stringify(c.args)}`).join('\n'),
      );
      return { text: null, toolCalls, stop: 'tool_use', model: MODEL, usage: { input, output } };
    }
    const full =
      results.length > 0
        ? results.map((r) => `${r.tool} ${r.ok ? 'returned' : 'failed'}: ${r.content}`).join('\n')
        : said;
    const { text, stop } = bounded(full, request.params);
    return {
      text,
      toolCalls: [],
      stop: stop ?? 'end_turn',
      model: MODEL,
      usage: { input, output: tokensOf(text) },
    };
  }

  summarize(request: SummaryRequest): Promise<SummaryAnswer> {
    request.signal.throwIfAborted();
    const excerpts = request.prompt.map((item) => {
      const line = renderItem(item).replace(/\s+/g, ' ');
      return line.length > SUMMARY_EXCERPT ? `${line.slice(0, SUMMARY_EXCERPT)}…` : line;
    });
    let summary = `Earlier (${request.prompt.length} items): ${excerpts.join(' | ')}`;
    if (summary.length > SUMMARY_LIMIT) summary = `${summary.slice(0, SUMMARY_LIMIT - 1)}…`;
    return Promise.resolve({
      summary,
      usage: {
        input: this.promptTokens(request.instructions, request.prompt),
        output: tokensOf(summary),
      },
    });
  }
}
