import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  InferenceFailure,
  type InferenceRequest,
  type PromptItem,
} from '../../src/inference/provider.ts';
import {
  render,
  renderedSize,
  SimulatedProvider,
  tokensOf,
} from '../../src/inference/simulated.ts';

const provider = new SimulatedProvider();
const params = { max_tokens: null, stop: [], temperature: null, top_p: null };

function ask(
  prompt: PromptItem[],
  more: Partial<InferenceRequest> = {},
): ReturnType<SimulatedProvider['infer']> {
  return provider.infer({
    instructions: null,
    prompt,
    params,
    failures: 0,
    signal: new AbortController().signal,
    ...more,
  });
}

describe('the simulated provider (row 91)', () => {
  it('echoes the last message, counting ⌈chars/4⌉ tokens of the rendered prompt', async () => {
    const prompt: PromptItem[] = [
      { role: 'user', text: 'earlier' },
      { role: 'assistant', text: 'earlier', toolCalls: [] },
      { role: 'user', text: 'hello there' },
    ];
    const answer = await ask(prompt, { instructions: 'be brief' });
    expect(answer).toEqual({
      text: 'hello there',
      toolCalls: [],
      stop: 'end_turn',
      model: 'simulated',
      usage: { input: tokensOf(render('be brief', prompt)), output: 3 },
    });
    expect(provider.promptTokens('be brief', prompt)).toBe(
      Math.ceil(render('be brief', prompt).length / 4),
    );
    // Deterministic: the same prompt gives the same answer.
    expect(await ask(prompt, { instructions: 'be brief' })).toEqual(answer);
  });

  it('counts the prompt as long as render writes it, for any prompt, items counted once or again', () => {
    const item = fc.oneof(
      fc.record({ role: fc.constant('user' as const), text: fc.string() }),
      fc.record({ role: fc.constant('summary' as const), text: fc.string() }),
      fc.record({
        role: fc.constant('tool' as const),
        tool: fc.string(),
        call: fc.string(),
        ok: fc.boolean(),
        content: fc.string(),
      }),
      fc.record({
        role: fc.constant('assistant' as const),
        text: fc.option(fc.string(), { nil: null }),
        toolCalls: fc.array(
          fc.record({
            id: fc.string(),
            name: fc.string(),
            args: fc.dictionary(fc.string(), fc.jsonValue()),
          }),
          { maxLength: 3 },
        ),
      }),
    );
    fc.assert(
      fc.property(fc.option(fc.string(), { nil: null }), fc.array(item), (instructions, items) => {
        const prompt = items as PromptItem[];
        expect(renderedSize(instructions, prompt)).toBe(render(instructions, prompt).length);
        // Again, with each item's length now remembered, and the prompt grown by one.
        const grown = [...prompt, { role: 'user', text: 'next' } as const];
        expect(renderedSize(instructions, grown)).toBe(render(instructions, grown).length);
      }),
      { numRuns: 300 },
    );
  });

  it('asks for each /call line, numbering calls through the turn, then quotes their results', async () => {
    const user: PromptItem = {
      role: 'user',
      text: '/call lookup_order {"order_id":"A-1"}\n/call refund\n/call broken {not json',
    };
    const asked = await ask([user]);
    expect(asked.stop).toBe('tool_use');
    expect(asked.text).toBeNull();
    expect(asked.toolCalls).toEqual([
      { id: 'call_1', name: 'lookup_order', args: { order_id: 'A-1' } },
      { id: 'call_2', name: 'refund', args: {} },
    ]);
    const answered = await ask([
      user,
      { role: 'assistant', text: null, toolCalls: asked.toolCalls },
      {
        role: 'tool',
        call: 'call_1',
        tool: 'lookup_order',
        ok: true,
        content: '{"status":"shipped"}',
      },
      { role: 'tool', call: 'call_2', tool: 'refund', ok: false, content: 'denied: no_executor' },
    ]);
    expect(answered.stop).toBe('end_turn');
    expect(answered.text).toBe(
      'lookup_order returned: {"status":"shipped"}\nrefund failed: denied: no_executor',
    );
  });

  it('fails while fewer than n attempts of the turn failed (/fail n)', async () => {
    const prompt: PromptItem[] = [{ role: 'user', text: '/fail 2' }];
    await expect(ask(prompt, { failures: 0 })).rejects.toBeInstanceOf(InferenceFailure);
    await expect(ask(prompt, { failures: 1 })).rejects.toThrow(/simulated failure 2 of 2/);
    expect((await ask(prompt, { failures: 2 })).text).toBe('/fail 2');
  });

  it('delays the answer for /slow and gives up when aborted', async () => {
    const prompt: PromptItem[] = [{ role: 'user', text: '/slow 60\nsoon' }];
    const started = Date.now();
    expect((await ask(prompt)).text).toBe('/slow 60\nsoon');
    expect(Date.now() - started).toBeGreaterThanOrEqual(55);
    const controller = new AbortController();
    const slow = ask([{ role: 'user', text: '/slow 20000' }], { signal: controller.signal });
    setTimeout(() => {
      controller.abort(new Error('cancelled'));
    }, 10);
    await expect(slow).rejects.toThrow('cancelled');
  });

  it('cuts at the first stop sequence, then at max_tokens', async () => {
    const prompt: PromptItem[] = [{ role: 'user', text: 'one two. three four. five' }];
    const stopped = await ask(prompt, { params: { ...params, stop: ['four', '.'] } });
    expect(stopped).toMatchObject({ text: 'one two', stop: 'stop_sequence' });
    const cut = await ask(prompt, { params: { ...params, max_tokens: 2 } });
    expect(cut).toMatchObject({ text: 'one two.', stop: 'max_tokens', usage: { output: 2 } });
  });

  it('summarises deterministically, bounded, keeping the beginning of each item', async () => {
    const prompt: PromptItem[] = [
      { role: 'summary', text: 'before all' },
      { role: 'user', text: `first ${'a'.repeat(3000)}` },
      { role: 'assistant', text: `first ${'a'.repeat(3000)}`, toolCalls: [] },
    ];
    const request = { instructions: null, prompt, signal: new AbortController().signal };
    const { summary, usage } = await provider.summarize(request);
    expect(summary.length).toBeLessThanOrEqual(400);
    expect(summary).toContain('before all');
    expect(summary).toContain('user: first');
    expect(summary).toContain('assistant: first');
    expect(usage).toEqual({
      input: provider.promptTokens(null, prompt),
      output: tokensOf(summary),
    });
    expect(await provider.summarize(request)).toEqual({ summary, usage });
  });
});
