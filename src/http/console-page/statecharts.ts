/**
 * The machines' charts and state tables as the console shows them: what `npm run
 * statecharts` generates from `src/machines` into `docs/statecharts` (held to the machines
 * by `npm run statecharts:check`), served as it is. `GET /console/statecharts/{machine}`
 * is `<machine>.svg`; `GET /console/statecharts` is every `<machine>.json`, the rows of the
 * two tables of `<machine>.md`. The page and the docs come from one run of the generator,
 * so they cannot differ.
 */
import { readdirSync, readFileSync } from 'node:fs';
import type { FastifyInstance } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { problemResponses } from '../openapi-responses.ts';

const CHARTS_DIR = new URL('../../../docs/statecharts/', import.meta.url);

const MachineTable = z
  .object({
    machine: z.string().describe('The machine’s name, as in `src/machines/<name>.machine.ts`.'),
    title: z.string(),
    source: z.string().nullable().describe('What the machine serves, as its `meta.source` says.'),
    file: z.string().describe('The machine’s file in the repository.'),
    states: z.array(
      z.object({
        state: z.string().describe('The state’s dotted path.'),
        initial: z.boolean(),
        terminal: z.boolean(),
        description: z.string().nullable(),
      }),
    ),
    transitions: z
      .array(
        z.object({
          state: z.string(),
          event: z.string(),
          guard: z.string().nullable(),
          target: z.string().nullable().describe('Null: the machine stays where it is.'),
          actions: z.array(z.string()),
          note: z.string().nullable(),
        }),
      )
      .describe('Per state and event, tried in order; the first whose guard holds is taken.'),
    invariants: z.array(z.string()),
  })
  .meta({ id: 'MachineTable' });

/** The generated files with `suffix`, by machine name, in name order. */
function generated(suffix: string): ReadonlyMap<string, string> {
  return new Map(
    readdirSync(CHARTS_DIR)
      .filter((file) => file.endsWith(suffix))
      .sort()
      .map((file) => [
        file.slice(0, -suffix.length),
        readFileSync(new URL(file, CHARTS_DIR), 'utf8'),
      ]),
  );
}

const CHARTS = generated('.svg');
// Parsed at start-up: a file the generator did not write stops the service there.
const TABLES = [...generated('.json').values()].map((text) => MachineTable.parse(JSON.parse(text)));

/** Registers the charts and the tables. */
export function statechartRoutes(app: FastifyInstance): void {
  const routes = app.withTypeProvider<ZodTypeProvider>();
  const names = [...CHARTS.keys()];

  routes.get(
    '/console/statecharts',
    {
      schema: {
        summary: 'Every machine’s state table',
        description:
          'Per machine, in name order, the rows of the two tables of `docs/statecharts/<machine>.md` (its states, and its transitions per state and event), as `npm run statecharts` writes them beside it (`<machine>.json`) from the machine in `src/machines`.',
        tags: ['console'],
        response: { 200: z.array(MachineTable) },
      },
    },
    () => TABLES,
  );

  routes.get(
    '/console/statecharts/:machine',
    {
      schema: {
        summary: 'A machine’s generated statechart',
        description: `The SVG \`npm run statecharts\` generates from the machine in \`src/machines\` (as \`docs/statecharts/<machine>.svg\`); each state is a group \`g[data-state=<path>]\`, each edge a group \`g.edge[data-from=<path>][data-to=<path>]\` (\`[*]\` for an initial or final marker). Machines: ${names.map((n) => `\`${n}\``).join(', ')}.`,
        tags: ['console'],
        params: z.object({
          machine: z.enum(names as [string, ...string[]]).describe('The machine’s name.'),
        }),
        response: {
          200: {
            description: 'The chart.',
            content: { 'image/svg+xml': { schema: z.string().describe('An SVG document.') } },
          },
          ...problemResponses(400),
        },
      },
    },
    async (request, reply) =>
      reply
        .headers({
          'content-security-policy': "default-src 'none'; style-src 'unsafe-inline'",
          'cache-control': 'no-cache',
          'x-content-type-options': 'nosniff',
        })
        .type('image/svg+xml; charset=utf-8')
        .serializer((payload) => payload as string)
        .send(CHARTS.get(request.params.machine) ?? ''),
  );
}
