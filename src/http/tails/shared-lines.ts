/**
 * The lines of landed records shared between the tails of one app (`lines.ts`).
 */
import type { TailLine } from '../../schemas/records.ts';
import { present, type Face } from '../../sessions/faces.ts';
import type { StoredRecord } from '../../storage/log-store.ts';

/**
 * The public face's line of each landed record, and the bytes of lines, made once however
 * many tails serve them. A store's fan-out hands every tail of a stream the same record
 * object, so a record that reaches a thousand principals' tails is parsed, presented,
 * stringified and encoded once instead of a thousand times (`npm run bench`). Lines and
 * their bytes are never changed once made, so tails can share them; both maps hold their
 * keys weakly, so a record leaves them once no tail holds it. Other faces depend on their
 * reader and are presented per tail.
 */
export class SharedLines {
  readonly #lines = new WeakMap<StoredRecord, TailLine | null>();
  readonly #bytes = new WeakMap<TailLine, Buffer>();

  /** `present(record, face)`, from the shared line when the face is public. */
  present(record: StoredRecord, face: Face): TailLine | null {
    if (face.kind !== 'public') return present(record, face);
    let line = this.#lines.get(record);
    if (line === undefined) {
      line = present(record, face);
      this.#lines.set(record, line);
    }
    return line;
  }

  /** The UTF-8 of `JSON.stringify(line)` and a newline: the line as NDJSON writes it. */
  readonly jsonLine = (line: TailLine): Buffer => {
    let bytes = this.#bytes.get(line);
    if (bytes === undefined) {
      bytes = Buffer.from(`${JSON.stringify(line)}\n`);
      this.#bytes.set(line, bytes);
    }
    return bytes;
  };

  /** The UTF-8 of `JSON.stringify(line)`: the line as a WebSocket message. */
  readonly message = (line: TailLine): Buffer => this.jsonLine(line).subarray(0, -1);
}
