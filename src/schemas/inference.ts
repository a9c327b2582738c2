/**
 * Inference options (2.13): a zod union on `provider` with only `simulated` today
 * (decisions rows 48 to 51 and 91), the retry policy and the compaction threshold.
 */
import { z } from 'zod';
import { Millis, ResourceName, orMissing } from './common.ts';
import { BACKOFF_BOUNDS, boundedDuration } from './duration.ts';

/** 2.13 and rows 50 and 51: bounds and defaults of an option. */
export const INFERENCE_BOUNDS = {
  compactAtMin: 1024,
  compactAtDefault: 100_000,
  attemptsMin: 1,
  attemptsMax: 10,
  retryDefault: { attempts: 3, backoff: '1s' },
} as const;

/** 2.13, decisions row 50: attempts include the first; delay backoff×2ⁿ⁻¹, at most 1m. */
export const Retry = z
  .object({
    attempts: z
      .int({ error: orMissing('must be an integer') })
      .min(INFERENCE_BOUNDS.attemptsMin, { error: 'must be 1 to 10' })
      .max(INFERENCE_BOUNDS.attemptsMax, { error: 'must be 1 to 10' }),
    backoff: boundedDuration(BACKOFF_BOUNDS),
  })
  .meta({ id: 'Retry', description: 'How a failed inference is retried.' });
export type Retry = z.infer<typeof Retry>;

const simulatedShape = {
  provider: z.literal('simulated'),
  compact_at: z
    .number({ error: orMissing('must be an integer') })
    .int({ error: 'must be an integer' })
    .min(INFERENCE_BOUNDS.compactAtMin, {
      error: `must be at least ${INFERENCE_BOUNDS.compactAtMin}`,
    })
    .default(INFERENCE_BOUNDS.compactAtDefault)
    .describe('Compact before the next inference at this absolute prompt-token count.'),
  retry: Retry.default({ ...INFERENCE_BOUNDS.retryDefault }),
  credential: ResourceName.nullable()
    .default(null)
    .describe('A secret the tenant holds, given to the provider; never read back.'),
};

/** Decisions row 91: the deterministic provider, the only one in v1. */
export const SimulatedInference = z.object(simulatedShape).meta({
  id: 'SimulatedInference',
  description:
    'The deterministic simulated provider: it answers the last user message (`/call <tool> <json>` calls a tool, `/fail <n>` fails n attempts, `/slow <ms>` answers late, anything else is echoed).',
});
export type SimulatedInference = z.infer<typeof SimulatedInference>;

const PROVIDERS = ['simulated'] as const;
const providerError = (issue: { code: string }) =>
  issue.code === 'invalid_union' ? `must be one of ${PROVIDERS.join(', ')}` : undefined;

/** 2.13, decisions row 48: `PUT /inferences/{id}` body, one shape per provider. */
export const InferenceOption = z
  .discriminatedUnion('provider', [SimulatedInference], { error: providerError })
  .meta({
    id: 'InferenceOption',
    description: 'An inference option, one shape per provider.',
  });
export type InferenceOption = z.infer<typeof InferenceOption>;

/** Decisions row 79: an option as `GET /inferences(/{id})` reads it, with its name and times. */
export const InferenceRead = z
  .discriminatedUnion('provider', [
    z.object({ ...simulatedShape, name: ResourceName, created: Millis, updated: Millis }),
  ])
  .meta({
    id: 'InferenceRead',
    description: 'An inference option with its name and when it was created and last updated.',
  });
export type InferenceRead = z.infer<typeof InferenceRead>;

/** Decisions row 79: `GET /inferences`, the tenant's options by name. */
export const InferenceList = z
  .array(InferenceRead)
  .meta({ id: 'InferenceList', description: "The tenant's inference options." });
export type InferenceList = z.infer<typeof InferenceList>;
