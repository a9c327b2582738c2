/**
 * A tenant's failing MCP server is logged at warn in our own words,
 * without its body; what it said reaches the debug level only, scrubbed.
 */
import { describe, expect, it } from 'vitest';
import { logFailure } from '../../src/mcp/failure-log.ts';
import { Egress } from '../../src/net/egress.ts';

/** An egress guard whose log keeps each line with its level. */
function capturing() {
  const lines: { level: string; detail: object; message: string }[] = [];
  const egress = new Egress({
    log: {
      warn: (detail, message) => lines.push({ level: 'warn', detail, message }),
      debug: (detail, message) => lines.push({ level: 'debug', detail, message }),
    },
  });
  return { egress, lines };
}

describe('logFailure', () => {
  it('warns with the facts only and leaves what the server said to debug, scrubbed', () => {
    const { egress, lines } = capturing();
    const cause = new Error('upstream said: customer 4417 owes 90 EUR; access_token=tok-123');
    const error = new TypeError('fetch failed', { cause });
    logFailure(
      egress,
      {
        endpoint: 'https://mcp.example/x',
        code: 'upstream_unreadable',
        step: 'MCP POST request',
        status: 500,
      },
      error,
      ['sekrit-bearer'],
    );
    const [warn, debug] = lines;
    expect(warn).toEqual({
      level: 'warn',
      message: 'MCP server exchange failed',
      detail: {
        upstream: {
          endpoint: 'https://mcp.example/x',
          code: 'upstream_unreadable',
          step: 'MCP POST request',
          status: 500,
          errors: ['TypeError', 'Error'],
        },
      },
    });
    expect(JSON.stringify(warn)).not.toContain('customer');
    expect(debug?.level).toBe('debug');
    const said = JSON.stringify(debug);
    expect(said).toContain('customer 4417');
    expect(said).not.toContain('tok-123');
  });

  it('writes nothing of the server at all when the log has no debug level', () => {
    const lines: string[] = [];
    const egress = new Egress({ log: { warn: (_detail, message) => lines.push(message) } });
    logFailure(egress, { endpoint: 'e', code: 'c', step: 's' }, new Error('body text'), []);
    expect(lines).toEqual(['MCP server exchange failed']);
  });
});
