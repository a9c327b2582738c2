/**
 * A listening service for the client's tests: the real app (embedded default, or what
 * `options` say) on a loopback port, an install made by the public flow (propose, the
 * owner's consent, the vendor's poll), and a client of it holding the install key.
 */
import { createClient, type Client, type VendorDocument } from '@agent-session-service/client';
import { startTestApp, type TestApp, type TestAppOptions } from '../support/app.ts';
import { fetched, PublicFlow, type TestInstall } from '../support/flow.ts';

export interface ClientHarness {
  readonly harness: TestApp;
  /** `http://127.0.0.1:<port>`. */
  readonly base: string;
  readonly flow: PublicFlow;
  readonly install: TestInstall;
  /** A client of `base` with the install's key. */
  readonly client: Client;
  close(): Promise<void>;
}

export async function startClientHarness(options: TestAppOptions = {}): Promise<ClientHarness> {
  const harness = await startTestApp(options);
  const base = await harness.app.listen({ port: 0, host: '127.0.0.1' });
  const flow = new PublicFlow(fetched(base), harness.keys.generatedOperatorToken ?? '');
  const install = await flow.install();
  return {
    harness,
    base,
    flow,
    install,
    client: createClient({ baseUrl: base, installKey: install.key }),
    close: () => harness.close(),
  };
}

/** A `message.submitted` record with `text`. */
export function message(text: string) {
  return { kind: { name: 'message.submitted', version: 1 }, body: { text } };
}

/** Collects a tail's records (and its end) into arrays. */
export async function drain<T, R>(iterable: AsyncGenerator<T, R>): Promise<{ items: T[]; end: R }> {
  const items: T[] = [];
  for (;;) {
    const next = await iterable.next();
    if (next.done === true) return { items, end: next.value };
    items.push(next.value);
  }
}

/** A small vendor document with one tool, named `name`. */
export function appDocument(name = `App ${crypto.randomUUID().slice(0, 8)}`): VendorDocument {
  return {
    appdoc: 1,
    name,
    description: 'An app for client tests',
    tools: [
      {
        name: 'lookup',
        description: 'Looks a word up',
        input_schema: { type: 'object', properties: { word: { type: 'string' } } },
        output_schema: { type: 'object' },
      },
    ],
  };
}
