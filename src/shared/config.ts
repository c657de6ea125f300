import { join, resolve } from "node:path";
import ipaddr from "ipaddr.js";
import { DEFAULT_LIMITS, LIMIT_SETTINGS, type Limits } from "./limits";

/** Everything `serve` can be told, after flags and BASALT_* variables are merged (a flag wins). */
export interface Config {
  dataDir: string;
  host: string;
  port: number;
  publicUrl: string;
  maxBodyBytes: number;
  /** The largest file an import reads (`--max-import`): it is read as it arrives, never held whole. */
  maxImportBytes: number;
  /** The largest file an upload stores (`--max-file`), and the hard cap of an attachment field's `maxFileSize`. */
  maxFileBytes: number;
  webhookAllow: string[];
  /** Seconds to wait before each retry of a failed delivery (`BASALT_WEBHOOK_RETRY_SCHEDULE`). */
  webhookRetrySchedule: number[];
  /** The key that seals webhook secrets, when given by `BASALT_SECRET_KEY` instead of a key file. */
  secretKey: string | null;
  backupCron: string | null;
  /** How often `serve` pulls and pushes each remote (`--sync-every`, default a minute); null: only when asked. */
  syncEveryMs: number | null;
  limits: Limits;
  /** Where GitHub's repository tarballs are fetched (`BASALT_GITHUB_ARCHIVE_URL`): codeload.github.com, or a mirror the operator runs. */
  githubArchiveUrl: string;
  /** `--demo`: the first space, while it holds nothing, is filled with the demo workspace (`transfer/demo.ts`). */
  demo: boolean;
}

/** 5 s, 5 min, 30 min, 2 h, 5 h, 10 h, 10 h: seven retries, eight attempts in all. */
export const DEFAULT_RETRY_SCHEDULE = [5, 300, 1800, 7200, 18000, 36000, 36000];

export function parseRetrySchedule(text: string | undefined): number[] {
  if (text === undefined || text.trim() === "") return DEFAULT_RETRY_SCHEDULE;
  const delays = text.split(",").map((item) => item.trim());
  if (!delays.every((item) => /^\d+(\.\d+)?$/.test(item))) throw new ConfigError(`BASALT_WEBHOOK_RETRY_SCHEDULE "${text}" is not a comma-separated list of seconds (example: 5,300,1800).`);
  return delays.map(Number);
}

export class ConfigError extends Error {}

/** `--sync-every`: `off`, or a time in seconds, minutes or hours (`30s`, `1m`, `2h`; a bare number is seconds), at least a second. */
export function parseSyncEvery(text: string): number | null {
  if (text.trim() === "off") return null;
  const match = /^(\d+)(s|m|h)?$/.exec(text.trim());
  const ms = match ? Number(match[1]) * { s: 1000, m: 60_000, h: 3_600_000 }[(match[2] ?? "s") as "s" | "m" | "h"] : 0;
  if (!(ms >= 1000)) throw new ConfigError(`--sync-every "${text}" is not "off" or a time such as 30s, 1m or 2h.`);
  return ms;
}

export const DEFAULT_PORT = 7431;
export const DEFAULT_HOST = "127.0.0.1";

export function defaultDataDir(env: Record<string, string | undefined> = process.env): string {
  return env.BASALT_DATA_DIR || "./basalt-data";
}

export function databasePath(dataDir: string): string {
  return join(resolve(dataDir), "basalt.db");
}

const SIZE_UNITS: Record<string, number> = { "": 1, b: 1, kb: 1024, k: 1024, mb: 1024 ** 2, m: 1024 ** 2, gb: 1024 ** 3, g: 1024 ** 3 };

/** Reads sizes such as `1mb`, `512kb` or `1048576` (bytes). */
export function parseSize(text: string): number {
  const match = /^\s*(\d+(?:\.\d+)?)\s*([a-z]*)\s*$/i.exec(text);
  const unit = match && Object.hasOwn(SIZE_UNITS, match[2].toLowerCase()) ? SIZE_UNITS[match[2].toLowerCase()] : undefined;
  if (!match || unit === undefined) throw new ConfigError(`"${text}" is not a size (examples: 1mb, 512kb, 1048576).`);
  const bytes = Math.floor(Number(match[1]) * unit);
  if (bytes < 1) throw new ConfigError(`The size "${text}" must be at least one byte.`);
  return bytes;
}

export function parsePort(text: string): number {
  const port = Number(text);
  if (!/^\d+$/.test(text) || port > 65535) throw new ConfigError(`"${text}" is not a port number (0 to 65535).`);
  return port;
}

