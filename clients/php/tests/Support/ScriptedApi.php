<?php

declare(strict_types=1);

namespace Lectern\Tests\Support;

/**
 * A real HTTP server (`php -S` with fixtures/scripted-api.php) that answers each request with the
 * next response of a script, and records the requests: for what the Lectern server cannot be made
 * to do on demand (a 503, a proxy's HTML error page, a slow answer).
 */
final class ScriptedApi
{
    private static ?self $instance = null;

    private int $next = 0;

    private function __construct(private readonly int $port, private readonly string $directory, private readonly Process $process)
    {
    }

    public static function get(): self
    {
        if (self::$instance === null) {
            $directory = sys_get_temp_dir() . '/lectern-php-scripted-' . getmypid();
            @mkdir($directory);
            $port = Process::freePort();
            $process = new Process(
                [\PHP_BINARY, '-S', '127.0.0.1:' . $port, \dirname(__DIR__) . '/fixtures/scripted-api.php'],
                null,
                ['LECTERN_SCRIPT_DIR' => $directory, 'PHP_CLI_SERVER_WORKERS' => '2'],
            );
            Process::waitForPort($port, 10);
            self::$instance = new self($port, $directory, $process);
            register_shutdown_function(static function () use ($process, $directory): void {
                $process->stop();
                array_map('unlink', glob($directory . '/*') ?: []);
                @rmdir($directory);
            });
        }

        return self::$instance;
    }

    /**
     * A base URL whose requests get these responses, in order.
     *
     * @param list<array{status: int, headers?: array<string, string>, body?: string, bodyBase64?: string, delay?: float, trickle?: array{every: float, times: int}}> $responses
     */
    public function script(array $responses): string
    {
        $id = 's' . getmypid() . '-' . ++$this->next;
        file_put_contents($this->directory . "/$id.json", json_encode(['responses' => $responses, 'requests' => []], JSON_THROW_ON_ERROR));

        return "http://127.0.0.1:{$this->port}/$id";
    }

    /**
     * The requests a script's base URL received: path with query, and headers by lower-case name.
     *
     * @return list<array{uri: string, headers: array<string, string>}>
     */
    public function requests(string $baseUrl): array
    {
        $id = substr($baseUrl, strrpos($baseUrl, '/') + 1);
        $state = json_decode((string) file_get_contents($this->directory . "/$id.json"), true, 512, JSON_THROW_ON_ERROR);

        return $state['requests'];
    }

    /** An error body as the API sends it. */
    public static function error(string $type, string $message): string
    {
        return json_encode(['error' => $type, 'message' => $message], JSON_THROW_ON_ERROR);
    }

    /** A one-form list body as the API sends it. */
    public static function formsPage(string ...$ids): string
    {
        return json_encode([
            'data' => array_map(static fn (string $id) => ['id' => $id, 'title' => "Form $id", 'description' => null], $ids),
            'meta' => ['total' => \count($ids), 'page' => 1, 'pageSize' => 20, 'totalPages' => $ids === [] ? 0 : 1],
        ], JSON_THROW_ON_ERROR);
    }
}
