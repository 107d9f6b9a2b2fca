import type { Writable } from 'node:stream'

/** A stream a command writes to, and, as a terminal's stream says, whether it is one and how wide. */
export type CliOutput = Writable & { readonly isTTY?: boolean; readonly columns?: number }

/**
 * Everything a command reads or writes besides its arguments, its files and its database. `main`
 * is given one, so the CLI runs the same inside another program (the tests) as in its own process:
 * no command reads `process.env` or writes to the process's streams itself.
 */
export interface CliIo {
  /** The settings the command is run with (DATABASE_URL, SECRET_KEY, …), read by `loadConfig`. */
  readonly env: NodeJS.ProcessEnv
  readonly stdout: CliOutput
  readonly stderr: CliOutput
  /** All of stdin when it is piped; undefined when it is an interactive terminal. */
  readStdin(): Promise<string | undefined>
}

/** The IO of this process: its environment, its streams and its stdin. */
export function processIo(): CliIo {
  return { env: process.env, stdout: process.stdout, stderr: process.stderr, readStdin: readProcessStdin }
}

async function readProcessStdin(): Promise<string | undefined> {
  if (process.stdin.isTTY) return undefined
  const chunks: Buffer[] = []
  for await (const chunk of process.stdin) chunks.push(chunk as Buffer)
  return Buffer.concat(chunks).toString('utf8')
}

/** Writes `text` and a newline, as `console.log` does with one string. */
export function writeLine(stream: CliOutput, text: string): void {
  stream.write(`${text}\n`)
}
