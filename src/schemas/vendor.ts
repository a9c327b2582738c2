/**
 * The vendor's side of the wire: the vendor document it proposes (2.5) with the bounds
 * of decisions rows 15 to 22, the proposal answer (2.8, row 29), the composed document
 * an install runs under (2.7, row 28), polling (row 30) and the consent read (row 72).
 */
import { z } from 'zod';
import { Millis, OpaqueId, Sha256Hex, orMissing } from './common.ts';
import { TIMEOUT_BOUNDS, boundedDuration } from './duration.ts';
import { TenantConfig } from './tenant.ts';

/** Decisions rows 17, 20 and 22: the bounds checked on a proposed document. */
export const VENDOR_BOUNDS = {
  appdoc: 1,
  name: 128,
  description: 4096,
  tools: 128,
  /** Serialized bytes of one input or output schema. */
  schemaBytes: 64 * 1024,
  /** Most bytes of a result a tool may ask for; null means 64 KiB. */
  resultLimit: 1024 * 1024,
  defaultResultLimit: 64 * 1024,
} as const;

/** Decisions row 19: the function-name rule of the model providers. */
export const ToolName = z.string().regex(/^[a-zA-Z0-9_-]{1,64}$/, {
  error: 'must be 1 to 64 characters of A-Z, a-z, 0-9, _ and -',
});

/** Decisions row 16: a JSON Schema 2020-12 object schema, as MCP `inputSchema` is. */
export const ObjectSchema = z
  .looseObject({
    type: z.literal('object', {
      error: orMissing('must be "object": tool arguments and results are objects'),
    }),
    properties: z.record(z.string(), z.unknown(), { error: 'must be an object' }).optional(),
  })
  .refine(
    (schema) => Buffer.byteLength(JSON.stringify(schema), 'utf8') <= VENDOR_BOUNDS.schemaBytes,
    {
      error: `must be at most ${VENDOR_BOUNDS.schemaBytes} bytes serialized`,
    },
  )
  .meta({
    id: 'ObjectSchema',
    description: 'A JSON Schema 2020-12 with `type: "object"`, at most 64 KiB.',
  });
export type ObjectSchema = z.infer<typeof ObjectSchema>;

/** Decisions row 17: bytes of a result the model sees, 1 to 1 MiB; null means 64 KiB. */
export const ResultLimit = z
  .int({ error: orMissing('must be an integer number of bytes') })
  .min(1, { error: 'must be 1 to 1048576 bytes' })
  .max(VENDOR_BOUNDS.resultLimit, { error: 'must be 1 to 1048576 bytes' })
  .nullable()
  .meta({ description: 'Bytes of a result the model sees, 1 to 1 MiB; null means 64 KiB.' });

/** Decisions row 18: a call's timeout, 1s to 15m; null means 60s. */
export const ToolTimeout = boundedDuration(TIMEOUT_BOUNDS).nullable();

/** 2.5: one tool a vendor states. */
export const VendorTool = z
  .object({
    name: ToolName,
    description: z.string().max(VENDOR_BOUNDS.description, {
      error: `must be at most ${VENDOR_BOUNDS.description} characters`,
    }),
    input_schema: ObjectSchema,
    output_schema: ObjectSchema,
    result_limit: ResultLimit.default(null),
    timeout: ToolTimeout.default(null),
  })
  .meta({ id: 'VendorTool', description: 'A tool the vendor states.' });
export type VendorTool = z.infer<typeof VendorTool>;

/** 2.5, decisions rows 19 to 22: the vendor document, bounds checked before storage. */
export const VendorDocument = z
  .object({
    appdoc: z.literal(VENDOR_BOUNDS.appdoc, {
      error: orMissing('must be 1, the only accepted version'),
    }),
    name: z
      .string()
      .min(1, { error: 'must not be empty' })
      .max(VENDOR_BOUNDS.name, { error: `must be at most ${VENDOR_BOUNDS.name} characters` }),
    description: z.string().max(VENDOR_BOUNDS.description, {
      error: `must be at most ${VENDOR_BOUNDS.description} characters`,
    }),
    tools: z
      .array(VendorTool)
      .max(VENDOR_BOUNDS.tools, { error: `must hold at most ${VENDOR_BOUNDS.tools} tools` })
      .superRefine((tools, ctx) => {
        // Row 19: names are unique, since the model calls tools by name.
        const seen = new Set<string>();
        tools.forEach((tool, index) => {
          if (seen.has(tool.name)) {
            const message = `duplicates the tool name ${tool.name}`;
            ctx.addIssue({ code: 'custom', path: [index, 'name'], message, input: tool.name });
          }
          seen.add(tool.name);
        });
      }),
  })
  .meta({ id: 'VendorDocument', description: 'The application document a vendor proposes.' });
