/**
 * Requests where only the newest answer counts (search as you type): starting one cancels the one
 * before, and an answer that arrives after a newer request began is never shown.
 */
export class Latest {
  private sequence = 0;
  private controller: AbortController | null = null;

  /** Cancels the request before, and gives the new one its signal and a test of whether it is still the newest. */
  begin(): { signal: AbortSignal; current: () => boolean } {
    this.controller?.abort();
    const controller = new AbortController();
    this.controller = controller;
    const mine = ++this.sequence;
    return { signal: controller.signal, current: () => mine === this.sequence && !controller.signal.aborted };
  }

  /** Cancels the request in flight, if any (no answer of it will be shown). */
  cancel(): void {
    this.controller?.abort();
    this.controller = null;
    this.sequence++;
  }
}
