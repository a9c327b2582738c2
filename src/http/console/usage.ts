/**
 * `GET /usage?from&to` (2.15, 4.3, decisions rows 52 to 54): an owner reads the tenant's
 * usage per UTC checkpoint day, both ends inclusive. The query schema refuses a missing
 * or malformed day, `from` after `to` and a range over 366 days, each naming its field.
 */
import type { FastifyInstance } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { UsageAnswer, UsageQuery } from '../../schemas/console.ts';
import type { UsageDay } from '../../storage/control-store.ts';
import { consoleCaller, requireOwner, type ConsoleAuthDeps } from '../../console/caller.ts';
import { problemResponses } from '../openapi-responses.ts';

/** A stored usage day in its wire shape (2.15). */
function usageRow(day: UsageDay): UsageAnswer[number] {
  return {
    day: day.day,
    bytes_archived: day.bytesArchived,
    events: day.events,
    sessions_checkpointed: day.sessionsCheckpointed,
    tokens: { ...day.tokens },
    tool_calls: { ...day.toolCalls },
  };
}

/** Registers `GET /usage`. */
export function usageRoutes(app: FastifyInstance, deps: ConsoleAuthDeps): void {
  app.withTypeProvider<ZodTypeProvider>().get(
    '/usage',
    {
      schema: {
        summary: "The tenant's daily usage",
        description:
          'Owner. One row per UTC checkpoint day from `from` to `to`, both inclusive, at most 366 days; days without usage have no row.',
        tags: ['usage'],
        security: [{ consoleToken: [] }],
        querystring: UsageQuery,
        response: {
          200: UsageAnswer.describe('Rows of the range by day; days without usage left out.'),
          ...problemResponses(400, 401, 403),
        },
      },
    },
    async (request) => {
      const caller = requireOwner(await consoleCaller(request, deps));
      const days = await deps.controlStore.readUsage(
        caller.tenant,
        request.query.from,
        request.query.to,
      );
      return days.map(usageRow);
    },
  );
}
