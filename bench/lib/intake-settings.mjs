import { join } from 'node:path'
import { pathToFileURL } from 'node:url'

/**
 * Turns on the intake of `formId` in the database at `databaseUrl`, through the measured build's own
 * service (as the dashboard's form editor does, audited), so `POST /f/{formId}` takes posts. Builds
 * without intake have no such service: false.
 */
export async function enableIntake(home, databaseUrl, formId) {
  const dist = (file) => pathToFileURL(join(home, 'dist', file)).href
  let service
  try {
    service = await import(dist('services/intake.js'))
  } catch {
    return false
  }
  const { openDatabase } = await import(dist('db/database.js'))
  const database = openDatabase(databaseUrl)
  try {
    // Builds since group commit take the database handle; earlier ones its Kysely instance.
    try {
      await service.createIntakeService(database).updateSettings(formId, { enabled: true }, 'cli')
    } catch (error) {
      if (!(error instanceof TypeError)) throw error
      await service.createIntakeService(database.db).updateSettings(formId, { enabled: true }, 'cli')
    }
    return true
  } finally {
    await database.close()
  }
}
