import type { LiveEvent } from "./live";
import type { UserView } from "../../auth/users";
import type { Caller } from "../../spaces/whoami";

/** Who is signed in, in which space: read once, again after sign-in or a change of space. */
export interface Me {
  caller: Caller;
  user: UserView;
}

export interface Context {
  params: Record<string, string>;
  query: URLSearchParams;
  me: Me;
  go(path: string, replace?: boolean): void;
  /** After signing in: forget the old caller and go where the person was headed. */
  signedIn(next: string | null): void;
  /** Renders the current screen again (after a change it shows). */
  reload(): void;
  /** Reads who is signed in again (after the spaces or the user changed). */
  refreshMe(): Promise<void>;
  /** Hears the space's events while this screen is shown (for a screen that applies them itself, as the grid does). */
  onLive(listener: (event: LiveEvent) => void): void;
}

/** A screen of the route table. `signedOut` screens render without a session (setup, sign-in). */
export interface Screen {
  path: string;
  title: string;
  signedOut?: boolean;
  render(ctx: Context): Promise<Node> | Node;
  /** The GETs its render starts with, named by the address alone: sent beside the check of who is signed in (`readEarly`), not after it. */
  reads?(params: Record<string, string>, query: URLSearchParams): string[];
  /** Whether an event another client caused changes what the screen shows: it is then drawn again, in place. */
  live?(event: LiveEvent, ctx: Context): boolean;
}
