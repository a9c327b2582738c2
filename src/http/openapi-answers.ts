/**
 * The examples of the OpenAPI document's answers: by component name for JSON bodies, by
 * status for problems, and by operation for the few bodies that are not JSON. They
 * continue the story of `openapi-examples.ts` (tenant `acme`, the calendar app, ada's
 * session) and are what the service answered there, ids and credentials shortened.
 */
import { PROBLEM_COMPONENT_EXAMPLES } from './openapi-problems.ts';
import {
  EXAMPLE_INSTALL,
  EXAMPLE_REQUEST,
  EXAMPLE_SESSION,
  TENANT_CONFIG_EXAMPLE,
  VENDOR_DOCUMENT_EXAMPLE,
} from './openapi-examples.ts';

/** An instant of the story, Unix ms. */
const AT = 1795692225000;
/** A token as the service signs them (EdDSA JWT), its claims cut short. */
const JWT =
  'eyJhbGciOiJFZERTQSIsImtpZCI6IjRqUDR5RHVaWUg1SUlIbXIiLCJ0eXAiOiJKV1QifQ.eyJzdWIiOiJwcmluY2lwYWw6YWRhIn0.kLptv8MRdkUfR5JpCMHKrvIWkh_5qu8e4Yu3aVrKFgpn7Ph9iMnkWdJVA1XhCPQ7KWVD33i9gUWk8KgoQYz6CQ';
const VENDOR_HASH = '3a233f35de2adb4bfb26f53bd792af8460db48359b3a38f16ab41f3616fa5765';
const INSTALL_KEY = 'ik_7yFQxXRgMXFuCnzHsh10cyf483uBUyorExh1w1Qn-iw';

const SESSION_ANSWER = { session: EXAMPLE_SESSION, token: JWT, expires: AT + 3_600_000 };
const COMPOSED = {
  install: { id: EXAMPLE_INSTALL, tenant: 'acme', vendor: VENDOR_HASH, created: AT, updated: AT },
  tenant: TENANT_CONFIG_EXAMPLE,
  vendor: VENDOR_DOCUMENT_EXAMPLE,
};
const SIMULATED = {
  provider: 'simulated',
  compact_at: 100000,
  retry: { attempts: 3, backoff: '1s' },
  credential: null,
  name: 'default',
  created: AT,
  updated: AT,
};
const CONNECTION = {
  name: 'helpdesk',
  endpoint: 'https://mcp.helpdesk.example/mcp',
  auth: { kind: 'bearer', credential: 'helpdesk-token' },
  catalog: {
    tools: [
      {
        name: 'echo',
        description: 'Echoes back the input string',
        inputSchema: {
          type: 'object',
          properties: { message: { type: 'string', description: 'Message to echo' } },
          required: ['message'],
        },
      },
    ],
    digest: '9b1c0f3e6a2d4b8c7e5f1a3d9c0b2e4f6a8c1e3d5f7b9a0c2e4d6f8a1b3c5e7d',
    captured: AT,
  },
  result_limit: null,
  state: 'linked',
  timeout: '30s',
};
const ENVELOPE = {
  at: AT + 1000,
  cursor: 2,
  idem: 'hi0yViJS1aGUD44mn22hxg:0',
  kind: { name: 'message.submitted', version: 1 },
  producer: 'principal:ada',
  size: 28,
  stream: EXAMPLE_SESSION,
  to: null,
};
const LANDED = { envelope: ENVELOPE, body: { text: 'What is on today?' } };
const DIRECTORY_ROW = {
  archived: false,
  id: EXAMPLE_SESSION,
  opened: '2026-11-26T11:23:46.077Z',
  subject: '1d88898402d84cedf015216caf9946a368dbe1795f78d358d986be288df076d2',
};
const STATUS = {
  archived: false,
  head: 2,
  id: EXAMPLE_SESSION,
  live: {
    phase: 'inferring',
    turn: null,
    round: null,
    since: AT + 1000,
    prompt_tokens: 0,
    pending: [],
  },
};

