import { recordAudit } from "../audit/audit";
import type { Static } from "@sinclair/typebox";
import { and, eq, lt } from "drizzle-orm";
import { t } from "elysia";
import { iso } from "../shared/clock";
import type { AppContext, Tx } from "../context";
import { write } from "../db/tx";
import type { Settled } from "../db/write-queue";
import { newId } from "../db/ids";
import { ApiError, conflict, notFound } from "../shared/errors";
import { Nullable, oneOf, Timestamp, WholeNumber } from "../shared/schemas";
import { createApiKey, type NewApiKey } from "./api-keys";
import { DEFAULT_EXPIRATION, type Expiration } from "../shared/levels";
import { deviceRequests } from "../tables/auth";
import { randomString, sha256 } from "./secrets";

/** RFC 8628 values: codes live 900 s, clients poll every 5 s, `slow_down` adds 5 s for good. */
export const DEVICE_CODE_TTL_SECONDS = 900;
export const POLL_INTERVAL_SECONDS = 5;
const SLOW_DOWN_STEP_SECONDS = 5;
const USER_CODE_ALPHABET = "BCDFGHJKLMNPQRSTVWXZ";

/** `wdjb mjht`, `WDJB-MJHT` and `wdjbmjht` are the same code. */
export const normalizeUserCode = (code: string): string => code.toUpperCase().replace(/[^A-Z]/g, "");
const displayUserCode = (code: string): string => `${code.slice(0, 4)}-${code.slice(4)}`;

export const DeviceGrantSchema = t.Object({
  deviceCode: t.String({ description: "The client's secret: poll POST /api/v1/device/finalize with it." }),
  userCode: t.String({ description: "What the person types at verificationUri, e.g. WDJB-MJHT." }),
  verificationUri: t.String(),
  verificationUriComplete: t.String(),
  expiresIn: WholeNumber({ description: "Seconds." }),
  interval: WholeNumber({ description: "Seconds between polls." }),
});
export type DeviceGrant = Static<typeof DeviceGrantSchema>;

export function issueDeviceCode(tx: Tx, clientName: string | undefined, address: string): DeviceGrant {
  tx.limits.deviceCodes.take(address);
  const deviceCode = randomString(40);
  const now = tx.clock.now();
  for (;;) {
    const userCode = randomString(8, USER_CODE_ALPHABET);
    const inserted = tx.db
      .insert(deviceRequests)
      .values({
        id: newId("dev"),
        deviceCodeHash: sha256(deviceCode),
        userCode,
        clientName: clientName?.trim() || null,
        status: "pending",
        intervalSeconds: POLL_INTERVAL_SECONDS,
        createdAt: iso(now),
        expiresAt: iso(now + DEVICE_CODE_TTL_SECONDS * 1000),
      })
      .onConflictDoNothing({ target: deviceRequests.userCode })
      .returning({ id: deviceRequests.id })
      .all();
    if (inserted.length === 0) continue;
    const verificationUri = `${tx.config.publicUrl}/admin/device`;
    return {
      deviceCode,
      userCode: displayUserCode(userCode),
      verificationUri,
      verificationUriComplete: `${verificationUri}?code=${displayUserCode(userCode)}`,
      expiresIn: DEVICE_CODE_TTL_SECONDS,
      interval: POLL_INTERVAL_SECONDS,
    };
  }
}

const isExpired = (ctx: AppContext, row: DeviceRow) => Date.parse(row.expiresAt) <= ctx.clock.now();

export const DeviceRequestSchema = t.Object({
  userCode: t.String(),
  clientName: Nullable(t.String()),
  status: oneOf(["pending", "approved", "denied", "expired"]),
  createdAt: Timestamp,
  expiresAt: Timestamp,
});
export type DeviceRequestView = Static<typeof DeviceRequestSchema>;

/** Who looks a user code up: guessing is limited per user and per address, whatever the session. */
export interface Looker {
  userId: string;
  address: string;
}

