import { spawn } from 'node:child_process'
import { fileURLToPath } from 'node:url'

export const BIN = fileURLToPath(new URL('../../bin/lectern', import.meta.url))

export interface CliResult {
  code: number | null
  stdout: string
  stderr: string
  /** Non-empty stdout lines. */
  lines: string[]
}

/** Runs `bin/lectern` as a separate process, as a user would, against `databaseUrl`. */
export function runCli(
  args: string[],
  options: { databaseUrl?: string; input?: string; env?: Record<string, string>; cwd?: string } = {},
): Promise<CliResult> {
  return new Promise((resolve, reject) => {
    const env: NodeJS.ProcessEnv = { ...process.env, LOG_LEVEL: 'warn', ...options.env }
    if (options.databaseUrl) env.DATABASE_URL = options.databaseUrl
    const child = spawn(process.execPath, [BIN, ...args], {
      env,
      cwd: options.cwd,
      stdio: ['pipe', 'pipe', 'pipe'],
    })
    let stdout = ''
    let stderr = ''
    child.stdout.on('data', (chunk) => {
      stdout += chunk
    })
    child.stderr.on('data', (chunk) => {
      stderr += chunk
    })
    child.on('error', reject)
    child.on('close', (code) =>
      resolve({ code, stdout, stderr, lines: stdout.split('\n').filter((line) => line.trim() !== '') }),
    )
    child.stdin.end(options.input ?? '')
  })
}
