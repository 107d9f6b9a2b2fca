import type { FastifyReply } from 'fastify'
import { html, type SafeHtml } from '../../html.js'
import { roleAllows } from '../../services/roles.js'
import type { AdminSession } from '../../services/sessions.js'
import { csrfField, flashMessage } from './components.js'

export type Section =
  | 'home'
  | 'forms'
  | 'pages'
  | 'redirects'
  | 'keys'
  | 'webhooks'
  | 'users'
  | 'audit'
  | 'account'

export const ROLE_LABELS: Record<string, string> = {
  global_admin: 'Global admin',
  editor: 'Editor',
  viewer: 'Viewer',
}

/** The main navigation: only the sections the user's role opens. */
function navigation(session: AdminSession, current: Section | undefined): SafeHtml {
  const role = session.user.role
  const link = (section: Section, href: string, label: string) =>
    html`<li><a href="${href}"${current === section ? html` aria-current="page"` : ''}>${label}</a></li>`
  const content = [
    link('home', '/admin', 'Overview'),
    roleAllows(role, 'forms:read') ? link('forms', '/admin/forms', 'Forms') : '',
    roleAllows(role, 'pages:read') ? link('pages', '/admin/pages', 'Pages') : '',
    roleAllows(role, 'redirects:read') ? link('redirects', '/admin/redirects', 'Redirects') : '',
  ]
  const organization =
    role === 'global_admin'
      ? html`<li class="group"><span class="group-label" id="nav-organization">Organization</span>
      <ul aria-labelledby="nav-organization">${link('keys', '/admin/keys', 'API keys')}${link('webhooks', '/admin/webhooks', 'Webhooks')}${link('users', '/admin/users', 'Users')}${link('audit', '/admin/audit', 'Audit log')}</ul></li>`
      : ''
  return html`<nav class="main-nav" aria-label="Main"><ul>${content}${organization}</ul></nav>`
}

/** A whole dashboard page: header and navigation for a signed-in user, the flash message, the body. */
export function layout(input: {
  title: string
  body: SafeHtml
  session: AdminSession | null
  section?: Section
}): SafeHtml {
  const { session } = input
  const header = session
    ? html`<header class="topbar">
  <a class="brand" href="/admin">Lectern <span>admin</span></a>
  ${navigation(session, input.section)}
  <div class="account">
    <a class="who" href="/admin/account"${input.section === 'account' ? html` aria-current="page"` : ''} title="Your account"><span class="email">${session.user.email}</span> <span class="role">${ROLE_LABELS[session.user.role]}</span><span class="short">Account</span></a>
    <form method="post" action="/admin/logout">${csrfField(session.csrfToken)}<button type="submit" class="button secondary small">Sign out</button></form>
  </div>
</header>`
    : html`<header class="topbar signed-out"><a class="brand" href="/admin">Lectern <span>admin</span></a></header>`
  return html`<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${input.title} · Lectern admin</title>
<link rel="icon" href="data:,">
<link rel="stylesheet" href="/admin/static/admin.css">
<script src="/admin/static/admin.js" defer></script>
</head>
<body>
<a class="skip-link" href="#main">Skip to content</a>
${header}
<main id="main" tabindex="-1">
${flashMessage(session?.flash ?? null)}
${input.body}
</main>
</body>
</html>
`
}

/** Sends a rendered page as HTML with `status`. */
export function sendPage(reply: FastifyReply, page: SafeHtml, status = 200): FastifyReply {
  return reply.code(status).type('text/html; charset=utf-8').send(page.value)
}