/** Only misses count against the limit. */
function findByUserCode(ctx: AppContext, userCode: string, looker: Looker): DeviceRow {
  const keys = [`user:${looker.userId}`, `address:${looker.address}`];
  ctx.limits.deviceLookups.check(...keys);
  const row = ctx.db.select().from(deviceRequests).where(eq(deviceRequests.userCode, normalizeUserCode(userCode))).get();
  if (!row || row.status === "exchanged") {
    ctx.limits.deviceLookups.record(...keys);
    throw notFound("No device request has this code.");
  }
  return row;
}

function requestView(ctx: AppContext, row: DeviceRow): DeviceRequestView {
  const status = row.status === "pending" && isExpired(ctx, row) ? "expired" : row.status === "exchanged" ? "approved" : row.status;
  return { userCode: displayUserCode(row.userCode), clientName: row.clientName, status, createdAt: row.createdAt, expiresAt: row.expiresAt };
}

export function getDeviceRequest(ctx: AppContext, userCode: string, looker: Looker): DeviceRequestView {
  return requestView(ctx, findByUserCode(ctx, userCode, looker));
}

function pendingRequest(ctx: AppContext, userCode: string, looker: Looker): DeviceRow {
  const row = findByUserCode(ctx, userCode, looker);
  const view = requestView(ctx, row);
  if (view.status !== "pending") throw conflict(`This device request is ${view.status}.`, { reason: "DEVICE_REQUEST_NOT_PENDING", status: view.status });
  return row;
}

export function approveDeviceRequest(tx: Tx, looker: Looker, input: { userCode: string } & NewApiKey): { success: true } {
  const row = pendingRequest(tx, input.userCode, looker);
  tx.db
    .update(deviceRequests)
    .set({ status: "approved", approvedBy: looker.userId, keyName: input.name, keyLevel: input.level, keyExpiration: input.expiration ?? DEFAULT_EXPIRATION })
    .where(and(eq(deviceRequests.id, row.id), eq(deviceRequests.status, "pending")))
    .run();
  const metadata = { clientName: row.clientName, keyName: input.name, keyLevel: input.level };
  recordAudit(tx, { action: "device_request.approved", actor: { userId: looker.userId, keyId: null }, spaceId: null, targetType: "device_request", targetId: row.id, metadata });
  return { success: true };
}

export function denyDeviceRequest(tx: Tx, looker: Looker, userCode: string): { success: true } {
  const row = pendingRequest(tx, userCode, looker);
  tx.db.update(deviceRequests).set({ status: "denied", approvedBy: looker.userId }).where(and(eq(deviceRequests.id, row.id), eq(deviceRequests.status, "pending"))).run();
  return { success: true };
}

/** The RFC 8628 token errors: 400 with the upper-case code and the RFC's lower-case name. */
const grantError = (code: string, message: string, data: Record<string, unknown> = {}) =>
  new ApiError(400, code, code.toLowerCase(), { message, ...data });

export const DeviceCredentialSchema = t.Object({ apiKey: t.String(), apiKeyId: t.String(), expiresAt: Nullable(Timestamp), credentialType: t.Literal("api_key") });
export type DeviceCredential = Static<typeof DeviceCredentialSchema>;

type DeviceRow = typeof deviceRequests.$inferSelect;

/**
 * One poll of a device code: the approved request, or the RFC 8628 error to answer. While the
 * request is pending the poll is recorded (and committed) before the answer: polling faster than
 * the interval adds 5 s to it. After approval, denial or expiry the answer comes at once.
 */
