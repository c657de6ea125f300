import { lookup } from "node:dns/promises";
import ipaddr from "ipaddr.js";
import type { ResolvedTarget, TargetGuardPort } from "../context";

/** A target a webhook may not call: its reason goes into the 400 (at save) or the delivery log. */
export class TargetRefused extends Error {}

type Address = ipaddr.IPv4 | ipaddr.IPv6;

/**
 * IPv4-compatible IPv6 (`::a.b.c.d`, the deprecated `::/96`): ipaddr.js calls it unicast, but some
 * stacks route it to the IPv4 address inside, so it is refused like the other embedded-IPv4 forms
 * (unless allowed by an entry).
 */
const embedsIPv4 = (address: Address): boolean =>
  address.kind() === "ipv6" && address.match(ipaddr.parseCIDR("::/96")) && !address.match(ipaddr.parseCIDR("::/127"));

/** An allow-list entry's port, when it names one: `10.0.0.0/8:443`, `127.0.0.1:8787`, `[::1]:8787`, `localhost:8787`. */
function splitPort(entry: string): { target: string; port: number | null } {
  const bracketed = /^\[([^\]]+)\](\/\d+)?(?::(\d+))?$/.exec(entry);
  const [target, port] = bracketed ? [bracketed[1] + (bracketed[2] ?? ""), bracketed[3]] : entry.split(":").length === 2 ? entry.split(":") : [entry, undefined];
  if (port === undefined) return { target, port: null };
  if (!/^\d{1,5}$/.test(port) || Number(port) < 1 || Number(port) > 65535) throw new Error(`"${entry}" in the webhook allow list has no valid port (1 to 65535).`);
  return { target, port: Number(port) };
}

/** The port a URL connects to. */
const portOf = (url: URL): number => (url.port ? Number(url.port) : url.protocol === "https:" ? 443 : 80);

/**
 * The SSRF guard. A webhook may call http(s) URLs whose every resolved address is public unicast;
 * loopback, private, link-local, carrier-grade NAT, multicast, unspecified and reserved ranges
 * (IPv4-mapped and IPv4-compatible IPv6 forms included) are refused unless the operator allowed
 * them with `--webhook-allow` (CIDRs, single addresses and host names, each optionally with a
 * port: `127.0.0.1:8787` allows that port only). Each attempt resolves the name once and connects
 * to the address it checked, so a DNS answer cannot change between check and use.
 */
export class TargetGuard implements TargetGuardPort {
  /** Host name → the ports allowed (null: any). */
  private readonly hosts = new Map<string, number | null>();
  private readonly ranges: { range: Address; bits: number; port: number | null }[] = [];

  constructor(allow: string[]) {
    for (const entry of allow) {
      const { target, port } = splitPort(entry);
      if (ipaddr.isValidCIDR(target)) {
        const [range, bits] = ipaddr.parseCIDR(target);
        this.ranges.push({ range, bits, port });
      } else if (ipaddr.isValid(target)) {
        const address = ipaddr.process(target);
        this.ranges.push({ range: address, bits: address.kind() === "ipv4" ? 32 : 128, port });
      } else if (/^[a-z0-9.-]+$/i.test(target)) this.hosts.set(target.toLowerCase(), port);
      else throw new Error(`"${entry}" in the webhook allow list is neither a CIDR, an address nor a host name.`);
    }
  }

  private allowedAddress(address: Address, port: number): boolean {
    if (this.ranges.some(({ range, bits, port: allowed }) => address.kind() === range.kind() && address.match(range, bits) && (allowed === null || allowed === port))) return true;
    return address.range() === "unicast" && !embedsIPv4(address);
  }

  /** Checks a URL's form; answers it parsed. */
  parse(target: string): URL {
    if (!URL.canParse(target)) throw new TargetRefused(`"${target}" is not an absolute URL.`);
    const url = new URL(target);
    if (url.protocol !== "http:" && url.protocol !== "https:") throw new TargetRefused("A webhook target must be an http or https URL.");
    if (url.username || url.password) throw new TargetRefused("A webhook target may not carry a user name or password; use config.headers.");
    return url;
  }

  /** Resolves the target's host once and answers the first allowed address, or refuses. */
  async resolve(target: string): Promise<ResolvedTarget> {
    const url = this.parse(target);
    const host = url.hostname.replace(/^\[|\]$/g, "");
    const port = portOf(url);
    const hostPort = this.hosts.get(host.toLowerCase());
    const hostAllowed = hostPort !== undefined && (hostPort === null || hostPort === port);
    const candidates = ipaddr.isValid(host) ? [host] : await lookup(host, { all: true }).then(
      (found) => found.map((entry) => entry.address),
      () => {
        throw new TargetRefused(`The host ${host} does not resolve.`);
      },
    );
    for (const candidate of candidates) {
      const address = ipaddr.process(candidate);
      if (hostAllowed || this.allowedAddress(address, port)) return { url, address: address.toString() };
    }
    const range = ipaddr.process(candidates[0]).range().replace(/[A-Z]/g, (letter) => `-${letter.toLowerCase()}`);
    const address = ipaddr.isValid(host) ? host : `${host} resolves to ${candidates.join(", ")}, which`;
    throw new TargetRefused(`${address} is in the ${range} range; webhooks may only call public addresses unless the operator allows it (--webhook-allow).`);
  }
}
