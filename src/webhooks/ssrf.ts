import { lookup } from "node:dns/promises";
import ipaddr from "ipaddr.js";

/** A target a webhook may not call: its reason goes into the 400 (at save) or the delivery log. */
export class TargetRefused extends Error {}

type Address = ipaddr.IPv4 | ipaddr.IPv6;

/** Where an attempt connects: the address checked, and the URL to send to it. */
export interface ResolvedTarget {
  url: URL;
  address: string;
}

/**
 * The SSRF guard. A webhook may call http(s) URLs whose every resolved address is public unicast;
 * loopback, private, link-local, carrier-grade NAT, multicast, unspecified and reserved ranges
 * (IPv4-mapped IPv6 forms included) are refused unless the operator allowed them with
 * `--webhook-allow` (CIDRs, single addresses and host names). Each attempt resolves the name once
 * and connects to the address it checked, so a DNS answer cannot change between check and use.
 */
export class TargetGuard {
  private readonly hosts = new Set<string>();
  private readonly ranges: [Address, number][] = [];

  constructor(allow: string[]) {
    for (const entry of allow) {
      if (ipaddr.isValidCIDR(entry)) this.ranges.push(ipaddr.parseCIDR(entry));
      else if (ipaddr.isValid(entry)) {
        const address = ipaddr.process(entry);
        this.ranges.push([address, address.kind() === "ipv4" ? 32 : 128]);
      } else if (/^[a-z0-9.-]+$/i.test(entry)) this.hosts.add(entry.toLowerCase());
      else throw new Error(`"${entry}" in the webhook allow list is neither a CIDR, an address nor a host name.`);
    }
  }

  private allowedAddress(address: Address): boolean {
    if (this.ranges.some(([range, bits]) => address.kind() === range.kind() && address.match(range, bits))) return true;
    return address.range() === "unicast";
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
    const hostAllowed = this.hosts.has(host.toLowerCase());
    const candidates = ipaddr.isValid(host) ? [host] : await lookup(host, { all: true }).then(
      (found) => found.map((entry) => entry.address),
      () => {
        throw new TargetRefused(`The host ${host} does not resolve.`);
      },
    );
    for (const candidate of candidates) {
      const address = ipaddr.process(candidate);
      if (hostAllowed || this.allowedAddress(address)) return { url, address: address.toString() };
    }
    const range = ipaddr.process(candidates[0]).range().replace(/[A-Z]/g, (letter) => `-${letter.toLowerCase()}`);
    const address = ipaddr.isValid(host) ? host : `${host} resolves to ${candidates.join(", ")}, which`;
    throw new TargetRefused(`${address} is in the ${range} range; webhooks may only call public addresses unless the operator allows it (--webhook-allow).`);
  }
}
