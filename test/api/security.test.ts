import { buildForm } from '../factories.js'
import { describeSecuritySuite, type ErrorStyle, type SecuredEndpoint } from '../security-suite.js'

const FORM_ID = 'form_securitySuite000000'

const endpoints: SecuredEndpoint[] = [
  { path: '/api/v1/forms', permission: 'forms:read' },
  {
    path: `/api/v1/forms/${FORM_ID}/submissions`,
    permission: 'submissions:read',
    formId: FORM_ID,
    prepare: async (ctx) => {
      await buildForm(ctx.database.db, { id: FORM_ID })
    },
  },
  { path: '/api/v1/page-builder', permission: 'pages:read' },
  { path: '/api/v1/page-builder/redirects', permission: 'redirects:read' },
]

for (const style of ['code', 'phrase'] satisfies ErrorStyle[]) {
  for (const endpoint of endpoints) describeSecuritySuite(endpoint, style)
}
