import { readMigrationFiles } from "drizzle-orm/migrator";
import { join } from "node:path";

/**
 * Imported `with { type: "macro" }`: runs when the code is bundled or transpiled, so the SQL of
 * `migrations/` travels inside the compiled binary in exactly the form drizzle's migrator reads.
 */
export function embeddedMigrations() {
  return readMigrationFiles({ migrationsFolder: join(import.meta.dir, "../../migrations") });
}
