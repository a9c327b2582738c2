/**
 * Wakes of one session (kicks after a driving record landed here) against the driver's
 * reads of the log. A wake counted before a read began is in what the read returns,
 * since the record landed before its kick; one counted later is `missed`, and the runtime
 * starts the next driver for it once this one has left.
 */
export class WakeCounter {
  #count = 0;
  #seen = 0;

  wake(): void {
    this.#count += 1;
  }

  /** Called as a read of the log begins. */
  look(): void {
    this.#seen = this.#count;
  }

  get missed(): boolean {
    return this.#count > this.#seen;
  }
}
