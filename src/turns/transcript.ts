/**
 * The prompt a session's next inference is given (§6.3, decisions rows 51 and 90), rebuilt
 * from the log like the turn machine: the latest compaction summary, then every prompt
 * item added after the cursor it summarised through.
 *
 * Items enter when the record that makes them part of the conversation lands: a turn's
 * messages at its `turn.started` (row 90: a message sent mid-turn belongs to the next turn,
 * so it waits here until then), the model's answer at its `model.output`, a call's result
 * at its `invoke.denied` or `invoke.completed`. Each item remembers the cursor that added
 * it, so `compaction.completed {through}` drops exactly the items it summarised.
 *
 * Sealed layers (part D) are opened with the tenant's key: the model sees plaintext.
 */
import type { PromptItem, ToolCall } from '../inference/provider.ts';
import type { TurnEvent } from '../machines/turn.types.ts';
import { VENDOR_BOUNDS } from '../schemas/vendor.ts';
import { isStoredLayer, openLayer } from '../sessions/sealing.ts';

type Body = Record<string, unknown>;

/** What a completion needs of the call it answers, by the cursor of its invoke.allowed. */
interface OutCall {
  readonly call: string;
  readonly tool: string;
  /** Row 17: bytes of the result the model sees. */
  readonly resultLimit: number;
}

/** Row 17: the default result_limit (64 KiB). */
const DEFAULT_RESULT_LIMIT = VENDOR_BOUNDS.defaultResultLimit;

/** The text of an MCP CallToolResult as the model reads it: its text parts, others as JSON. */
function resultText(result: unknown): string {
  const content = (result as { content?: unknown } | null)?.content;
  if (!Array.isArray(content))
    return result === null || result === undefined ? '' : JSON.stringify(result);
  return content
    .map((part: unknown) => {
      const item = part as { type?: unknown; text?: unknown };
      return item.type === 'text' && typeof item.text === 'string'
        ? item.text
        : JSON.stringify(part);
    })
    .join('\n');
}

/** `text` cut to at most `limit` UTF-8 bytes, never inside a character. */
function cutToBytes(text: string, limit: number): { readonly text: string; readonly cut: boolean } {
  const bytes = Buffer.from(text, 'utf8');
  if (bytes.length <= limit) return { text, cut: false };
  let end = limit;
  // Back off continuation bytes (10xxxxxx) so the cut falls between characters.
  while (end > 0 && ((bytes[end] ?? 0) & 0xc0) === 0x80) end -= 1;
  return { text: bytes.subarray(0, end).toString('utf8'), cut: true };
}

interface Entry {
  /** The cursor of the record that added the item. */
  readonly added: number;
  readonly item: PromptItem;
}

/** A transcript as plain data, for a saved turn state (`state-snapshot.ts`). */
export interface TranscriptData {
  readonly waiting: readonly (readonly [number, string])[];
  readonly entries: readonly Entry[];
  readonly summary: string | null;
  readonly turn: number | null;
  readonly out: readonly (readonly [number, OutCall])[];
}

/** The conversation since the last compaction. */
export class Transcript {
  readonly #tenantKey: Buffer;
  /** Texts of messages not yet taken into a turn, by cursor. */
  readonly #waiting = new Map<number, string>();
  #entries: Entry[] = [];
  #summary: string | null = null;
  /** The turn in flight, whose outputs and call results enter the prompt. */
  #turn: number | null = null;
  /** The turn's allowed calls, by the cursor of their invoke.allowed. */
  readonly #out = new Map<number, OutCall>();

  constructor(tenantKey: Buffer, data?: TranscriptData) {
    this.#tenantKey = tenantKey;
    if (data === undefined) return;
    for (const [cursor, text] of data.waiting) this.#waiting.set(cursor, text);
    this.#entries = [...data.entries];
    this.#summary = data.summary;
    this.#turn = data.turn;
    for (const [cursor, out] of data.out) this.#out.set(cursor, out);
  }

