/**
 * The examples of the OpenAPI document's request bodies, by component name. They tell one
 * story, in the order a newcomer meets the API: an owner signs in with the operator token
 * and creates tenant `acme`, keeps a secret, makes the inference option `default`, links
 * the MCP server `helpdesk`; a vendor proposes its calendar app, the owner consents, the
 * vendor's poll gets the install key; the install opens a session for `ada` with its
 * executor `calendar-worker`, ada sends a message, the executor claims a call.
 *
 * Each example works as written against a fresh service once the ids and credentials the
 * story made are put in (test/http/openapi-story.test.ts sends every one and expects a
 * 2xx); the answer examples are in `openapi-answers.ts`.
 */

/** A session id as the service mints them: 8 hex of shard, 64 of owner digest. */
export const EXAMPLE_SESSION = `5e5510a7${'3f9a0c2e'.repeat(8)}`;
/** A proposal's request id. */
export const EXAMPLE_REQUEST = 'rq_8c1f0e6a2b9d4c7e91a3f05d6b2e8c14';
/** An install id. */
export const EXAMPLE_INSTALL = 'in_2f7c9e1a5b3d4f6e8a0c2e4f6a8b0d1c';

/** The vendor's tool, called by the model in the story. */
const FIND_EVENTS = {
  name: 'find_events',
  description: 'Lists the events of one day in the user’s calendar.',
  input_schema: {
    type: 'object',
    properties: {
      day: { type: 'string', format: 'date' },
      calendar: { type: 'string', enum: ['work', 'private'] },
    },
    required: ['day'],
  },
  output_schema: {
    type: 'object',
    properties: { events: { type: 'array', items: { type: 'object' } } },
  },
  result_limit: 65536,
  timeout: '30s',
};

export const VENDOR_DOCUMENT_EXAMPLE = {
  appdoc: 1,
  name: 'Calendar assistant',
  description: 'Answers questions about your calendar.',
  tools: [FIND_EVENTS],
};

export const TENANT_CONFIG_EXAMPLE = {
  inference: 'default',
  extra_tools: [{ connection: 'helpdesk', tool: 'echo' }],
  policies: [
    {
      tool: 'find_events',
      allow: true,
      posture: 'permissive',
      items: [{ arg: 'calendar', op: 'is', operand: { value: 'private' }, effect: 'deny' }],
      project: ['day'],
    },
  ],
};

/** An Ed25519 public key in SPKI PEM, as an executor registers it. */
const EXECUTOR_PUBLIC_KEY = `-----BEGIN PUBLIC KEY-----
MCowBQYDK2VwAyEAGb9ECWmEzf6FQbrBZ9w7lshQhqowtrbLDFw4rXAxZuE=
-----END PUBLIC KEY-----
`;

/** Request body examples, by the name of the body's component. */
export const REQUEST_EXAMPLES: Readonly<Record<string, unknown>> = {
  ConsoleTokenBody: { user: 'owner@acme.example', tenant: 'acme' },
  PutTenantBody: { name: 'Acme Corp', members: [{ user: 'ada@acme.example', role: 'member' }] },
  PutSecretBody: { value: 'hd_live_4f2a9c7e1b' },
  InferenceOption: {
    provider: 'simulated',
    compact_at: 100000,
    retry: { attempts: 3, backoff: '1s' },
    credential: null,
  },
  PutConnectionBody: {
    name: 'helpdesk',
    endpoint: 'https://mcp.helpdesk.example/mcp',
    credential: 'helpdesk-token',
    result_limit: null,
    timeout: '30s',
  },
  VendorDocument: VENDOR_DOCUMENT_EXAMPLE,
  TenantConfig: TENANT_CONFIG_EXAMPLE,
  PollBody: { request: EXAMPLE_REQUEST },
  OpenSessionBody: {
    executor: { name: 'calendar-worker', public_key: EXECUTOR_PUBLIC_KEY },
    instructions: 'You are a calendar assistant. Answer briefly.',
    params: { max_tokens: 1024, stop: [], temperature: 0.2, top_p: null },
    rounds: 16,
  },
  AppendBody: [
    { kind: { name: 'message.submitted', version: 1 }, body: { text: 'What is on today?' } },
  ],
  ClaimBody: { cause: 5 },
};

/** The path parameters the examples go with, for each parameter name of a path template. */
export const PATH_EXAMPLES: Readonly<Record<string, Readonly<Record<string, string>>>> = {
  '/secrets/{id}': { id: 'helpdesk-token' },
  '/inferences/{id}': { id: 'default' },
  '/connections/{id}': { id: 'helpdesk' },
  '/connections/{id}/authorize': { id: 'helpdesk' },
  '/console/statecharts/{machine}': { machine: 'turn' },
  '/consent/client/{module}': { module: 'index.ts' },
  '/consent/client/executor/{module}': { module: 'run.ts' },
  '/console/client/{module}': { module: 'index.ts' },
  '/console/client/executor/{module}': { module: 'run.ts' },
};

/** The query parameters the examples go with, by path template. */
export const QUERY_EXAMPLES: Readonly<Record<string, Readonly<Record<string, string>>>> = {
  '/usage': { from: '2026-11-01', to: '2026-11-30' },
  '/sessions': { principal: 'ada' },
  '/sessions/{id}/token': { principal: 'ada' },
  '/sessions/{id}/events': { from: '1', to: '2' },
};
