import { html, type SafeHtml, url } from '../../html.js'
import type { PageOf } from '../../schemas.js'
import type { UserFilter, UserSort } from '../../services/dashboard-lists.js'
import type { KeyCounts } from '../../services/keys.js'
import type { ListView } from '../../services/listing.js'
import { ROLES, type Role } from '../../services/roles.js'
import type { AdminSession } from '../../services/sessions.js'
import { MIN_PASSWORD_LENGTH, type UserView } from '../../services/users.js'
import { type ListSpec, listHeader, listHref, NEWEST_FIRST, OLDEST_FIRST, PAGE_SIZES } from '../list-view.js'
import {
  badge,
  confirmation,
  csrfField,
  emptyState,
  errorSummary,
  pagination,
  rowActions,
  switchButton,
  table,
  textField,
  timestamp,
} from './components.js'
import { layout, ROLE_LABELS } from './layout.js'

/**
 * What each role may do in the dashboard, and what API keys made by its holder read (docs/api.md, "Roles").
 * Only global admins create keys; a key follows its creator's current role, so the keys of an admin
 * who was made an editor or a viewer keep working with the narrower reach.
 */
export const ROLE_EFFECTS: Record<Role, string> = {
  global_admin:
    'Manages everything, users and API keys included. The API keys they create read forms, submissions, pages and redirects.',
  editor:
    'Manages forms, pages and redirects, but never sees submissions (they hold personal data). Cannot create API keys; keys they made as a global admin now read forms, pages and redirects only.',
  viewer:
    'Reads pages and redirects. Cannot create API keys; keys they made as a global admin now read pages and redirects only.',
}

/** The users list's search, filters and orders. */
export const USER_LIST: ListSpec<UserFilter, UserSort> = {
  base: url`/admin/users`,
  filters: [
    { value: 'all', label: 'Everyone' },
    { value: 'active', label: 'Active' },
    { value: 'disabled', label: 'Disabled' },
    { value: 'global_admin', label: 'Global admins' },
    { value: 'editor', label: 'Editors' },
    { value: 'viewer', label: 'Viewers' },
  ],
  sorts: [
    { value: 'email', label: 'Email, A–Z' },
    NEWEST_FIRST,
    OLDEST_FIRST,
    { value: 'role', label: 'Role' },
  ],
  sizes: PAGE_SIZES,
  searchHint: 'Part of an email',
  noun: ['user', 'users'],
}

/** A user's API keys, counted for the list and the delete confirmation. */

const keysText = (counts: KeyCounts) =>
  counts.total === 0 ? 'None' : `${counts.active} active of ${counts.total}`

/**
 * The one enabled global admin, when there is exactly one: the services refuse to demote, disable or
 * delete them (a site must keep an admin), so their row offers none of that.
 */
export function lastAdminId(users: readonly UserView[]): string | undefined {
  const admins = users.filter((user) => user.role === 'global_admin' && user.status === 'active')
  return admins.length === 1 ? admins[0]?.id : undefined
}

const LAST_ADMIN_NOTE = 'The last global admin: add another before changing, disabling or deleting this one.'

function roleForm(user: UserView, csrf: string, lastAdmin: boolean): SafeHtml {
  if (lastAdmin)
    return html`${ROLE_LABELS[user.role]} <span class="visually-hidden">(${LAST_ADMIN_NOTE})</span>`
  const id = `role-${user.id}`
  return html`<form class="inline role-form" method="post" action="${url`/admin/users/${user.id}/role`}">
  ${csrfField(csrf)}
  <label class="visually-hidden" for="${id}">Role of ${user.email}</label>
  <select id="${id}" name="role">${ROLES.map(
    (role) =>
      html`<option value="${role}"${role === user.role ? html` selected` : ''}>${ROLE_LABELS[role]}</option>`,
  )}</select>
  <button type="submit" class="button secondary small" aria-label="Change the role of ${user.email}">Change</button>
</form>`
}

function userActions(user: UserView, csrf: string, lastAdmin: boolean): SafeHtml {
  if (lastAdmin) return html`<span class="hint">${LAST_ADMIN_NOTE}</span>`
  return rowActions({
    subject: user.email,
    toggle: switchButton({
      csrf,
      subject: user.email,
      isOn: user.status === 'active',
      labels: ['Disable', 'Enable'],
      action: { off: url`/admin/users/${user.id}/disable`, on: url`/admin/users/${user.id}/enable` },
    }),
    remove: { href: url`/admin/users/${user.id}/delete`, label: 'Delete' },
    more: html`<a class="button secondary" href="${url`/admin/users/${user.id}/password`}" aria-label="Reset the password of ${user.email}…">Reset password…</a>`,
  })
}

