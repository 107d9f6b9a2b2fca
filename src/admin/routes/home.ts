import type { FastifyInstance } from 'fastify'
import { url } from '../../html.js'
import type { AuditEntry } from '../../services/audit.js'
import type { Services } from '../../services/index.js'
import { canManageOrganization, roleAllows } from '../../services/roles.js'
import { signedIn } from '../requests.js'
import { homePage, type OverviewCard } from '../views/home.js'
import { sendPage } from '../views/layout.js'
import { usageToday } from '../views/usage.js'

/** How many of the latest audit entries the overview shows. */
const RECENT_ACTIVITY = 8

const plural = (n: number, word: string) => `${n} ${word}${n === 1 ? '' : 's'}`

/** The overview: one card per section the user's role opens, with what is in it. */
export function registerHomeRoutes(app: FastifyInstance, services: Services): void {
  app.get('/', { config: { access: 'signed-in' } }, async (request, reply) => {
    const session = signedIn(request)
    const role = session.user.role
    const first = { page: 1, pageSize: 1 }
    const cards: OverviewCard[] = []
    if (roleAllows(role, 'forms:read')) {
      const { total } = await services.content.listForms(first)
      // Unread submissions are personal data's headline: shown only to roles that read submissions.
      const reads = roleAllows(role, 'submissions:read')
      const [unread, busiest] = reads
        ? await Promise.all([services.inbox.unreadTotal(), services.inbox.busiestUnread(3)])
        : [undefined, []]
      const perForm = busiest.map((form) => `${form.title}: ${form.unread}`).join(', ')
      cards.push({
        title: 'Forms',
        href: url`/admin/forms`,
        figure: plural(total, 'form'),
        detail:
          unread === undefined
            ? 'Forms on the site and what visitors sent through them.'
            : `${plural(unread, 'unread submission')}${perForm === '' ? '' : ` (${perForm})`}. Forms on the site and what visitors sent through them.`,
      })
    }
    if (roleAllows(role, 'pages:read')) {
      const [all, published] = await Promise.all([
        services.content.listPages(first),
        services.content.listPages({ ...first, published: true }),
      ])
      cards.push({
        title: 'Pages',
        href: url`/admin/pages`,
        figure: plural(all.total, 'page'),
        detail: `${published.total} published, ${plural(all.total - published.total, 'draft')}.`,
      })
    }
    if (roleAllows(role, 'redirects:read')) {
      const [all, chains] = await Promise.all([
        services.content.listRedirects(first),
        services.redirects.findChains(),
      ])
      cards.push({
        title: 'Redirects',
        href: url`/admin/redirects`,
        figure: plural(all.total, 'redirect'),
        detail: 'Old paths sent on to new ones.',
        warning:
          chains.count > 0 ? `${plural(chains.count, 'redirect')} form chains worth flattening.` : undefined,
      })
    }
    let recent: AuditEntry[] | undefined
    if (canManageOrganization(role)) {
      const [keys, users, today, latest] = await Promise.all([
        services.keys.listApiKeys(),
        services.users.listUsers(),
        services.usage.today(),
        services.audit.recent(RECENT_ACTIVITY),
      ])
      recent = latest
      // Counted as the API answers them: an expired key or a disabled owner's is not working.
      const active = keys.filter((key) => key.status === 'active').length
      cards.push({
        title: 'API keys',
        href: url`/admin/keys`,
        figure: `${active} active`,
        detail: `${plural(keys.length, 'key')} in all, revoked ones included. ${usageToday(today)}.`,
      })
      cards.push({
        title: 'Users',
        href: url`/admin/users`,
        figure: plural(users.length, 'user'),
        detail: 'People who can sign in here, and their roles.',
      })
    }
    return sendPage(reply, homePage({ session, cards, ...(recent ? { recent } : {}) }))
  })
}