/** Answer examples, by the name of the body's component. */
export const ANSWER_EXAMPLES: Readonly<Record<string, unknown>> = {
  Liveness: { status: 'ok' },
  Health: {
    status: 'ok',
    checks: {
      log: { backend: 'sqlite', status: 'ok' },
      control: { backend: 'sqlite', status: 'ok' },
    },
  },
  JsonWebKeySet: {
    keys: [
      {
        kty: 'OKP',
        crv: 'Ed25519',
        x: '33nVAZt0VBms737fM44I_a2sIzemfzsXRtySR68qQpo',
        kid: '4jP4yDuZYH5IIHmr',
        alg: 'EdDSA',
        use: 'sig',
      },
    ],
  },
  ConsoleTokenAnswer: { token: JWT, expires: AT + 3_600_000, user: 'owner@acme.example' },
  WriteAnswer: { outcome: 'created' },
  Memberships: [{ tenant: 'acme', role: 'owner' }],
  TenantRead: {
    tenant: 'acme',
    name: 'Acme Corp',
    members: [
      { user: 'ada@acme.example', role: 'member' },
      { user: 'owner@acme.example', role: 'owner' },
    ],
  },
  SecretList: [{ name: 'helpdesk-token', created: AT, updated: AT }],
  InferenceRead: SIMULATED,
  InferenceList: [SIMULATED],
  UsageAnswer: [
    {
      day: '2026-11-26',
      bytes_archived: 5120,
      events: 12,
      sessions_checkpointed: 1,
      tokens: { simulated: { input: 38, output: 12 } },
      tool_calls: { find_events: 1 },
    },
  ],
  Connection: CONNECTION,
  ConnectionList: [CONNECTION],
  PutConnectionAnswer: { connection: CONNECTION, outcome: 'created' },
  AuthorizeAnswer: {
    authorize:
      'https://auth.helpdesk.example/authorize?response_type=code&client_id=svc&state=Jx2k9&code_challenge=Qm8v&code_challenge_method=S256',
  },
  ProposalAnswer: {
    request: EXAMPLE_REQUEST,
    poll_secret: 'ps_iCC5zXi_1yZD01W_swFV-lgIIHy3FcnxBzoUPJ0zRrA',
    consent_url: `https://sessions.example.com/consent/${EXAMPLE_REQUEST}`,
    vendor: VENDOR_HASH,
    expires: AT + 600_000,
    interval: 5000,
  },
  ConsentRead: {
    request: EXAMPLE_REQUEST,
    state: 'pending',
    vendor: VENDOR_DOCUMENT_EXAMPLE,
    hash: VENDOR_HASH,
    expires: AT + 600_000,
    install: null,
  },
  ConsentAnswer: { install: EXAMPLE_INSTALL },
  DeclineAnswer: { request: EXAMPLE_REQUEST, state: 'declined' },
  PollAnswer: {
    request: EXAMPLE_REQUEST,
    install: EXAMPLE_INSTALL,
    key: INSTALL_KEY,
    vendor: VENDOR_HASH,
  },
  ComposedDocument: COMPOSED,
  InstallList: { items: [COMPOSED], next: null },
  InstallKeyAnswer: { key: 'ik_dKljJ215mVXQEtHLMGobfZK20yBN7X0YV8FP_lUHCpY' },
  SessionAnswer: SESSION_ANSWER,
  DirectoryPage: { items: [DIRECTORY_ROW], next: null },
  ConsoleDirectoryPage: { items: [{ ...DIRECTORY_ROW, install: EXAMPLE_INSTALL }], next: null },
  AppendAnswer: [ENVELOPE],
  TailLine: { Ok: LANDED },
  AuditLine: { Ok: LANDED },
  SessionStatus: STATUS,
  ClaimAnswer: { attempt: 'first', credential: JWT, expires: AT + 60_000 },
  ...PROBLEM_COMPONENT_EXAMPLES,
};

/** Examples of bodies that are not JSON components, by `METHOD path status media type`. */
export const INLINE_EXAMPLES: Readonly<Record<string, unknown>> = {
  'GET /metrics 200 text/plain; version=0.0.4; charset=utf-8':
    '# HELP agent_sessions_appends_total Append requests answered 200, by log backend and whether the batch landed or replayed an earlier one.\n# TYPE agent_sessions_appends_total counter\nagent_sessions_appends_total{backend="sqlite",outcome="landed"} 12\n',
  'GET /openapi.json 200 application/json': {
    openapi: '3.1.0',
    info: { title: 'Agent Session Service', version: '1' },
    paths: {},
  },
  'GET /docs 200 text/html': '<!doctype html>\n<html lang="en">…</html>\n',
  'GET /docs/ 200 text/html': '<!doctype html>\n<html lang="en">…</html>\n',
  'GET /docs/js/scalar.js 200 application/javascript': '/* Scalar API reference bundle */',
  'GET /consent/signed-in 200 text/html': '<!doctype html>\n<html lang="en">…</html>\n',
  'GET /consent/oauth4webapi.js 200 text/javascript': '/* oauth4webapi, as installed */',
  'GET /consent/client/{module} 200 text/javascript': '/* a module of the typed client */',
  'GET /consent/client/executor/{module} 200 text/javascript': '/* a module of the typed client */',
  'GET /console/client/{module} 200 text/javascript': '/* a module of the typed client */',
  'GET /console/client/executor/{module} 200 text/javascript': '/* a module of the typed client */',
  'GET /consent/{request} 200 text/html': '<!doctype html>\n<html lang="en">…</html>\n',
  'GET /console 200 text/html': '<!doctype html>\n<html lang="en">…</html>\n',
  'GET /console/oauth4webapi.js 200 text/javascript': '/* oauth4webapi, as installed */',
  'GET /console/statecharts 200 application/json': [
    {
      machine: 'claim',
      title: 'Claim',
      source: 'interface 3.4',
      file: 'src/machines/claim.machine.ts',
      states: [
        { state: 'unclaimed', initial: true, terminal: false, description: 'Never claimed.' },
        { state: 'answered', initial: false, terminal: true, description: 'Completed once.' },
      ],
      transitions: [
        {
          state: 'unclaimed',
          event: 'call.completed',
          guard: null,
          target: 'answered',
          actions: ['complete'],
          note: 'an invoke.completed landed',
        },
      ],
      invariants: ['Nothing leaves `answered`.'],
    },
  ],
  'GET /console/statecharts/{machine} 200 image/svg+xml':
    '<svg xmlns="http://www.w3.org/2000/svg" …>…</svg>\n',
};