const HOST_NAME = /^(?=.{1,253}$)[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?(?:\.[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?)*$/i;

/** An address (IPv4 in four parts, or IPv6 with or without brackets) or a host name to listen on. */
export function parseHost(text: string): string {
  const host = text.replace(/^\[(.*)\]$/, "$1");
  const valid = /^[\d.]+$/.test(host) ? ipaddr.IPv4.isValidFourPartDecimal(host) : ipaddr.IPv6.isValid(host) || HOST_NAME.test(host);
  if (valid) return host;
  throw new ConfigError(`"${text}" is not an address or host name to listen on (examples: 127.0.0.1, 0.0.0.0, ::, localhost).`);
}

export function parseList(text: string | undefined): string[] {
  return (text ?? "").split(",").map((item) => item.trim()).filter(Boolean);
}

export interface ServeFlags {
  "data-dir"?: string;
  port?: string;
  host?: string;
  "public-url"?: string;
  "max-body"?: string;
  "max-import"?: string;
  "max-file"?: string;
  "webhook-allow"?: string;
  "backup-cron"?: string;
  "sync-every"?: string;
  "max-spaces-per-user"?: string;
  "max-bases-per-space"?: string;
  "max-fields-per-base"?: string;
  "max-folder-depth"?: string;
  "max-metadata"?: string;
  "max-streams-per-key"?: string;
  "max-streams-per-user"?: string;
  "max-streams"?: string;
  demo?: boolean;
}

/** The operator's limits: a whole number from 1 each (`--max-metadata` a size), a flag winning over its variable. */
function loadLimits(flags: ServeFlags, env: Record<string, string | undefined>): Limits {
  const limits = { ...DEFAULT_LIMITS };
  for (const [name, setting] of Object.entries(LIMIT_SETTINGS) as [keyof Limits, (typeof LIMIT_SETTINGS)[keyof Limits]][]) {
    const text = flags[setting.flag as Exclude<keyof ServeFlags, "demo">] ?? env[setting.env];
    if (text === undefined) continue;
    if (name === "metadataBytes") limits[name] = parseSize(text);
    else if (/^\d+$/.test(text.trim()) && Number(text) >= 1) limits[name] = Number(text);
    else throw new ConfigError(`--${setting.flag} "${text}" is not a whole number of at least 1.`);
  }
  return limits;
}

export function loadConfig(flags: ServeFlags, env: Record<string, string | undefined> = process.env): Config {
  const host = parseHost(flags.host ?? env.BASALT_HOST ?? DEFAULT_HOST);
  const port = parsePort(flags.port ?? env.BASALT_PORT ?? String(DEFAULT_PORT));
  const publicUrl = (flags["public-url"] ?? env.BASALT_PUBLIC_URL ?? `http://${host.includes(":") ? `[${host}]` : host}:${port}`).replace(/\/+$/, "");
  if (!URL.canParse(publicUrl)) throw new ConfigError(`The public URL "${publicUrl}" is not an absolute URL.`);
  if (!/^https?:$/.test(new URL(publicUrl).protocol)) throw new ConfigError(`The public URL "${publicUrl}" must be an http:// or https:// URL: the links Basalt prints and sends start with it.`);
  return {
    dataDir: resolve(flags["data-dir"] ?? defaultDataDir(env)),
    host,
    port,
    publicUrl,
    maxBodyBytes: parseSize(flags["max-body"] ?? env.BASALT_MAX_BODY ?? "1mb"),
    maxImportBytes: parseSize(flags["max-import"] ?? env.BASALT_MAX_IMPORT ?? "64mb"),
    maxFileBytes: parseSize(flags["max-file"] ?? env.BASALT_MAX_FILE ?? "25mb"),
    webhookAllow: parseList(flags["webhook-allow"] ?? env.BASALT_WEBHOOK_ALLOW),
    webhookRetrySchedule: parseRetrySchedule(env.BASALT_WEBHOOK_RETRY_SCHEDULE),
    secretKey: env.BASALT_SECRET_KEY || null,
    backupCron: flags["backup-cron"] ?? env.BASALT_BACKUP_CRON ?? null,
    syncEveryMs: parseSyncEvery(flags["sync-every"] ?? env.BASALT_SYNC_EVERY ?? "1m"),
    limits: loadLimits(flags, env),
    githubArchiveUrl: (env.BASALT_GITHUB_ARCHIVE_URL || "https://codeload.github.com").replace(/\/+$/, ""),
    demo: flags.demo === true || env.BASALT_DEMO === "1" || env.BASALT_DEMO === "true",
  };
}
