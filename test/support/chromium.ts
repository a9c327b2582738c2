/**
 * Debian's Chromium, headless, as the page tests drive it (playwright-core). The flags
 * keep it off the network it would call at start (updates, sync, background requests),
 * which this machine's closed network refuses many at a time.
 */
import { chromium, type Browser } from 'playwright-core';

export function launchChromium(): Promise<Browser> {
  return chromium.launch({
    executablePath: '/usr/bin/chromium',
    args: [
      '--headless',
      '--no-sandbox',
      '--disable-gpu',
      '--disable-quic',
      '--no-first-run',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
    ],
  });
}
