import { describe, expect, it } from 'vitest';
import { resolveReturnTo, withParams } from '../../src/connections/return-to.ts';

const policy = {
  baseUrl: 'https://sessions.example.test',
  origins: ['https://console.example.test', 'not a url'],
};

describe('return_to (decisions row 44)', () => {
  it('defaults to BASE_URL and keeps URLs on the service origin or an allowlisted one', () => {
    expect(resolveReturnTo(undefined, policy)).toBe('https://sessions.example.test');
    expect(resolveReturnTo('https://sessions.example.test/console?tab=1', policy)).toBe(
      'https://sessions.example.test/console?tab=1',
    );
    expect(resolveReturnTo('https://console.example.test/connections/notes', policy)).toBe(
      'https://console.example.test/connections/notes',
    );
  });

  it('refuses every other origin, scheme or look-alike, naming the field', () => {
    for (const given of [
      'https://evil.example.test/',
      'http://sessions.example.test/',
      'https://sessions.example.test:8443/',
      'https://sessions.example.test.evil.test/',
      'https://console.example.test@evil.test/',
      'javascript:alert(document.cookie)',
      'data:text/html,<script>1</script>',
      '//evil.example.test/',
    ]) {
      expect(() => resolveReturnTo(given, policy), given).toThrow(
        expect.objectContaining({
          code: 'return_to_not_allowed',
          status: 400,
          field: 'body.return_to',
        }) as Error,
      );
    }
  });

  it('adds the callback outcome to the query, keeping what was there', () => {
    expect(
      withParams('https://console.example.test/back?tab=2', { error: 'access_denied&x=1' }),
    ).toBe('https://console.example.test/back?tab=2&error=access_denied%26x%3D1');
  });
});