export type VendorDocument = z.infer<typeof VendorDocument>;

/** 2.8, decisions row 29: what a vendor gets back for a proposal. */
export const ProposalAnswer = z
  .object({
    request: OpaqueId.describe('The proposal; one per POST.'),
    poll_secret: z.string().describe('Issued once; poll `POST /consent/token` with it.'),
    consent_url: z.url().describe('Where to send the tenant owner.'),
    vendor: Sha256Hex.describe('The vendor config hash: SHA-256 of its RFC 8785 form.'),
    expires: Millis.describe('When the proposal lapses, Unix ms (ten minutes on).'),
    interval: Millis.describe('The least wait between polls, in ms.'),
  })
  .meta({ id: 'ProposalAnswer', description: 'The answer to a proposal.' });
export type ProposalAnswer = z.infer<typeof ProposalAnswer>;

/** Decisions row 28: the install a composed document belongs to. */
export const InstallInfo = z
  .object({
    id: OpaqueId,
    tenant: OpaqueId,
    vendor: Sha256Hex,
    created: Millis,
    updated: Millis,
  })
  .meta({
    id: 'InstallInfo',
    description:
      'An install: its id, its tenant, the hash of the vendor document it runs, and when it was created and last updated.',
  });
export type InstallInfo = z.infer<typeof InstallInfo>;

/** 2.7: the composed document served to an install or the console. */
export const ComposedDocument = z
  .object({
    install: InstallInfo.nullable().describe('Null only before consent.'),
    tenant: TenantConfig,
    vendor: VendorDocument,
  })
  .meta({
    id: 'ComposedDocument',
    description: 'The vendor document with the tenant config.',
  });
export type ComposedDocument = z.infer<typeof ComposedDocument>;

/** Decisions row 30: `POST /consent/token` body, sent with `Bearer <poll_secret>`. */
export const PollBody = z.object({ request: OpaqueId }).meta({
  id: 'PollBody',
  description: 'The proposal being polled, sent with `Authorization: Bearer <poll_secret>`.',
});
export type PollBody = z.infer<typeof PollBody>;

/** Decisions row 30: the receipt of a granted proposal; `key` is null for an update. */
export const PollAnswer = z
  .object({
    request: OpaqueId,
    install: OpaqueId,
    key: z
      .string()
      .nullable()
      .describe('The new install key, shown only for a new install; null when an update kept it.'),
    vendor: Sha256Hex,
  })
  .meta({
    id: 'PollAnswer',
    description:
      'The receipt of a granted proposal: every poll answers the same receipt until the proposal lapses, after which the key is forgotten.',
  });
export type PollAnswer = z.infer<typeof PollAnswer>;

/** Decisions row 72: `GET /consent/{request}`, what the consent page shows a member. */
export const ConsentRead = z
  .object({
    request: OpaqueId,
    state: z
      .enum(['pending', 'granted', 'declined'])
      .describe('`declined`: an owner declined it; the vendor’s poll answers `access_denied`.'),
    vendor: VendorDocument,
    hash: Sha256Hex,
    expires: Millis,
    install: OpaqueId.nullable().describe('The install of an update, or of a granted request.'),
  })
  .meta({
    id: 'ConsentRead',
    description: 'A proposal as the consent page reads it.',
  });
export type ConsentRead = z.infer<typeof ConsentRead>;

/** The answer to `POST /consent/{request}/decline`. */
export const DeclineAnswer = z
  .object({
    request: OpaqueId,
    state: z.literal('declined'),
  })
  .meta({
    id: 'DeclineAnswer',
    description:
      'The proposal is declined: the vendor’s next poll answers `access_denied` (RFC 8628 §3.5).',
  });
export type DeclineAnswer = z.infer<typeof DeclineAnswer>;

/** `{request}` of the consent paths. */
export const RequestParams = z.object({ request: OpaqueId });
export type RequestParams = z.infer<typeof RequestParams>;
