<?php

declare(strict_types=1);

namespace Lectern\Tests;

use Lectern\Tests\Support\Process;
use PHPUnit\Framework\TestCase;

/**
 * The test servers this suite starts are stopped whole: `php -S` with workers forks them, and they
 * outlive a terminated parent unless they are stopped too.
 */
final class ProcessTest extends TestCase
{
    public function testStoppingAServerWithWorkersStopsItsWorkersToo(): void
    {
        $port = Process::freePort();
        $process = new Process(
            [\PHP_BINARY, '-S', '127.0.0.1:' . $port, __DIR__ . '/fixtures/scripted-api.php'],
            null,
            ['PHP_CLI_SERVER_WORKERS' => '2'],
        );
        Process::waitForPort($port, 10);
        $workers = self::serversOn($port);
        self::assertCount(3, $workers, 'the server and its two workers');

        $process->stop();

        $deadline = microtime(true) + 5;
        while (self::serversOn($port) !== [] && microtime(true) < $deadline) {
            usleep(50_000);
        }
        self::assertSame([], self::serversOn($port));
    }

    /** @return list<int> the processes serving `php -S` on this port */
    private static function serversOn(int $port): array
    {
        // `[-]S` matches `-S` but not the shell running pgrep, whose own command line holds the pattern.
        $found = (string) shell_exec('pgrep -f ' . escapeshellarg('[-]S 127.0.0.1:' . $port . ' ') . ' 2>/dev/null');

        return array_values(array_filter(array_map('intval', explode("\n", $found))));
    }
}
