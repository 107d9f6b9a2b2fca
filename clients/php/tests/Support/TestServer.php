<?php

declare(strict_types=1);

namespace Lectern\Tests\Support;

/**
 * The shared client test server (`node scripts/client-test-server.mjs` at the repository root; it
 * needs `npm run build` to have produced `dist/`): started once on first use, stopped at the end.
 */
final class TestServer
{
    /** @var array{baseUrl: string, keys: array<string, string>}|null */
    private static ?array $launcher = null;

    private static ?Process $process = null;

    /** @return array{baseUrl: string, keys: array<string, string>} */
    public static function launcher(): array
    {
        if (self::$launcher === null) {
            $root = self::repositoryRoot();
            $script = $root . '/scripts/client-test-server.mjs';
            if (!is_file($script)) {
                throw new \RuntimeException("$script is missing");
            }
            self::$process = new Process(['node', $script], $root);
            $line = self::$process->readLine(60);
            $launcher = json_decode($line, true, 512, JSON_THROW_ON_ERROR);
            if (!\is_array($launcher) || !\is_string($launcher['baseUrl'] ?? null) || !\is_array($launcher['keys'] ?? null)) {
                throw new \RuntimeException("unexpected line from the test server: $line");
            }
            self::$launcher = $launcher;
        }

        return self::$launcher;
    }

    public static function repositoryRoot(): string
    {
        return \dirname(__DIR__, 4);
    }

    /** @return array<string, mixed> a file of `spec/`, decoded */
    public static function spec(string $name): array
    {
        $file = self::repositoryRoot() . '/spec/' . $name;

        return json_decode((string) file_get_contents($file), true, 512, JSON_THROW_ON_ERROR);
    }
}
