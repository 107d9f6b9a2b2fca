<?php

declare(strict_types=1);

namespace Lectern\Tests\Support;

/** A child process the tests start, stopped when the test run ends (or earlier, by `stop()`). */
final class Process
{
    /** @var resource */
    private $process;

    /** @var array<int, resource> */
    private array $pipes;

    /**
     * @param list<string>               $command
     * @param array<string, string>|null $env     added to the current environment
     */
    public function __construct(array $command, ?string $cwd = null, ?array $env = null)
    {
        $process = proc_open(
            $command,
            [0 => ['pipe', 'r'], 1 => ['pipe', 'w'], 2 => ['file', self::log(), 'a']],
            $pipes,
            $cwd,
            $env === null ? null : $env + getenv(),
        );
        if (!\is_resource($process)) {
            throw new \RuntimeException('cannot start ' . implode(' ', $command));
        }
        $this->process = $process;
        $this->pipes = $pipes;
        register_shutdown_function([$this, 'stop']);
    }

    /** The next line of the process's stdout, waiting at most `$seconds`. */
    public function readLine(float $seconds): string
    {
        $deadline = microtime(true) + $seconds;
        $line = '';
        stream_set_blocking($this->pipes[1], false);
        while (microtime(true) < $deadline) {
            $read = [$this->pipes[1]];
            $write = $except = null;
            if (stream_select($read, $write, $except, 0, 200_000) > 0) {
                $chunk = fgets($this->pipes[1]);
                if ($chunk === false && feof($this->pipes[1])) {
                    break;
                }
                $line .= (string) $chunk;
                if (str_ends_with($line, "\n")) {
                    return rtrim($line, "\n");
                }
            }
        }
        throw new \RuntimeException(\sprintf('no line from the process within %.0f s (its stderr is in %s; set LECTERN_KEEP_TEST_LOG=1 to keep it)', $seconds, self::log()));
    }

    /**
     * Closes its stdin (the Lectern test server stops on that) and terminates it, and the workers it
     * forked (`php -S` with PHP_CLI_SERVER_WORKERS), which outlive a terminated parent otherwise.
     */
    public function stop(): void
    {
        if (!\is_resource($this->process)) {
            return;
        }
        $pid = proc_get_status($this->process)['pid'];
        $children = array_filter(array_map('intval', explode("\n", (string) shell_exec('pgrep -P ' . $pid . ' 2>/dev/null'))));
        foreach ($this->pipes as $pipe) {
            if (\is_resource($pipe)) {
                fclose($pipe);
            }
        }
        proc_terminate($this->process);
        proc_close($this->process);
        foreach ($children as $child) {
            // SIGTERM, by number: the posix extension (and its constants) may be missing.
            shell_exec('kill -15 ' . $child . ' 2>/dev/null');
        }
    }

    /**
     * Where the children's stderr goes (the built-in web server logs every request there). Removed
     * when the run ends unless LECTERN_KEEP_TEST_LOG is set, to read after a failure.
     */
    private static function log(): string
    {
        static $registered = false;
        $log = sys_get_temp_dir() . '/lectern-php-tests-' . getmypid() . '.log';
        if (!$registered) {
            $registered = true;
            register_shutdown_function(static function () use ($log): void {
                if (is_file($log) && (getenv('LECTERN_KEEP_TEST_LOG') === false)) {
                    @unlink($log);
                }
            });
        }

        return $log;
    }

    public static function freePort(): int
    {
        $server = stream_socket_server('tcp://127.0.0.1:0');
        if ($server === false) {
            throw new \RuntimeException('cannot find a free port');
        }
        $name = (string) stream_socket_get_name($server, false);
        fclose($server);

        return (int) substr($name, strrpos($name, ':') + 1);
    }

    public static function waitForPort(int $port, float $seconds): void
    {
        $deadline = microtime(true) + $seconds;
        while (microtime(true) < $deadline) {
            $socket = @stream_socket_client('tcp://127.0.0.1:' . $port, $errno, $error, 0.2);
            if ($socket !== false) {
                fclose($socket);

                return;
            }
            usleep(50_000);
        }
        throw new \RuntimeException("nothing listens on 127.0.0.1:$port after $seconds s");
    }
}
