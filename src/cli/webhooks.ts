import { type Command, InvalidArgumentError } from 'commander'
import { databaseLocation, printTable, withServices } from './context.js'
import { type CliIo, writeLine } from './io.js'

function limitFlag(value: string): number {
  if (!/^[0-9]{1,4}$/.test(value) || Number(value) < 1 || Number(value) > 1000)
    throw new InvalidArgumentError('The limit must be an integer from 1 to 1000.')
  return Number(value)
}

/** `lectern webhooks …`: add (the secret shown once), list, remove, deliveries, resend, rotate-secret, enable. */
export function registerWebhookCommands(program: Command, io: CliIo): void {
  const webhooks = program.command('webhooks').description('manage webhook endpoints and their deliveries')

  webhooks
    .command('add')
    .description('add an endpoint; its signing secret is printed once, alone on the last line')
    .requiredOption('--url <url>', 'absolute http(s) URL the events are POSTed to')
    .option('--events <list>', 'comma-separated: submission.created, content.changed (default: both)')
    .option('--form <id>', 'only submissions of this form (submission.created)')
    .action(async (options: { url: string; events?: string; form?: string }) => {
      await withServices(
        io,
        async ({ webhooks }) => {
          const { endpoint, secret } = await webhooks.add({
            url: options.url,
            events: options.events,
            formId: options.form,
          })
          writeLine(io.stdout, endpoint.id)
          writeLine(
            io.stdout,
            `Added webhook endpoint ${endpoint.id} for ${endpoint.events.join(', ')}${endpoint.formId ? ` of form ${endpoint.formId}` : ''}: ${endpoint.url}`,
          )
          writeLine(io.stdout, 'Its signing secret follows; store it now: it cannot be shown again.')
          writeLine(io.stdout, secret)
        },
        { writes: true },
      )
    })

  webhooks
    .command('list')
    .description('list webhook endpoints (never their secrets)')
    .option('--json', 'print JSON')
    .action(async (options: { json?: boolean }) => {
      await withServices(io, async ({ webhooks }, database) => {
        const list = await webhooks.list()
        if (options.json)
          writeLine(
            io.stdout,
            JSON.stringify(
              list.map(({ id, url, events, formId, status, createdAt }) => ({
                id,
                url,
                events,
                formId,
                status,
                createdAt,
              })),
              null,
              2,
            ),
          )
        else if (list.length === 0)
          writeLine(io.stdout, `No webhook endpoints in ${databaseLocation(database)}`)
        else
          printTable(
            io,
            list.map((endpoint) => ({
              id: endpoint.id,
              url: endpoint.url,
              events: endpoint.events.join(','),
              formId: endpoint.formId,
              status: endpoint.status,
              createdAt: endpoint.createdAt,
            })),
            ['id', 'url', 'events', 'formId', 'status', 'createdAt'],
          )
      })
    })

  webhooks
    .command('remove')
    .description('remove an endpoint and its deliveries')
    .argument('<id>', 'endpoint id, as shown by webhooks list')
    .action(async (id: string) => {
      await withServices(
        io,
        async ({ webhooks }) => {
          await webhooks.remove(id)
          writeLine(io.stdout, `Removed ${id}`)
        },
        { writes: true },
      )
    })

  webhooks
    .command('enable')
    .description('let an endpoint disabled by a 410 Gone answer receive events again')
    .argument('<id>', 'endpoint id')
    .action(async (id: string) => {
      await withServices(
        io,
        async ({ webhooks }) => {
          await webhooks.enable(id)
          writeLine(io.stdout, `Enabled ${id}`)
        },
        { writes: true },
      )
    })

  webhooks
    .command('deliveries')
    .description("an endpoint's deliveries, newest first")
    .argument('<id>', 'endpoint id')
    .option('--json', 'print JSON')
    .option('--limit <n>', 'how many (1-1000, default 20)', limitFlag)
    .action(async (id: string, options: { json?: boolean; limit?: number }) => {
      await withServices(io, async ({ webhooks }) => {
        const list = await webhooks.deliveries(id, options.limit ?? 20)
        if (options.json) writeLine(io.stdout, JSON.stringify(list, null, 2))
        else if (list.length === 0) writeLine(io.stdout, `No deliveries for ${id}`)
        else
          printTable(
            io,
            list.map((d) => ({
              eventId: d.eventId,
              type: d.type,
              status: d.status,
              attempts: String(d.attempts),
              lastStatus: d.lastStatus,
              responseCode: d.responseCode === null ? null : String(d.responseCode),
              durationMs: d.durationMs === null ? null : String(d.durationMs),
              nextAttemptAt: d.nextAttemptAt,
              deliveredAt: d.deliveredAt,
            })),
            [
              'eventId',
              'type',
              'status',
              'attempts',
              'lastStatus',
              'responseCode',
              'durationMs',
              'nextAttemptAt',
              'deliveredAt',
            ],
          )
      })
    })

  webhooks
    .command('resend')
    .description('send an event to an endpoint again, now (retried for three more days)')
    .argument('<eventId>', 'event id (evt_…), as shown by webhooks deliveries')
    .requiredOption('--endpoint <id>', 'endpoint id')
    .action(async (eventId: string, options: { endpoint: string }) => {
      await withServices(
        io,
        async ({ webhooks }) => {
          await webhooks.resend(eventId, options.endpoint)
          writeLine(io.stdout, `Queued ${eventId} for ${options.endpoint}`)
        },
        { writes: true },
      )
    })

  webhooks
    .command('rotate-secret')
    .description(
      'give an endpoint a new signing secret (printed once, last line); the old one signs too for 24 h',
    )
    .argument('<id>', 'endpoint id')
    .action(async (id: string) => {
      await withServices(
        io,
        async ({ webhooks }) => {
          const { secret, previousUntil } = await webhooks.rotateSecret(id)
          writeLine(
            io.stdout,
            `Rotated the secret of ${id}; the previous one also signs until ${previousUntil}.`,
          )
          writeLine(io.stdout, 'The new secret follows; store it now: it cannot be shown again.')
          writeLine(io.stdout, secret)
        },
        { writes: true },
      )
    })
}
