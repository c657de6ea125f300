export const LEVELS = ["read", "changeRequest", "write", "manage"] as const;
export type Level = (typeof LEVELS)[number];

export const ROLES = ["owner", "admin", "editor", "contributor", "viewer"] as const;
export type Role = (typeof ROLES)[number];

const RANK: Record<Level, number> = { read: 0, changeRequest: 1, write: 2, manage: 3 };

export const ROLE_LEVEL: Record<Role, Level> = {
  owner: "manage",
  admin: "manage",
  editor: "write",
  contributor: "changeRequest",
  viewer: "read",
};

export const atLeast = (level: Level, required: Level): boolean => RANK[level] >= RANK[required];

export const lowerOf = (a: Level, b: Level): Level => (RANK[a] <= RANK[b] ? a : b);
