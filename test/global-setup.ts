/**
 * Runs once around the whole test run. When the PostgreSQL project was left out (no PostgreSQL or
 * Redis on this machine, outside CI), says so again at the very end, where nobody can miss it:
 * a green run on SQLite alone has not proven the PostgreSQL and several-instance behaviour.
 */
export default function setup(): () => void {
  return () => {
    if (process.env.LECTERN_POSTGRES_SKIPPED !== '1') return
    const line = '!'.repeat(78)
    console.warn(
      `\n\x1b[1;33m${line}\n!!! PostgreSQL or Redis was not reachable: ONLY THE SQLITE PROJECT RAN.\n` +
        `!!! The PostgreSQL, Redis and cluster tests were NOT run. Start them and run again.\n${line}\x1b[0m\n`,
    )
  }
}
