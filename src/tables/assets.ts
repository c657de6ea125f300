import { index, integer, sqliteTable, text } from "drizzle-orm/sqlite-core";
import { spaces } from "./spaces";

export type AssetStatus = "pending" | "ready";

/**
 * A file of a space: its bytes live once per content hash in the data directory
 * (`files/<hash[0..2]>/<hash>`, src/assets/storage.ts); this row is what a record's attachment
 * value names. `pending` until its bytes are uploaded and confirmed (Busabase's three steps), or
 * `ready` at once for a one-request upload.
 */
export const assets = sqliteTable(
  "assets",
  {
    id: text("id").primaryKey(),
    spaceId: text("space_id")
      .notNull()
      .references(() => spaces.id, { onDelete: "cascade" }),
    status: text("status").$type<AssetStatus>().notNull(),
    fileName: text("file_name").notNull(),
    /** The type the uploader declared. */
    declaredType: text("declared_type").notNull(),
    /** The type it is served as: the one its first bytes show when they show one, else the declared type. */
    mimeType: text("mime_type").notNull(),
    size: integer("size").notNull(),
    /** SHA-256 of the bytes, hex; null until they are uploaded. */
    contentHash: text("content_hash"),
    /** What its uploader says of it (Busabase's asset metadata): a JSON object, merged or replaced by `PATCH /assets/{id}/metadata`. */
    metadata: text("metadata", { mode: "json" }).$type<Record<string, unknown>>().notNull().default({}),
    createdBy: text("created_by").notNull(),
    createdAt: text("created_at").notNull(),
    updatedAt: text("updated_at").notNull(),
  },
  (table) => [index("assets_space_idx").on(table.spaceId, table.id), index("assets_hash_idx").on(table.contentHash)],
);

export type AssetRow = typeof assets.$inferSelect;

export type TextStatus = "present" | "none";

/**
 * An asset's text as its uploader set it (Busabase's text slot, `PUT /assets/{id}/text`): what a
 * reader of lines and grep read of it instead of its own bytes (the text of a PDF, say), or
 * `none` for an asset that has no text. An asset without a row: a text file is its own bytes.
 */
export const assetTexts = sqliteTable("asset_texts", {
  assetId: text("asset_id")
    .primaryKey()
    .references(() => assets.id, { onDelete: "cascade" }),
  status: text("status").$type<TextStatus>().notNull(),
  text: text("text"),
  updatedAt: text("updated_at").notNull(),
});
