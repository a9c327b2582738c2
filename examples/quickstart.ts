// The quickstart: one agent session from proposal to archive, against a running service.
// Run it beside `npm start` with the operator token that start printed:
//   OPERATOR_TOKEN=op_… npm run quickstart      (BASE_URL defaults to http://127.0.0.1:8080)
// eslint-disable-next-line no-restricted-properties
const { BASE_URL = 'http://127.0.0.1:8080', OPERATOR_TOKEN = '' } = process.env;

/** One JSON call; a refusal stops the script with the service's problem. */
async function call<T>(method: string, path: string, bearer: string | null, body?: unknown) {
  const response = await fetch(`${BASE_URL}${path}`, {
    method,
    headers: {
      ...(bearer === null ? {} : { authorization: `Bearer ${bearer}` }),
      ...(body === undefined ? {} : { 'content-type': 'application/json' }),
    },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  if (!response.ok)
    throw new Error(`${method} ${path}: ${response.status} ${await response.text()}`);
  return (await response.json()) as T;
}

// 1. A tenant owner signs in (the operator grant) and sets up the tenant `acme`:
//    the tenant itself and an inference option (the built-in simulated model).
const owner = await call<{ token: string }>('POST', '/console/token', OPERATOR_TOKEN, {
  user: 'ada',
  tenant: 'acme',
});
await call('PUT', '/console/tenant', owner.token, { name: 'Acme' });
await call('PUT', '/inferences/simulated', owner.token, { provider: 'simulated' });

// 2. A vendor proposes an app: a document of tools. Anyone may; the answer says where the
//    owner consents (`consent_url`, a page for a browser) and how the vendor polls.
const proposal = await call<{ request: string; poll_secret: string; consent_url: string }>(
  'POST',
  '/appdoc',
  null,
  {
    appdoc: 1,
    name: 'Order desk',
    description: 'Answers questions about orders.',
    tools: [
      {
        name: 'lookup_order',
        description: 'Look an order up.',
        input_schema: { type: 'object', properties: { order_id: { type: 'string' } } },
        output_schema: { type: 'object' },
      },
    ],
  },
);
console.log(`proposed; the owner's consent page is ${proposal.consent_url}`);

// 3. The owner consents (what the consent page does), choosing the inference option.
await call('POST', `/consent/${proposal.request}`, owner.token, { inference: 'simulated' });

// 4. The vendor polls (RFC 8628) and receives its install and the install key, once.
const receipt = await call<{ install: string; key: string }>(
  'POST',
  '/consent/token',
  proposal.poll_secret,
  { request: proposal.request },
);
console.log(`consented: install ${receipt.install}`);

// 5. The install opens a session for its user `ada`, and gets a session token.
const session = await call<{ session: string; token: string }>(
  'POST',
  '/sessions?principal=ada',
  receipt.key,
  {},
);
console.log(`opened session ${session.session}`);

// 6. The user sends a message: one record appended to the session's log.
await call('POST', `/sessions/${session.session}/events`, session.token, [
  { kind: { name: 'message.submitted', version: 1 }, body: { text: 'Where is order A-1?' } },
]);

// 7. Tail the log (NDJSON, one record a line) until the agent's turn has ended; leaving
//    the loop cancels the stream.
const stream = await fetch(`${BASE_URL}/sessions/${session.session}/events?from=1`, {
  headers: { authorization: `Bearer ${session.token}` },
});
let buffered = '';
let ended = false;
for await (const chunk of stream.body?.pipeThrough(new TextDecoderStream()) ?? []) {
  const lines = (buffered + chunk).split('\n');
  buffered = lines.pop() ?? '';
  for (const line of lines) {
    const { Ok } = JSON.parse(line) as {
      Ok: { envelope: { cursor: number; kind: { name: string } }; body: { text?: string } };
    };
    const text = Ok.body.text === undefined ? '' : `: ${Ok.body.text}`;
    console.log(`  ${Ok.envelope.cursor} ${Ok.envelope.kind.name}${text}`);
    ended ||= Ok.envelope.kind.name === 'turn.ended';
  }
  if (ended) break;
}

// 8. The install archives the session: nothing lands on it again.
await call('POST', `/sessions/${session.session}/archive`, receipt.key);
console.log(`archived session ${session.session}`);
