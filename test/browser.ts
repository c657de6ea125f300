import { existsSync } from "node:fs";
import { type Browser, chromium } from "playwright-core";

const CHROMIUM = "/usr/bin/chromium";

/** CI installs Chromium (.ci/run); a developer machine without it skips the browser tests, CI never does. */
export const browserAvailable = existsSync(CHROMIUM) || process.env.CI === "true";

/** Debian's Chromium, headless, with nothing of its own reaching the network. */
export const launchBrowser = (): Promise<Browser> =>
  chromium.launch({
    executablePath: CHROMIUM,
    args: ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run", "--disable-background-networking", "--disable-component-update", "--disable-sync"],
  });
