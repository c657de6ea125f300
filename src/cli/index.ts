import { VERSION } from "../shared/version";
import { keysCommand, spacesCommand, usersCommand } from "./accounts";
import { privateFilesFromNowOn } from "../db/files";
import { CliError } from "./common";
import { backupCommand, migrateCommand, restoreCommand } from "./maintenance";
import { serveCommand } from "./serve";
import { cloneCommand, pullCommand, pushCommand, remoteCommand, statusCommand } from "./remotes";
import { dumpCommand, exportCommand, importCommand, installCommand, loadCommand } from "./transfer";

const HELP = `basalt ${VERSION} — a local-first, review-first workspace database

Usage: basalt <command> [options]

Commands:
  serve [--port 7431] [--host 127.0.0.1] [--public-url URL] [--max-body 1mb] [--max-import 64mb]
        [--max-file 25mb]
        [--webhook-allow LIST] [--backup-cron EXPR] [--sync-every 1m|off] [--demo]
        [--max-spaces-per-user 100] [--max-bases-per-space 1000] [--max-fields-per-base 500]
        [--max-folder-depth 32] [--max-metadata 64kb]
        [--max-streams-per-key 16] [--max-streams-per-user 64] [--max-streams 2000]
                               migrate, then serve the API, /admin and /api/v1/docs
  users create --email E --name N --password P [--admin]
  users list
  keys create --email E --name N --level read|changeRequest|write|manage
              [--expires 7d|30d|90d|1y|never]   prints the key once
  keys list --email E
  spaces create --name N [--slug S] --owner E
  spaces list
  migrate                      apply pending migrations and exit
  backup --out FILE            write a consistent copy of the database (safe while serving)
  restore --from FILE          put a backup in place of the database (the server stopped;
                               the replaced database is kept beside it)
  export --space S --base B [--view V] [--sort S] [--format csv|json|jsonl] [--out FILE]
                               a base's records, as GET /bases/{id}/export writes them
                               (standard output without --out)
  import --space S --as E (--base B | --name N) --from FILE [--format csv|json|jsonl]
         [--create-fields] [--preview] [--message M]
                               a file into a base, or a new base, as POST /bases/{id}/imports
                               does it, proposed as the user E (their role sets what merges)
  dump --space S --out FILE    a space with its history, reviews, comments, views, webhook rules
                               (without secrets) and files, into one gzipped file
  load --from FILE --owner E [--slug S]
                               a dump into this data directory, ids kept, owned by E; refused
                               when the space is here already
  install --space S --as E --from DIR|FILE|URL [--into-folder F] [--rename] [--auto-merge]
          [--dry-run]          a Busabase package (a directory, a .tar/.tar.gz, or a GitHub
                               repository's address) into a space, as POST /install/archive does
                               it; --dry-run prints the plan
  clone URL --space S --as E [--key K] [--slug SLUG]
                               a local space from the space S of the Basalt at URL (its key
                               with read or more, from --key or BASALT_REMOTE_KEY), owned by E;
                               it follows that remote, named origin
  remote add NAME URL --space S --remote-space R [--key K] [--from-seq N]
  remote list --space S
  remote remove NAME --space S  the remotes a space follows (keys stored sealed)
  pull --space S [--remote NAME]
                               what the remote merged since the last pull, merged here; a true
                               conflict becomes a change request in conflict in the Inbox
  push --space S [--remote NAME]
                               pulls, then sends each local change as a change request on the
                               remote (idempotent: a push cut and sent again creates nothing twice)
  status --space S             each remote: behind, ahead, pending and refused changes
  version, --version           print the version
  --help                       this text

Every command takes --data-dir DIR (default ./basalt-data, or BASALT_DATA_DIR).
serve also reads BASALT_PORT, BASALT_HOST, BASALT_PUBLIC_URL, BASALT_MAX_BODY,
BASALT_MAX_IMPORT, BASALT_MAX_FILE, BASALT_WEBHOOK_ALLOW, BASALT_BACKUP_CRON and BASALT_MAX_* (one for each limit);
a flag wins over its variable.
BASALT_WEBHOOK_RETRY_SCHEDULE (seconds, comma-separated) replaces the webhook retry delays;
BASALT_SECRET_KEY replaces the key file that seals webhook secrets;
BASALT_GITHUB_ARCHIVE_URL replaces https://codeload.github.com, where GitHub packages are fetched.`;

const COMMANDS: Record<string, (args: string[]) => Promise<void>> = {
  serve: serveCommand,
  users: usersCommand,
  keys: keysCommand,
  spaces: spacesCommand,
  migrate: migrateCommand,
  backup: backupCommand,
  restore: restoreCommand,
  export: exportCommand,
  import: importCommand,
  dump: dumpCommand,
  load: loadCommand,
  install: installCommand,
  clone: cloneCommand,
  remote: remoteCommand,
  pull: pullCommand,
  push: pushCommand,
  status: statusCommand,
};

async function dispatch(argv: string[]): Promise<void> {
  const [command, ...args] = argv;
  if (command === undefined || command === "--help" || command === "-h" || command === "help") return void console.log(HELP);
  if (command === "version" || command === "--version" || command === "-v") return void console.log(VERSION);
  const run = Object.hasOwn(COMMANDS, command) ? COMMANDS[command] : undefined;
  if (!run) throw new CliError(`Unknown command "${command}"; run "basalt --help" for the list.`);
  if (args.includes("--help") || args.includes("-h")) return void console.log(HELP);
  await run(args);
}

/** SQLite's answer for a database file it cannot read (overwritten, truncated, damaged on disk), with what to do about it. */
function sentenceOf(error: unknown): string {
  const message = error instanceof Error ? error.message : String(error);
  const code = (error as { code?: unknown } | null)?.code;
  const damaged = code === "SQLITE_NOTADB" || (typeof code === "string" && code.startsWith("SQLITE_CORRUPT"));
  return damaged ? `The database file is damaged or is not a Basalt database (${message}). Restore a backup with "basalt restore --from FILE"; the damaged file is kept beside it.` : message;
}

/** Runs one command; any failure is one sentence on stderr and exit status 1. */
export async function run(argv: string[]): Promise<void> {
  privateFilesFromNowOn();
  try {
    await dispatch(argv);
  } catch (error) {
    console.error(`basalt: ${sentenceOf(error)}`);
    process.exit(1);
  }
}
