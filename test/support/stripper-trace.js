/**
 * A preload (`--import`) that writes `true` or `false` to the file STRIPPER_TRACE_FILE
 * names as the process exits: whether it loaded Node's TypeScript stripper (amaro, swc
 * built to WebAssembly). JavaScript, so that preloading it strips nothing.
 */
import { writeFileSync } from 'node:fs';
import process from 'node:process';

const file = process.env.STRIPPER_TRACE_FILE;
if (file !== undefined) {
  process.once('exit', () => {
    const loaded = process.moduleLoadList.some((name) => name.includes('/amaro/'));
    writeFileSync(file, String(loaded));
  });
}
