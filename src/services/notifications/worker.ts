import { Agent as HttpAgent, request as httpRequest, type IncomingMessage } from 'node:http'
import { Agent as HttpsAgent, request as httpsRequest } from 'node:https'
import { isIP } from 'node:net'
import { type Kysely, type RawBuilder, sql } from 'kysely'
import nodemailer from 'nodemailer'
import type { DatabaseHandle } from '../../db/database.js'
import type {
  ContentKind,
  Database,
  NotificationDeliveriesTable,
  NotificationEventsTable,
  WebhookEndpointsTable,
} from '../../db/tables.js'
import { parseStoredIntake } from '../../resources/form.js'
import { formatTimestamp } from '../../time.js'
import { bareHost, checkedLookup, isPublicAddress, urlProblem } from './addresses.js'
import { submissionMail } from './email.js'
import { onOutboxWritten, outboxWritten, recordContentChanged } from './outbox.js'
import { type SecretBox, secretBox, signatureHeader } from './secrets.js'

/**
 * The delivery worker each server process runs: it claims due deliveries with a lease, sends them
 * (webhooks signed as Standard Webhooks says, emails through SMTP), and records each attempt. A
 * failed attempt is retried later, with growing delays, until three days after the event. It also
 * turns content changes into `content.changed` events, at most one per five seconds across all
 * instances.
 */

/** About 5 s, 1 min, 10 min, 1 h, then every 6 h (each ±20%). */
export const RETRY_DELAYS_MS = [5_000, 60_000, 600_000, 3_600_000, 6 * 3_600_000]
/** Failed attempts in a row after which an endpoint is shown as failing. */
export const FAILING_AFTER = 5
/** The most of a response body read (and kept as the attempt's error detail). */
const MAX_RESPONSE_BYTES = 65_536
const KINDS: readonly ContentKind[] = ['forms', 'pages', 'redirects']

export interface NotifierOptions {
  /** `WEBHOOK_ALLOW_PRIVATE`: private and loopback addresses may be called. */
  allowPrivate: boolean
  /** The key the signing secrets are encrypted under. */
  secretKey: () => Buffer
  smtpUrl?: string
  mailFrom?: string
  publicUrl?: string
  /** Attempts in flight at once. */
  concurrency?: number
  /** How long one attempt may take. */
  timeoutMs?: number
  /** How long a claim holds a delivery: longer than an attempt, so a live worker never loses one. */
  leaseMs?: number
  /** How often an idle worker looks for due deliveries. */
  pollMs?: number
  /** Internal (tests): the delays between attempts. */
  retryDelaysMs?: readonly number[]
  /** How often content versions are compared, and the least time between two `content.changed`. */
  contentCheckMs?: number
  contentCoalesceMs?: number
  /** Internal (tests): the clock. */
  clock?: () => number
  log?: { warn(object: unknown, message?: string): void }
}

interface Claimed {
  delivery: NotificationDeliveriesTable
  lease: string
}

interface Outcome {
  ok: boolean
  lastStatus: string
  responseCode: number | null
  error: string | null
  /** The endpoint answered 410 Gone: disable it. */
  gone?: boolean
  /** Never worth retrying (no recipients, no mail configured, endpoint disabled). */
  final?: boolean
}

