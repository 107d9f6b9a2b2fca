import type { Kysely } from 'kysely'
import { findFormIntake, setFormIntake } from '../../db/repositories/forms.js'
import type { Database } from '../../db/tables.js'
import { NotFoundError, ValidationError } from '../../errors.js'
import { type IntakeSettings, parseStoredIntake, readIntakeSettings } from '../../resources/form.js'
import { formatTimestamp } from '../../time.js'
import { type Actor, recordAudit } from '../audit.js'

/**
 * Replaces a form's intake settings with `input` (absent members take their defaults); refuses bad
 * settings with every problem at once. Audited as `form.intake_changed`, naming what changed.
 */
export async function updateIntakeSettings(
  db: Kysely<Database>,
  formId: string,
  input: unknown,
  actor: Actor,
  at: Date,
): Promise<IntakeSettings> {
  const { settings, problems } = readIntakeSettings(input)
  if (problems.length > 0)
    throw new ValidationError(`Invalid intake settings: ${problems.join('; ')}`, problems)
  return db.transaction().execute(async (trx) => {
    const row = await findFormIntake(trx, formId)
    if (row === undefined) throw new NotFoundError(`Form '${formId}' not found`)
    const before = parseStoredIntake(row.intake)
    const changed = (Object.keys(settings) as (keyof IntakeSettings)[]).filter(
      (key) => JSON.stringify(before[key]) !== JSON.stringify(settings[key]),
    )
    await setFormIntake(trx, formId, JSON.stringify(settings), formatTimestamp(at))
    await recordAudit(trx, {
      actor,
      action: 'form.intake_changed',
      target: formId,
      detail: { changed, enabled: settings.enabled },
    })
    return settings
  })
}
