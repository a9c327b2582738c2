import { describe, expect, it } from 'vitest';
import { ConfigError, parseConfig } from '../src/config.ts';

describe('configuration', () => {
  it('defaults every variable for the embedded start', () => {
    const config = parseConfig({}, '/srv/app');
    expect(config).toMatchObject({
      port: 8080,
      host: '127.0.0.1',
      baseUrl: 'http://127.0.0.1:8080',
      dataDir: '/srv/app/data',
      databaseUrl: undefined,
      redisUrl: undefined,
      logLevel: 'info',
      bodyLimit: 1024 * 1024,
      rateLimits: {
        appends: { max: 100, windowMs: 1000 },
        sessions: { max: 100, windowMs: 1000 },
        tails: { max: 100, windowMs: 1000 },
        console: { max: 50, windowMs: 1000 },
        open: { max: 20, windowMs: 1000 },
        appdoc: { max: 10, windowMs: 60_000 },
      },
      trustProxy: false,
      appdocBodyLimit: 256 * 1024,
      proposalRetentionMs: 86_400_000,
      leaseMs: 10_000,
      turnSweepMs: 1_000,
      turnLingerMs: 2_000,
    });
  });

  it('turns the operator grant off under an identity provider unless asked', () => {
    const issuer = { CONSOLE_OIDC_ISSUER: 'https://id.example' };
    expect(parseConfig({}, '/').operatorGrant).toBe(true);
    expect(parseConfig(issuer, '/').operatorGrant).toBe(false);
    expect(parseConfig({ ...issuer, OPERATOR_GRANT: 'on' }, '/').operatorGrant).toBe(true);
    expect(parseConfig({ OPERATOR_GRANT: 'off' }, '/').operatorGrant).toBe(false);
    expect(parseConfig({ CONSOLE_OIDC_ALGORITHMS: 'RS256, EdDSA' }, '/')).toMatchObject({
      consoleOidcAlgorithms: ['RS256', 'EdDSA'],
    });
  });

  it('takes SECRETS_KEY as one key or a ring of keys, newest first', () => {
    const [a, b] = [Buffer.alloc(32, 1), Buffer.alloc(32, 2)].map((k) => k.toString('base64url'));
    expect(parseConfig({ SECRETS_KEY: a }, '/').secretsKey).toBe(a);
    expect(parseConfig({ SECRETS_KEY: `${a},${b}` }, '/').secretsKey).toBe(`${a},${b}`);
    expect(() => parseConfig({ SECRETS_KEY: `${a},short` }, '/')).toThrow('SECRETS_KEY');
  });

  it('defaults and reads the limits on slow and greedy clients', () => {
    expect(parseConfig({}, '/')).toMatchObject({
      http: { headersMs: 10_000, requestMs: 30_000, connectionMs: 60_000, keepAliveMs: 72_000 },
      tails: {
        perCredential: 50,
        perSession: 1_000,
        bufferBytes: 256 * 1024,
        lagMs: 5_000,
        pingIntervalMs: 30_000,
        pongTimeoutMs: 10_000,
      },
    });
    const set = parseConfig(
      {
        HTTP_HEADERS_TIMEOUT: '500ms',
        HTTP_REQUEST_TIMEOUT: '2s',
        HTTP_CONNECTION_TIMEOUT: '1m',
        HTTP_KEEP_ALIVE_TIMEOUT: '5s',
        TAILS_PER_CREDENTIAL: '3',
        TAILS_PER_SESSION: '7',
        TAIL_BUFFER_BYTES: '65536',
        TAIL_LAG_TIMEOUT: '1s',
        WS_PING_INTERVAL: '15s',
        WS_PONG_TIMEOUT: '4s',
      },
      '/',
    );
    expect(set.http).toEqual({
      headersMs: 500,
      requestMs: 2_000,
      connectionMs: 60_000,
      keepAliveMs: 5_000,
    });
    expect(set.tails).toEqual({
      perCredential: 3,
      perSession: 7,
      bufferBytes: 65_536,
      lagMs: 1_000,
      pingIntervalMs: 15_000,
      pongTimeoutMs: 4_000,
    });
  });

  it('refuses a headers timeout longer than the request timeout', () => {
    expect(() =>
      parseConfig({ HTTP_HEADERS_TIMEOUT: '1m', HTTP_REQUEST_TIMEOUT: '30s' }, '/'),
    ).toThrow('HTTP_HEADERS_TIMEOUT: must not be longer than HTTP_REQUEST_TIMEOUT');
  });

  it('reads the limit of each route family', () => {
    const config = parseConfig(
      {
        RATE_LIMIT_PER_SECOND: '7',
        TAIL_RATE_LIMIT_PER_SECOND: '3',
        CONSOLE_RATE_LIMIT_PER_SECOND: '5',
        OPEN_RATE_LIMIT_PER_SECOND: '2',
        APPDOC_RATE_LIMIT_PER_MINUTE: '1',
      },
      '/',
    );
    expect(config.rateLimits).toEqual({
      appends: { max: 7, windowMs: 1000 },
      sessions: { max: 7, windowMs: 1000 },
      tails: { max: 3, windowMs: 1000 },
      console: { max: 5, windowMs: 1000 },
      open: { max: 2, windowMs: 1000 },
      appdoc: { max: 1, windowMs: 60_000 },
    });
    expect(() => parseConfig({ TAIL_RATE_LIMIT_PER_SECOND: '0' }, '/')).toThrow(
      'TAIL_RATE_LIMIT_PER_SECOND: must be positive',
    );
  });

  it('takes TRUST_PROXY as off, on, or proxy addresses and CIDRs', () => {
    const trust = (value: string) => parseConfig({ TRUST_PROXY: value }, '/').trustProxy;
    expect(trust('off')).toBe(false);
    expect(trust('on')).toBe(true);
    expect(trust('10.0.0.0/8, loopback,::1,fd00::/8')).toEqual([
      '10.0.0.0/8',
      'loopback',
      '::1',
      'fd00::/8',
    ]);
    expect(() => trust('2')).toThrow('TRUST_PROXY: 2 is not an address');
    expect(() => trust('10.0.0.0/33')).toThrow('TRUST_PROXY: 10.0.0.0/33 is not an address');
    expect(() => trust('proxy.internal')).toThrow('TRUST_PROXY');
  });

  it('treats an empty variable as absent', () => {
    expect(parseConfig({ DATABASE_URL: '', PORT: '' }, '/').databaseUrl).toBeUndefined();
  });

  it('traces only when OTEL_EXPORTER_OTLP_ENDPOINT names a collector', () => {
    expect(parseConfig({}, '/').telemetry).toBeUndefined();
    const endpoint = 'http://collector:4318';
    expect(parseConfig({ OTEL_EXPORTER_OTLP_ENDPOINT: endpoint }, '/').telemetry).toEqual({
      endpoint,
      serviceName: undefined,
    });
    const named = { OTEL_EXPORTER_OTLP_ENDPOINT: endpoint, OTEL_SERVICE_NAME: 'sessions-eu' };
    expect(parseConfig(named, '/').telemetry?.serviceName).toBe('sessions-eu');
  });

  it('takes BASE_URL without its trailing slash', () => {
    expect(parseConfig({ BASE_URL: 'https://agents.example/' }, '/').baseUrl).toBe(
      'https://agents.example',
    );
  });

  it.each([
    'redis://127.0.0.1:6379',
    'rediss://user:secret@cache.example:6380/2',
    'redis+cluster://127.0.0.1:7001,127.0.0.1:7002,127.0.0.1:7003',
    'rediss+cluster://:secret@[::1]:7001,cache.example/',
  ])('takes REDIS_URL=%s as it is, for the log store to open', (value) => {
    expect(parseConfig({ REDIS_URL: value }, '/').redisUrl).toBe(value);
  });

  it.each([
    ['PORT', 'eighty', 'must be a number'],
    ['PORT', '70000', 'must be 0 to 65535'],
    ['DATABASE_URL', 'mysql://localhost/x', 'must be a postgres or postgresql URL'],
    ['REDIS_URL', 'not a url', 'must be a URL'],
    ['REDIS_URL', 'memcached://127.0.0.1', 'must be a redis, rediss, redis+cluster'],
    ['REDIS_URL', 'redis+cluster://127.0.0.1:7001/1', 'with no path'],
    ['REDIS_URL', 'redis+cluster://127.0.0.1:7001,:7002', 'names the cluster node ":7002"'],
    ['LOG_LEVEL', 'loud', 'must be one of'],
    ['OPERATOR_TOKEN', 'short', 'at least 32 characters'],
    ['OPERATOR_TOKEN', 'has spaces in it and is long enough to pass', 'bearer-token characters'],
    ['SECRETS_KEY', 'abc', 'must be 32 bytes'],
    ['BODY_LIMIT', '-1', 'must be positive'],
    ['APPDOC_BODY_LIMIT', '0', 'must be positive'],
    ['PROPOSAL_RETENTION', 'forever', 'must be a positive duration'],
    ['OPERATOR_GRANT', 'yes', 'must be on or off'],
    ['CONSOLE_OIDC_ALGORITHMS', 'RS256,HS256', 'names HS256'],
    ['CONSOLE_OIDC_ALGORITHMS', 'none', 'names none'],
    ['HTTP_REQUEST_TIMEOUT', '0s', 'must be a positive duration'],
    ['TAIL_LAG_TIMEOUT', 'soon', 'must be a positive duration'],
    ['TAILS_PER_CREDENTIAL', '0', 'must be positive'],
    ['TAIL_BUFFER_BYTES', 'lots', 'must be a number'],
    ['OTEL_EXPORTER_OTLP_ENDPOINT', 'grpc://collector:4317', 'must be a http or https URL'],
  ])('refuses %s=%s naming the variable', (variable, value, reason) => {
    let caught: unknown;
    try {
      parseConfig({ [variable]: value }, '/');
    } catch (error) {
      caught = error;
    }
    expect(caught).toBeInstanceOf(ConfigError);
    expect((caught as ConfigError).variable).toBe(variable);
    expect((caught as ConfigError).message).toContain(variable);
    expect((caught as ConfigError).message).toContain(reason);
  });
});
