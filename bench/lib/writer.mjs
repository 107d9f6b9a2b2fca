// A second process writing to one form at a steady rate while the load generator reads: it marks
// submissions of the form read and unread in turn (single-row updates through Lectern's own
// database layer, as the dashboard's inbox does). Usage: node writer.mjs '<json options>' with
// { home, databaseUrl, formId, rate }. Prints READY once writing, and on SIGTERM `WROTE <n>`.
import { join } from 'node:path'
import { pathToFileURL } from 'node:url'

const { home, databaseUrl, formId, rate } = JSON.parse(process.argv[2])
const { openDatabase } = await import(pathToFileURL(join(home, 'dist', 'db', 'database.js')).href)
const database = openDatabase(databaseUrl)
const db = database.db

// The form's newest submissions: its page 1, which the readers ask for, is what a write changes.
const ids = (
  await db
    .selectFrom('submissions')
    .select('id')
    .where('form_id', '=', formId)
    .orderBy('created_at', 'desc')
    .orderBy('id', 'desc')
    .limit(200)
    .execute()
).map((row) => row.id)
if (ids.length === 0) throw new Error(`form ${formId} has no submissions`)

let wrote = 0
let stopping = false
const interval = 1000 / rate
const started = performance.now()
process.stdout.write('READY\n')
process.once('SIGTERM', () => {
  stopping = true
})
while (!stopping) {
  const id = ids[wrote % ids.length]
  await db
    .updateTable('submissions')
    .set((eb) => ({ is_read: eb(eb.val(1), '-', eb.ref('is_read')), updated_at: new Date().toISOString() }))
    .where('id', '=', id)
    .execute()
  wrote++
  // Evenly paced: the next write is due at `wrote` intervals from the start.
  const wait = started + wrote * interval - performance.now()
  if (wait > 0) await new Promise((resolve) => setTimeout(resolve, wait))
}
await database.close()
process.stdout.write(`WROTE ${wrote} ${((performance.now() - started) / 1000).toFixed(2)}\n`)
