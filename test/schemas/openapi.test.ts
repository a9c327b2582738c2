import swagger from '@fastify/swagger';
import { Validator } from '@seriousme/openapi-schema-validator';
import Fastify from 'fastify';
import {
  jsonSchemaTransform,
  jsonSchemaTransformObject,
  serializerCompiler,
  validatorCompiler,
  type ZodTypeProvider,
} from 'fastify-type-provider-zod';
import { describe, expect, it } from 'vitest';
import { IdParams, WriteAnswer } from '../../src/schemas/common.ts';
import { PutConnectionAnswer, PutConnectionBody } from '../../src/schemas/connections.ts';
import { UsageAnswer, UsageQuery } from '../../src/schemas/console.ts';
import { ClaimAnswer, ClaimBody } from '../../src/schemas/executor.ts';
import { InferenceOption } from '../../src/schemas/inference.ts';
import { FilterRefusedProblem, Problem } from '../../src/schemas/problem.ts';
import { AppendAnswer, AppendBody, TailQuery } from '../../src/schemas/records.ts';
import {
  DirectoryPage,
  ListSessionsQuery,
  OpenSessionRequest,
  PrincipalQuery,
  SessionAnswer,
} from '../../src/schemas/sessions.ts';
import { ConsentAnswer, TenantConfig } from '../../src/schemas/tenant.ts';
import { ProposalAnswer, VendorDocument } from '../../src/schemas/vendor.ts';

/** An app with routes wired the way the lead wires them, answering canned bodies. */
async function documentedApp() {
  const app = Fastify();
  app.setValidatorCompiler(validatorCompiler);
  app.setSerializerCompiler(serializerCompiler);
  await app.register(swagger, {
    openapi: { openapi: '3.1.0', info: { title: 'schemas', version: '1' } },
    transform: jsonSchemaTransform,
    transformObject: jsonSchemaTransformObject,
  });
  const routes = app.withTypeProvider<ZodTypeProvider>();
  const never = () => {
    throw new Error('not called');
  };
  routes.post(
    '/appdoc',
    { schema: { body: VendorDocument, response: { 200: ProposalAnswer, 400: Problem } } },
    never,
  );
  routes.post(
    '/consent/:id',
    { schema: { params: IdParams, body: TenantConfig, response: { 200: ConsentAnswer } } },
    never,
  );
  routes.post(
    '/sessions',
    {
      schema: {
        querystring: PrincipalQuery,
        body: OpenSessionRequest,
        response: { 201: SessionAnswer },
      },
    },
    (request) => ({ session: 'ab'.repeat(36), token: `rounds=${request.body.rounds}`, expires: 1 }),
  );
  routes.get(
    '/sessions',
    { schema: { querystring: ListSessionsQuery, response: { 200: DirectoryPage } } },
    (request) => ({ items: [], next: String(request.query.limit) }),
  );
  routes.post(
    '/sessions/:id/events',
    {
      schema: {
        params: IdParams,
        body: AppendBody,
        response: { 200: AppendAnswer, 403: FilterRefusedProblem },
      },
    },
    never,
  );
  routes.get(
    '/sessions/:id/events',
    { schema: { params: IdParams, querystring: TailQuery } },
    never,
  );
  routes.post(
    '/sessions/:id/executor/claim',
    { schema: { params: IdParams, body: ClaimBody, response: { 200: ClaimAnswer } } },
    never,
  );
  routes.put(
    '/connections/:id',
    {
      schema: { params: IdParams, body: PutConnectionBody, response: { 200: PutConnectionAnswer } },
    },
    never,
  );
  routes.put(
    '/inferences/:id',
    { schema: { params: IdParams, body: InferenceOption, response: { 200: WriteAnswer } } },
    never,
  );
  routes.get(
    '/usage',
    { schema: { querystring: UsageQuery, response: { 200: UsageAnswer } } },
    never,
  );
  await app.ready();
  return app;
}

describe('the OpenAPI document built from the schemas', () => {
  it('is a valid OpenAPI 3.1 document with named components', async () => {
    const app = await documentedApp();
    const document = app.swagger() as {
      components: { schemas: Record<string, unknown> };
      paths: Record<string, Record<string, { parameters?: { name: string; in: string }[] }>>;
    };
    const result = await new Validator().validate(document);
    expect(result.errors).toBeUndefined();
    expect(result.valid).toBe(true);
    expect(Object.keys(document.components.schemas)).toEqual(
      expect.arrayContaining([
        'VendorDocument',
        'TenantConfigInput',
        'Problem',
        'FilterRefusedProblem',
      ]),
    );
    const listed = document.paths['/sessions']?.get?.parameters?.map((p) => `${p.in}:${p.name}`);
    expect(listed).toEqual(['query:principal', 'query:after', 'query:limit']);
    await app.close();
  });

  it('validates requests through the same schemas, defaults and clamps included', async () => {
    const app = await documentedApp();
    const page = await app.inject({ method: 'GET', url: '/sessions?limit=5000' });
    expect(page.json()).toEqual({ items: [], next: '200' });
    const opened = await app.inject({ method: 'POST', url: '/sessions?principal=ada' });
    expect(opened.json()).toMatchObject({ token: 'rounds=16' });
    const refused = await app.inject({ method: 'GET', url: '/sessions?limit=0' });
    expect(refused.statusCode).toBe(400);
    await app.close();
  });
});