export function usersPage(input: {
  session: AdminSession
  view: ListView<UserFilter, UserSort>
  users: PageOf<UserView>
  /** The one enabled global admin, when there is exactly one (see `lastAdminId`). */
  lastAdmin: string | undefined
  keys: Map<string, KeyCounts>
  searchProblem?: string | undefined
}): SafeHtml {
  const { session, view, lastAdmin } = input
  const users = input.users.items
  return layout({
    title: 'Users',
    session,
    section: 'users',
    body: html`<div class="page-head"><h1>Users</h1><a class="button primary" href="/admin/users/new">Add user</a></div>
<details class="panel explainer">
  <summary>What roles do, and what happens to a user's API keys</summary>
  <dl>${ROLES.map((role) => html`<dt>${ROLE_LABELS[role]}</dt><dd>${ROLE_EFFECTS[role]}</dd>`)}</dl>
  <p>A key has the role of the user who created it, checked on every request. <strong>Changing a role</strong>
  changes what their keys can read from the next request. <strong>Disabling</strong> a user signs them out and
  suspends their keys until they are enabled again. <strong>Deleting</strong> a user revokes their keys for good.
  The last enabled global admin can be neither demoted, disabled nor deleted.</p>
</details>
${listHeader(USER_LIST, view, input.users.total, input.searchProblem)}
${
  input.users.total === 0
    ? emptyState('No user matches', 'No user matches the search and filter. Clear them to see everyone.')
    : table({
        caption: 'Users',
        columns: ['Email', 'Role', 'Status', 'API keys', 'Created', 'Actions'],
        rowIds: users.map((user) => `user-${user.id}`),
        rows: users.map((user) => [
          html`<strong>${user.email}</strong>${user.id === session.user.id ? html` ${badge('You', 'neutral')}` : ''}`,
          roleForm(user, session.csrfToken, user.id === lastAdmin),
          user.status === 'active' ? badge('Active', 'good') : badge('Disabled', 'warn'),
          keysText(input.keys.get(user.email) ?? { active: 0, total: 0 }),
          timestamp(user.createdAt),
          userActions(user, session.csrfToken, user.id === lastAdmin),
        ]),
      })
}
${pagination({ page: view.page, pageSize: view.size, total: input.users.total, href: (page) => listHref(USER_LIST, view, page) })}`,
  })
}

export function newUserPage(input: {
  session: AdminSession
  email?: string
  role?: string
  problems?: string[]
}): SafeHtml {
  const selected = input.role ?? 'viewer'
  return layout({
    title: 'Add a user',
    session: input.session,
    section: 'users',
    body: html`<section class="panel narrow">
  <h1>Add a user</h1>
  ${errorSummary(input.problems ?? [])}
  <form method="post" action="/admin/users" class="stack">
    ${csrfField(input.session.csrfToken)}
    ${textField({ name: 'email', label: 'Email', type: 'email', value: input.email, required: true, autocomplete: 'off', autofocus: true })}
    <fieldset class="field">
      <legend>Role</legend>
      ${ROLES.map(
        (role) => html`<div class="choice">
        <input type="radio" id="role-${role}" name="role" value="${role}"${role === selected ? html` checked` : ''}>
        <label for="role-${role}"><strong>${ROLE_LABELS[role]}</strong> <span class="hint">${ROLE_EFFECTS[role]}</span></label>
      </div>`,
      )}
    </fieldset>
    ${textField({ name: 'password', label: 'Password (optional)', type: 'password', autocomplete: 'new-password', hint: `Leave empty to generate a strong one, shown once on the next page. If you set one, use at least ${MIN_PASSWORD_LENGTH} characters.` })}
    <div class="actions"><button type="submit" class="button primary">Add user</button><a class="button secondary" href="/admin/users">Cancel</a></div>
  </form>
</section>`,
  })
}

export function userCreatedPage(input: {
  session: AdminSession
  user: UserView
  generatedPassword?: string
}): SafeHtml {
  const { user } = input
  const password = input.generatedPassword
    ? html`<div class="alert warning" role="alert"><strong>Copy this password now: it is shown only once.</strong>
  Give it to ${user.email} in a private channel.</div>
  <label for="new-password">Password for ${user.email}</label>
  <div class="copy-row">
    <input id="new-password" class="mono" type="text" readonly value="${input.generatedPassword}" spellcheck="false" autocomplete="off">
    <button type="button" class="button primary" data-copy-target="new-password" data-copy-status="copy-status">Copy</button>
  </div>
  <p id="copy-status" class="copy-status" role="status" aria-live="polite"></p>`
    : html`<p>They can sign in with the password you set.</p>`
  return layout({
    title: 'User added',
    session: input.session,
    section: 'users',
    body: html`<section class="panel">
  <h1>${user.email} can now sign in</h1>
  <p>Role: <strong>${ROLE_LABELS[user.role]}</strong>. ${ROLE_EFFECTS[user.role]}</p>
  ${password}
  <p><a class="button secondary" href="/admin/users">Back to users</a></p>
</section>`,
  })
}

export function deleteUserPage(input: { session: AdminSession; user: UserView; keys: KeyCounts }): SafeHtml {
  const { user, keys, session } = input
  const keyText =
    keys.total === 0
      ? 'They have no API keys.'
      : `Their ${keys.total} API key${keys.total === 1 ? '' : 's'} (${keys.active} active) will be revoked for good: programs using them are refused from the next request. The keys stay listed as revoked.`
  return layout({
    title: `Delete ${user.email}`,
    session,
    section: 'users',
    body: confirmation({
      heading: `Delete ${user.email}?`,
      consequences: html`<p>They will no longer be able to sign in, and are signed out now. ${keyText}</p>
      <p>This cannot be undone. To stop them for a while instead, disable them: that can be reversed.</p>`,
      action: url`/admin/users/${user.id}/delete`,
      csrf: session.csrfToken,
      confirmLabel: 'Delete user',
      cancelHref: url`/admin/users`,
    }),
  })
}
