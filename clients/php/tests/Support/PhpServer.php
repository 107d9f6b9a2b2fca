<?php

declare(strict_types=1);

namespace Lectern\Tests\Support;

/** PHP's built-in web server running one script as the front controller, spoken to over raw HTTP. */
final class PhpServer
{
    private readonly Process $process;

    public readonly int $port;

    /**
     * @param array<string, string> $env
     * @param array<string, string> $ini php.ini settings for the server
     */
    public function __construct(string $script, array $env = [], array $ini = [])
    {
        $this->port = Process::freePort();
        $settings = [];
        foreach ($ini as $name => $value) {
            array_push($settings, '-d', "$name=$value");
        }
        $this->process = new Process([\PHP_BINARY, ...$settings, '-S', '127.0.0.1:' . $this->port, $script], \dirname($script), $env);
        Process::waitForPort($this->port, 10);
    }

    /**
     * Sends `GET <target>` exactly as given (no client library in between normalising it) and
     * returns the status, the `Location` header (or null) and the body.
     *
     * @return array{int, string|null, string}
     */
    public function get(string $target): array
    {
        $socket = stream_socket_client('tcp://127.0.0.1:' . $this->port, $errno, $error, 5);
        if ($socket === false) {
            throw new \RuntimeException("cannot connect to the front controller: $error");
        }
        stream_set_timeout($socket, 10);
        fwrite($socket, "GET $target HTTP/1.1\r\nHost: 127.0.0.1:{$this->port}\r\nConnection: close\r\n\r\n");
        $response = (string) stream_get_contents($socket);
        fclose($socket);
        if (preg_match('#^HTTP/1\.[01] (\d{3})#', $response, $status) !== 1) {
            throw new \RuntimeException("no HTTP response for $target: " . var_export($response, true));
        }
        [$head, $body] = explode("\r\n\r\n", $response, 2) + [1 => ''];
        $location = preg_match('/^Location: (.*)$/mi', $head, $m) === 1 ? rtrim($m[1], "\r") : null;

        return [(int) $status[1], $location, $body];
    }

    public function stop(): void
    {
        $this->process->stop();
    }
}
