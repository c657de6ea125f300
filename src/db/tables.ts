export * from "../auth/schema";
export * from "../spaces/schema";
export * from "../content/schema";
export * from "../changes/schema";
export * from "../events/schema";
export * from "../webhooks/schema";
