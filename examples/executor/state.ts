/**
 * Step 6: what survives a restart. The state file holds the session and the cursor the
 * executor resumes its tail from. The cursor moves past a call only once that call is
 * completed (or needs nothing more from us), so after a crash the tail shows the call
 * again and the executor claims it again (`again`) and completes it.
 */
import { readFile, rename, writeFile } from 'node:fs/promises';

interface StateFile {
  readonly session: string;
  readonly cursor: number;
}

/** The cursor to resume `session` from: 1 without a state file or for another session. */
export async function loadCursor(path: string, session: string): Promise<number> {
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return 1;
    throw error;
  }
  const state = JSON.parse(text) as StateFile;
  return state.session === session ? state.cursor : 1;
}

/** Records `cursor` for `session`; a crash mid-write leaves the previous file whole. */
export async function saveCursor(path: string, session: string, cursor: number): Promise<void> {
  const state: StateFile = { session, cursor };
  await writeFile(`${path}.tmp`, JSON.stringify(state));
  await rename(`${path}.tmp`, path);
}
