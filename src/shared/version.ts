import pkg from "../../package.json" with { type: "json" };

/** The one version string: `basalt version`, `/api/health` and the webhook user agent all print it. */
export const VERSION: string = pkg.version;