  /** What the transcript holds, as plain data (items are never changed once added). */
  data(): TranscriptData {
    return {
      waiting: [...this.#waiting],
      entries: [...this.#entries],
      summary: this.#summary,
      turn: this.#turn,
      out: [...this.#out],
    };
  }

  /** Takes one landed record (already read by `RecordReader`) into the conversation. */
  apply(event: TurnEvent, body: Body): void {
    switch (event.type) {
      case 'message.submitted':
        this.#waiting.set(event.cursor, typeof body.text === 'string' ? body.text : '');
        return;
      case 'turn.started':
        this.#turn = event.cursor;
        for (const input of event.inputs) {
          const text = this.#waiting.get(input);
          this.#waiting.delete(input);
          if (text !== undefined) this.#add(event.cursor, { role: 'user', text });
        }
        return;
      case 'model.output':
        if (event.turn !== this.#turn) return;
        this.#add(event.cursor, {
          role: 'assistant',
          text: typeof body.text === 'string' ? body.text : null,
          toolCalls: this.#calls(body.tool_calls),
        });
        return;
      case 'invoke.allowed':
        if (event.turn !== this.#turn) return;
        this.#out.set(event.cursor, {
          call: event.call,
          tool: typeof body.tool === 'string' ? body.tool : '',
          resultLimit:
            typeof body.result_limit === 'number' ? body.result_limit : DEFAULT_RESULT_LIMIT,
        });
        return;
      case 'invoke.completed': {
        const out = event.cause === null ? undefined : this.#out.get(event.cause);
        if (out === undefined || event.cause === null) return;
        this.#out.delete(event.cause);
        const ok = body.ok === true;
        const result = resultText(this.#open(body.result));
        const error = typeof body.error === 'string' ? body.error : null;
        const full = ok
          ? result
          : [`error: ${error ?? 'failed'}`, result].filter(Boolean).join('\n');
        // Row 17: the model sees at most result_limit bytes, and is told when it was cut.
        const { text, cut } = cutToBytes(full, out.resultLimit);
        this.#add(event.cursor, {
          role: 'tool',
          call: out.call,
          tool: out.tool,
          ok,
          content: cut || body.truncated === true ? `${text}\n[truncated]` : text,
        });
        return;
      }
      case 'invoke.denied':
        if (event.turn !== this.#turn) return;
        this.#add(event.cursor, {
          role: 'tool',
          call: event.call,
          tool: typeof body.tool === 'string' ? body.tool : '',
          ok: false,
          content: `denied: ${typeof body.reason === 'string' ? body.reason : 'refused'}`,
        });
        return;
      case 'compaction.completed':
        this.#summary = typeof body.summary === 'string' ? body.summary : '';
        this.#entries = this.#entries.filter((entry) => entry.added > event.through);
        return;
      case 'turn.ended':
        if (event.turn === this.#turn) {
          this.#turn = null;
          this.#out.clear();
        }
        return;
      default:
        return;
    }
  }

  /** The prompt: the summary, then what followed it. */
  prompt(): PromptItem[] {
    const items = this.#entries.map((entry) => entry.item);
    return this.#summary === null ? items : [{ role: 'summary', text: this.#summary }, ...items];
  }

  /** The prompt items added at or before `through` (what a compaction through it summarises). */
  promptThrough(through: number): PromptItem[] {
    const items = this.#entries.filter((e) => e.added <= through).map((e) => e.item);
    return this.#summary === null ? items : [{ role: 'summary', text: this.#summary }, ...items];
  }

  /** Whether any item was added at or before `through` (a compaction would summarise something). */
  hasItemsThrough(through: number): boolean {
    return this.#entries.some((entry) => entry.added <= through);
  }

  #add(added: number, item: PromptItem): void {
    this.#entries.push({ added, item });
  }

  #calls(value: unknown): ToolCall[] {
    if (!Array.isArray(value)) return [];
    return (value as { id?: unknown; name?: unknown; args?: unknown }[]).map((call) => ({
      id: typeof call.id === 'string' ? call.id : '',
      name: typeof call.name === 'string' ? call.name : '',
      args: this.#open(call.args),
    }));
  }

  /** A sealed layer's plaintext (part D: the model sees plaintext). */
  #open(value: unknown): Record<string, unknown> {
    if (!isStoredLayer(value)) return (value ?? {}) as Record<string, unknown>;
    const opened = openLayer(value, this.#tenantKey);
    return opened.ok ? (opened.value as Record<string, unknown>) : {};
  }
}
