/**
 * Graceful shutdown: named closers run in the reverse order of registration (last opened, first
 * closed), each bounded by the overall deadline so a stuck one cannot hold the process.
 */
export class Closers {
  private readonly list: { name: string; close: () => Promise<unknown> | unknown }[] = [];

  add(name: string, close: () => Promise<unknown> | unknown): void {
    this.list.push({ name, close });
  }

  async closeAll(deadlineMs = 10_000, onError?: (name: string, err: unknown) => void): Promise<void> {
    const deadline = Date.now() + deadlineMs;
    for (const { name, close } of this.list.splice(0).reverse()) {
      const left = Math.max(0, deadline - Date.now());
      let timer: NodeJS.Timeout | undefined;
      try {
        await Promise.race([
          Promise.resolve().then(close),
          new Promise((_, reject) => (timer = setTimeout(() => reject(new Error(`${name} did not close in time`)), left))),
        ]);
      } catch (err) {
        onError?.(name, err);
      } finally {
        clearTimeout(timer);
      }
    }
  }
}
