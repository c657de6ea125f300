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

/** The levels as people are shown them (the seed's UI names), each with what it can do. */
export const LEVEL_LABELS: Record<Level, { name: string; can: string }> = {
  read: { name: "Read-view-only", can: "Reads data within your permissions; changes nothing." },
  changeRequest: { name: "Change Request", can: "Reads and proposes changes; cannot merge or apply them." },
  write: { name: "Write data", can: "Reads, proposes, reviews and merges changes, and edits content directly." },
  manage: { name: "Manage", can: "Everything in Write data, plus administration and permanent deletion." },
};

/** How long a new key lives. */
export const EXPIRATIONS = ["never", "7d", "30d", "90d", "1y"] as const;
export type Expiration = (typeof EXPIRATIONS)[number];
export const DEFAULT_EXPIRATION: Expiration = "30d";
export const EXPIRATION_LABELS: Record<Expiration, string> = { never: "never", "7d": "7 days", "30d": "30 days", "90d": "90 days", "1y": "1 year" };
