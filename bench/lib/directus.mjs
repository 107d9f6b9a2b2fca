// A peer in the benchmark: Directus serving the same submissions through its REST API. Used only
// when DIRECTUS_URL and DIRECTUS_TOKEN point to a Directus install (a static token of an admin user);
// otherwise every Directus step is skipped with a note.
import { createReadStream } from 'node:fs'
import { createInterface } from 'node:readline'

/** The collection the benchmark creates in Directus and fills with the main dataset's big form. */
export const DIRECTUS_COLLECTION = 'lectern_bench_submissions'

/** Rows per `POST /items` request while seeding (well under Directus's default 1 MB payload limit). */
const BATCH = 500

/** Directus's settings from the environment, or null (with the reason) when it is not configured. */
export function readDirectusConfig(env = process.env) {
  const url = env.DIRECTUS_URL?.trim()
  const token = env.DIRECTUS_TOKEN?.trim()
  if (!url && !token)
    return { config: null, skipped: 'Directus skipped: DIRECTUS_URL and DIRECTUS_TOKEN are not set.' }
  if (!url || !token) {
    return {
      config: null,
      skipped: `Directus skipped: ${url ? 'DIRECTUS_TOKEN' : 'DIRECTUS_URL'} is not set (both are needed).`,
    }
  }
  let origin
  try {
    origin = new URL(url).origin
  } catch {
    return { config: null, skipped: `Directus skipped: DIRECTUS_URL is not a URL (${url}).` }
  }
  return { config: { origin, token, reseed: env.DIRECTUS_RESEED === '1' }, skipped: null }
}

async function call(config, method, path, body) {
  const response = await fetch(`${config.origin}${path}`, {
    method,
    headers: {
      authorization: `Bearer ${config.token}`,
      ...(body === undefined ? {} : { 'content-type': 'application/json' }),
    },
    body: body === undefined ? undefined : JSON.stringify(body),
    signal: AbortSignal.timeout(120_000),
  })
  const text = await response.text()
  if (!response.ok) {
    throw new Error(
      `Directus ${method} ${path.split('?')[0]} answered ${response.status}: ${text.slice(0, 300)}`,
    )
  }
  return text === '' ? null : JSON.parse(text)
}

/** Why Directus cannot be used (unreachable, or the token is refused), or null when it can. */
export async function directusProblem(config) {
  try {
    await call(config, 'GET', '/users/me?fields=id')
    return null
  } catch (error) {
    return `Directus skipped: ${config.origin} did not accept the token (${error.message.split('\n')[0]}).`
  }
}

const PATHS = {
  items: `/items/${DIRECTUS_COLLECTION}`,
  collection: `/collections/${DIRECTUS_COLLECTION}`,
}

/** The filter and order of a form's submissions as the Lectern API lists them: newest first, ties by id. */
function formQuery(formId) {
  return `filter%5Bform_id%5D%5B_eq%5D=${encodeURIComponent(formId)}&sort=-created_at,-id&meta=filter_count`
}

/** The Directus request answering the same question as a Lectern list request of a form's submissions. */
export function directusListPath(formId, page, pageSize) {
  return `${PATHS.items}?${formQuery(formId)}&page=${page}&limit=${pageSize}`
}

/** For the load generator's random pages: a prefix to which `page=N&limit=M` is appended. */
export function directusRandomPrefix(formId) {
  return `${PATHS.items}?${formQuery(formId)}&`
}

async function submissionCount(config, formId) {
  const body = await call(
    config,
    'GET',
    `${PATHS.items}?aggregate%5Bcount%5D=*&filter%5Bform_id%5D%5B_eq%5D=${encodeURIComponent(formId)}`,
  )
  return Number(body?.data?.[0]?.count ?? 0)
}

/**
 * The fields of a submission as Lectern stores them: timestamps stay canonical UTC text (which
 * sorts in time order), `data` is Directus's JSON type. Directus can index single columns only;
 * the composite (form_id, created_at, id) index Lectern has would need SQL in Directus's database.
 */
const FIELDS = [
  { field: 'id', type: 'string', schema: { is_primary_key: true, length: 64, has_auto_increment: false } },
  { field: 'form_id', type: 'string', schema: { is_nullable: false, is_indexed: true, length: 64 } },
  { field: 'data', type: 'json' },
  { field: 'ip_address', type: 'string' },
  { field: 'user_agent', type: 'text' },
  { field: 'referrer', type: 'text' },
  { field: 'submitted_by', type: 'string' },
  { field: 'is_read', type: 'boolean', schema: { default_value: false } },
  { field: 'is_starred', type: 'boolean', schema: { default_value: false } },
  { field: 'notes', type: 'text' },
  { field: 'created_at', type: 'string', schema: { is_indexed: true, length: 20 } },
  { field: 'updated_at', type: 'string', schema: { length: 20 } },
]

/**
 * Makes sure Directus holds the main dataset's big form's submissions in its benchmark collection,
 * creating and filling it (in batches through `POST /items`) unless it already holds them all
 * (`DIRECTUS_RESEED=1` refills it). Returns how long seeding took, or that it was reused.
 */
export async function seedDirectus(config, dataset, log) {
  const { bigFormId, bigFormSubmissions } = dataset.description
  let exists = true
  try {
    await call(config, 'GET', PATHS.collection)
  } catch {
    exists = false
  }
  if (exists && !config.reseed && (await submissionCount(config, bigFormId)) === bigFormSubmissions) {
    return { reused: true, rows: bigFormSubmissions, seedMs: null }
  }
  if (exists) await call(config, 'DELETE', PATHS.collection)
  await call(config, 'POST', '/collections', {
    collection: DIRECTUS_COLLECTION,
    meta: { note: 'Lectern benchmark: the submissions of one form (created by npm run bench)', hidden: true },
    schema: {},
    fields: FIELDS,
  })
  log(`seeding Directus with the ${bigFormSubmissions} submissions of the big form`)
  const started = performance.now()
  let batch = []
  let rows = 0
  const flush = async () => {
    if (batch.length === 0) return
    await call(config, 'POST', `${PATHS.items}?fields=id`, batch)
    rows += batch.length
    batch = []
    if (rows % 50_000 < BATCH) log(`  ${rows} rows in Directus`)
  }
  const lines = createInterface({ input: createReadStream(dataset.file), crlfDelay: Infinity })
  for await (const line of lines) {
    if (!line.includes(bigFormId)) continue
    const record = JSON.parse(line)
    if (record.kind !== 'submission' || record.formId !== bigFormId) continue
    batch.push({
      id: record.id,
      form_id: record.formId,
      data: record.data,
      ip_address: record.ipAddress ?? null,
      user_agent: record.userAgent ?? null,
      referrer: record.referrer ?? null,
      submitted_by: record.submittedBy ?? null,
      is_read: record.isRead ?? false,
      is_starred: record.isStarred ?? false,
      notes: record.notes ?? null,
      created_at: record.createdAt,
      updated_at: record.updatedAt ?? record.createdAt,
    })
    if (batch.length === BATCH) await flush()
  }
  await flush()
  return { reused: false, rows, seedMs: Math.round(performance.now() - started) }
}

/** Checks one Directus answer the way Lectern's are checked: 200, items, and the form's total. */
export async function checkDirectusAnswer(config, path, total) {
  const body = await call(config, 'GET', path)
  const problems = []
  if (!Array.isArray(body?.data) || body.data.length === 0) problems.push('returned no items')
  if (Number(body?.meta?.filter_count) !== total)
    problems.push(`says filter_count ${body?.meta?.filter_count}; the dataset holds ${total}`)
  return problems
}