export function createNotifier(database: Pick<DatabaseHandle, 'db' | 'dialect'>, options: NotifierOptions) {
  const db: Kysely<Database> = database.db
  const clock = options.clock ?? Date.now
  const concurrency = options.concurrency ?? 16
  const timeoutMs = options.timeoutMs ?? 10_000
  const leaseMs = options.leaseMs ?? timeoutMs + 10_000
  const pollMs = options.pollMs ?? 500
  const delays = options.retryDelaysMs ?? RETRY_DELAYS_MS
  const contentCheckMs = options.contentCheckMs ?? 1_000
  const coalesceMs = options.contentCoalesceMs ?? 5_000
  const lookup = checkedLookup(options.allowPrivate)
  const agents = {
    http: new HttpAgent({ keepAlive: true, maxSockets: concurrency, lookup }),
    https: new HttpsAgent({ keepAlive: true, maxSockets: concurrency, lookup }),
  }
  const mailer =
    options.smtpUrl && options.mailFrom
      ? nodemailer.createTransport({
          url: options.smtpUrl,
          connectionTimeout: timeoutMs,
          greetingTimeout: timeoutMs,
          socketTimeout: timeoutMs,
        } as Parameters<typeof nodemailer.createTransport>[0])
      : undefined
  let box: SecretBox | undefined
  const inFlight = new Map<Promise<void>, AbortController>()
  let running = false
  let pollTimer: NodeJS.Timeout | undefined
  let contentTimer: NodeJS.Timeout | undefined
  let polling: Promise<void> | undefined
  let unsubscribe: (() => void) | undefined

  const ts = (ms: number) => formatTimestamp(new Date(ms))
  // Decrypted secrets by their sealed text, kept in memory only.
  const opened = new Map<string, string>()
  const openSecret = (sealed: string): string => {
    let plain = opened.get(sealed)
    if (plain === undefined) {
      box ??= secretBox(options.secretKey())
      plain = box.open(sealed)
      if (opened.size > 1000) opened.clear()
      opened.set(sealed, plain)
    }
    return plain
  }

  /** Claims up to `limit` due deliveries for this worker; none when another instance holds them. */
  async function claim(limit: number): Promise<Claimed[]> {
    const at = clock()
    const now = ts(at)
    // A read first: an idle poll must not take SQLite's write lock.
    const due = await db
      .selectFrom('notification_deliveries')
      .select('id')
      .where('status', '=', 'pending')
      .where('next_attempt_at', '<=', now)
      .where((eb) => eb.or([eb('claimed_until', 'is', null), eb('claimed_until', '<=', now)]))
      .limit(1)
      .execute()
    if (due.length === 0) return []
    const lease = ts(at + leaseMs)
    const skipLocked = database.dialect === 'postgres' ? sql`for update skip locked` : sql``
    const rows = await sql<NotificationDeliveriesTable>`update notification_deliveries
      set claimed_until = ${lease}
      where id in (select id from notification_deliveries
        where status = 'pending' and next_attempt_at <= ${now} and (claimed_until is null or claimed_until <= ${now})
        order by next_attempt_at limit ${limit} ${skipLocked})
      returning *`.execute(db)
    return rows.rows.map((delivery) => ({ delivery, lease }))
  }

  /** The events and endpoints of a claimed batch, read in two queries rather than two per delivery. */
  interface Batch {
    events: Map<string, NotificationEventsTable>
    endpoints: Map<string, WebhookEndpointsTable>
  }

  async function prefetch(claimed: Claimed[]): Promise<Batch> {
    const eventIds = [...new Set(claimed.map((c) => c.delivery.event_id))]
    const endpointIds = [
      ...new Set(claimed.flatMap((c) => (c.delivery.endpoint_id === null ? [] : [c.delivery.endpoint_id]))),
    ]
    const events =
      eventIds.length === 0
        ? []
        : await db.selectFrom('notification_events').selectAll().where('id', 'in', eventIds).execute()
    const endpoints =
      endpointIds.length === 0
        ? []
        : await db.selectFrom('webhook_endpoints').selectAll().where('id', 'in', endpointIds).execute()
    return {
      events: new Map(events.map((event) => [event.id, event])),
      endpoints: new Map(endpoints.map((endpoint) => [endpoint.id, endpoint])),
    }
  }

  /** Sends one claimed delivery and records the attempt. */
  async function attempt({ delivery, lease }: Claimed, batch: Batch, signal: AbortSignal): Promise<void> {
    const started = performance.now()
    let outcome: Outcome
    try {
      outcome =
        delivery.channel === 'email'
          ? await sendEmail(delivery, batch)
          : await sendWebhook(delivery, batch, signal)
    } catch (error) {
      outcome = { ok: false, lastStatus: 'error', responseCode: null, error: describe(error) }
    }
    // Abandoned at shutdown: the lease runs out and another attempt (here or elsewhere) follows.
    if (signal.aborted) return
    await record(delivery, lease, outcome, Math.round(performance.now() - started))
  }

  /**
   * Attempts are recorded in small batches, one transaction each: one commit per delivery would
   * cost SQLite's single writer (and so the API's own writes) more than the deliveries themselves.
   */
  let pending: {
    delivery: NotificationDeliveriesTable
    lease: string
    outcome: Outcome
    ms: number
    at: number
  }[] = []
  let flushing: Promise<void> | undefined
  let flushTimer: NodeJS.Timeout | undefined
  let flushed: { promise: Promise<void>; resolve: () => void; reject: (error: unknown) => void } | undefined

  function record(
    delivery: NotificationDeliveriesTable,
    lease: string,
    outcome: Outcome,
    ms: number,
  ): Promise<void> {
    pending.push({ delivery, lease, outcome, ms, at: clock() })
    if (!flushed) {
      let resolve = () => {}
      let reject: (error: unknown) => void = () => {}
      const promise = new Promise<void>((yes, no) => {
        resolve = yes
        reject = no
      })
      flushed = { promise, resolve, reject }
    }
    const waiting = flushed.promise
    if (pending.length >= 32 || inFlight.size <= pending.length) void flush()
    else flushTimer ??= setTimeout(() => void flush(), 20)
    return waiting
  }

  async function flush(): Promise<void> {
    if (flushTimer !== undefined) clearTimeout(flushTimer)
    flushTimer = undefined
    await flushing
    if (pending.length === 0 || !flushed) return
    const batch = pending
    const done = flushed
    pending = []
    flushed = undefined
    flushing = writeAttempts(batch).then(done.resolve, done.reject)
    await flushing
    flushing = undefined
  }

  async function writeAttempts(
    batch: {
      delivery: NotificationDeliveriesTable
      lease: string
      outcome: Outcome
      ms: number
      at: number
    }[],
  ): Promise<void> {
    await db.transaction().execute(async (trx) => {
      const succeeded = new Set<string>()
      const failures = new Map<string, number>()
      const gone = new Set<string>()
      let last = ''
      const rows: RawBuilder<unknown>[] = []
      for (const { delivery, lease, outcome, ms, at } of batch) {
        const now = ts(at)
        last = now > last ? now : last
        const attempts = delivery.attempts + 1
        let status: NotificationDeliveriesTable['status'] = 'pending'
        let next = delivery.next_attempt_at
        if (outcome.ok) status = 'delivered'
        else if (outcome.gone || outcome.final) status = 'failed'
        else {
          const base = delays[Math.min(attempts - 1, delays.length - 1)]
          next = ts(at + Math.round(base * (0.8 + Math.random() * 0.4)))
          if (next > delivery.expires_at) status = 'failed'
        }
        rows.push(
          sql`select ${text(delivery.id)} as id, ${text(lease)} as lease, ${text(status)} as status,
            ${integer(attempts)} as attempts, ${text(outcome.lastStatus)} as last_status,
            ${integer(outcome.responseCode)} as response_code, ${integer(ms)} as duration_ms,
            ${text(outcome.error?.slice(0, 1000) ?? null)} as last_error, ${text(next)} as next_attempt_at,
            ${text(outcome.ok ? now : null)} as delivered_at, ${text(now)} as updated_at`,
        )
        const endpoint = delivery.endpoint_id
        if (endpoint === null || outcome.final) continue
        if (outcome.ok) succeeded.add(endpoint)
        else failures.set(endpoint, (failures.get(endpoint) ?? 0) + 1)
        if (outcome.gone) gone.add(endpoint)
      }
      // One statement for the whole batch: a round trip per delivery is what PostgreSQL would wait on.
      await sql`update notification_deliveries set status = v.status, attempts = v.attempts,
          last_status = v.last_status, response_code = v.response_code, duration_ms = v.duration_ms,
          last_error = v.last_error, next_attempt_at = v.next_attempt_at, delivered_at = v.delivered_at,
          claimed_until = null, updated_at = v.updated_at
        from (${sql.join(rows, sql` union all `)}) as v
        where notification_deliveries.id = v.id and notification_deliveries.claimed_until = v.lease`.execute(
        trx,
      )
      for (const endpoint of succeeded)
        if (!failures.has(endpoint))
          await trx
            .updateTable('webhook_endpoints')
            .set({ consecutive_failures: 0, last_success_at: last })
            .where('id', '=', endpoint)
            .where((eb) => eb.or([eb('consecutive_failures', '<>', 0), eb('last_success_at', 'is', null)]))
            .execute()
      for (const [endpoint, count] of failures)
        await trx
          .updateTable('webhook_endpoints')
          .set((eb) => ({
            consecutive_failures: succeeded.has(endpoint) ? count : eb('consecutive_failures', '+', count),
            last_failure_at: last,
          }))
          .where('id', '=', endpoint)
          .execute()
      for (const endpoint of gone) {
        // 410 Gone: the receiver asks for no more. The endpoint stops; what it still had queued fails.
        await trx
          .updateTable('webhook_endpoints')
          .set({ status: 'disabled' })
          .where('id', '=', endpoint)
          .execute()
        await trx
          .updateTable('notification_deliveries')
          .set({ status: 'failed', last_status: 'endpoint_disabled', claimed_until: null, updated_at: last })
          .where('endpoint_id', '=', endpoint)
          .where('status', '=', 'pending')
          .execute()
      }
    })
  }

  function eventBody(event: NotificationEventsTable): { id: string; body: string } {
    const data = JSON.parse(event.data) as Record<string, unknown>
    return {
      id: event.id,
      body: JSON.stringify({
        id: event.id,
        type: event.type,
        createdAt: event.created_at,
        data: event.type === 'submission.created' ? { ...data, formId: event.form_id } : data,
      }),
    }
  }

  async function sendWebhook(
    delivery: NotificationDeliveriesTable,
    batch: Batch,
    signal: AbortSignal,
  ): Promise<Outcome> {
    const endpoint = batch.endpoints.get(delivery.endpoint_id ?? '')
    if (endpoint?.status !== 'active')
      return { ok: false, lastStatus: 'endpoint_disabled', responseCode: null, error: null, final: true }
    const stored = batch.events.get(delivery.event_id)
    if (!stored)
      return { ok: false, lastStatus: 'event_missing', responseCode: null, error: null, final: true }
    const event = eventBody(stored)
    const problem = urlProblem(endpoint.url)
    if (problem) return { ok: false, lastStatus: 'refused', responseCode: null, error: problem, final: true }
    const url = new URL(endpoint.url)
    const host = bareHost(url)
    // Literal addresses never reach `lookup`: they are checked here.
    if (isIP(host) && !options.allowPrivate && !isPublicAddress(host))
      return {
        ok: false,
        lastStatus: 'refused',
        responseCode: null,
        error: `${host} is not a public address`,
      }
    const secrets = [openSecret(endpoint.secret)]
    if (
      endpoint.previous_secret !== null &&
      endpoint.previous_secret_until !== null &&
      endpoint.previous_secret_until > ts(clock())
    )
      secrets.push(openSecret(endpoint.previous_secret))
    const timestamp = Math.floor(clock() / 1000)
    const headers = {
      'content-type': 'application/json',
      'user-agent': 'Lectern-Webhooks/1',
      'webhook-id': event.id,
      'webhook-timestamp': String(timestamp),
      'webhook-signature': signatureHeader(secrets, event.id, timestamp, event.body),
    }
    return post(url, headers, event.body, signal)
  }

  function post(
    url: URL,
    headers: Record<string, string>,
    body: string,
    signal: AbortSignal,
  ): Promise<Outcome> {
    return new Promise((resolve) => {
      const secure = url.protocol === 'https:'
      const request = (secure ? httpsRequest : httpRequest)(url, {
        method: 'POST',
        headers: { ...headers, 'content-length': String(Buffer.byteLength(body)) },
        agent: secure ? agents.https : agents.http,
        signal,
      })
      const timer = setTimeout(() => {
        request.destroy(
          Object.assign(new Error(`no answer within ${timeoutMs / 1000} s`), { code: 'TIMEOUT' }),
        )
      }, timeoutMs)
      const finish = (outcome: Outcome) => {
        clearTimeout(timer)
        resolve(outcome)
      }
      request.on('error', (error: NodeJS.ErrnoException) =>
        finish({
          ok: false,
          lastStatus:
            error.code === 'TIMEOUT'
              ? 'timeout'
              : error.code === 'EADDRREFUSED'
                ? 'refused'
                : 'connection_error',
          responseCode: null,
          error: error.message,
        }),
      )
      request.on('response', (response: IncomingMessage) => {
        const code = response.statusCode ?? 0
        const chunks: Buffer[] = []
        let size = 0
        response.on('data', (chunk: Buffer) => {
          if (size < MAX_RESPONSE_BYTES) chunks.push(chunk)
          size += chunk.length
          // Past the cap the rest is not read: the connection is dropped instead.
          if (size > MAX_RESPONSE_BYTES) response.destroy()
        })
        const done = () => {
          const ok = code >= 200 && code < 300
          const text = Buffer.concat(chunks).subarray(0, 1000).toString('utf8')
          finish({
            ok,
            lastStatus: ok ? 'delivered' : code === 410 ? 'gone' : `http_${code}`,
            responseCode: code,
            error: ok ? null : text || null,
            gone: code === 410,
          })
        }
        response.on('end', done)
        response.on('close', done)
        response.on('error', () => {})
      })
      request.end(body)
    })
  }

  async function sendEmail(delivery: NotificationDeliveriesTable, batch: Batch): Promise<Outcome> {
    if (!mailer || !options.mailFrom)
      return {
        ok: false,
        lastStatus: 'mail_not_configured',
        responseCode: null,
        error: 'SMTP_URL and MAIL_FROM are not set',
        final: true,
      }
    const event = batch.events.get(delivery.event_id)
    if (!event || event.form_id === null)
      return { ok: false, lastStatus: 'event_missing', responseCode: null, error: null, final: true }
    const form = await db
      .selectFrom('forms')
      .select(['id', 'title', 'intake'])
      .where('id', '=', event.form_id)
      .executeTakeFirst()
    const settings = parseStoredIntake(form?.intake ?? null)
    const submission = JSON.parse(event.data) as {
      id: string
      data: Record<string, unknown>
      createdAt: string
    }
    const mail = submissionMail({
      form: { id: event.form_id, title: form?.title ?? event.form_id, fields: settings.fields },
      submission,
      recipients: settings.notifyEmails,
      publicUrl: options.publicUrl,
    })
    if (!mail) return { ok: false, lastStatus: 'no_recipients', responseCode: null, error: null, final: true }
    try {
      const info = await mailer.sendMail({
        from: options.mailFrom,
        to: mail.to,
        subject: mail.subject,
        text: mail.text,
        ...(mail.replyTo ? { replyTo: { name: '', address: mail.replyTo } } : {}),
        headers: { 'X-Lectern-Event-Id': event.id },
        disableFileAccess: true,
        disableUrlAccess: true,
      })
      const code = Number(/^(\d{3})/.exec(String(info.response ?? ''))?.[1] ?? 250)
      return { ok: true, lastStatus: 'delivered', responseCode: code, error: null }
    } catch (error) {
      const code = (error as { responseCode?: number }).responseCode ?? null
      return {
        ok: false,
        lastStatus: code ? `smtp_${code}` : 'connection_error',
        responseCode: code,
        error: describe(error),
      }
    }
  }

  /** Claims what is due and starts it, within the concurrency bound; returns how many started. */
  async function pump(): Promise<number> {
    const free = concurrency - inFlight.size
    if (free <= 0) return 0
    const claimed = await claim(free)
    if (claimed.length === 0) return 0
    const batch = await prefetch(claimed)
    for (const item of claimed) {
      const controller = new AbortController()
      const work: Promise<void> = attempt(item, batch, controller.signal)
        .catch((error: unknown) => options.log?.warn({ err: error }, 'could not record a delivery attempt'))
        .finally(() => {
          inFlight.delete(work)
          if (running) schedule(0)
        })
      inFlight.set(work, controller)
    }
    return claimed.length
  }

  function schedule(ms: number): void {
    if (!running) return
    if (pollTimer !== undefined) {
      if (ms > 0) return
      clearTimeout(pollTimer)
    }
    pollTimer = setTimeout(() => {
      pollTimer = undefined
      if (polling) return schedule(ms || 20)
      polling = pump()
        .then((started) => schedule(started > 0 ? 0 : pollMs))
        .catch((error: unknown) => {
          options.log?.warn({ err: error }, 'could not claim deliveries')
          schedule(pollMs * 4)
        })
        .finally(() => {
          polling = undefined
        })
    }, ms)
  }

  const service = {
    /** Claims and sends due deliveries, waits for them, and returns how many it sent (tests, tools). */
    async runOnce(): Promise<number> {
      const started = await pump()
      await Promise.all(inFlight.keys())
      return started
    },

    /** Sends until nothing is due (tests). */
    async drain(): Promise<number> {
      let total = 0
      for (;;) {
        const started = await service.runOnce()
        if (started === 0) return total
        total += started
      }
    },

    /**
     * Emits one `content.changed` naming the kinds whose version moved since the last event, when
     * any did and the last was at least the coalescing time ago. The lease on the `notifications`
     * row makes one instance at a time do it; the versions it covered are stored with the event,
     * so a restart neither repeats nor loses a change.
     */
    async checkContent(): Promise<ContentKind[] | null> {
      const moved = async (q: Kysely<Database>) => {
        const current = await q.selectFrom('content_versions').select(['kind', 'version']).execute()
        const seen = await q.selectFrom('notification_cursors').select(['kind', 'version']).execute()
        const seenOf = new Map(seen.map((row) => [row.kind, Number(row.version)]))
        return {
          current,
          kinds: KINDS.filter((kind) => {
            const row = current.find((c) => c.kind === kind)
            return row !== undefined && Number(row.version) !== seenOf.get(kind)
          }),
        }
      }
      if ((await moved(db)).kinds.length === 0) return null
      const at = clock()
      const result = await db.transaction().execute(async (trx) => {
        const taken = await trx
          .updateTable('locks')
          .set({ acquired_at: new Date(at).toISOString() })
          .where('name', '=', 'notifications')
          .where((eb) =>
            eb.or([
              eb('acquired_at', 'is', null),
              eb('acquired_at', '<=', new Date(at - coalesceMs).toISOString()),
            ]),
          )
          .executeTakeFirst()
        if (Number(taken.numUpdatedRows) === 0) return null
        const { current, kinds } = await moved(trx)
        if (kinds.length === 0) return null
        await recordContentChanged(trx, kinds, new Date(at))
        for (const row of current)
          await trx
            .insertInto('notification_cursors')
            .values({ kind: row.kind, version: row.version })
            .onConflict((conflict) => conflict.column('kind').doUpdateSet({ version: row.version }))
            .execute()
        return kinds
      })
      if (result) outboxWritten()
      return result
    },

    start(): void {
      if (running) return
      running = true
      unsubscribe = onOutboxWritten(() => schedule(0))
      schedule(0)
      const tick = () =>
        void service
          .checkContent()
          .catch((error: unknown) => options.log?.warn({ err: error }, 'could not check content changes'))
      contentTimer = setInterval(tick, contentCheckMs)
      contentTimer.unref()
    },

    /**
     * Stops claiming, lets attempts in flight finish for up to `waitMs`, then abandons the rest:
     * their leases run out and they are attempted again, here after a restart or by another instance.
     */
    async stop(waitMs = 5_000): Promise<void> {
      running = false
      unsubscribe?.()
      if (pollTimer !== undefined) clearTimeout(pollTimer)
      if (contentTimer !== undefined) clearInterval(contentTimer)
      pollTimer = undefined
      await polling
      const all = Promise.all(inFlight.keys())
      let timer: NodeJS.Timeout | undefined
      await Promise.race([all, new Promise((resolve) => (timer = setTimeout(resolve, waitMs)))])
      clearTimeout(timer)
      for (const controller of inFlight.values()) controller.abort()
      await all
      await flush()
      agents.http.destroy()
      agents.https.destroy()
      mailer?.close()
    },
  }
  return service
}

/** A value typed the same way in both dialects inside a `union all` of literal rows. */
const text = (value: string | null) => sql`cast(${value} as text)`
const integer = (value: number | null) => sql`cast(${value} as integer)`

function describe(error: unknown): string {
  return error instanceof Error ? error.message : String(error)
}

export type Notifier = ReturnType<typeof createNotifier>
