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
import { isStoredLayer, openLayer } from '../sessions/sealing.ts';

type Body = Record<string, unknown>;

interface Entry {
  /** The cursor of the record that added the item. */
  readonly added: number;
  readonly item: PromptItem;
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

  constructor(tenantKey: Buffer) {
    this.#tenantKey = tenantKey;
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
        if (event.turn === this.#turn) this.#turn = null;
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
