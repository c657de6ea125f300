import { parseArgs } from "node:util";
import { systemClock } from "../shared/clock";
import { databasePath, loadConfig } from "../shared/config";
import { type AppContext, consoleLogger } from "../context";
import { migrate, openStore } from "../db/client";
import { wire } from "./wiring";

/** A mistake in how the command was called or what it was given: printed as one sentence. */
export class CliError extends Error {}

type OptionSpec = Record<string, { type: "string" | "boolean"; short?: string }>;

export function parseFlags<T extends OptionSpec>(args: string[], options: T) {
  try {
    return parseArgs({ args, options: { "data-dir": { type: "string" }, help: { type: "boolean", short: "h" }, ...options }, strict: true, allowPositionals: false }).values;
  } catch (error) {
    throw new CliError(error instanceof Error ? error.message.split("\n")[0] : String(error));
  }
}

/** Flags and the words before them (`basalt remote add NAME URL ...`). */
export function parseCommand<T extends OptionSpec>(args: string[], options: T) {
  try {
    return parseArgs({ args, options: { "data-dir": { type: "string" }, help: { type: "boolean", short: "h" }, ...options }, strict: true, allowPositionals: true });
  } catch (error) {
    throw new CliError(error instanceof Error ? error.message.split("\n")[0] : String(error));
  }
}

export function required(values: Record<string, unknown>, name: string): string {
  const value = values[name];
  if (typeof value !== "string" || value === "") throw new CliError(`The option --${name} is required.`);
  return value;
}

/** Opens (and migrates) the database of a data directory for a one-shot command. */
export function openContext(dataDir: string | undefined): AppContext {
  const config = loadConfig({ "data-dir": dataDir });
  const store = openStore(databasePath(config.dataDir));
  migrate(store);
  return wire(store, config, systemClock, consoleLogger).ctx;
}

/** Prints rows as aligned columns under a header line. */
export function printTable(header: string[], rows: (string | null)[][]): void {
  const all = [header, ...rows.map((row) => row.map((cell) => cell ?? "-"))];
  const widths = header.map((_, i) => Math.max(...all.map((row) => row[i].length)));
  for (const row of all) console.log(row.map((cell, i) => cell.padEnd(widths[i])).join("  ").trimEnd());
}
