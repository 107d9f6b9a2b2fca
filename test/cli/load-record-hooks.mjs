// The module hooks test/cli/load-record.mjs registers: they run on a thread of their own.
import { appendFileSync } from 'node:fs'

export async function load(url, context, nextLoad) {
  appendFileSync(process.env.LECTERN_LOAD_RECORD, `${url}\n`)
  return nextLoad(url, context)
}
