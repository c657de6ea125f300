export * from "../auth/schema";
export * from "../spaces/schema";
export * from "../content/schema";
