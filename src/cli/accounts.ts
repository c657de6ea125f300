import { createApiKey, listApiKeys } from "../auth/api-keys";
import { type Expiration, EXPIRATIONS, type Level, LEVELS } from "../shared/levels";
import { createUser, findUserByEmail, listUsers } from "../auth/users";
import { closeStore } from "../db/client";
import { write } from "../db/tx";
import { createSpace, listSpacesWithOwners } from "../spaces/spaces";
import type { AppContext } from "../context";
import { CliError, openContext, parseFlags, printTable, required } from "./common";

function withContext<T>(dataDir: string | undefined, run: (ctx: AppContext) => T): Promise<Awaited<T>> {
  const ctx = openContext(dataDir);
  return Promise.resolve(run(ctx)).finally(() => closeStore(ctx.store));
}

function userByEmail(ctx: AppContext, email: string) {
  const user = findUserByEmail(ctx, email);
  if (!user) throw new CliError(`No user has the e-mail ${email}.`);
  return user;
}

function oneOf<T extends string>(name: string, value: string, allowed: readonly T[]): T {
  if (!(allowed as readonly string[]).includes(value)) throw new CliError(`--${name} must be one of ${allowed.join(", ")}.`);
  return value as T;
}

export async function usersCommand(args: string[]): Promise<void> {
  const [action, ...rest] = args;
  if (action === "create") {
    const flags = parseFlags(rest, { email: { type: "string" }, name: { type: "string" }, password: { type: "string" }, admin: { type: "boolean" } });
    const user = await withContext(flags["data-dir"], (ctx) =>
      createUser(ctx, { email: required(flags, "email"), name: required(flags, "name"), password: required(flags, "password"), admin: flags.admin ?? false }),
    );
    console.log(`Created user ${user.email} (${user.id})${user.admin ? " as an instance admin" : ""}.`);
  } else if (action === "list") {
    const flags = parseFlags(rest, {});
    const users = await withContext(flags["data-dir"], listUsers);
    printTable(["ID", "EMAIL", "NAME", "ADMIN", "BANNED", "CREATED"], users.map((u) => [u.id, u.email, u.name, String(u.admin), String(u.banned), u.createdAt]));
  } else throw new CliError(`Unknown users command "${action ?? ""}": use "users create" or "users list".`);
}

export async function keysCommand(args: string[]): Promise<void> {
  const [action, ...rest] = args;
  if (action === "create") {
    const flags = parseFlags(rest, { email: { type: "string" }, name: { type: "string" }, level: { type: "string" }, expires: { type: "string" } });
    const level = oneOf<Level>("level", required(flags, "level"), LEVELS);
    const expiration = oneOf<Expiration>("expires", flags.expires ?? "30d", EXPIRATIONS);
    const { apiKey, key } = await withContext(flags["data-dir"], (ctx) => write(ctx, (tx) => createApiKey(tx, userByEmail(tx, required(flags, "email")).id, { name: required(flags, "name"), level, expiration })));
    console.log(apiKey);
    console.error(`Created key "${key.name}" (${key.id}, ${key.level}, expires ${key.expiresAt ?? "never"}). The value above is shown only this once.`);
  } else if (action === "list") {
    const flags = parseFlags(rest, { email: { type: "string" } });
    const keys = await withContext(flags["data-dir"], (ctx) => listApiKeys(ctx, userByEmail(ctx, required(flags, "email")).id));
    printTable(["ID", "NAME", "PREFIX", "LEVEL", "STATUS", "EXPIRES", "LAST USED"], keys.map((k) => [k.id, k.name, k.prefix, k.level, k.status, k.expiresAt ?? "never", k.lastUsedAt]));
  } else throw new CliError(`Unknown keys command "${action ?? ""}": use "keys create" or "keys list".`);
}

export async function spacesCommand(args: string[]): Promise<void> {
  const [action, ...rest] = args;
  if (action === "create") {
    const flags = parseFlags(rest, { name: { type: "string" }, slug: { type: "string" }, owner: { type: "string" } });
    const space = await withContext(flags["data-dir"], (ctx) => write(ctx, (tx) => createSpace(tx, userByEmail(tx, required(flags, "owner")).id, { name: required(flags, "name"), slug: flags.slug })));
    console.log(`Created space "${space.name}" (${space.id}, slug ${space.slug}).`);
  } else if (action === "list") {
    const flags = parseFlags(rest, {});
    const spaces = await withContext(flags["data-dir"], listSpacesWithOwners);
    printTable(["ID", "SLUG", "NAME", "OWNERS", "CREATED"], spaces.map((s) => [s.id, s.slug, s.name, s.owners, s.createdAt]));
  } else throw new CliError(`Unknown spaces command "${action ?? ""}": use "spaces create" or "spaces list".`);
}
