import { KeyCache } from "../auth/key-cache";
import { FieldUpkeep } from "../content/field-upkeep";
import { writeFieldKinds } from "../content/fields/registry";
import { type AppContext, createContext, type Logger } from "../context";
import type { Store } from "../db/client";
import { treeStamp, watchTree } from "../db/tree-stamp";
import { EventHub } from "../events/stream";
import { lastEventSeq } from "../events/store";
import type { Clock } from "../shared/clock";
import type { Config } from "../shared/config";
import { SecretBox } from "../webhooks/secrets";
import { TargetGuard } from "../webhooks/ssrf";
import { DeliveryLoop } from "../webhooks/worker";

/** A process's context with its concrete services, and the two workers a server starts (`start`); a one-shot command leaves them idle. */
export interface Wired {
  ctx: AppContext;
  deliveries: DeliveryLoop;
  fieldUpkeep: FieldUpkeep;
}

/** The one place the context's services are made: every command, the tests and the benches wire a process here (on a migrated store). */
export function wire(store: Store, config: Config, clock: Clock, log: Logger): Wired {
  writeFieldKinds(store);
  watchTree(store.sqlite);
  const eventStream = new EventHub(() => lastEventSeq(store), config.limits, treeStamp(store.sqlite));
  const deliveries = new DeliveryLoop();
  const fieldUpkeep = new FieldUpkeep();
  const ctx = createContext(store, config, clock, log, {
    keyCache: new KeyCache(() => eventStream.recheck()),
    secretBox: new SecretBox(config),
    webhookTargets: new TargetGuard(config.webhookAllow),
    eventStream,
    deliveries,
    fieldUpkeep,
  });
  return { ctx, deliveries, fieldUpkeep };
}
