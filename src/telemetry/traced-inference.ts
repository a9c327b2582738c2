/**
 * The turn runtime's inference step as spans: an `InferenceProvider` that makes a client
 * span `inference.infer` (or `inference.summarize`) around each call to the provider it
 * wraps. A turn driver runs outside any request (`src/turns/runtime.ts` starts it in the
 * root context), so each attempt is a trace of its own.
 *
 * Attributes follow the GenAI conventions, counts and names only: the provider, the model
 * that answered, token usage and why it stopped; never the prompt, instructions or answer.
 */
import type { Attributes, Tracer } from '@opentelemetry/api';
import type {
  InferenceAnswer,
  InferenceProvider,
  InferenceRequest,
  PromptItem,
  SummaryAnswer,
  SummaryRequest,
  TokenUsage,
} from '../inference/provider.ts';
import { clientSpan } from './store-spans.ts';

const usage = (tokens: TokenUsage): Attributes => ({
  'gen_ai.usage.input_tokens': tokens.input,
  'gen_ai.usage.output_tokens': tokens.output,
});

class TracedProvider implements InferenceProvider {
  readonly key: string;
  readonly #provider: InferenceProvider;
  readonly #tracer: Tracer;

  constructor(provider: InferenceProvider, tracer: Tracer) {
    this.key = provider.key;
    this.#provider = provider;
    this.#tracer = tracer;
  }

  promptTokens(instructions: string | null, prompt: readonly PromptItem[]): number {
    return this.#provider.promptTokens(instructions, prompt);
  }

  infer(request: InferenceRequest): Promise<InferenceAnswer> {
    return this.#span(
      'infer',
      'chat',
      request.prompt.length,
      () => this.#provider.infer(request),
      (answer) => ({
        'gen_ai.response.model': answer.model,
        'gen_ai.response.finish_reasons': [answer.stop],
        ...usage(answer.usage),
      }),
    );
  }

  summarize(request: SummaryRequest): Promise<SummaryAnswer> {
    return this.#span(
      'summarize',
      'summarize',
      request.prompt.length,
      () => this.#provider.summarize(request),
      (answer) => usage(answer.usage),
    );
  }

  /** Runs `call` in a span; `after` adds attributes from its answer. */
  #span<T>(
    verb: string,
    operation: string,
    items: number,
    call: () => Promise<T>,
    after: (answer: T) => Attributes,
  ): Promise<T> {
    const attributes = {
      'gen_ai.operation.name': operation,
      'gen_ai.provider.name': this.key,
      'agent_sessions.prompt.items': items,
    };
    return clientSpan(this.#tracer, `inference.${verb}`, attributes, call, after);
  }
}

/** `providers`, each making spans when `tracer` is given; untouched when it is not. */
export function traceProviders(
  providers: Readonly<Record<string, InferenceProvider>>,
  tracer: Tracer | undefined,
): Readonly<Record<string, InferenceProvider>> {
  if (tracer === undefined) return providers;
  return Object.fromEntries(
    Object.entries(providers).map(([name, provider]) => [
      name,
      new TracedProvider(provider, tracer),
    ]),
  );
}
