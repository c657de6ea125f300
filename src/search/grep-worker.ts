/**
 * A worker thread that matches one grep's expression against a batch of texts (`grep.ts`), line by
 * line, each line on its first `lineChars` characters. A regular expression cannot be stopped once
 * it runs, and one that backtracks (`a*a*a*c` over a line of a thousand a's ran 50 s) would hold
 * the server's thread; here it holds this thread only, which the grep terminates at its deadline.
 */
declare const self: Worker;

export type GrepBatch = { pattern: string; flags: string; texts: string[]; most: number; lineChars: number };
/** A match: the text's place in the batch, and the line's and column's (from 0). */
export type GrepHit = { item: number; line: number; column: number };

self.onmessage = ({ data }: MessageEvent<GrepBatch>) => {
  const expression = new RegExp(data.pattern, data.flags);
  const hits: GrepHit[] = [];
  for (let item = 0; item < data.texts.length && hits.length < data.most; item++) {
    const lines = data.texts[item].split(/\r?\n/);
    for (let line = 0; line < lines.length && hits.length < data.most; line++) {
      const text = lines[line];
      const found = expression.exec(text.length > data.lineChars ? text.slice(0, data.lineChars) : text);
      if (found) hits.push({ item, line, column: found.index });
    }
  }
  self.postMessage(hits);
};
