import type { SessionDirectory } from './directory.ts';
import type { SessionLifecycle } from './lifecycle.ts';

/**
 * Decisions rows 61 and 76: deleting an install ends its sessions, each with
 * `session.archived` by `install_deleted`. Archiving is idempotent, so a repeated delete
 * finishes what an interrupted one left.
 */
export async function archiveSessionsOf(
  install: string,
  directory: SessionDirectory,
  lifecycle: SessionLifecycle,
): Promise<void> {
  let after: string | undefined;
  do {
    const page = await directory.page({ install }, after, 100);
    for (const row of page.rows) {
      if (row.archived) continue;
      const session = await directory.get(row.id);
      if (session !== null && !session.value.archived) {
        await lifecycle.archive(session.value, { by: 'install_deleted' });
      }
    }
    after = page.next ?? undefined;
  } while (after !== undefined);
}
