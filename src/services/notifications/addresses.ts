import { lookup as dnsLookup } from 'node:dns/promises'
import { BlockList, isIP, type LookupFunction } from 'node:net'
import { ValidationError } from '../../errors.js'

/**
 * Where webhooks may go. A URL someone adds must not make Lectern call into its own network
 * (metadata services, databases, the admin port): addresses in loopback, private, link-local,
 * unique-local, "this network" and carrier-grade NAT ranges are refused, after DNS resolution, when
 * the endpoint is saved and again at each delivery, where the connection goes to the very address
 * that was checked (a custom `lookup`), so a DNS answer that changes in between cannot slip past.
 */
const REFUSED = new BlockList()
for (const [network, prefix] of [
  ['0.0.0.0', 8],
  ['10.0.0.0', 8],
  ['100.64.0.0', 10],
  ['127.0.0.0', 8],
  ['169.254.0.0', 16],
  ['172.16.0.0', 12],
  ['192.168.0.0', 16],
  ['224.0.0.0', 4],
  ['240.0.0.0', 4],
] as const)
  REFUSED.addSubnet(network, prefix, 'ipv4')
for (const [network, prefix] of [
  // IPv4-compatible addresses (deprecated; `::` and `::1` among them) reach IPv4 hosts, whichever
  // way they are written (`::127.0.0.1` is parsed as `::7f00:1`). The IPv4-mapped ones are refused
  // below: a `::ffff:0:0/96` subnet here would also match every IPv4 address.
  ['::', 96],
  ['fe80::', 10],
  ['fc00::', 7],
  ['ff00::', 8],
  ['64:ff9b::', 96],
] as const)
  REFUSED.addSubnet(network, prefix, 'ipv6')

/** Whether a webhook may be sent to `address` (an IPv4 or IPv6 literal). */
export function isPublicAddress(address: string): boolean {
  const family = isIP(address)
  if (family === 4) return !REFUSED.check(address, 'ipv4')
  if (family !== 6) return false
  const lower = address.toLowerCase()
  // IPv4-mapped (::ffff:a.b.c.d or ::ffff:xxxx:xxxx) and IPv4-compatible forms reach IPv4 hosts.
  const mapped = /^(?:0{0,4}:){0,5}:?(?:ffff:)?(\d+\.\d+\.\d+\.\d+)$/.exec(lower)
  if (mapped) return false
  if (/^(?:0{0,4}:){0,5}:?ffff:[0-9a-f]{1,4}:[0-9a-f]{1,4}$/.test(lower)) return false
  return !REFUSED.check(address, 'ipv6')
}

/** Why `url` cannot be an endpoint's URL (not absolute http(s), credentials…), or null. */
export function urlProblem(url: string): string | null {
  let parsed: URL
  try {
    parsed = new URL(url)
  } catch {
    return `URL must be an absolute http(s) URL (got ${JSON.stringify(url.slice(0, 200))})`
  }
  if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:')
    return `URL must use http or https (got ${JSON.stringify(parsed.protocol)})`
  if (parsed.username !== '' || parsed.password !== '') return 'URL must not carry a user name or password'
  if (url.length > 2000) return 'URL must be at most 2000 characters'
  if (/[\s]/.test(url)) return 'URL must not contain spaces or line breaks'
  return null
}

/** The host of a URL without IPv6 brackets, as `lookup` and `isIP` take it. */
export function bareHost(url: URL): string {
  return url.hostname.startsWith('[') ? url.hostname.slice(1, -1) : url.hostname
}

/**
 * Checks `url` and, unless `allowPrivate`, that every address its host resolves to now may be
 * called; refuses with a `ValidationError` that names the address otherwise. A host that does not
 * resolve (yet: its DNS may come later, or this machine may have none) is taken: no address of it
 * can be judged, and each delivery resolves it and checks again before connecting.
 */
export async function checkDestination(url: string, allowPrivate: boolean): Promise<void> {
  const problem = urlProblem(url)
  if (problem) throw new ValidationError(problem)
  if (allowPrivate) return
  const host = bareHost(new URL(url))
  let addresses: string[] = [host]
  if (!isIP(host)) {
    try {
      addresses = (await dnsLookup(host, { all: true, verbatim: true })).map((entry) => entry.address)
    } catch {
      return
    }
  }
  const refused = addresses.find((address) => !isPublicAddress(address))
  if (refused !== undefined)
    throw new ValidationError(
      `URL host '${host}' resolves to ${refused}, a private, loopback or link-local address; webhooks may only go to public addresses (WEBHOOK_ALLOW_PRIVATE=true lifts this)`,
    )
}

/**
 * A `lookup` for an HTTP request that resolves the host, refuses what `checkDestination` refuses
 * and hands the socket exactly the address it checked.
 */
export function checkedLookup(allowPrivate: boolean): LookupFunction {
  return (hostname, options, callback) => {
    dnsLookup(hostname, { all: true, verbatim: true }).then(
      (entries) => {
        const usable = entries.filter((entry) => allowPrivate || isPublicAddress(entry.address))
        if (usable.length === 0 || usable.length !== entries.length) {
          const error = Object.assign(
            new Error(`${hostname} resolves to a private, loopback or link-local address`),
            { code: 'EADDRREFUSED' },
          )
          return callback(error, '', 4)
        }
        const first = usable[0]
        if ((options as { all?: boolean }).all)
          return (callback as unknown as (e: null, a: { address: string; family: number }[]) => void)(
            null,
            usable,
          )
        callback(null, first.address, first.family)
      },
      (error: NodeJS.ErrnoException) => callback(error, '', 4),
    )
  }
}