function poll(tx: Tx, deviceCode: string): DeviceRow | ApiError {
  const row = tx.db.select().from(deviceRequests).where(eq(deviceRequests.deviceCodeHash, sha256(deviceCode))).get();
  if (!row || row.status === "exchanged") return grantError("INVALID_GRANT", "The device code is unknown or was already exchanged.");
  if (isExpired(tx, row)) return grantError("EXPIRED_TOKEN", "The device code expired; start again.");
  if (row.status === "denied") return grantError("ACCESS_DENIED", "The request was denied.");
  if (row.status === "approved") return row;
  const now = tx.clock.now();
  const tooSoon = now - Date.parse(row.lastPolledAt ?? row.createdAt) < row.intervalSeconds * 1000;
  const intervalSeconds = tooSoon ? row.intervalSeconds + SLOW_DOWN_STEP_SECONDS : row.intervalSeconds;
  tx.db.update(deviceRequests).set({ lastPolledAt: iso(now), intervalSeconds }).where(eq(deviceRequests.id, row.id)).run();
  return tooSoon
    ? grantError("SLOW_DOWN", `Polled too fast; wait ${intervalSeconds} s between polls.`, { interval: intervalSeconds })
    : grantError("AUTHORIZATION_PENDING", "The user has not approved the request yet.");
}

/** Runs a poll in its own write (so a pending poll is recorded), then throws its error, if any. */
async function settle<T>(ctx: AppContext, work: (tx: Tx) => T | ApiError): Promise<T> {
  const outcome = await write<AppContext, T | ApiError>(ctx, (tx) => work(tx) as Settled<T | ApiError>);
  if (outcome instanceof ApiError) throw outcome;
  return outcome;
}

/**
 * Exchanges an approved device code for a new key, once. A request that Busabase's CLI polled
 * through `/api/auth/device/token` must present the access token it got there.
 */
export function finalizeDeviceCode(ctx: AppContext, deviceCode: string, accessToken: string | null): Promise<DeviceCredential> {
  return settle(ctx, (tx): DeviceCredential | ApiError => {
    const row = poll(tx, deviceCode);
    if (row instanceof ApiError) return row;
    if (row.accessTokenHash !== null && (accessToken === null || sha256(accessToken) !== row.accessTokenHash)) {
      return grantError("INVALID_GRANT", "Send the access token from /api/auth/device/token as the Bearer credential.");
    }
    const { apiKey, key } = createApiKey(tx, row.approvedBy!, { name: row.keyName!, level: row.keyLevel!, expiration: row.keyExpiration as Expiration });
    tx.db.update(deviceRequests).set({ status: "exchanged" }).where(eq(deviceRequests.id, row.id)).run();
    return { apiKey, apiKeyId: key.id, expiresAt: key.expiresAt, credentialType: "api_key" };
  });
}

/** RFC 8628's token answer, as Busabase's CLI reads it (section 12). */
export const DeviceAccessTokenSchema = t.Object({
  access_token: t.String({ description: "Good only for POST /api/v1/device/finalize." }),
  token_type: t.Literal("Bearer"),
  expires_in: WholeNumber(),
});
export type DeviceAccessToken = Static<typeof DeviceAccessTokenSchema>;

/**
 * `POST /api/auth/device/token`: the same polling as finalize; once approved, an access token that
 * is good for nothing but `POST /api/v1/device/finalize` of the same request (a new poll replaces it).
 */
export function deviceAccessToken(ctx: AppContext, deviceCode: string): Promise<DeviceAccessToken> {
  return settle(ctx, (tx): DeviceAccessToken | ApiError => {
    const row = poll(tx, deviceCode);
    if (row instanceof ApiError) return row;
    const token = randomString(43);
    tx.db.update(deviceRequests).set({ accessTokenHash: sha256(token) }).where(eq(deviceRequests.id, row.id)).run();
    return { access_token: token, token_type: "Bearer", expires_in: Math.max(0, Math.floor((Date.parse(row.expiresAt) - tx.clock.now()) / 1000)) };
  });
}

export function pruneDeviceRequests(tx: Tx): number {
  return tx.db.delete(deviceRequests).where(lt(deviceRequests.expiresAt, iso(tx.clock.now()))).returning({ id: deviceRequests.id }).all().length;
}
