// The quickstart: one agent session from proposal to archive, on the typed client of
// packages/client, against a running service. Run it beside `npm start` with the operator
// token that start printed:
//   OPERATOR_TOKEN=op_… npm run quickstart      (BASE_URL defaults to http://127.0.0.1:8080)
import { bearer, bodyOf, createClient } from '@agent-session-service/client';

// eslint-disable-next-line no-restricted-properties
const { BASE_URL = 'http://127.0.0.1:8080', OPERATOR_TOKEN = '' } = process.env;
const service = createClient({ baseUrl: BASE_URL });

// 1. The tenant owner signs in (the operator grant) and sets up the tenant `acme` with an
//    inference option. Every refusal throws a ServiceProblem (status, code, message, …).
//    `service.api` is every route of the served OpenAPI document, typed.
const { token } = await bodyOf(
  service.api.POST('/console/token', {
    body: { user: 'ada', tenant: 'acme' },
    headers: bearer(OPERATOR_TOKEN),
  }),
);
const asOwner = { headers: bearer(token) };
await service.api.PUT('/console/tenant', { body: { name: 'Acme' }, ...asOwner });
await service.api.PUT('/inferences/{id}', {
  params: { path: { id: 'simulated' } },
  body: { provider: 'simulated' },
  ...asOwner,
});

// 2. A vendor proposes its app; the owner is sent to `consent_url`.
const proposal = await service.propose({
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
});
console.log(`proposed; the owner's consent page is ${proposal.consent_url}`);

// 3. The owner consents (what the consent page does), choosing the inference option…
await service.api.POST('/consent/{request}', {
  params: { path: { request: proposal.request } },
  body: { inference: 'simulated' },
  ...asOwner,
});

// 4. …while the vendor waits for it, polling as RFC 8628 says, and receives its install key.
const receipt = await service.waitForConsent(proposal, {
  onProgress: ({ state, interval }) => {
    console.log(`waiting (${state}), next poll in ${interval} ms`);
  },
});
const vendor = service.with({ installKey: receipt.key ?? '' });
console.log(`consented: install ${receipt.install}`);

// 5. The install opens a session for its user `ada`; the grant carries the session token.
const grant = await vendor.openSession('ada');
const session = vendor.session(grant);
console.log(`opened session ${session.id}`);

// 6. The user sends a message. The append carries an Idempotency-Key: if its answer is
//    lost, it is sent again with the same key and lands once.
await session.append([
  { kind: { name: 'message.submitted', version: 1 }, body: { text: 'Where is order A-1?' } },
]);

// 7. Tail the log until the agent's turn has ended. The tail reconnects by itself after a
//    disconnect, from the last cursor it delivered; leaving the loop closes it.
for await (const record of session.tail({ from: 1 })) {
  const { cursor, kind } = record.envelope;
  const { text } = record.body as { text?: string };
  console.log(`  ${cursor} ${kind.name}${text === undefined ? '' : `: ${text}`}`);
  if (kind.name === 'turn.ended') break;
}

// 8. The install archives the session: nothing lands on it again.
await vendor.archive(session.id);
console.log(`archived session ${session.id}`);
