/**
 * The port an inference provider implements (interface 2.13, §6). The turn runtime hands a
 * provider the prompt it rebuilt from the log and lands what comes back as a record; a
 * provider never sees the log, a store or the session's keys.
 *
 * A provider answers or throws `InferenceFailure`: that is an attempt that failed and may
 * be retried (row 50). Any other error is a defect of the runtime, not of the model.
 */

/** A tool call the model asks for (the `tool_calls` of `model.output`, plaintext). */
export interface ToolCall {
  readonly id: string;
  readonly name: string;
  readonly args: Record<string, unknown>;
}

/** One item of the conversation a prompt is made of. */
export type PromptItem =
  | { readonly role: 'user'; readonly text: string }
  | {
      readonly role: 'assistant';
      readonly text: string | null;
      readonly toolCalls: readonly ToolCall[];
    }
  | {
      readonly role: 'tool';
      readonly call: string;
      readonly tool: string;
      readonly ok: boolean;
      readonly content: string;
    }
  | { readonly role: 'summary'; readonly text: string };

/** The sampling parameters fixed at session open (2.10 `params`); null is the default. */
export interface SamplingParams {
  readonly max_tokens: number | null;
  readonly stop: readonly string[];
  readonly temperature: number | null;
  readonly top_p: number | null;
}

export interface TokenUsage {
  readonly input: number;
  readonly output: number;
}

export type StopReason = 'end_turn' | 'tool_use' | 'max_tokens' | 'stop_sequence';

export interface InferenceRequest {
  readonly instructions: string | null;
  readonly prompt: readonly PromptItem[];
  readonly params: SamplingParams;
  /** Attempts of this turn that failed so far. */
  readonly failures: number;
  /** Aborted when the answer is no longer wanted (a cancel, an archive, shutdown). */
  readonly signal: AbortSignal;
}

export interface InferenceAnswer {
  readonly text: string | null;
  readonly toolCalls: readonly ToolCall[];
  readonly stop: StopReason;
  /** The model key usage is counted under (row 52). */
  readonly model: string;
  readonly usage: TokenUsage;
}

export interface SummaryRequest {
  readonly instructions: string | null;
  /** The items a compaction replaces. */
  readonly prompt: readonly PromptItem[];
  readonly signal: AbortSignal;
}

export interface SummaryAnswer {
  readonly summary: string;
  readonly usage: TokenUsage;
}

export interface InferenceProvider {
  /** The `provider` value of the inference options it serves, also its model key. */
  readonly key: string;
  /** The prompt's size in the provider's tokens (compared with `compact_at`). */
  promptTokens(instructions: string | null, prompt: readonly PromptItem[]): number;
  infer(request: InferenceRequest): Promise<InferenceAnswer>;
  summarize(request: SummaryRequest): Promise<SummaryAnswer>;
}

/** An attempt that failed at the provider; its message lands in `inference.failed`. */
export class InferenceFailure extends Error {
  override readonly name = 'InferenceFailure';
}
