import type { DatabaseHandle } from '../db/client.js'
import { createContentService } from './content.js'
import { createImporter } from './importer.js'
import { createKeyService } from './keys.js'
import { createUserService } from './users.js'

/** The services every face (API, dashboard, CLI) works through; none of them touches the database. */
export function createServices(database: DatabaseHandle) {
  return {
    content: createContentService(database.db),
    importer: createImporter(database.db),
    keys: createKeyService(database.db),
    users: createUserService(database.db),
  }
}

export type Services = ReturnType<typeof createServices>
