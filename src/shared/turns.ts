import { tooManyRequests } from "./errors";

/**
 * Turns for work that holds much memory or a core for a while, whatever route or caller began it:
 * `atOnce` run, a few more wait their turn, and past them the request is a 429.
 */
export class Turns {
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

/**
 * The one queue of archives and workbooks being opened: an archive inflated (a package's tar, up to
 * 255 MB) or a workbook read (up to 445 MB, docs/security.md), one at a time in the process. Eight
 * package archives of 245 KB sent at once took the server from 1.5 GB to 4 GB when each was
 * inflated as it came.
 */
export const unpacking = new Turns(1, 4);
