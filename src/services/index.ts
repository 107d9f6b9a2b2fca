import type { DatabaseHandle } from '../db/database.js'
import { createAuditService } from './audit.js'
import { createContentService } from './content.js'
import { createContentAdminService } from './content-admin.js'
import { createDashboardLists } from './dashboard-lists.js'
import { createImporter } from './import/index.js'
import { createInboxService } from './inbox.js'
import { createIntakeService } from './intake.js'
import { createKeyService } from './keys.js'
import { keySource } from './notifications/secrets.js'
import { createWebhookService } from './notifications/webhooks.js'
import { createRedirectApplier } from './redirects/applier.js'
import { createRedirectService } from './redirects/index.js'
import { createSessionService, type SessionOptions } from './sessions.js'
import { createSpamService } from './spam.js'
import { createUsageService } from './usage.js'
import { createUserService } from './users.js'

/**
 * The services every face (API, dashboard, CLI) works through; none of them touches the database.
 * `options.sessions` sets the dashboard's session timeouts and sign-in throttle (and, in tests, a clock).
 */
export function createServices(
  database: DatabaseHandle,
  options: {
    sessions?: SessionOptions
    intake?: { clock?: () => number }
    /** `SECRET_KEY` and `WEBHOOK_ALLOW_PRIVATE` (private addresses refused unless it is true). */
    notifications?: { secretKey?: string; allowPrivate?: boolean; clock?: () => number }
  } = {},
) {
  return {
    webhooks: createWebhookService(database.db, {
      allowPrivate: options.notifications?.allowPrivate ?? false,
      secretKey: keySource(database, options.notifications?.secretKey),
      clock: options.notifications?.clock,
    }),
    content: createContentService(database),
    importer: createImporter(database.db),
    keys: createKeyService(database),
    users: createUserService(database.db),
    sessions: createSessionService(database.db, options.sessions),
    contentAdmin: createContentAdminService(database.db),
    inbox: createInboxService(database.db),
    intake: createIntakeService(database, options.intake),
    spam: createSpamService(database.db),
    lists: createDashboardLists(database.db),
    redirects: createRedirectService(database.db),
    redirectApplier: createRedirectApplier(database.db),
    audit: createAuditService(database.db),
    usage: createUsageService(database.db),
  }
}

export type Services = ReturnType<typeof createServices>
