import { tooManyRequests } from "../shared/errors";

/**
 * Turns for the work that holds much memory for a while: an archive inflated (a package's tar, up
 * to 255 MB) or a workbook read (up to 445 MB, docs/security.md). One such work runs at a time in
 * the process, whatever route or caller began it, a few more wait their turn, and past them the
 * request is a 429: eight package archives of 245 KB sent at once took the server from 1.5 GB to
 * 4 GB when each was inflated as it came.
 */
class Turns {
  private running = 0;
  private readonly waiting: (() => void)[] = [];
  constructor(
    private readonly atOnce: number,
    private readonly mostWaiting: number,
  ) {}

  async run<T>(work: () => Promise<T>): Promise<T> {
    if (this.running >= this.atOnce) {
      if (this.waiting.length >= this.mostWaiting) throw tooManyRequests(10);
      await new Promise<void>((resolve) => this.waiting.push(resolve));
    } else this.running++;
    try {
      return await work();
    } finally {
      const next = this.waiting.shift();
      if (next) next();
      else this.running--;
    }
  }
}

/** The one queue of archives and workbooks being opened. */
export const unpacking = new Turns(1, 4);
