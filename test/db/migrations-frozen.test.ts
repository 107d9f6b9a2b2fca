import { createHash } from 'node:crypto'
import { readdirSync, readFileSync } from 'node:fs'
import { fileURLToPath } from 'node:url'
import { describe, expect, it } from 'vitest'
import { migrationProvider } from '../../src/db/migrations/index.js'

const MIGRATIONS_DIR = fileURLToPath(new URL('../../src/db/migrations/', import.meta.url))

/**
 * SHA-256 of every released migration file. A released migration is frozen: a database that has not
 * run it yet must get exactly what every other database got. To change the schema, add a migration
 * and its line here; never edit a line that is already here.
 */
const RELEASED: Record<string, string> = {
  'frozen.ts': '367fb73918fbc3ebeeca3b9eb0543fcc16518918318f554b5157090d14425b67',
  '001-initial.ts': '3f5ebe03ef47ab0ca47f3bbfa9b1967059235da26997efb31beae3aa11e701ad',
  '002-admin.ts': '5c3b556e9288e5f92d83a90b4dc26f250e3fc3c45ceac6d6b604ff5cfe0fd5c2',
  '003-content-version.ts': '2a3990dd2ad212761b0a417dfb12598f670f7b166d3b25133132b5276122f1da',
  '004-redirect-destinations.ts': '2a657af1efcc627c3415ed12993969e199d4f421b03cbbbcdd8b65d8e7441e7c',
  '005-audit.ts': 'd1212781e2d8f2e1e632eca5d4fee03b1a574955238783971b43fc8a908dd654',
  '006-key-expiry.ts': '18bfc9bbdc10170a80247920adc43b624dcf547e91440d330dbf1a4ab72aad07',
  '007-key-usage.ts': '01d9a10d7b082bbd492ec55888c48408626cc94ed21afdb8b2634591e58ba3c3',
  '008-submission-inbox.ts': '2249a4735ddca219f586a8935215eafb4f0ec75d0af1a650fbf7e44ff23f615b',
  '009-submission-json.ts': '354d70a1af64b183adb43e5daa76c7a8c751a1df1e9cb229b0d23f82dc84651d',
  '010-password-checks.ts': '84a6c3bc536fd2ea82d79a6ae2aa86e3249c2ba3f60427c007608a27b0297f7b',
  '011-scoped-content-versions.ts': 'a84fc8cb58cb00258362a1167f09847eb3f7df8ce228d85d40f9cc602290845d',
  '012-form-intake.ts': 'c091950eae1aa4cb3c16bd19247963d76ce3f173d18da1f8d09dadc87c77a70d',
  '013-key-scopes.ts': '5f567fa7331a04e277563ac5fcd286577d2a57050385ca9363df5ee330d477ff',
  '014-notifications.ts': '9d6411c48fcff986e5134caf939c3baec280ce2899572eeeeb50d22d4b8ddae5',
  '015-drop-inbox-partial-indexes.ts': '5d13317832165f0dea8d5979f5045f1d84fd172fd7451fdf8b4e2580a9e15544',
}

const migrationFiles = () => readdirSync(MIGRATIONS_DIR).filter((name) => /^\d{3}-.+\.ts$/.test(name))
const checksum = (name: string) =>
  createHash('sha256')
    .update(readFileSync(MIGRATIONS_DIR + name))
    .digest('hex')

describe('migrations', () => {
  it.each(Object.keys(RELEASED))('keeps the released file %s byte for byte', (name) => {
    expect(checksum(name), `${name} changed after release: add a new migration instead`).toBe(RELEASED[name])
  })

  it('lists every migration file in the checksum table, so none is released unfrozen', () => {
    expect(migrationFiles().filter((name) => !(name in RELEASED))).toEqual([])
  })

  it('imports nothing but Kysely and the frozen runner, so live code cannot change the past', () => {
    for (const name of [...migrationFiles(), 'frozen.ts']) {
      const source = readFileSync(MIGRATIONS_DIR + name, 'utf8')
      const imports = [...source.matchAll(/from '([^']+)'/g)].map((match) => match[1])
      expect(
        imports.every((from) => from === 'kysely' || from === './frozen.js'),
        `${name} imports ${imports}`,
      ).toBe(true)
    }
  })

  it('registers every migration file, in order', async () => {
    const registered = Object.keys(await migrationProvider.getMigrations())
    expect(registered).toEqual(migrationFiles().map((name) => name.replace(/\.ts$/, '')))
    expect([...registered].sort()).toEqual(registered)
  })
})
